"""The ISA-text oracle for the ``function`` forms (:mod:`tilecheck.oracle.surround`) and their
operand generator (:mod:`tilecheck.inputs.surround`).

* cross-check: on every function form except cvta, the model's results on the edge-biased operands
  are accepted by the oracle (two destinations for setp wherever the form has them);
* the same with the MPFR-free rounding path, and that path against MPFR directly;
* mutations: wrong roundings, flipped NaN rules, swapped signed zeros, wrong FP->int NaN results,
  unclamped .sat, and a one-bit change of every non-NaN model result are all rejected.
"""

from __future__ import annotations

import ast
import collections
import inspect
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecheck.formats import get_format
from tilecheck.inputs.surround import function_case_count, function_operands
from tilecheck.model.api import evaluate, unspecified
from tilecheck.oracle import surround as S
from tilecheck.spec.database import load_database

DB = load_database()
FORMS = [f for f in DB.forms.values() if f.kind == "function" and f.semantics.key != "addr.cvta"]
KEYS = sorted({f.semantics.key for f in FORMS})


def _model(form, ops):
    k = S.destination_count(form)
    out = evaluate(form, *ops, destinations=k)
    return list(out) if k == 2 else [out]


def _cases(form, seed=20261202):
    ops = function_operands(form, function_case_count(form, 64), np.random.default_rng(seed))
    return ops, _model(form, ops)


def _disagreements(forms):
    bad = []
    for form in forms:
        ops, res = _cases(form)
        ok = S.judge(form, ops, res)
        for j in np.flatnonzero(~ok)[:2]:
            bad.append(f"{form.name}: operands {[hex(int(o[j])) for o in ops]} model "
                       f"{[hex(int(r[j])) for r in res]}, ISA text allows {S.expected_text(form, [o[j] for o in ops])}")
    return bad


def test_every_function_form_but_cvta_is_judged():
    assert len(FORMS) > 1600
    assert [f.name for f in FORMS if S.supports(f) is not None] == []
    cvta = [f for f in DB.forms.values() if f.semantics.key == "addr.cvta"]
    assert cvta and all("address" in S.supports(f) for f in cvta)


@pytest.mark.parametrize("key", KEYS)
def test_model_results_are_allowed_by_the_isa_text(key):
    forms = [f for f in FORMS if f.semantics.key == key]
    assert not _disagreements(forms)


def test_mpfr_free_rounding_path_agrees(monkeypatch):
    monkeypatch.setattr(S, "_round", S.round_exact)
    monkeypatch.setattr(S, "HAVE_GMPY2", False)
    forms = [f for f in FORMS if f.semantics.key in ("cvt.float", "cvt.from_int")]
    assert S.oracle_name(forms[0]) == "exact rationals"
    assert not _disagreements(forms)


def test_round_exact_matches_mpfr():
    pytest.importorskip("gmpy2")
    rnd = random.Random(7)
    for name in ("f16", "bf16", "f32", "f64"):
        f = get_format(name)
        for _ in range(3000):
            sig = rnd.getrandbits(rnd.choice((1, 3, 11, 24, 25, 53, 54, 64)) or 1) or 1
            exp = rnd.randint(f.emin - f.mantissa_bits - 70, f.emax + 2) - sig.bit_length()
            neg = rnd.random() < 0.5
            for mode in ("rn", "rz", "rm", "rp"):
                assert S.round_exact(f, neg, sig, exp, mode) == S.round_mpfr(f, neg, sig, exp, mode), \
                    (name, neg, sig, exp, mode)


def test_a_one_bit_change_of_every_non_nan_result_is_rejected():
    """Wherever the model's result is not a NaN (whose bits may be free) nor left open, flipping its lowest bit
    (or a predicate) must fail: the oracle pins every other result to the bit."""
    weak = collections.Counter()
    for form in FORMS:
        ops, res = _cases(form)
        d = form.destinations[0]
        for i, r in enumerate(res):
            if d.ptx_type == "pred":
                mutated, due = ~r.astype(bool), np.ones(len(r), bool)
            else:
                mutated = r.astype(np.uint64) ^ np.uint64(1)
                due = np.ones(len(r), bool)
                if d.element_format:
                    f = get_format(d.element_format)
                    due = ~f.is_nan((r.astype(np.uint64) & np.uint64((1 << f.width) - 1)).astype(f.uint))
            # (a result the ISA leaves open, integer division by zero, takes any value)
            due &= ~np.asarray(unspecified(form, *ops), dtype=bool)
            muts = list(res)
            muts[i] = mutated
            ok = S.judge(form, ops, muts)
            if (ok & due).any():
                weak[form.name] += int((ok & due).sum())
    assert not weak, dict(weak)


def _judge(name, operands, results):
    form = DB.form(name)
    return bool(S.judge(form, [np.array([o]) for o in operands], [np.array([r]) for r in results])[0])


def test_conversion_rounded_the_wrong_way_is_rejected():
    x = 0x3F800000 | (1 << 12) | 1  # 1 + 2**-11 + 2**-23: just above the f16 tie -> 1 + 2**-10
    assert _judge("cvt.rn.f16.f32", [x], [0x3C01])
    assert not _judge("cvt.rn.f16.f32", [x], [0x3C02])
    assert not _judge("cvt.rn.f16.f32", [x], [0x3C00])
    assert _judge("cvt.rn.f16.f32", [0x477FF000], [0x7C00])  # 65520: the tie rounds to Inf (IEEE)
    assert _judge("cvt.rz.f16.f32", [0x477FF000], [0x7BFF])
    assert not _judge("cvt.rn.f16.f32", [0x477FF000], [0x7BFF])
    assert _judge("cvt.rn.satfinite.f16.f32", [0x7F800000], [0x7BFF])  # Inf -> MAX_NORM
    assert _judge("cvt.rpi.f32.f32", [1], [0x3F800000]) and _judge("cvt.rpi.ftz.f32.f32", [1], [0])
    assert not _judge("cvt.rpi.ftz.f32.f32", [1], [0x3F800000])
    assert _judge("cvt.rn.relu.f16.f32", [0x7FC00001], [0x7FFF])  # .relu NaN: the canonical NaN
    assert not _judge("cvt.rn.relu.f16.f32", [0x7FC00001], [0x7E00])
    assert _judge("cvt.rn.f16.f32", [0x7FC00001], [0x7E00]) and _judge("cvt.rn.f16.f32", [0x7FC00001], [0xFC01])
    assert not _judge("cvt.rn.f16.f32", [0x7FC00001], [0x7C00])


def test_comparison_nan_rule_flipped_is_rejected():
    nan, one = 0x7FC00000, 0x3F800000
    assert _judge("setp.ne.f32", [nan, one], [False, True])
    assert not _judge("setp.ne.f32", [nan, one], [True, False])
    assert _judge("setp.neu.f32", [nan, one], [True, False])
    assert not _judge("setp.eq.f32", [0x80000000, 0], [False, True])  # -0 == +0
    assert _judge("setp.lt.f16x2", [0x3C00BC00, 0], [True, False])  # q is the high lane, not !p
    assert not _judge("setp.lt.f16x2", [0x3C00BC00, 0], [True, True])
    assert _judge("setp.lt.xor.f32", [0, one, True], [False, True])


def test_min_max_signed_zeros_and_nans():
    assert _judge("min.f32", [0x80000000, 0], [0x80000000])
    assert not _judge("min.f32", [0x80000000, 0], [0])
    assert not _judge("max.f32", [0x80000000, 0], [0x80000000])
    assert _judge("max.f64", [0x7FF0000000000001, 0x4000000000000000], [0x4000000000000000])
    assert not _judge("max.f64", [0x7FF0000000000001, 0x4000000000000000], [0x7FF8000000000001])
    assert _judge("min.NaN.f32", [0x7FC00001, 0], [0x7FFFFFFF])
    assert not _judge("min.NaN.f32", [0x7FC00001, 0], [0])


def test_float_to_int_nan_result():
    assert _judge("cvt.rzi.s32.f32", [0x7FC00000], [0])
    assert not _judge("cvt.rzi.s32.f32", [0x7FC00000], [0x80000000])
    assert _judge("cvt.rzi.s32.f64", [0x7FF8000000000000], [0x80000000])
    assert not _judge("cvt.rzi.s32.f64", [0x7FF8000000000000], [0])
    assert _judge("cvt.rni.s64.f32", [0xFFC00000], [1 << 63])
    assert _judge("cvt.rzi.s32.f32", [0x7F800000], [0x7FFFFFFF])  # saturates by default


def test_integer_sat_not_clamped_is_rejected():
    assert _judge("add.sat.s32", [0x7FFFFFFF, 1], [0x7FFFFFFF])
    assert not _judge("add.sat.s32", [0x7FFFFFFF, 1], [0x80000000])
    assert not _judge("sub.sat.s32", [0x80000000, 1], [0x7FFFFFFF])
    assert not _judge("cvt.sat.u8.s32", [0xFFFFFFFF], [0xFF])
    assert _judge("cvt.sat.u8.s32", [0xFFFFFFFF], [0])
    assert not _judge("mad.hi.sat.s32", [0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF], [0xBFFFFFFE])
    assert _judge("mad.hi.sat.s32", [0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF], [0x7FFFFFFF])
    assert _judge("mad.hi.s32", [0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF], [0xBFFFFFFE])
    assert _judge("shr.s32", [0x80000000, 40], [0xFFFFFFFF]) and _judge("shl.b32", [1, 32], [0])


def test_expected_text_and_argument_checks():
    assert S.expected_text(DB.form("cvt.rn.f16.f32"), [0x477FF000]) == "0x7c00"
    assert S.expected_text(DB.form("abs.f32"), [0x7FC00000]) == "any NaN"
    assert S.expected_text(DB.form("setp.lt.f32"), [0, 0x3F800000]) == "p=1 q=0"
    assert S.expected_text(DB.form("setp.lt.f16"), [0, 0x3C00]) == "p=1"
    assert S.oracle_name(DB.form("add.s32")) == "Python integers"
    assert S.oracle_name(DB.form("setp.lt.f32")) == "ISA comparison rules"
    with pytest.raises(ValueError):
        S.judge(DB.form("setp.lt.f16"), [np.zeros(1, np.uint64)] * 2, [np.zeros(1, bool)] * 2)
    with pytest.raises(ValueError):
        S.judge(DB.form("add.s32"), [np.zeros(3, np.uint64)] * 2, [np.zeros(2, np.uint64)])
    # broadcasting, predicates as 0/1 ints, signed views of result patterns
    assert S.judge(DB.form("selp.s32"), [np.array([5]), np.array([7]), np.array([1, 0])],
                   [np.array([5, 7], np.int32)]).tolist() == [True, True]
    assert S.judge(DB.form("neg.s16"), [np.array([1])], [np.array([-1], np.int16)]).tolist() == [True]


def test_the_oracle_imports_nothing_from_the_model():
    tree = ast.parse(inspect.getsource(S))
    names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [n for n in names if n and n.startswith(("tilecheck.model", "tilecheck.sim", "tilecheck.semantics"))]
    assert "from_fraction(" not in inspect.getsource(S)


def test_operands_are_deterministic_and_hit_the_edges():
    form = DB.form("cvt.rn.f16.f32")
    n = function_case_count(form, 16)
    a = function_operands(form, n, np.random.default_rng(3))[0]
    b = function_operands(form, n, np.random.default_rng(3))[0]
    assert (a == b).all() and a.dtype == np.uint64 and len(a) == n
    assert {0x477FF000, 0x477FE000, 0x7F800000, 0xFF800000, 0x80000000} <= set(a.tolist())
    form = DB.form("min.f32")
    a, b = function_operands(form, 32, np.random.default_rng(0))
    pairs = set(zip(a.tolist(), b.tolist()))
    assert (0x80000000, 0) in pairs and (0, 0x80000000) in pairs
    f = get_format("f32")
    assert any(f.is_nan(np.array([x], np.uint32))[0] and not f.is_nan(np.array([y], np.uint32))[0] for x, y in pairs)
    shifts = function_operands(DB.form("shr.s32"), 32, np.random.default_rng(0))[1].tolist()
    assert {0, 1, 31, 32, 33, 0xFFFFFFFF} <= set(shifts)
    c = function_operands(DB.form("setp.lt.and.f32"), 32, np.random.default_rng(0))[2]
    assert c.dtype == bool and c.any() and not c.all()
    assert function_case_count(DB.form("and.pred"), 4) == 4  # cheap forms need few cases
    assert function_case_count(DB.form("cvt.rn.f16.f32"), 16) > 64  # conversions need their edge set


@pytest.mark.parametrize("mutation", ["lt_as_le", "rn_as_rz", "ftz_ignored", "rni_as_rzi"])
def test_the_edge_inputs_expose_a_wrong_oracle(monkeypatch, mutation):
    """The operands are strong enough that a subtly wrong reading disagrees with the model: if the
    edge set lost its ties, NaN pairs or subnormals, these would pass silently."""
    by_key = {"lt_as_le": "cmp.", "rn_as_rz": "cvt.", "ftz_ignored": "", "rni_as_rzi": "cvt."}
    if mutation == "lt_as_le":
        monkeypatch.setitem(S._CMP, "lt", int.__le__)
    elif mutation == "rn_as_rz":
        rnd = S._round
        monkeypatch.setattr(S, "_round", lambda f, n, s, e, m: rnd(f, n, s, e, "rz" if m == "rn" else m))
    elif mutation == "ftz_ignored":
        monkeypatch.setattr(S, "_flush", lambda f, b: b)
    else:
        rint = S._round_int
        monkeypatch.setattr(S, "_round_int", lambda n, s, e, m: rint(n, s, e, "rzi" if m == "rni" else m))
    S._compiled.cache_clear()
    try:
        forms = [f for f in FORMS if f.semantics.key.startswith(by_key[mutation])
                 and (mutation != "ftz_ignored" or f.semantics.get("ftz"))]
        assert len(_disagreements(forms)) > 20
    finally:
        S._compiled.cache_clear()


def test_without_gmpy2_the_exact_rounding_is_the_oracle():
    """A base install (no gmpy2) still judges conversions, with the module's exact rounding."""
    code = (
        "import sys; sys.modules['gmpy2'] = None\n"
        "import numpy as np\n"
        "from tilecheck.oracle import surround as S\n"
        "from tilecheck.spec.database import load_database\n"
        "f = load_database().form('cvt.rn.f16.f32')\n"
        "assert not S.HAVE_GMPY2 and S.oracle_name(f) == 'exact rationals'\n"
        "x = [np.array([0x3F801001, 0x477FF000], np.uint64)]\n"
        "assert S.judge(f, x, [np.array([0x3C01, 0x7C00])]).tolist() == [True, True]\n"
        "assert S.judge(f, x, [np.array([0x3C02, 0x7BFF])]).tolist() == [False, False]\n"
        "print('ok')\n")
    root = Path(__file__).resolve().parents[2]  # this checkout's tilecheck, not an installed one
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
