"""Triton's 16-bit ``a / b`` against an independent interpretation, choice by choice, in fractions.

Triton 3.9 divides float16 and bfloat16 tensors by widening both operands to binary32
(``cvt.f32.f16``, ``cvt.f32.bf16``: exact), ``div.full.f32``, and rounding the quotient back
(``cvt.rn.f16.f32``, ``cvt.rn.bf16.f32``). The verifier runs the committed kernels
(``examples/triton/div_{f16,bf16}{,_v}.ptx``) with every result ``div.full.f32``'s contract allows
(2 ulp across the full range, either ulp reading, the IEEE sign). Here the same lowering is written
out with Python fractions and integer rounding (the helpers of ``test_hdiv_bf16_independent``:
the allowed binary32 quotients are those within 2 ulp of the exact quotient's binade or within 2
values of its correctly rounded value, of the quotient's sign), sharing no arithmetic with the model.
A pair misrounds when some allowed quotient rounds to another 16-bit result than the correctly
rounded quotient. The sets of misrounded pairs -- at all, and in value -- must be the same on
random finite pairs, on tiny and huge quotients (bfloat16 reaches binary32's subnormals and its
overflow), and on every pair the verifier flags in whole blocks of dividends, for scalar and
128-bit-vector kernels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_hdiv_bf16_independent import (BF16, Binary, _allowed_quotients, _numeric, _value, _verifier_flags,
                                        independent_sets)
from tilecheck.spec.database import load_database
from tilecheck.verify import compiled

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
F16 = Binary(10, 5)
# per type: its format, fraction bits, exponent bits and reference
TYPES = {"f16": (F16, 10, 5, "div.rn.f16"), "bf16": (BF16, 7, 8, "div.rn.bf16")}


def independent_misrounds(fmt: Binary, mant: int, ebits: int, a_bits: int, b_bits: int) -> tuple[bool, bool]:
    """(misrounds at all, misrounds in value) for finite ``a`` and finite non-zero ``b``."""
    a, b = _value(a_bits, mant, ebits), _value(b_bits, mant, ebits)
    q = a / b
    if q == 0:  # a zero dividend: div.full.f32 is exact there (a zero of the quotient's sign)
        return False, False
    want = fmt.nearest(q)
    anywhere = in_value = False
    for r in _allowed_quotients(q):
        got = r if isinstance(r, tuple) else fmt.nearest(r)
        if got != want:
            anywhere = True
            in_value |= _numeric(got) != _numeric(want)
    return anywhere, in_value


def _pairs(rng, ebits: int, mant: int) -> list[tuple[int, int]]:
    top = (1 << (ebits + mant)) - (1 << mant) - 1   # the largest finite magnitude pattern
    sign = lambda: int(rng.integers(0, 2)) << (ebits + mant)  # noqa: E731
    def finite(lo=1, hi=top):
        return sign() | int(rng.integers(lo, hi + 1))
    pairs = [(finite(), finite()) for _ in range(900)]
    pairs += [(finite(1, 1 << mant), finite(top // 2, top)) for _ in range(200)]   # tiny quotients
    pairs += [(finite(top // 2, top), finite(1, 1 << mant)) for _ in range(200)]   # huge quotients
    pairs += [(finite(1, 1 << mant), finite(1, 1 << mant)) for _ in range(100)]    # subnormal operands
    return pairs


@pytest.fixture(scope="module")
def db():
    return load_database()


@pytest.mark.parametrize("stem", ["div_f16", "div_f16_v", "div_bf16", "div_bf16_v"])
def test_misrounded_pairs_match_an_independent_enumeration(db, stem):
    t = "bf16" if "bf16" in stem else "f16"
    fmt, mant, ebits, against = TYPES[t]
    p = compiled.prepare(str(TRITON / f"{stem}.ptx"), "div_kernel", against, db=db)
    rng = np.random.default_rng(20261207)
    pairs = _pairs(rng, ebits, mant)
    # every pair the verifier flags in whole blocks of dividends (operand 0 varies fastest)
    divisors = (0x4A3D, 0x0203, 0xB7FF) if t == "f16" else (0x3F81, 0x4000, 0xC040, 0x0043, 0x7E90, 0xC2B7)
    for divisor in divisors:
        tally = compiled.run_range(p, divisor << 16, (divisor + 1) << 16)
        flagged = [(int(x[0]), int(x[1])) for x in tally.inputs]
        pairs += [xy for xy in flagged if _value(xy[0], mant, ebits) is not None][:150]
    pairs = sorted(set(pairs))
    ours_bad, ours_value, ours_unknown = _verifier_flags(p, pairs)
    theirs_bad, theirs_value = independent_sets(pairs, lambda x, y: independent_misrounds(fmt, mant, ebits, x, y))
    assert ours_value == theirs_value
    assert ours_bad == theirs_bad
    assert len(ours_value) > 50  # the pairs hold misroundings in value
    assert not ours_unknown
