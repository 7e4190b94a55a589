"""``tilecheck verify`` checks of the instructions around the arithmetic (registry kind ``function``).

Two comparisons per form, both judged by :mod:`tilecheck.oracle.surround` (MPFR or exact
rationals for float conversions, Python integers for integer operations, comparisons and
min/max written from the ISA text), which shares no code with the model:

* ``oracle`` -- the model (:func:`tilecheck.model.api.evaluate`) on edge-biased and random
  operands: establishes that the model computes what the ISA text says;
* ``differential`` -- the form's single-instruction kernel (:mod:`tilecheck.emit.function_kernel`)
  on the run's backend (``cpu``: the simulator, whose instruction under test runs through the
  model and whose harness does not; ``gpu``: the hardware through CuPy), then a predicated run
  whose masked-off threads must keep their outputs: establishes that the emitted kernel
  computes what the ISA text says.

Cases per form: the form's edge set, and at least ``--cases`` when given, else
:data:`FUNCTION_CASES`: these forms are cheap and their interesting inputs few; the report says
how many each got.
"""

from __future__ import annotations

import numpy as np

from tilecheck.diff.cases import form_key
from tilecheck.emit import cvta_kernel, function_kernel
from tilecheck.inputs.surround import function_case_count, function_operands
from tilecheck.oracle import surround
from tilecheck.verify.report import CheckResult

FUNCTION_CASES = 64
"""Cases per function form unless ``--cases`` says otherwise (the edge set always runs whole)."""
DETAILS = 5


def cases_for(form, ctx) -> int:
    """How many cases ``form`` gets: its whole edge set, and at least ``--cases`` when given, else
    :data:`FUNCTION_CASES`."""
    return function_case_count(form, ctx.function_cases or FUNCTION_CASES)


def operands_for(form, ctx, index: int, n: int) -> list[np.ndarray]:
    """Deterministic operands of one run (``index`` 0: plain, 1: predicated)."""
    rng = np.random.default_rng([ctx.seed, form_key(form), index])
    return function_operands(form, n, rng)


def _oracle_view(form, arrays: list, specs) -> list[np.ndarray]:
    """Arrays as the oracle takes them: bool for predicates, uint64 patterns otherwise."""
    return [np.asarray(a) != 0 if s.ptx_type == "pred" else np.asarray(a).astype(np.uint64)
            for a, s in zip(arrays, specs)]


def _results_view(form, outs: list) -> list[np.ndarray]:
    (dst,) = form.destinations
    return _oracle_view(form, outs, [dst] * len(outs))


def _case_text(form, operands: list, outs: list, j: int) -> str:
    ops = [int(o[j]) for o in operands]
    got = ", ".join(_value_text(form, form.destinations[0], int(o[j])) for o in outs)
    shown = ", ".join(f"{s.name}={_value_text(form, s, v)}" for s, v in zip(form.sources, ops))
    return f"{form.name} {shown}: got {got}; the ISA text allows {surround.expected_text(form, ops)}"


def _value_text(form, spec, bits: int) -> str:
    if spec.ptx_type == "pred":
        return str(int(bool(bits)))
    text = f"0x{bits:0{max(1, spec.container_bits // 4)}x}"
    if spec.format is None:
        return text
    width = spec.format.width
    lanes = [spec.format.describe((bits >> (k * width)) & ((1 << width) - 1)) for k in range(spec.lanes)]
    return text + " " + " | ".join(f"{value} ({cls})" for value, cls in lanes)  # lane 0 first


def _judge(form, operands: list, outs: list, result: CheckResult, prefix: str = "") -> None:
    ok = np.asarray(surround.judge(form, _oracle_view(form, operands, form.sources), _results_view(form, outs)))
    result.cases += int(ok.size)
    bad = np.flatnonzero(~ok)
    result.mismatches += int(bad.size)
    for j in bad[:DETAILS]:
        result.details.append(prefix + _case_text(form, operands, outs, int(j)))


def check_oracle(form, ctx, model_backend) -> CheckResult:
    """The model on the form's cases, judged by the independent oracle."""
    result = CheckResult("oracle")
    if form.kind != "function":
        result.skipped = "arithmetic and memory forms are judged by the model's own oracles in the test suite"
        return result
    reason = surround.supports(form)
    if reason is not None:
        result.skipped = reason
        return result
    n = cases_for(form, ctx)
    operands = operands_for(form, ctx, 0, n)
    _judge(form, operands, model_backend.run_function(form, operands), result)
    result.details.insert(0, f"{n} cases; judged by {surround.oracle_name(form)}")
    return result


def check_cvta(form, ctx, backend, result: CheckResult) -> None:
    """``cvta``: the value read through the address the instruction yields is the one placed there
    (:mod:`tilecheck.emit.cvta_kernel`), plain and predicated."""
    n = max(2, ctx.function_cases or FUNCTION_CASES)
    rng = np.random.default_rng([ctx.seed, form_key(form)])
    values = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    for mask in (None, (rng.random(n) < 0.5).astype(np.uint32)):
        olds = None if mask is None else [rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)]
        (got,) = backend.run_function(form, [values], mask=mask, olds=olds)
        want = cvta_kernel.expected_value(form, values, n, mask, None if olds is None else olds[0])
        bad = np.flatnonzero(got != want)
        result.cases += n
        result.mismatches += int(bad.size)
        for j in bad[:DETAILS]:
            result.details.append(f"{'predicated ' if mask is not None else ''}{form.name}: thread {int(j)} read "
                                  f"0x{int(got[j]):08x} through the converted address, expected 0x{int(want[j]):08x}")
    result.details.insert(0, f"{n} threads plain and {n} predicated: each reads 32 bits back through the address "
                             "the instruction yields")


def check_differential(form, ctx, backend, result: CheckResult) -> None:
    """The kernel on ``backend``, plain then predicated, judged by the oracle (into ``result``)."""
    if form.family == "cvta":
        check_cvta(form, ctx, backend, result)
        return
    reason = surround.supports(form)
    if reason is not None:
        result.skipped = reason
        return
    n = cases_for(form, ctx)
    operands = operands_for(form, ctx, 0, n)
    _judge(form, operands, backend.run_function(form, operands), result)
    result.details.insert(0, f"{n} cases (+ a predicated run); judged by {surround.oracle_name(form)}")
    # predicated: masked-off threads keep the old outputs, the others compute
    operands = operands_for(form, ctx, 1, n)
    rng = np.random.default_rng([ctx.seed, form_key(form), 1 << 20])
    mask = (rng.random(n) < 0.5).astype(np.uint32)
    (dst,) = form.destinations
    dtype = function_kernel.operand_dtype(dst)
    count = len(function_kernel.destination_names(form))
    high = 2 if dst.ptx_type == "pred" else 1 << min(dst.container_bits, 63)
    olds = [rng.integers(0, high, size=n, dtype=np.uint64).astype(dtype) for _ in range(count)]
    outs = backend.run_function(form, operands, mask=mask, olds=olds)
    on = mask != 0
    kept = np.all([o[~on] == old[~on] for o, old in zip(outs, olds)], axis=0) if (~on).any() else np.ones(0, bool)
    result.cases += int((~on).sum())
    if (~kept).any():
        result.mismatches += int((~kept).sum())
        result.details.append(f"predicated {form.name}: {int((~kept).sum())} masked-off thread(s) overwrote "
                              "an output")
    if on.any():
        _judge(form, [o[on] for o in operands], [o[on] for o in outs], result, "predicated ")

