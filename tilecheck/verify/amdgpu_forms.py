"""``tilecheck verify v_fma_f32`` (and every AMD form): the ``amdgpu-form`` item handler.

Three checks per form, each a :class:`~tilecheck.verify.report.CheckResult`:

* ``examples`` -- every vector the form's spec records holds in the model for its variants (for
  the contract forms ``v_rcp_*``/``v_rsq_*``/``v_sqrt_*``, which record none, the contract's
  special-value table: the model's result for each special operand is the class the spec names);
* ``oracle`` -- the model on edge-biased and random operands under varied MODE, both semantics
  variants, against a reference that shares no code with it (:mod:`tilecheck.verify.amdgpu_exact`,
  :mod:`tilecheck.verify.amdgpu_oracle`); families without such a reference here (max/min,
  compares, class, frexp) report the check skipped and where they are tested instead;
* ``encoding`` -- the form's recorded encodings assemble to the recorded bytes with llvm-mc 19+
  (skipped with the reason when none is installed).
"""

from __future__ import annotations

import numpy as np

from tilecheck.amdgpu import contract as rcp_model
from tilecheck.amdgpu.encoding import assemble_all, llvm_mc
from tilecheck.amdgpu.instructions import evaluate
from tilecheck.verify import amdgpu_oracle as ref
from tilecheck.verify.amdgpu_cases import operands
from tilecheck.verify.amdgpu_exact import (arith, arith_source, class_word, convert, fma_into, rcp_allowed,
                                           root_allowed, scale_exact)
from tilecheck.verify.report import CheckResult

__all__ = ["amdgpu_form_checks", "examples_check", "oracle_check", "encoding_check"]

ORACLE_CASES = 240  # operand sets per variant: the 95 forms together take about five seconds
RCP_CASES = 160
VARIANTS = ("documented", "observed")
_MAX_DETAILS = 8
_REFERENCES = {"v_div_scale": ref.div_scale, "v_div_fmas": ref.div_fmas, "v_div_fixup": ref.div_fixup}
# correctly rounded families: the arith() operation and the order of its operands
_ROUNDED = {"v_add": ("add", "S0", "S1"), "v_sub": ("sub", "S0", "S1"), "v_subrev": ("sub", "S1", "S0"),
            "v_mul": ("mul", "S0", "S1"), "v_fma": ("fma", "S0", "S1", "S2"), "v_fma_mix": ("fma", "S0", "S1", "S2")}
_EXACT = {"v_fma_mixlo", "v_fma_mixhi", "v_cvt_f16", "v_cvt_f32", "v_cvt_f64", "v_ldexp"}
_TESTED_ELSEWHERE = ("no independent reference in tilecheck verify for {family}; tests/amdgpu/"
                     "test_elementwise_specs.py checks it against numpy")
_ROOTS = ("v_rsq", "v_sqrt")


def _family(form, db):
    return db.extras["amdgpu"]["families"][form.family]


def _guarded(name: str, fn, *args) -> CheckResult:
    # one broken check (even a bug here) must not hide the other checks' results
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - reported as this check's failure
        return CheckResult(name, failures=1, details=[f"{type(exc).__name__}: {exc}"])


def amdgpu_form_checks(item, ctx) -> list[CheckResult]:
    """The ``examples``, ``oracle`` and ``encoding`` checks of one AMD form item."""
    form = item.payload
    return [_guarded("examples", examples_check, form, ctx), _guarded("oracle", oracle_check, form, ctx),
            _guarded("encoding", encoding_check, form, ctx)]


def _array(value) -> np.ndarray:
    return np.array([value], dtype=bool if isinstance(value, bool) else np.uint64)


def _out(value) -> object:
    return bool(value) if isinstance(value, (bool, np.bool_)) else int(value)


def examples_check(form, ctx) -> CheckResult:
    """Every recorded vector of the form holds in the model, per listed variant."""
    result = CheckResult("examples")
    if form.variant("observed").contract is not None:
        return _contract_examples(form, result)
    for v in (v for v in _family(form, ctx.db).vectors if v.form == form.name):
        for variant in v.variants:
            out = evaluate(form, variant, dict(v.mode), **{k: _array(x) for k, x in v.operands})
            result.cases += 1
            wrong = [f"{k} {_out(out[k][0])!r} (recorded {want!r})" for k, want in v.results if _out(out[k][0]) != want]
            if wrong:
                result.failures += 1
                result.details.append(f"{variant} {dict(v.operands)}: {', '.join(wrong)} -- {v.source} "
                                      f"({v.location})")
    result.details.insert(0, f"{result.cases} recorded vector/variant pairs evaluated by the model; "
                             + ("none recorded" if not result.cases else f"{result.cases - result.failures} hold"))
    return result


def _contract_examples(form, result: CheckResult) -> CheckResult:
    f = form.fmt
    words = {"+0": 0, "-0": f.sign_mask, "+inf": f.inf, "-inf": f.inf | f.sign_mask, "nan": f.default_nan,
             "-finite": f.sign_mask | (f.bias << f.mantissa_bits)}  # -1.0 stands for the negative values
    for variant in VARIANTS:
        c = form.variant(variant).contract
        for special in c.specials:
            x = np.array([words[special.operands[0]]], dtype=np.uint64)
            if c.operation == "rcp":
                got = int(rcp_model.choose(form, variant, x, np.zeros(1, dtype=int), np.random.default_rng(0))[0])
            else:  # the one value the model enumerates for a special operand
                got = int(rcp_model.enumerate_allowed(form, variant, x)[0][0, 0])
            result.cases += 1
            if not class_word(f, got, special.result):
                result.failures += 1
                result.details.append(f"{variant}: rcp({special.operands[0]}) = {got:#x}, spec says {special.result}")
    what = "reciprocal" if form.family == "v_rcp" else "result"
    result.details.insert(0, f"no vectors recorded; the model's {what} of each of the contract's {result.cases} "
                             "special operands (both variants) is the class the spec names")
    return result


def _same(f, got: int, want: int, by_class: bool) -> bool:
    if by_class and ref.Bits(f, got).nan and ref.Bits(f, want).nan:
        return True  # v_fma/v_mul: the spec says NaN bits were not researched, compare NaNs by class
    return got == want


def _reference(form, variant: str, rm: str, denorm: int, ops: dict) -> dict:
    """The independent reference's destinations for one case."""
    din, dout = bool(denorm & 1), bool(denorm & 2)  # FP_DENORM: bit 0 keeps inputs, bit 1 outputs
    if form.family in _ROUNDED:
        op, *names = _ROUNDED[form.family]
        return {"D": arith(op, form.fmt, rm, din, dout, *[ops[k] for k in names])}
    if form.family in ("v_fma_mixlo", "v_fma_mixhi"):
        return {"D": fma_into(form.input_format, form.output_format, rm, din, dout, ops["S0"], ops["S1"], ops["S2"])}
    if form.family.startswith("v_cvt_"):
        return {"D": convert(form.input_format, form.output_format, rm, din, dout, ops["S0"])}
    if form.family == "v_ldexp":
        bits = form.int_bits("S1")
        n = ((ops["S1"] & ((1 << bits) - 1)) ^ (1 << (bits - 1))) - (1 << (bits - 1))
        return {"D": scale_exact(form.fmt, rm, din, dout, ops["S0"], n)}
    return _REFERENCES[form.family](form.fmt, variant, rm, din, dout, *[ops[o.name] for o in form.sources])


def _by_mode(cases: list) -> dict:
    groups: dict = {}
    for mode, ops in cases:
        groups.setdefault(mode, []).append(ops)
    return groups


def oracle_check(form, ctx) -> CheckResult:
    """The model against the independent reference on generated operands, both variants."""
    result = CheckResult("oracle")
    known = set(_REFERENCES) | set(_ROUNDED) | _EXACT | {"v_rcp"} | set(_ROOTS)
    if form.family not in known:
        return CheckResult("oracle", skipped=_TESTED_ELSEWHERE.format(family=form.family))
    rng = np.random.default_rng([ctx.seed, sum(form.name.encode())])
    # a reciprocal operand costs 12 exact verdicts, an instruction's operand set 2 evaluations
    cases = operands(form, rng, RCP_CASES if form.family == "v_rcp" else ORACLE_CASES)
    if form.family == "v_rcp":
        return _rcp_oracle(form, cases, rng, result)
    if form.family in _ROOTS:
        return _root_oracle(form, cases, rng, result)
    f = form.output_format
    arithmetic = form.family in _ROUNDED or form.family in _EXACT
    for variant in VARIANTS:
        for (rm, denorm), group in _by_mode(cases).items():
            arrays = {o.name: np.array([g[o.name] for g in group], dtype=bool if o.kind == "lane-bit" else np.uint64)
                      for o in form.sources}
            out = evaluate(form, variant, {"round": rm, "denorm": denorm}, **arrays)
            for i, ops in enumerate(group):
                want = _reference(form, variant, rm, denorm, ops)
                got = {k: _out(out[k][i]) for k in want}
                result.cases += 1
                if all(_same(f, got[k], w, arithmetic) if k == "D" else got[k] == w for k, w in want.items()):
                    continue
                result.mismatches += 1
                if len(result.details) < _MAX_DETAILS:
                    result.details.append(f"{variant} MODE round={rm} denorm={denorm} "
                                          f"{ {k: _hexed(v) for k, v in ops.items()} }: model "
                                          f"{ {k: _hexed(v) for k, v in got.items()} }, reference "
                                          f"{ {k: _hexed(v) for k, v in want.items()} }")
    what = (f"the model agrees with {arith_source()} under MODE flushing" if form.family in _ROUNDED else
            "the model agrees with the exact rational value rounded once (Format.from_fraction) under MODE "
            "flushing, NaNs by class" if arithmetic else
            "the model agrees with a scalar re-implementation of the manual's pseudo-code (documented) and "
            "rocJITsu's hardware-checked rules (observed) from reference/amd-division.md")
    result.details.insert(0, f"{result.cases} cases ({len(cases)} operand sets x {len(VARIANTS)} variants, edge "
                             f"values and MODE roundings/denormals, seed {ctx.seed}): {what}"
                          + (f"; {result.mismatches} disagree" if result.mismatches else ""))
    return result


def _hexed(v):
    return v if isinstance(v, bool) else hex(v)


def _rcp_oracle(form, cases, rng, result: CheckResult) -> CheckResult:
    """Every reciprocal the model picks (nearest, lowest, highest, random) is inside the contract
    decided with exact rationals, and the model's ``allowed`` agrees with that exact decision on
    the picks and one step either side of them."""
    f = form.fmt
    # every operand with every pick strategy, in one vectorised call per variant
    xs = np.repeat(np.array([ops["S0"] for _, ops in cases], dtype=np.uint64), 4)
    strategies = np.tile(np.arange(4), len(cases))
    for variant in VARIANTS:
        c = form.variant(variant).contract
        picks = rcp_model.choose(form, variant, xs, strategies, rng)
        for j, cand in enumerate([picks, _steps(f, picks, -1), _steps(f, picks, 1)]):
            # the exact-rational oracle decides the exact reading, so the model is asked for that one
            verdict = rcp_model.allowed(form, variant, cand, xs, reading="exact")
            for i in range(len(xs)):
                exact = rcp_allowed(f, c, int(xs[i]), int(cand[i]))
                result.cases += 1
                if (j == 0 and not exact) or bool(verdict[i]) != exact:
                    result.mismatches += 1
                    if len(result.details) < _MAX_DETAILS:
                        result.details.append(f"{variant} x={int(xs[i]):#x} r={int(cand[i]):#x}: model allowed "
                                              f"{bool(verdict[i])}, exact contract {exact}"
                                              + (" (a model pick)" if j == 0 else ""))
    result.details.insert(0, f"{result.cases} verdicts ({len(cases)} operands x {len(VARIANTS)} variants x 4 pick "
                             "strategies x 3 candidates: the pick and one step either side): the model's picks "
                             "lie inside the spec's contract and its allowed() agrees with the contract decided "
                             "in exact rationals")
    return result


def _root_oracle(form, cases, rng, result: CheckResult) -> CheckResult:
    """Every value the model enumerates as allowed (v_rsq/v_sqrt) is allowed by the contract
    decided with exact rationals, and one step outside the enumerated ends is not."""
    f = form.fmt
    xs = np.array([ops["S0"] for _, ops in cases[:RCP_CASES // 4]], dtype=np.uint64)
    for variant in VARIANTS:
        c = form.variant(variant).contract
        values, valid, _ = rcp_model.enumerate_allowed(form, variant, xs, rng=rng, reading="exact")
        for i, x in enumerate(xs):
            row = values[i][valid[i]]
            xf = ref.flush(f, int(x)) if c.flush_inputs else int(x)
            ends = [] if ref.Bits(f, int(row[0])).nan else [int(row.min()) - 1, int(row.max()) + 1]
            for r, want in [(int(v), True) for v in row] + [(e, False) for e in ends if 0 < e & f.magnitude_mask < f.inf]:
                result.cases += 1
                if root_allowed(f, c, xf, r) != want:
                    result.mismatches += 1
                    if len(result.details) < _MAX_DETAILS:
                        result.details.append(f"{variant} x={int(x):#x} r={r:#x}: model says {want}, exact contract "
                                              f"{not want}")
    result.details.insert(0, f"{result.cases} verdicts ({xs.size} operands x {len(VARIANTS)} variants): every result "
                             "the model enumerates lies inside the spec's contract decided in exact rationals, and "
                             "one step outside the enumerated values does not")
    return result


def _steps(f, bits: np.ndarray, k: int) -> np.ndarray:
    """Finite patterns moved ``k`` steps in magnitude (Inf/NaN kept), sign kept."""
    mag = (bits & np.uint64(f.magnitude_mask)).astype(np.int64)
    finite = mag < f.inf
    moved = np.clip(mag + k, 0, f.inf)
    return np.where(finite, (bits & np.uint64(f.sign_mask)) | moved.astype(np.uint64), bits)


def encoding_check(form, ctx) -> CheckResult:
    """The form's recorded encodings assemble to their bytes (llvm-mc 19+), or the reason not."""
    encs = [e for e in _family(form, ctx.db).encodings
            if e.asm.split()[0].removesuffix("_e32").removesuffix("_e64") == form.name]
    if not encs:
        return CheckResult("encoding", skipped=f"no encoding recorded for {form.name}")
    mc, where = llvm_mc()
    if mc is None:
        return CheckResult("encoding", skipped=where)
    result = CheckResult("encoding")
    for e, (got, err) in zip(encs, assemble_all(mc, encs)):
        result.cases += 1
        if got != e.bytes:
            result.failures += 1
            shown = "rejected: " + err if got is None else "[" + ",".join(f"{b:#04x}" for b in got) + "]"
            result.details.append(f"{e.asm} (-mcpu={e.mcpu} {e.mattr}): {shown}, recorded "
                                  f"[{','.join(f'{b:#04x}' for b in e.bytes)}] ({e.location})")
    result.details.insert(0, f"{result.cases} recorded encoding(s) assembled by {where}: "
                             f"{result.cases - result.failures} give the recorded bytes")
    return result
