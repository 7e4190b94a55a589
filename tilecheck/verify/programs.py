"""``tilecheck verify PROGRAM.py`` (and every example program): check, emit, assemble, run.

The ``program`` handler of :data:`tilecheck.verify.runner.ITEM_HANDLERS`. For each
``@T.function`` program in the file:

* ``legality`` -- :meth:`Program.check` finds no error (example programs must be legal);
* ``emission`` -- :func:`tilecheck.emit.emit_program` produces the PTX module;
* ``ptxas`` -- ptxas assembles it for the target (skipped, not failed, without ptxas);
* ``run(cpu)`` -- on several generated inputs (edge-biased bit patterns of each tensor's dtype,
  small integers for integer scalars) the emitted PTX executed by the simulator
  (:func:`tilecheck.sim.run_program`) and the IR interpreted directly with the model
  (:func:`tilecheck.sim.interpret_program`) leave bit-identical tensors;
* ``run(gpu)`` -- with the gpu backend: the program's kernel on the device leaves the same bits
  as the IR interpreter (programs whose forms are all exact; with approximate forms the device may
  return any value their contracts allow, which only the per-form checks can judge -- skipped with
  that reason).

The cases of a run check are the tensor elements compared.
"""

from __future__ import annotations

import warnings

import numpy as np

from tilecheck import ptxas
from tilecheck.emit import emit_program
from tilecheck.errors import TilecheckError
from tilecheck.inputs.generators import edge_biased
from tilecheck.legality.checker import check_program
from tilecheck.sim import interpret_program, run_program
from tilecheck.sim.errors import ApproximateReferenceWarning
from tilecheck.tile.loader import load_programs
from tilecheck.verify.checks import backend_for, ptxas_support
from tilecheck.verify.report import CheckResult

__all__ = ["verify_program", "program_inputs", "TRIALS"]

TRIALS = 4
"""Input sets per program and run check."""


def program_inputs(program, rng: np.random.Generator, formats) -> list:
    """One argument per parameter: tensors filled with edge-biased bit patterns of their dtype
    (integers: random, bool: 0/1), integer scalars in [0, 64), float scalars edge-biased bits;
    ``formats`` is the spec database's formats table (the dtypes' formats are looked up there)."""
    args = []
    for p in program.params:
        if p.is_tensor:
            buffer = p.view.buffer
            dt = buffer.dtype
            n = buffer.size
            if dt.kind == "float":
                bits = edge_biased(formats[dt.format], n, rng)
                args.append(np.ascontiguousarray(bits.astype(np.dtype(f"uint{dt.bits}"))))
            elif dt.kind == "bool":
                args.append(rng.integers(0, 2, n).astype(np.uint8))
            else:
                hi = (1 << min(dt.bits, 63)) - 1
                args.append(rng.integers(0, hi, n, dtype=np.uint64, endpoint=True)
                            .astype(np.dtype(f"uint{dt.bits}")))
        else:
            dt = p.scalar.dtype
            if dt.kind == "float":
                fmt = formats[dt.format]
                bits = int(edge_biased(fmt, 1, rng)[0])
                args.append(np.dtype(f"uint{dt.bits}").type(bits))
            elif dt.kind == "bool":
                args.append(bool(rng.integers(0, 2)))
            else:
                args.append(int(rng.integers(0, 64)))
    return args


def _copy(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _compare(program, left: list, right: list, what: str, result: CheckResult) -> None:
    tensors = [p for p in program.params if p.is_tensor]
    left_t = [a for a in left if isinstance(a, np.ndarray)]
    right_t = [a for a in right if isinstance(a, np.ndarray)]
    for p, a, b in zip(tensors, left_t, right_t):
        result.cases += int(a.size)
        diff = np.nonzero(a.reshape(-1) != b.reshape(-1))[0]
        if diff.size:
            result.mismatches += int(diff.size)
            i = int(diff[0])
            result.details.append(f"{program.name}: {p.name}[{i}] = 0x{int(a[i]):x} ({what}), "
                                  f"0x{int(b[i]):x} (IR interpreted with the model); {diff.size} element(s) differ")


def _approximate_forms(program, ctx) -> list[str]:
    forms = []
    for call in program.calls:
        try:
            form = ctx.db.form(call.spelling, ctx.target)
        except TilecheckError:
            continue
        if form.kind == "contract":
            forms.append(form.name)
    return sorted(set(forms))


def verify_program(item, ctx) -> list[CheckResult]:
    """The checks of one program file (see the module docstring)."""
    legality, emission = CheckResult("legality"), CheckResult("emission")
    ptx_check, cpu_run = CheckResult("ptxas"), CheckResult("run(cpu)")
    checks = [legality, emission, ptx_check, cpu_run]
    backend = backend_for(ctx)
    gpu_run = CheckResult("run(gpu)") if getattr(backend, "name", "") == "gpu" else None
    if gpu_run is not None:
        checks.append(gpu_run)
    try:
        programs = load_programs(str(item.payload))
    except TilecheckError as exc:
        legality.failures += 1
        legality.details.append(str(exc))
        return [legality]
    target = ctx.db.target(ctx.target).name
    ptx_check.skipped = ptxas_support(ctx).reason
    for program in programs:
        legality.cases += 1
        errors = [d for d in check_program(program, target, db=ctx.db) if d.severity == "error"]
        if errors:
            legality.failures += 1
            legality.details.extend(str(d) for d in errors[:10])
            continue
        emission.cases += 1
        try:
            ptx = emit_program(program, target=target, db=ctx.db)
        except TilecheckError as exc:
            emission.failures += 1
            emission.details.append(f"{program.name}: {exc}")
            continue
        if ptx_check.skipped is None:
            ptx_check.cases += 1
            outcome = ptxas.assemble(ptx, target)
            if not outcome.ok:
                ptx_check.failures += 1
                ptx_check.details.append(f"{program.name}: ptxas -arch={target}: "
                                         + "; ".join(m.text for m in outcome.errors))
        approx = _approximate_forms(program, ctx)
        if approx:
            note = (f"{program.name}: approximate forms ({', '.join(approx)}) give the model's reference value "
                    "on the CPU")
            cpu_run.details.append(note)
        for trial in range(TRIALS):
            rng = np.random.default_rng([ctx.seed, trial, sum(program.name.encode())])
            args = program_inputs(program, rng, ctx.db.formats)
            emitted, interpreted = _copy(args), _copy(args)
            _run_both(program, target, ctx, emitted, interpreted, cpu_run, ApproximateReferenceWarning)
            if gpu_run is not None:
                if approx:
                    gpu_run.skipped = (f"approximate forms ({', '.join(approx)}): a device may return any value "
                                       "their contracts allow; the per-form checks judge them")
                    continue
                on_device = _copy(args)
                backend.run_program(program, on_device, target)
                _compare(program, on_device, interpreted, "GPU", gpu_run)
    return checks


def _run_both(program, target, ctx, emitted, interpreted, result, warning_class) -> None:
    with warnings.catch_warnings():
        # the CPU side's approximate-form warning is expected here and noted in the details
        warnings.simplefilter("ignore", warning_class)
        try:
            run_program(program, *emitted, target=target, db=ctx.db)
            interpret_program(program, *interpreted, target=target, db=ctx.db)
        except TilecheckError as exc:
            result.failures += 1
            result.details.append(f"{program.name}: {exc}")
            return
    _compare(program, emitted, interpreted, "emitted PTX, simulated", result)

