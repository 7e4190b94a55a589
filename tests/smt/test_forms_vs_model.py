"""Z3 encodings against the reference model on every PTX form of the spec database.

Generated from the database: adding a YAML adds its forms here. Exact forms: the bits of
``tilecheck.smt.evaluate`` equal ``tilecheck.model.api.evaluate`` (NaN policies included; ``.ftz``
forms with tininess after and before rounding). Approximate forms: ``tilecheck.smt.allowed`` and
``tilecheck.model.api.allowed`` agree on results around the model's reference value and on
special results. Memory forms: neither has an arithmetic result; Z3 gives array terms.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

z3 = pytest.importorskip("z3")

from gen import operands_for  # noqa: E402

from tilecheck import smt  # noqa: E402
from tilecheck.errors import UsageError  # noqa: E402
from tilecheck.formats import get_format  # noqa: E402
from tilecheck.model import api  # noqa: E402
from tilecheck.spec import registry  # noqa: E402
from tilecheck.spec.contract import ULP_READINGS  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402

DB = load_database()
FORMS = DB.kernel_forms()
EXACT = [f for f in FORMS if f.kind == "exact"]
# forms whose registry entry says why Z3 cannot encode them (ex2: transcendental) are refused instead
NOT_ENCODABLE = [f for f in FORMS if registry.ENTRIES[f.semantics.key].smt]
CONTRACT = [f for f in FORMS if f.kind == "contract" and f not in NOT_ENCODABLE]
MEMORY = [f for f in FORMS if f.kind == "memory"]
CASES = 10


def _rng(form, salt=""):
    return np.random.default_rng(zlib.crc32((form.name + salt).encode()))


def test_the_database_is_not_empty_and_every_key_is_covered():
    assert len(FORMS) >= 300 and len(EXACT) >= 200 and len(CONTRACT) >= 10
    used = {f.semantics.key for f in FORMS}
    kernel_keys = {k for k, e in registry.ENTRIES.items() if e.kind != "function"}  # function keys: test_surround_z3
    assert used == kernel_keys, kernel_keys ^ used


@pytest.mark.parametrize("form", EXACT, ids=lambda f: f.name)
def test_exact_form_bits_agree(form):
    tininess = ("after", "before") if form.semantics.params.get("ftz") else ("after",)
    for t in tininess:
        ops = operands_for(form, CASES, _rng(form, t))
        want = np.asarray(api.evaluate(form, *ops, tininess=t)).astype(np.uint64)
        got = np.asarray(smt.evaluate(form, *ops, tininess=t)).astype(np.uint64)
        bad = np.nonzero(want != got)[0]
        assert bad.size == 0, (t, [hex(int(o[bad[0]])) for o in ops], "model", hex(int(want[bad[0]])),
                               "z3", hex(int(got[bad[0]])))


def _candidates(form, ops):
    fmt = get_format(form.element_format)
    ref = np.asarray(api.reference(form, *ops)).astype(np.uint64)
    out = []
    for k in (-2, -1, 1, 2):
        c = (ref.astype(np.int64) + k).clip(0, (1 << 62)).astype(np.uint64) & np.uint64((1 << fmt.width) - 1)
        out.append(c)
    out.append(ref)
    out.append(ref ^ np.uint64(fmt.sign_mask))
    out.append(np.full(ref.shape, fmt.inf, dtype=np.uint64))
    out.append(np.zeros(ref.shape, dtype=np.uint64))
    out.append(np.full(ref.shape, fmt.canonical_nan, dtype=np.uint64))
    return out


@pytest.mark.parametrize("form", NOT_ENCODABLE, ids=lambda f: f.name)
def test_a_form_z3_cannot_encode_is_refused_with_the_registry_reason(form):
    from tilecheck.errors import NotEncodableError

    op = operands_for(form, 1, _rng(form))
    with pytest.raises(NotEncodableError, match="no Z3 encoding") as err:
        smt.allowed(form, int(api.reference(form, *op)[0]), *[int(o[0]) for o in op])
    assert registry.ENTRIES[form.semantics.key].smt in str(err.value)


def test_the_refusal_test_has_forms_and_they_are_approximate():
    assert NOT_ENCODABLE and all(f.kind == "contract" for f in NOT_ENCODABLE)


# a relative bound has one reading: checked once, under "either"
READING_CASES = [(f, r) for f in CONTRACT for r in ULP_READINGS if f.contract.ulp is not None or r == "either"]


@pytest.mark.parametrize("form,reading", READING_CASES, ids=lambda v: getattr(v, "name", v))
def test_contract_verdicts_agree(form, reading):
    """Each ulp reading, on random operands."""
    n = 6 if form.contract.ulp is None else 3
    ops = operands_for(form, n, _rng(form, reading))
    for cand in _candidates(form, ops):
        want = np.asarray(api.allowed(form, cand, *ops, ulp_reading=reading))
        for i in range(cand.size):
            got = smt.allowed(form, int(cand[i]), *[int(o[i]) for o in ops], ulp_reading=reading)
            assert bool(got) == bool(want[i]), (
                reading, [hex(int(o[i])) for o in ops], "result", hex(int(cand[i])), "model", bool(want[i]),
                "z3", got, _exact_verdict(form, int(cand[i]), [int(o[i]) for o in ops]))


CONTRACT_VECTORS = [
    # (form, result, operands): the examples and the edges of each reading
    ("rcp.approx.f32", 0x3EAAAAAC, (0x40400000,)),
    ("div.full.f32", 0x3EAAAAAD, (0x3F800000, 0x40400000)),
    ("rcp.approx.f32", 0x7F7FFFFF, (0x00000001,)),
    ("rcp.approx.f32", 0x7F800000, (0x00000001,)),
    ("rcp.approx.ftz.f32", 0x00000000, (0x7E800001,)),
    ("rcp.approx.ftz.f32", 0x00800000, (0x7E800001,)),
    ("div.approx.ftz.f32", 0x00800000, (0x00800000, 0x3F800001)),
    ("div.approx.ftz.f32", 0x00000000, (0x00800000, 0x3F800001)),
    ("div.approx.ftz.f32", 0x80000000, (0x00800000, 0x3F800001)),
    ("div.approx.f32", 0x00000001, (0x00000003, 0x40400000)),
    ("div.approx.f32", 0x80000001, (0x00000001, 0x40400000)),
    ("div.approx.f32", 0x12345678, (0x00000000, 0x00000010)),
    ("rsqrt.approx.f64", 0x3FEFFFFFFFFFFFFE, (0x3FF0000000000001,)),
    ("rsqrt.approx.f64", 0x3FF0000000000000, (0x3FF0000000000001,)),
    ("rsqrt.approx.f64", 0x5FFC952CA5293B19, (0x000140DF766ED8B3,)),
    ("rcp.approx.ftz.f64", 0x7FFFFFFF00000000, (0x7FF0000000000001,)),
    ("rcp.approx.ftz.f64", 0x0000000000000000, (0x7FF0000000000001,)),
    ("rsqrt.approx.ftz.f64", 0x7FF8000000000000, (0xBFF0000000000000,)),
    ("rsqrt.approx.ftz.f64", 0x7FF8000000000000, (0x7FF8000000000000,)),
]


@pytest.mark.parametrize("reading", ULP_READINGS)
def test_contract_vectors_agree_under_each_reading(reading):
    for name, result, ops in CONTRACT_VECTORS:
        want = bool(api.allowed(name, result, *ops, ulp_reading=reading))
        got = smt.allowed(name, result, *ops, ulp_reading=reading)
        assert got == want, (name, reading, hex(result), [hex(o) for o in ops], "model", want, "z3", got)


def _exact_verdict(form, result, operands):
    """The bound decided with rationals (for the failure message: which side is right)."""
    from tilecheck.model import contracts

    fmt = get_format(form.element_format)
    r = fmt.to_fraction(result)
    values = [fmt.to_fraction(o) for o in operands]
    if r is None or any(v is None or v == 0 for v in values):
        return "special lane"
    fn = form.contract.operation
    try:
        return "exact bound test: " + str(contracts._within_exact(fn, fmt, r, values, form.contract.ulp,
                                                                  form.contract.relative_log2))
    except (ArithmeticError, ValueError) as exc:
        return f"exact bound test failed: {exc}"


@pytest.mark.parametrize("form", MEMORY[:6] + [f for f in MEMORY if ".v" in f.name][:4], ids=lambda f: f.name)
def test_memory_forms(form):
    with pytest.raises(UsageError):
        smt.evaluate(form, 0, 0) if len(form.sources) == 2 else smt.evaluate(form, 0)
    with pytest.raises(UsageError):
        api.evaluate(form, *([0] * len(form.sources)))
    bits = form.container_bits
    mem = z3.Array("m", z3.BitVecSort(64), z3.BitVecSort(bits))
    if form.semantics.key == "mem.ld":
        loaded = smt.encode(form, z3.BitVecVal(0x1000, 64), memory=mem)
        first = loaded[0] if isinstance(loaded, tuple) else loaded
        assert z3.simplify(first == z3.Select(mem, 0x1000)).eq(z3.BoolVal(True))
    else:
        value = z3.BitVecVal(5, bits)
        registers = form.sources[1].registers
        stored = smt.encode(form, z3.BitVecVal(0x1000, 64), (value,) * registers if registers > 1 else value,
                            memory=mem)
        assert z3.simplify(z3.Select(stored, 0x1000) == value).eq(z3.BoolVal(True))


def test_known_contract_boundary_vector():
    """rsqrt.approx.f64 (1 ulp): for x = 0x000140df766ed8b3 the result 0x5ffc952ca5293b19 is 1.07 ulp
    from 1/sqrt(x) and 0x5ffc952ca5293b1b is 0.93 ulp (exact decimal arithmetic), so only the
    second is allowed. Z3 decides this exactly; the model must agree."""
    form = DB.form("rsqrt.approx.f64")
    x = 0x000140df766ed8b3
    assert smt.allowed(form, 0x5ffc952ca5293b1b, x, ulp_reading="exact") is True
    assert smt.allowed(form, 0x5ffc952ca5293b19, x, ulp_reading="exact") is False
    assert bool(api.allowed(form, 0x5ffc952ca5293b1b, x, ulp_reading="exact")) is True
    assert bool(api.allowed(form, 0x5ffc952ca5293b19, x, ulp_reading="exact")) is False
