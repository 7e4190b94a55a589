"""Exhaustive sweeps (tilecheck.diff.sweep): slices of the domain judged by the compiled certificate
on worker threads; totals add up, a wrong model is caught and its first cases listed."""

from __future__ import annotations

import numpy as np
import pytest

from tilecheck.diff import sweep as sweep_mod


def test_points_cover_the_domain_in_order():
    a, b = sweep_mod.points("div", "f16", (5 << 16) + 65534, (6 << 16) + 2)
    assert a.tolist() == [5, 5, 6, 6] and b.tolist() == [65534, 65535, 0, 1]
    (x,) = sweep_mod.points("sqrt", "f32", (1 << 32) - 2, 1 << 32)
    assert x.dtype == np.uint32 and x.tolist() == [(1 << 32) - 2, (1 << 32) - 1]
    with pytest.raises(ValueError):
        sweep_mod.points("div", "f32", 0, 4)


@pytest.mark.parametrize("workers", (1, 2))
def test_slices_add_up_and_the_model_passes(workers):
    ranges = [(0, 70_000), (0x3F800000, 0x3F800000 + 50_000), ((1 << 32) - 30_000, 1 << 32)]
    res = sweep_mod.sweep("sqrt", "f32", "rm", ftz=True, ranges=ranges, block=1 << 14, workers=workers)
    assert res.cases == 150_000 and res.mismatches == 0 and res.first == []
    assert res.model_seconds > 0 and res.certificate_seconds > 0 and res.workers == workers
    res = sweep_mod.sweep("add", "bf16", "rp", ranges=[(0x3F80 << 16, (0x3F80 << 16) + 70_000)], block=1 << 15,
                          workers=workers)
    assert res.cases == 70_000 and res.mismatches == 0


@pytest.mark.parametrize("specialise", (False, True))
def test_a_misrounding_model_is_caught(monkeypatch, specialise):
    real = sweep_mod.ieee_op

    def off_by_one(op, fmt, rounding, *ops, **kw):
        out = real(op, fmt, rounding, *ops, **kw)
        out[7] += 1  # one lane per slice, one unit off
        return out

    monkeypatch.setattr(sweep_mod, "ieee_op", off_by_one)
    res = sweep_mod.sweep("div", "f16", "rz", ranges=[(0x3C00 << 16, (0x3C00 << 16) + 4 * 4096)], block=4096,
                          workers=2, keep=3, specialise=specialise)
    assert res.mismatches == 4 and len(res.first) == 3 and res.details["specialised"] == specialise
    a, b, got = res.first[0]
    assert (a << 16) | b == (0x3C00 << 16) + 7
