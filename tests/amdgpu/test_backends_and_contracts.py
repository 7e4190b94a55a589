"""Every AMD body in both backends (numpy vs Z3) and the reciprocal contracts (numpy vs Z3 vs exact
rationals), on generated inputs under several MODE settings."""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest

z3 = pytest.importorskip("z3")

from tilecheck.amdgpu import contract  # noqa: E402
from tilecheck.amdgpu.instructions import evaluate  # noqa: E402
from tilecheck.smt import fp  # noqa: E402
from tilecheck.smt.amdgpu import encode_instruction, encode_rcp_contract  # noqa: E402
from tilecheck.spec.amdgpu import amdgpu_forms  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402
from tilecheck.inputs.edges import edge_values  # noqa: E402

FORMS = amdgpu_forms(load_database())
BODY_FORMS = [(f, v) for f in FORMS.values() for v in ("documented", "observed") if f.variants[v].program is not None]
RCP_FORMS = [f for f in FORMS.values() if f.family == "v_rcp"]
MODES = [{"round": "rn", "denorm": 3}, {"round": "rz", "denorm": 0}, {"round": "rp", "denorm": 1},
         {"round": "rm", "denorm": 2}]


def operand_bits(fmt, n, rng):
    edges = np.array(edge_values(fmt), dtype=np.uint64)
    top = (1 << fmt.exponent_bits) - 1
    field = rng.integers(0, top + 1, n).astype(np.uint64)
    field = np.where(rng.random(n) < 0.3, rng.choice(np.array([0, 1, fmt.bias, top - 1, top], dtype=np.uint64), n),
                     field)
    frac = rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(fmt.mantissa_mask)
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(fmt.width - 1)
    out = sign | (field << np.uint64(fmt.mantissa_bits)) | frac
    return np.where(rng.random(n) < 0.25, edges[rng.integers(0, edges.size, n)], out)


@pytest.mark.parametrize("form,variant", BODY_FORMS, ids=lambda x: x if isinstance(x, str) else x.name)
def test_numpy_and_z3_bodies_agree(form, variant):
    rng = np.random.default_rng(zlib.crc32(f"{form.name}{variant}".encode()))
    n = 12
    for mode in MODES:
        ops = {}
        for o in form.sources:
            if o.kind == "lane-bit":
                ops[o.name] = rng.random(n) < 0.5
            elif o.kind == "int":  # small exponents and masks, and arbitrary 32-bit patterns
                ops[o.name] = np.where(rng.random(n) < 0.5, rng.integers(-40, 40, n) & 0xFFFFFFFF,
                                       rng.integers(0, 1 << 32, n)).astype(np.uint64)
            else:
                ops[o.name] = operand_bits(form.operand_format(o.name), n, rng)
        if form.family == "v_div_scale":  # S0 equals S1 or S2, as the macro uses it
            ops["S0"] = np.where(rng.random(n) < 0.5, ops["S1"], ops["S2"])
        want = evaluate(form, variant, mode, **ops)
        for i in range(n):
            terms = {k: (bool(v[i]) if v.dtype == bool else int(v[i])) for k, v in ops.items()}
            got = encode_instruction(form, variant, terms, mode)
            for o in form.destinations:
                if o.kind == "lane-bit":
                    assert z3.is_true(z3.simplify(got[o.name])) == bool(want[o.name][i]), (mode, terms)
                else:
                    assert fp.value_of(got[o.name]) == int(want[o.name][i]), (mode, {k: hex(v) for k, v in terms.items()})


def _exact_ok(form, r, x):
    """The contract decided with rationals (regular operands only)."""
    c = form.variant("observed").contract
    fmt = form.fmt
    xv, rv = fmt.to_fraction(x), fmt.to_fraction(r)
    e = 1 / xv
    if c.relative_log2 is not None:
        bound = abs(e) * Fraction(2) ** int(c.relative_log2)
    else:
        k = e.numerator.bit_length() - e.denominator.bit_length() if e > 0 else (-e).numerator.bit_length() - (-e).denominator.bit_length()
        while Fraction(2) ** k > abs(e):
            k -= 1
        while Fraction(2) ** (k + 1) <= abs(e):
            k += 1
        bound = Fraction(c.ulp) * Fraction(2) ** (max(k, fmt.emin) - fmt.mantissa_bits)
    return abs(rv - e) <= bound


@pytest.mark.parametrize("form", RCP_FORMS, ids=lambda f: f.name)
def test_contract_choices_are_inside_and_the_ends_are_tight(form):
    rng = np.random.default_rng(11)
    fmt = form.fmt
    n = 400
    x = operand_bits(fmt, n, rng)
    x = np.where((x & np.uint64(fmt.exponent_mask)) == 0, x | np.uint64(fmt.min_normal), x)  # normal operands
    x = np.where((x & np.uint64(fmt.exponent_mask)) == np.uint64(fmt.exponent_mask),
                 x ^ np.uint64(fmt.min_normal), x)
    strategy = rng.integers(0, 4, n)
    r = contract.choose(form, "observed", x, strategy, rng)
    assert np.all(contract.allowed(form, "observed", r, x))
    for i in range(n):
        if r[i] & np.uint64(fmt.magnitude_mask) not in (0, fmt.inf):
            assert _exact_ok(form, int(r[i]), int(x[i])), (hex(int(x[i])), hex(int(r[i])))
    # both ends found exactly: inside, and one step outward is outside
    lo = contract.choose(form, "observed", x, np.ones(n, dtype=int), rng)
    hi = contract.choose(form, "observed", x, np.full(n, 2), rng)
    normal = (lo & np.uint64(fmt.exponent_mask)) != 0
    assert contract.ends_are_tight(form, "observed", x[normal], lo[normal], hi[normal])


@pytest.mark.parametrize("form", RCP_FORMS, ids=lambda f: f.name)
def test_numpy_and_z3_contracts_agree(form):
    rng = np.random.default_rng(5)
    fmt = form.fmt
    n = 30
    x = operand_bits(fmt, n, rng)
    base = contract.nearest(form, x)
    for delta in (-3, -1, 0, 1, 5, 1 << 29, (1 << 29) + 4000):
        r = np.where((base & np.uint64(fmt.magnitude_mask)) < np.uint64(fmt.exponent_mask),
                     (base.astype(np.int64) + delta).clip(0).astype(np.uint64) & np.uint64((1 << fmt.width) - 1), base)
        want = contract.allowed(form, "observed", r, x, reading="exact")  # the reading the Z3 encoding mirrors
        for i in range(n):
            got = z3.simplify(encode_rcp_contract(form, "observed", int(r[i]), int(x[i])))
            assert z3.is_true(got) == bool(want[i]), (hex(int(x[i])), hex(int(r[i])))
