#!/usr/bin/env python3
"""The GPU campaign: one script that a session with a lent NVIDIA GPU runs as-is (< 10 min on an H200).

    OUT=/path/to/dir python3 tools/gpu_campaign.py        # the campaign (CuPy and a GPU needed)
    python3 tools/gpu_campaign.py --tiny --out DIR         # the same GPU code paths, tiny sizes (smoke test)
    python3 tools/gpu_campaign.py --dry-run --out DIR      # no GPU: numpy + tilecheck's CPU simulator, tiny sizes

On the lent H200 machine (its image has Python 3.12, numpy, PyYAML, CuPy 14.2 and CUDA 13's ptxas,
but no ``jsonschema``, which the spec loader needs, and no network), carry the missing wheels:
download them here once (``echo /.whl/ >> .git/info/exclude``, then ``python3 -m pip download
--no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform
manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl jsonschema jsonschema-specifications
referencing rpds-py``) and run, with ``carry=[".whl"]`` and ``timeout_s=600``::

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site
    .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 && python3 tools/gpu_campaign.py

What it does, in order (each phase watches a time budget, ``--budget`` seconds, and records how far
it got):

1. **Open questions as recorded vector files** (:mod:`tilecheck.diff.vectors` format; check them
   later with ``tilecheck verify --vectors FILE``):
   ``nan.vec`` -- NaN result bits of every arithmetic form (NaN operands with payloads, signalling
   NaNs, invalid operations); ``ftz_tininess.vec`` -- ``.ftz`` forms on results just below 2^-126
   that round up to it (division, reciprocal, multiplication, fma under rn/rp/rm, square roots of
   subnormals): does the GPU flush before or after rounding? (``summary.json`` tallies, per form,
   how many cases each convention explains); ``div_approx_subnormal.vec`` -- ``div.approx/full``
   with subnormal and huge divisors; ``specials.vec.gz`` -- every arithmetic form on the cross product
   of special values (the special-value tables).
2. **Every PTX form** of the spec database: its single-instruction kernel via CuPy, the PTX loaded
   in memory (driver JIT) and a cubin from the local ptxas, on edge-biased and constructed hard
   cases, every result judged by :func:`tilecheck.allowed` on the device; a predicated run checks
   that masked-off threads keep their output. The forms around the arithmetic (cvt, setp, selp,
   min/max, integer and logic operations, cvta) follow, on the driver JIT, judged by the ISA-text
   oracle (:mod:`tilecheck.oracle.surround`) as ``tilecheck verify`` judges them; memory forms of
   every state space (.local, .param through a call, generic, .nc) run as the global ones.
   -> ``forms.json``.
3. **Exhaustive sweeps** of ``rcp.approx.ftz.f32``, ``sqrt.approx.ftz.f32``, ``rsqrt.approx.ftz.f32``,
   ``rcp.rn.f32``, ``sqrt.rn.f32``, ``sin.approx.ftz.f32``, ``cos.approx.ftz.f32``,
   ``tanh.approx.f32`` (2^32 inputs each) and the 2^32 high words of ``rcp.approx.ftz.f64`` /
   ``rsqrt.approx.ftz.f64``, reduced on the device: contract violations (with the first inputs),
   maximum error in ulp, relative or absolute as the contract states (sin/cos: in units of the
   bound of the input's range, measured where |a| <= 100pi), its argmax input, an error histogram.
   -> ``sweeps.json``.

4. **The compiler-PTX corpus** (``examples/cuda/manifest.yaml``): every ``.entry`` kernel with the
   elementwise ABI on a 16-bit unary or binary domain or an f32 unary one, its nvcc PTX loaded as it
   is (driver JIT) and run over every input (2^16 or 2^32; a 2^32 domain stops at its time share and
   says how far it got), each result compared with the correctly rounded reference (NaN by class).
   -> ``corpus/ENTRY.vec`` (the same header; one line per input the device does not round correctly:
   ``ENTRY OPERAND_HEX... RESULT_HEX  # correctly rounded``, read by :func:`read_corpus_vectors`, not
   by ``tilecheck verify --vectors``: the lines are a kernel's results, not a form's) and
   ``corpus.json`` (per kernel: inputs, checked, hardware_misrounded, the first ones). ``--phases``
   picks phases, ``--corpus`` kernels. A misrounding kernel does not change the exit code: it is
   what the phase measures.

Everything goes under ``$OUT`` (or ``--out``): ``summary.json`` (device: name, compute capability,
driver and runtime versions, CuPy, ptxas; timings; totals; the tininess tally), ``forms.json``,
``sweeps.json``, the four vector files (``specials.vec.gz`` gzip-compressed; ``tilecheck verify
--vectors`` reads it as it is) and ``log.txt`` -- eight files, plus ``corpus.json`` and ``corpus/``
from phase 4. An error on one form (say, a kernel
the driver's JIT rejects) is logged, listed under ``errors`` in summary.json, and the campaign goes
on. Exit 0 when every case agreed with the model and nothing failed, 1 when something disagreed or
failed (the files say what), 2 when the campaign could not run at all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

FILES = ("summary.json", "forms.json", "sweeps.json", "nan.vec", "ftz_tininess.vec", "div_approx_subnormal.vec",
         "specials.vec.gz", "log.txt")
PHASES = ("questions", "forms", "sweeps", "corpus")
SWEEPS = ("rcp.approx.ftz.f32", "sqrt.approx.ftz.f32", "rsqrt.approx.ftz.f32", "rcp.rn.f32", "sqrt.rn.f32",
          "rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64", "sin.approx.ftz.f32", "cos.approx.ftz.f32", "tanh.approx.f32")


# ---------------------------------------------------------------------------------------------
# the device (CuPy) or its dry-run stand-in (numpy + the CPU simulator)


class Device:
    """Where kernels run and in which array namespace the model judges them."""

    def __init__(self, db, dry: bool):
        from tilecheck.diff import backends

        self.db = db
        self.dry = dry
        if dry:
            self.backend = backends.CpuBackend(db=db)
            self.xp = np
            self.modes = ("sim",)
        else:
            self.backend = backends.GpuBackend(db=db)
            self.xp = self.backend.cupy
            self.modes = self.backend.modes

    def info(self) -> dict:
        """Device description for the headers and summary."""
        data = self.backend.info()
        if self.dry:
            data["note"] = "dry run: numpy and tilecheck's CPU simulator, not a GPU"
        return data

    def asarray(self, a):
        """A host array on the device."""
        return self.xp.asarray(a)

    def host(self, a) -> np.ndarray:
        """A device array on the host."""
        from tilecheck.diff.verdict import to_host

        return to_host(a)

    def run(self, form, operands, mode: str | None = None, mask=None, old=None):
        """Results of ``form`` on device operand arrays (device array)."""
        if self.dry:
            return self.backend.run(form, [np.asarray(o) for o in operands], mask=mask, old=old)
        return self.backend.run_device(form, operands, mask=mask, old=old, mode=mode or self.modes[0])


class Log:
    """Progress lines to stdout and log.txt."""

    def __init__(self, path: str):
        self.fh = open(path, "w", encoding="utf-8")
        self.start = time.perf_counter()

    def __call__(self, text: str) -> None:
        line = f"[{time.perf_counter() - self.start:7.1f} s] {text}"
        print(line, flush=True)
        self.fh.write(line + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


def _dtype(form):
    return {16: np.uint16, 32: np.uint32, 64: np.uint64}[form.operands[0].container_bits]


ONLY: tuple[str, ...] = ()
"""Families phases 1 and 2 are limited to (``--only``; empty: all)."""


def _forms(db):
    """Every PTX form (arithmetic and global memory first, then the forms around the arithmetic)."""
    forms = db.kernel_forms() + [f for f in db.ptx_forms() if not db.in_kernel_pipeline(f)]
    return [f for f in forms if not ONLY or f.family in ONLY]


def _arith_forms(db):
    return [f for f in _forms(db) if f.kind in ("exact", "contract")]


# ---------------------------------------------------------------------------------------------
# phase 1: open questions


def _element_specials(fmt, ternary: bool = False) -> list[int]:
    """Special element values: +-0, +-min subnormal, +-max subnormal, +-min normal, +-1, +-max,
    +-inf and a quiet NaN (``nan.vec`` covers NaN kinds); ternary forms drop max subnormal and
    min normal so the cross product stays near a thousand cases."""
    one = fmt.bias << fmt.mantissa_bits
    mags = [0, 1, one, fmt.max_finite, fmt.inf] + ([] if ternary else [fmt.mantissa_mask, fmt.min_normal])
    vals = mags + [m | fmt.sign_mask for m in mags]
    return vals + [fmt.exponent_mask | fmt.quiet_bit | 0x5]


def _nan_elements(fmt) -> list[tuple[int, ...]]:
    """NaN kinds: quiet with payload, signalling with payload, negative quiet, the default NaN."""
    qb = fmt.quiet_bit
    return [fmt.exponent_mask | qb | 0x15, fmt.exponent_mask | 0x15, fmt.sign_mask | fmt.exponent_mask | qb | 0x2a,
            fmt.default_nan]


def _containers(form, element_tuples: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Operand containers for element tuples (packed forms: the tuple in lane 0, 1.0 in the others,
    then the tuple in the last lane)."""
    fmt = form.format
    one = fmt.bias << fmt.mantissa_bits
    arity = len(form.sources)
    rows = []
    for t in element_tuples:
        if form.lanes == 1:
            rows.append(t)
            continue
        for lane in (0, form.lanes - 1):
            row = []
            for v in t:
                c = 0
                for k in range(form.lanes):
                    c |= (v if k == lane else one) << (k * fmt.width)
                row.append(c)
            rows.append(tuple(row))
    dtype = _dtype(form)
    return [np.array([r[i] for r in rows], dtype=dtype) for i in range(arity)]


def nan_cases(form) -> list[np.ndarray]:
    """NaN operands in every position (others 1.0 or another NaN) and the form's invalid operations."""
    from tilecheck.diff.cases import operation

    fmt = form.format
    one = fmt.bias << fmt.mantissa_bits
    arity = len(form.sources)
    tuples = []
    nans = _nan_elements(fmt)
    for pos in range(arity):
        for n in nans:
            t = [one] * arity
            t[pos] = n
            tuples.append(tuple(t))
    if arity >= 2:
        tuples.append(tuple(nans[:1] + nans[1:2] + [one] * (arity - 2)))
        tuples.append(tuple(nans[1:2] + nans[:1] + [one] * (arity - 2)))
    inf, ninf, zero = fmt.inf, fmt.inf | fmt.sign_mask, 0
    op = operation(form)
    invalid = {"div": [(zero, zero), (inf, inf), (ninf, inf)], "sqrt": [(one | fmt.sign_mask,), (ninf,)],
               "rsqrt": [(one | fmt.sign_mask,), (ninf,)], "add": [(inf, ninf)], "sub": [(inf, inf)],
               "mul": [(zero, inf)], "fma": [(zero, inf, one), (inf, one, ninf)], "rcp": []}.get(op, [])
    tuples += invalid
    if form.semantics.key in ("approx.rcp_hi", "approx.rsqrt_hi"):
        pass  # the upper-word forms read the f64 high word; full f64 NaN patterns are what they see
    return _containers(form, tuples)


def specials_cases(form) -> list[np.ndarray]:
    """The cross product of special element values over the form's operands."""
    import itertools

    fmt = form.format
    vals = _element_specials(fmt, ternary=len(form.sources) > 2)
    tuples = list(itertools.product(vals, repeat=len(form.sources)))
    return _containers(form, tuples)


def tininess_cases(form, n: int, rng) -> list[np.ndarray] | None:
    """Cases of an ``.ftz`` exact form where flushing before and after rounding may differ."""
    from tilecheck.diff.cases import operation
    from tilecheck.inputs import boundaries, generators

    if form.kind != "exact" or not form.semantics.params.get("ftz") or form.lanes != 1:
        return None
    fmt = form.format
    op = operation(form)
    rounding = form.semantics.params.get("rounding", "rn")
    mode = rounding if rounding in ("rn", "rp", "rm") else "rn"
    if op in ("div", "mul", "fma"):
        ops = list(generators.ftz_boundary_pairs(fmt, n, rng, op, mode))
        if op == "div":  # plus hard quotients with subnormal results
            a, b = generators.hard_division_pairs(fmt, n, rng, subnormal_fraction=1.0)
            ops = [np.concatenate([ops[0], a]), np.concatenate([ops[1], b])]
    elif op == "rcp":
        ops = [boundaries.rcp_ftz_boundary(fmt, n, rng)]
    elif op == "sqrt":
        sub = rng.integers(1, fmt.min_normal, n).astype(np.uint64) | np.where(rng.random(n) < 0.25,
                                                                              np.uint64(fmt.sign_mask), np.uint64(0))
        ops = [sub]
    elif op in ("add", "sub"):
        # sums of normals landing below 2^-126 are exact: flushing before or after rounding agree
        a = generators.edge_biased(fmt, n, rng)
        b = generators.edge_biased(fmt, n, rng)
        ops = [a, b]
    else:
        return None
    dtype = _dtype(form)
    return [np.asarray(o).astype(dtype) for o in ops]


def div_approx_cases(form, rng, n: int) -> list[np.ndarray] | None:
    """div.approx/div.full with subnormal divisors (and huge ones) against assorted numerators."""
    from tilecheck.inputs.generators import edge_biased

    if form.semantics.key != "approx.div":
        return None
    fmt = form.format  # div.approx/div.full are f32 forms
    sub_b = rng.integers(1, fmt.min_normal, n).astype(np.uint64)
    huge_b = rng.integers(0x7E800001, 0x7F800000, n // 4).astype(np.uint64)
    b = np.concatenate([sub_b, huge_b])
    b |= np.where(rng.random(b.size) < 0.5, np.uint64(fmt.sign_mask), np.uint64(0))
    a = edge_biased(fmt, b.size, rng).astype(np.uint64)
    return [a.astype(np.uint32), b.astype(np.uint32)]


def guarded(log, errors: list, what: str, fn, *args):
    """``fn(*args)``; an exception (a kernel the driver rejects, a launch failure) is logged and
    listed in ``errors`` -- reported in summary.json and the exit code -- and the campaign goes on
    with the next form, so one bad form does not cost the device time of all the others."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - recorded and reported, never silently dropped
        log(f"{what}: ERROR {type(exc).__name__}: {exc}")
        errors.append({"where": what, "error": f"{type(exc).__name__}: {exc}"})
        return None


def phase_questions(dev, db, out_dir: str, log, tiny: bool, deadline: float, summary: dict,
                    errors: list) -> int:
    """Phase 1 (module docstring): the four vector files and the tininess tally."""
    from tilecheck.diff.vectors import VectorWriter
    from tilecheck.model import api

    rng = np.random.default_rng(20251129)
    info = dev.info()
    header = {"gpu": info.get("gpu", "none (dry run)"), "compute_capability": info.get("compute_capability", "-"),
              "driver": info.get("driver", "-"), "runtime": info.get("runtime", "-"), "cupy": info.get("cupy", "-"),
              "code": dev.modes[0], "target": info.get("target", "-"),
              "source": "tools/gpu_campaign.py" + (" --dry-run" if dev.dry else "")}
    disagreements = 0
    tally: dict[str, dict] = {}
    jit_vs_cubin = 0
    n_tiny = 8 if tiny else 2048

    def record(writer, form, ops):
        nonlocal jit_vs_cubin
        dev_ops = [dev.asarray(o) for o in ops]
        res = dev.host(dev.run(form, dev_ops, dev.modes[0]))
        if len(dev.modes) > 1:
            other = dev.host(dev.run(form, dev_ops, dev.modes[1]))
            jit_vs_cubin += int((other != res).sum())
        writer.cases(form, ops, res)
        return res

    files = {"nan": "nan.vec", "ftz": "ftz_tininess.vec", "div": "div_approx_subnormal.vec",
             "specials": "specials.vec.gz"}
    writers = {k: VectorWriter(os.path.join(out_dir, v), {**header, "question": k}) for k, v in files.items()}
    def one_form(form) -> int:
        bad = 0
        ops = nan_cases(form)
        res = record(writers["nan"], form, ops)
        bad += int((~np.asarray(api.allowed(form, res, *ops))).sum())
        ops = specials_cases(form)
        if tiny:
            ops = [o[:: max(1, o.size // 64)] for o in ops]
        res = record(writers["specials"], form, ops)
        bad += int((~np.asarray(api.allowed(form, res, *ops))).sum())
        ops = tininess_cases(form, n_tiny, rng)
        if ops is not None:
            res = record(writers["ftz"], form, ops)
            after = np.asarray(api.allowed(form, res, *ops, tininess="after"))
            before = np.asarray(api.allowed(form, res, *ops, tininess="before"))
            tally[form.name] = {"cases": int(res.size), "after": int(after.sum()), "before": int(before.sum()),
                                "both": int((after & before).sum()), "neither": int((~after & ~before).sum())}
            bad += int((~after).sum())
        ops = div_approx_cases(form, rng, n_tiny)
        if ops is not None:
            res = record(writers["div"], form, ops)
            bad += int((~np.asarray(api.allowed(form, res, *ops))).sum())
        return bad

    try:
        for form in _arith_forms(db):
            if time.perf_counter() > deadline:
                log("phase 1: time budget reached; vector files are partial")
                break
            if not dev.backend.support(form).ok:
                continue
            disagreements += guarded(log, errors, f"phase 1 {form.name}", one_form, form) or 0
    finally:
        for w in writers.values():
            w.close()
    summary["tininess"] = tally
    summary["questions"] = {"files": list(files.values()), "disagreements_with_model": disagreements,
                            "jit_vs_cubin_differences": jit_vs_cubin}
    log(f"phase 1: vector files written; {disagreements} recorded results the model rejects; "
        f"jit vs cubin differences: {jit_vs_cubin}")
    return disagreements


# ---------------------------------------------------------------------------------------------
# phase 2: every form


def phase_forms(dev, db, out_dir: str, log, cases: int, deadline: float, errors: list) -> tuple[dict, int]:
    """Phase 2: every PTX form on edge-biased and hard cases, plain and predicated."""
    from tilecheck.diff import cases as gen
    from tilecheck.diff.findings import describe_operand
    from tilecheck.diff.verdict import ok_mask

    def one_form(form) -> dict:
        if form.kind == "function":
            return around_entry(dev, form, cases)
        bad = 0
        t0 = time.perf_counter()
        ops = gen.batch(form, 0, 0, cases)
        entry = {"cases": cases, "paths": {}}
        dev_ops = [dev.asarray(o) for o in ops]
        from tilecheck.diff.verdict import disagreements

        for mode in dev.modes:
            out = dev.run(form, dev_ops, mode)
            found = disagreements(form, out, dev_ops)
            entry["paths"][mode] = {"mismatches": found.count, "first": [
                {"operands": [describe_operand(form, int(o[j])) for o in found.operands],
                 "result": describe_operand(form, int(found.results[j]))} for j in range(min(found.count, 5))]}
            bad += found.count
        # predicated: masked-off threads keep the old output
        n = min(cases, 4096)
        if all(o.registers == 1 for o in form.operands):
            sub = [o[:n] for o in ops]
            mask = (np.random.default_rng(n).random(n) < 0.5).astype(np.uint32)
            value = next(o for o in form.operands if o.role != "addr")
            old = np.full(n, 0xA5A5A5A5A5A5A5A5 >> (64 - value.container_bits), dtype=f"uint{value.container_bits}")
            got = dev.host(dev.run(form, [dev.asarray(o) for o in sub], dev.modes[0], dev.asarray(mask),
                                   dev.asarray(old)))
            on = mask != 0
            kept_bad = int((got[~on] != old[~on]).sum())
            act_bad = int((~np.asarray(ok_mask(form, got[on], [o[on] for o in sub]))).sum())
            entry["predicated"] = {"cases": n, "masked_off_overwritten": kept_bad, "active_rejected": act_bad}
            bad += kept_bad + act_bad
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        entry["_bad"] = bad
        return entry

    report, total_bad = {}, 0
    for form in _forms(db):
        if time.perf_counter() > deadline:
            log("phase 2: time budget reached; forms.json is partial")
            break
        support = dev.backend.support(form)
        if not support.ok:
            report[form.name] = {"skipped": support.reason}
            continue
        entry = guarded(log, errors, f"phase 2 {form.name}", one_form, form)
        report[form.name] = entry if entry is not None else {"error": errors[-1]["error"]}
        total_bad += entry.pop("_bad") if entry is not None else 0
    with open(os.path.join(out_dir, "forms.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    log(f"phase 2: {len(report)} forms, {total_bad} mismatches")
    return report, total_bad


class _ModeBackend:
    """One code path of the device as the verify checks see a backend (``run_function``)."""

    def __init__(self, dev, mode: str):
        self.dev, self.mode = dev, mode

    def run_function(self, form, operands, mask=None, olds=None):
        if self.dev.dry:
            return self.dev.backend.run_function(form, operands, mask=mask, olds=olds)
        return self.dev.backend.run_function(form, operands, mask=mask, olds=olds, mode=self.mode)


def around_entry(dev, form, cases: int) -> dict:
    """A form around the arithmetic (cvt, setp, ..., cvta): its kernel plain and predicated, judged by
    the ISA-text oracle (:func:`tilecheck.verify.function_checks.check_differential`), on the driver
    JIT only: loading a cubin per form would cost ptxas runs for some 1,700 forms."""
    from types import SimpleNamespace

    from tilecheck.verify import function_checks
    from tilecheck.verify.report import CheckResult

    t0 = time.perf_counter()
    ctx = SimpleNamespace(seed=0, function_cases=min(cases, 1024))
    mode = dev.modes[0]
    result = CheckResult("differential")
    function_checks.check_differential(form, ctx, _ModeBackend(dev, mode), result)
    if result.skipped is not None:
        return {"skipped": result.skipped, "_bad": 0}
    return {"cases": result.cases, "paths": {mode: {"mismatches": result.mismatches, "first": result.details[1:6]}},
            "judged_by": result.details[0], "seconds": round(time.perf_counter() - t0, 3),
            "_bad": result.mismatches}


# ---------------------------------------------------------------------------------------------
# phase 3: exhaustive sweeps reduced on the device


def _values(xp, form, bits):
    """float64 values of operand containers (f32 patterns or f64 containers)."""
    if form.type == "f64":
        return bits.astype(xp.uint64).view(xp.float64)
    return bits.astype(xp.uint32).view(xp.float32).astype(xp.float64)


def sweep_chunk(xp, form, inputs, results, bins: int = 128) -> dict:
    """Reduce one chunk on the device: violations (first inputs), maximum error and its input, and
    an error histogram, in the contract's unit (ulp, or the relative bound; exact forms: ulp).

    ``inputs``/``results`` are device arrays of containers. Only scalars and small arrays leave the
    device."""
    from tilecheck.diff.verdict import ok_mask, to_host

    ok = ok_mask(form, results, [inputs])
    bad = xp.nonzero(~ok)[0]
    violations = int(bad.size)
    first = to_host(bad[:16])
    op = form.semantics.key.split(".", 1)[1]
    with np.errstate(all="ignore"):  # NaN/inf lanes (signalling NaNs quieten on conversion)
        a = _values(xp, form, inputs)
        r = _values(xp, form, results)
        if op in ("rcp", "rcp_hi"):
            x = 1.0 / a
        elif op == "sqrt":
            x = xp.sqrt(a)
        elif op in ("sin", "cos", "tanh"):  # float64 values: a measure, not the verdict (ok_mask's)
            x = {"sin": xp.sin, "cos": xp.cos, "tanh": xp.tanh}[op](a)
        else:
            x = 1.0 / xp.sqrt(a)
        finite = xp.isfinite(a) & xp.isfinite(r) & xp.isfinite(x) & (a != 0) & (x != 0)
        if op in ("sqrt", "rsqrt", "rsqrt_hi"):
            finite &= a > 0
        if op.endswith("_hi") or form.semantics.params.get("ftz"):
            # flushed inputs and results are judged by the contract's special cases, not measured
            tiny = 2.0 ** (-1022 if form.type == "f64" else -126)
            finite &= (xp.abs(a) >= tiny) & (xp.abs(x) >= tiny)
        c = form.contract
        if c is not None and c.bound.kind == "absolute":
            from tilecheck.model import sincos
            if c.bound.ranges:  # sin/cos: the bound of the input's range, nothing beyond 100pi
                t, bounded = sincos.bound_log2(xp, a, c.bound.ranges)
                finite &= bounded
            else:
                t = xp.full(a.shape, float(c.bound.size))
            unit = "absolute error / the bound of the input's range"
            err = xp.abs(r - x) / xp.exp2(t)
            scale = 1.0
        elif c is not None and c.relative_log2 is not None:
            unit = f"relative error / 2^{c.relative_log2:g}"
            err = xp.abs(r - x) / xp.abs(x) / (2.0 ** c.relative_log2)
            scale = 1.0
        else:
            precision = 24 if form.type == "f32" else 53
            emin = -126 if form.type == "f32" else -1022
            _, e = xp.frexp(x)
            ulp = xp.ldexp(xp.ones_like(x), xp.maximum(e.astype(xp.int32) - 1, emin) - (precision - 1))
            err = xp.abs(r - x) / ulp
            unit = "ulp"
            scale = float(c.ulp) if (c is not None and c.ulp) else 0.5
        err = xp.where(finite, err, 0.0)
        index = int(xp.argmax(err))
        top = float(err[index])
        slots = xp.clip(err / (4 * scale) * bins, 0, bins).astype(xp.int64)
        hist = to_host(xp.bincount(slots[finite], minlength=bins + 1))
    return {"violations": violations, "first": first, "max": top, "argmax": index, "unit": unit,
            "bin_width": 4 * scale / bins, "hist": hist, "measured": int(to_host(finite.sum()))}


def sweep(dev, form, chunk: int, points: int | None, share: float, log) -> dict:
    """One sweep of ``form`` (all 2^32 inputs, or ``points`` strided ones) within ``share`` seconds."""
    xp = dev.xp
    name = form.name
    domain = 1 << 32
    step = 1 if points is None else max(1, domain // points)
    count = domain // step
    t0 = time.perf_counter()
    done, viol, first, best, best_in, best_out, hist, measured = 0, 0, [], -1.0, 0, 0, None, 0
    unit, width = "", 0.0
    while done < count:
        if time.perf_counter() - t0 > share:
            log(f"{name}: time share used up after {done} of {count} points")
            break
        m = min(chunk, count - done)
        index = (xp.arange(done, done + m, dtype=xp.uint64) * xp.uint64(step))
        inputs = (index << xp.uint64(32)) if form.type == "f64" else index.astype(xp.uint32)
        results = dev.run(form, [inputs], dev.modes[0])
        stats = sweep_chunk(xp, form, inputs, results)
        viol += stats["violations"]
        for j in stats["first"]:
            if len(first) < 16:
                first.append({"input": f"0x{int(dev.host(inputs[int(j):int(j) + 1])[0]):x}",
                              "result": f"0x{int(dev.host(results[int(j):int(j) + 1])[0]):x}"})
        if stats["max"] > best:
            best = stats["max"]
            best_in = int(dev.host(inputs[stats["argmax"]:stats["argmax"] + 1])[0])
            best_out = int(dev.host(results[stats["argmax"]:stats["argmax"] + 1])[0])
        hist = stats["hist"] if hist is None else hist + stats["hist"]
        measured += stats["measured"]
        unit, width = stats["unit"], stats["bin_width"]
        done += m
    entry = {"domain": "2^32 inputs" if form.type == "f32" else "2^32 high words", "stride": step,
             "points": done, "coverage": done / domain, "seconds": round(time.perf_counter() - t0, 2),
             "code": dev.modes[0], "violations": viol, "first_violations": first,
             "max_error": best, "unit": unit, "argmax_input": f"0x{best_in:x}",
             "result_at_argmax": f"0x{best_out:x}" if best >= 0 else None, "measured": measured,
             "histogram": {"bin_width": width, "counts": [int(v) for v in hist] if hist is not None else [],
                           "last_bin": "everything at or beyond 4x the bound"}}
    log(f"{name}: {done} points ({entry['coverage']:.3%} of the domain), {viol} contract violations, "
        f"max error {best:.4g} {unit} at input 0x{best_in:x}")
    return entry


def phase_sweeps(dev, db, out_dir: str, log, chunk: int, points: int | None, deadline: float,
                 names: list[str], errors: list) -> tuple[dict, int]:
    """Phase 3: exhaustive (or, with ``points``, strided sample) sweeps of the forms ``names``."""
    report, total_bad = {}, 0
    for k, name in enumerate(names):
        form = db.form(name)
        share = (deadline - time.perf_counter()) / max(1, len(names) - k)  # the rest, split evenly
        entry = guarded(log, errors, f"sweep {name}", sweep, dev, form, chunk, points, share, log)
        report[name] = entry if entry is not None else {"error": errors[-1]["error"]}
        total_bad += entry["violations"] if entry is not None else 0
    with open(os.path.join(out_dir, "sweeps.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    return report, total_bad


# ---------------------------------------------------------------------------------------------
# phase 4: the compiler-PTX corpus on the device


CORPUS_MANIFEST = os.path.join("examples", "cuda", "manifest.yaml")
CORPUS_BLOCK = 256
"""Threads per block of a corpus launch; every chunk is padded to a multiple of it (the corpus
kernels index by thread without a bounds check)."""


def corpus_entries(root: str, db, names: tuple[str, ...], log) -> list[tuple[dict, object]]:
    """The manifest entries the corpus phase runs, each with its :class:`Prepared`: an ``.entry``
    kernel with the elementwise ABI, on a 16-bit unary or binary domain or an f32 unary one.
    ``names`` limits them to those kernels (empty: all); the others are logged as skipped."""
    import yaml

    from tilecheck.verify.compiled import prepare

    with open(os.path.join(root, CORPUS_MANIFEST), encoding="utf-8") as fh:
        entries = yaml.safe_load(fh)["entries"]
    chosen = []
    for e in entries:
        if names and e["entry"] not in names:
            continue
        try:
            p = prepare(os.path.join(root, e["file"]), e["entry"], e["against"], db=db, approx="reference")
        except Exception as exc:  # noqa: BLE001 - an entry the verifier cannot take is skipped, said
            log(f"corpus {e['entry']}: skipped ({type(exc).__name__}: {exc})")
            continue
        ref, abi = p.ref, p.abi
        fits = (ref.fmt.width == 16 and ref.arity in (1, 2)) or (ref.fmt.name == "f32" and ref.arity == 1)
        if abi.kind != "entry" or abi.by_pointer or not fits:
            log(f"corpus {e['entry']}: skipped ({abi.describe()}, {ref.arity} {ref.fmt.name} operand(s))")
            continue
        chosen.append((e, p))
    return chosen


def _corpus_args(xp, p, inputs: list, out, n: int) -> tuple:
    """Kernel arguments in parameter order: input and output arrays by name, any other parameter
    (an element count) as a numpy scalar of its width holding ``n``."""
    args = []
    for name, t in p.abi.params:
        if name in p.abi.inputs:
            args.append(inputs[p.abi.inputs.index(name)])
        elif name == p.abi.output:
            args.append(out)
        else:
            bits = int("".join(ch for ch in t if ch.isdigit()) or 64)
            args.append(np.dtype(f"{'i' if t.startswith('s') else 'u'}{bits // 8}").type(n))
    return tuple(args)


def corpus_entry(dev, entry: dict, p, chunk: int, share: float, out_dir: str, header: dict, log) -> dict:
    """Run one corpus kernel over its whole input domain on the device (chunks of ``chunk``
    inputs, within ``share`` seconds): every lane holds the same input, each lane's result is
    compared on the host with the correctly rounded reference (NaN by class); the inputs where the
    hardware is not correctly rounded go to ``corpus/ENTRY.vec``."""
    from tilecheck.diff.vectors import VectorWriter
    from tilecheck.verify.compiled import exhaustive_block

    xp = dev.xp
    cupy = dev.backend.cupy
    ref, abi = p.ref, p.abi
    with open(p.path, "rb") as fh:
        image = fh.read()
    module = cupy.cuda.function.Module()
    module.load(image + b"\0")
    kernel = module.get_function(p.entry)
    container = {16: np.uint16, 32: np.uint32, 64: np.uint64}[abi.width]
    fw = ref.fmt.width
    domain = p.domain
    path = os.path.join(out_dir, "corpus", f"{p.entry}.vec")
    t0 = time.perf_counter()
    done, bad, first = 0, 0, []
    with VectorWriter(path, {**header, "entry": p.entry, "file": entry["file"], "against": p.against,
                             "function": entry.get("function", "")}) as writer:
        writer.comment("ENTRY OPERAND_HEX... RESULT_HEX: each input the device does not round correctly, "
                       "operands in the kernel's order, the result container (every lane holds the input); "
                       f"the correctly rounded {p.against} after '#'")
        while done < domain:
            if time.perf_counter() - t0 > share:
                log(f"corpus {p.entry}: time share used up after {done} of {domain} inputs")
                break
            m = min(chunk, domain - done)
            padded = -(-m // CORPUS_BLOCK) * CORPUS_BLOCK
            ops = exhaustive_block(ref, done, done + m)  # operand 0 varies fastest
            packed = []
            for o in ops:
                c = np.zeros(padded, dtype=np.uint64)
                for lane in range(abi.lanes):
                    c[:m] |= o.astype(np.uint64) << np.uint64(lane * fw)
                packed.append(c.astype(container))
            dev_in = [dev.asarray(c) for c in packed]
            dev_out = xp.zeros(padded, dtype=container)
            kernel((padded // CORPUS_BLOCK,), (CORPUS_BLOCK,), _corpus_args(xp, p, dev_in, dev_out, padded))
            got = dev.host(dev_out)[:m].astype(np.uint64)
            expected = ref.expected(ops)
            wrong = np.zeros(m, dtype=bool)
            for lane in range(abi.lanes):
                g = ((got >> np.uint64(lane * fw)) & np.uint64((1 << fw) - 1)).astype(ref.fmt.uint)
                wrong |= ~ref.judge(g, ops, expected)
            sel = np.flatnonzero(wrong)
            bad += sel.size
            for i in sel:
                operands = [int(packed[k][i]) for k in range(len(packed))]
                fields = " ".join(f"0x{v:0{abi.width // 4}x}" for v in (*operands, int(got[i])))
                writer.line(f"{p.entry} {fields}  # {p.against} 0x{int(expected[i]):0{fw // 4}x}")
                if len(first) < 16:
                    first.append({"inputs": [f"0x{int(o[i]):x}" for o in ops], "result": f"0x{int(got[i]):x}",
                                  "correctly_rounded": f"0x{int(expected[i]):x}"})
            done += m
    report = {"file": entry["file"], "against": p.against, "abi": abi.describe(), "inputs": domain, "checked": done,
              "complete": done == domain, "hardware_misrounded": bad, "first": first,
              "seconds": round(time.perf_counter() - t0, 2), "vectors": os.path.relpath(path, out_dir)}
    log(f"corpus {p.entry}: {done} of {domain} inputs, {bad} not correctly rounded by the device")
    return report


def read_corpus_vectors(path: str) -> tuple[dict, list[tuple[str, list[int], int]]]:
    """(header, [(entry, operands, result)]) of a corpus vector file written by :func:`corpus_entry`."""
    header, rows = {}, []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                if ":" in line and not rows:
                    key, _, value = line[1:].partition(":")
                    header.setdefault(key.strip(), value.strip())
                continue
            body = line.split("#", 1)[0].split()
            if body:
                rows.append((body[0], [int(x, 16) for x in body[1:-1]], int(body[-1], 16)))
    return header, rows


def phase_corpus(dev, db, root: str, out_dir: str, log, chunk: int, deadline: float, names: tuple[str, ...],
                 errors: list) -> dict:
    """Phase 4: every corpus kernel over its exhaustive input set on the device -> ``corpus.json``
    and ``corpus/ENTRY.vec`` (the inputs the hardware does not round correctly)."""
    report: dict = {}
    if dev.dry:
        log("corpus: skipped (the dry run has no device to load nvcc's PTX on)")
        return report
    info = dev.info()
    header = {"gpu": info.get("gpu", "-"), "compute_capability": info.get("compute_capability", "-"),
              "driver": info.get("driver", "-"), "runtime": info.get("runtime", "-"), "cupy": info.get("cupy", "-"),
              "code": "jit", "source": "tools/gpu_campaign.py corpus phase"}
    chosen = corpus_entries(root, db, names, log)
    for k, (entry, p) in enumerate(chosen):
        share = (deadline - time.perf_counter()) / max(1, len(chosen) - k)
        got = guarded(log, errors, f"corpus {p.entry}", corpus_entry, dev, entry, p, chunk, share, out_dir,
                      header, log)
        report[p.entry] = got if got is not None else {"error": errors[-1]["error"]}
    with open(os.path.join(out_dir, "corpus.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    return report


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the campaign; returns the exit code (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or "gpu-campaign-out",
                        help="output folder (default $OUT)")
    parser.add_argument("--dry-run", action="store_true", help="numpy + the CPU simulator, tiny sizes (no GPU)")
    parser.add_argument("--tiny", action="store_true", help="GPU code paths with tiny sizes (smoke test)")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds for the whole campaign (default 540)")
    parser.add_argument("--cases", type=int, default=None, help="cases per form (default 65536; tiny 256)")
    parser.add_argument("--only", default="", metavar="FAMILIES",
                        help="limit phases 1 and 2 to these comma-separated families (default: all)")
    parser.add_argument("--sweeps", default=",".join(SWEEPS), metavar="FORMS",
                        help="comma-separated forms to sweep (default: the seven of the docstring)")
    parser.add_argument("--phases", default=",".join(PHASES), metavar="PHASES",
                        help=f"comma-separated phases to run, of {','.join(PHASES)} (default: all)")
    parser.add_argument("--corpus", default="", metavar="ENTRIES",
                        help="limit the corpus phase to these comma-separated kernels (default: every fitting one)")
    args = parser.parse_args(argv)
    phases = [x for x in args.phases.split(",") if x]
    if any(x not in PHASES for x in phases):
        parser.error(f"--phases: expected some of {', '.join(PHASES)}")
    global ONLY
    ONLY = tuple(x for x in args.only.split(",") if x)
    sweeps = [x for x in args.sweeps.split(",") if x]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if os.path.isdir(os.path.join(root, "tilecheck")) and root not in sys.path:
        sys.path.insert(0, root)  # run from a checkout without installing
    from tilecheck.errors import TilecheckError
    from tilecheck.spec.database import load_database

    tiny = args.tiny or args.dry_run
    os.makedirs(args.out, exist_ok=True)
    log = Log(os.path.join(args.out, "log.txt"))
    started = time.perf_counter()
    end = started + args.budget
    summary: dict = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "dry_run": args.dry_run,
                     "tiny": tiny}
    errors: list = []
    try:
        db = load_database()
        dev = Device(db, args.dry_run)
        summary["device"] = dev.info()
        log(f"device: {summary['device']}")
        bad = bad_forms = bad_sweeps = 0
        sweeps_end = started + (0.7 if "corpus" in phases else 1.0) * args.budget
        if "questions" in phases:
            t = time.perf_counter()
            bad = phase_questions(dev, db, args.out, log, tiny, started + 0.15 * args.budget, summary, errors)
            summary["seconds_questions"] = round(time.perf_counter() - t, 2)
        if "forms" in phases:
            t = time.perf_counter()
            cases = args.cases or (256 if tiny else 1 << 16)
            _, bad_forms = phase_forms(dev, db, args.out, log, cases, started + 0.45 * args.budget, errors)
            summary["seconds_forms"] = round(time.perf_counter() - t, 2)
        if "sweeps" in phases:
            t = time.perf_counter()
            chunk = 1 << (12 if tiny else 27)
            _, bad_sweeps = phase_sweeps(dev, db, args.out, log, chunk, 1 << 14 if tiny else None, sweeps_end,
                                         sweeps, errors)
            summary["seconds_sweeps"] = round(time.perf_counter() - t, 2)
        if "corpus" in phases:
            t = time.perf_counter()
            names = tuple(x for x in args.corpus.split(",") if x)
            corpus = phase_corpus(dev, db, root, args.out, log, 1 << (16 if tiny else 24), end, names, errors)
            # a misrounding kernel is a measurement of the compiled code, not a model disagreement
            summary["corpus"] = {k: {"inputs": v.get("inputs"), "checked": v.get("checked"),
                                     "hardware_misrounded": v.get("hardware_misrounded")}
                                 for k, v in corpus.items()}
            summary["seconds_corpus"] = round(time.perf_counter() - t, 2)
        summary["disagreements"] = {"questions": bad, "forms": bad_forms, "sweeps": bad_sweeps}
        code = 1 if (bad or bad_forms or bad_sweeps or errors) else 0
    except TilecheckError as exc:
        log(f"cannot run: {exc}")
        summary["error"] = str(exc)
        code = 2
    summary["errors"] = errors
    summary["seconds"] = round(time.perf_counter() - started, 2)
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1, default=str)
    written = sorted(os.path.relpath(os.path.join(d, f), args.out) for d, _, fs in os.walk(args.out) for f in fs)
    log(f"done in {summary['seconds']} s, exit {code}; {len(written)} files: {', '.join(written)}")
    log.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
