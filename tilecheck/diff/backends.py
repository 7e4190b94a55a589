"""Where a form's cases run, behind one small interface.

A :class:`Backend` turns operand containers (one numpy array per source, see
:func:`tilecheck.diff.cases.source_layout`) into result containers (:meth:`Backend.run`) and
judges a batch (:meth:`Backend.judge`, which returns only the cases the verdict rejects). Every
verdict goes through :func:`tilecheck.allowed` (:mod:`tilecheck.diff.verdict`).

=========  =========================================================================================
backend    what computes the results
=========  =========================================================================================
``cpu``    the form's single-instruction kernel (:func:`tilecheck.emit.single_instruction_kernel`)
           executed by :func:`tilecheck.sim.execute` -- emitted PTX, its loads, stores, guard and
           predicate run on the CPU, the instruction through the model
``gpu``    the same kernel on an NVIDIA GPU through CuPy: the PTX loaded in memory (driver JIT) and,
           when a local ptxas is present, a cubin it assembled; the verdict runs on the device and
           only disagreements travel back. Records GPU name, compute capability, driver version
``host``   the host's IEEE arithmetic through numpy (:mod:`tilecheck.diff.hostref`; f32
           div/rcp/sqrt in every mode, some f64 forms); it rounds binary32 results as the model's
           fast path does, so judged by the model it checks NaN and flush handling, not rounding
``model``  the model's exact path (integer significands, no fast path; contracts: the model's
           representative value): a self-check that needs nothing else
``reference`` the model's public evaluation (:func:`tilecheck.evaluate`, fast paths included),
           every result judged by a certificate of correct rounding
           (:mod:`tilecheck.diff.certificate`) -- the CPU configuration of exhaustive sweeps
``vectors``results recorded in a vector file (:mod:`tilecheck.diff.vectors`)
=========  =========================================================================================

:func:`select` picks one by name; ``auto`` is ``gpu`` when :func:`gpu_status` finds a device that
compiles, launches and judges a probe kernel correctly, else ``cpu``. CUDA driver, runtime and
NVRTC errors anywhere on the gpu path become :class:`~tilecheck.errors.DeviceUnavailableError`
(an environment error, exit 2).

With ``certify`` (exhaustive sweeps), host-side verdicts on forms that
:func:`tilecheck.diff.certificate.form_support` covers use the certificate instead of the model:
the result must bracket the exact value under the mode's rounding interval, checked by integer
arithmetic that shares nothing with the model. Other forms, and the GPU's on-device verdict, keep
:func:`tilecheck.allowed`.
"""

from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from tilecheck import ptxas, sim
from tilecheck.formats import UINT_DTYPES
from tilecheck.sim import launch
from tilecheck.diff import certificate as _certificate
from tilecheck.diff import hostref
from tilecheck.diff import verdict as _verdict
from tilecheck.diff.cases import source_layout
from tilecheck.diff.support import SUPPORTED, Support
from tilecheck.emit import function_kernel, program_kernel, single_instruction_kernel
from tilecheck.emit.kernel import no_kernel_reason
from tilecheck.emit.plan import DEFAULT_LAUNCH
from tilecheck.errors import DeviceUnavailableError, TilecheckError, UsageError
from tilecheck.model import api, ops
from tilecheck.sim.program import bind_arguments
from tilecheck.spec.contract import ULP_READING_DEFAULT
from tilecheck.spec.registry import TININESS_DEFAULT

__all__ = ["Backend", "CpuBackend", "GpuBackend", "HostBackend", "ModelBackend", "ReferenceBackend", "VectorsBackend",
           "BackendUnavailableError", "NAMES", "select", "gpu_status", "GpuStatus", "device_errors", "kernel_target"]

NAMES = ("auto", "cpu", "gpu", "host", "model", "reference", "vectors")
"""Backend names :func:`select` accepts."""

BLOCK = 256
"""Threads per block of a single-instruction kernel launch."""


class BackendUnavailableError(TilecheckError):
    """A backend cannot run here (its executor is not installed, or it cannot run this form).

    Fix: install what the message names, or choose another ``--backend``.
    """

    exit_code = 2


def kernel_target(db, form, requested: str | None = None) -> str:
    """The target a form's kernel is emitted for: ``requested`` when given, else the database's
    default target, or the lowest known target that has the form (``add.f32x2``: sm_100)."""
    if requested:
        return db.target(requested).name
    default = db.target(None)
    if default.sm >= form.target.sm:
        return default.name
    candidates = sorted((t for t in db.targets.values() if t.sm >= form.target.sm and not t.variant),
                        key=lambda t: t.sm)
    if not candidates:
        raise UsageError(f"{form.name} needs sm_{form.target.sm}, newer than every known target")
    return candidates[0].name


def _cases(form, operands) -> int:
    """Number of cases in an operand list."""
    per_case = source_layout(form)[0][2] if operands else 1
    return int(operands[0].size // per_case) if operands else 0


def _out_size(form, n: int) -> tuple[int, np.dtype]:
    """Containers and dtype of the output array of ``n`` cases."""
    value = next(o for o in form.operands if o.role != "addr")
    return n * value.registers, np.dtype(UINT_DTYPES[value.container_bits])


def simulator_refusal(form) -> str | None:
    """Why the simulator cannot run the kernel of ``form`` (None: it can)."""
    if form.family == "cvta" and form.semantics.get("space") in ("const", "param"):
        return (f"{form.name}: the simulator has no .const data and no generic window onto kernel parameters "
                "(the gpu backend runs this kernel)")
    return None


def needs_compiled_engine(form) -> bool:
    """Whether the kernel of ``form`` runs on the compiled-PTX engine (:mod:`tilecheck.sim.launch`:
    ``.local`` variables, calls, ``.shared`` memory) rather than :func:`tilecheck.sim.execute`."""
    return (form.kind == "memory" and form.semantics.get("space") in ("local", "param")) or form.family == "cvta"


def function_arrays(kernel, operands, olds=None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The source arrays of a ``function`` form's kernel in its parameters' dtypes, and fresh
    output arrays (zeros, or copies of ``olds``), one per output parameter."""
    params = kernel.params
    sources = [np.ascontiguousarray(np.asarray(o).astype(p.dtype)) for o, p in
               zip(operands, (p for p in params if p.role == "source"))]
    n = int(np.asarray(operands[0]).size) if operands else 0
    outs = [np.zeros(n, dtype=p.dtype) if olds is None else np.array(old, dtype=p.dtype, copy=True)
            for p, old in zip((p for p in params if p.role == "output"), olds or [None] * len(params))]
    return sources, outs


@dataclass
class Backend:
    """Base class: run cases of a form and judge them. Subclasses implement :meth:`run`."""

    name: str = "abstract"
    details: dict = field(default_factory=dict)
    certify: bool = False
    """Judge certified forms by :mod:`tilecheck.diff.certificate` instead of the model."""

    runs_any_input: ClassVar[bool] = True
    """Whether the backend can run operands it has not seen (shrinking needs it; vectors cannot)."""

    judge_block: ClassVar[int] = 1 << 16
    """Cases per run+verdict step of :meth:`judge` (host backends: temporaries stay in cache)."""

    def info(self) -> dict:
        """What ran the cases (for reports, vector file headers, JSON): name and details."""
        return {"backend": self.name, **self.details}

    def support(self, form) -> Support:
        """Whether this backend can run ``form`` (the reason when it cannot)."""
        return SUPPORTED

    def run(self, form, operands, mask=None, old=None) -> np.ndarray:
        """Result containers of ``form`` on ``operands``. With ``mask`` (uint32 per case), only
        cases with ``mask != 0`` execute and the others keep ``old`` (predicated kernels)."""
        raise NotImplementedError

    def run_function(self, form, operands, mask=None, olds=None) -> list[np.ndarray]:
        """Forms of kind ``function`` (cvt, setp, ...): one host array per destination the kernel
        writes (:mod:`tilecheck.emit.function_kernel`) for ``operands`` (one array per source, in
        the kernel's containers; predicates as 0/1). ``mask``/``olds`` as in :meth:`run`."""
        raise UsageError(f"the {self.name} backend runs no kernels of the instructions around the arithmetic")

    def certifies(self, form, tininess: str = TININESS_DEFAULT) -> bool:
        """Whether :meth:`judge` decides ``form`` by certificate (see the module docstring)."""
        return self.certify and certified(form, tininess)

    def verdict_text(self, form, tininess: str = TININESS_DEFAULT) -> str:
        """What a verdict of :meth:`judge` on ``form`` establishes (for reports)."""
        return verdict_text(self.name, form, tininess, self.certify)

    def judge(self, form, operands, tininess: str = TININESS_DEFAULT,
              ulp_reading: str = ULP_READING_DEFAULT) -> _verdict.Disagreements:
        """Run a batch and return the cases the verdict rejects (host arrays). ``tininess`` is
        the model's ``.ftz`` convention the verdict uses, ``ulp_reading`` its reading of ulp bounds."""
        n = _cases(form, operands)
        block = self.judge_block
        decide = (_by_certificate if self.certifies(form, tininess)
                  else functools.partial(_verdict.disagreements, ulp_reading=ulp_reading))
        if n <= block:
            return decide(form, self.run(form, operands), operands, tininess)
        per = [k for _, _, k in source_layout(form)]
        parts, offsets = [], []
        for start in range(0, n, block):
            sub = [o[start * k:(start + block) * k] for o, k in zip(operands, per)]
            parts.append(decide(form, self.run(form, sub), sub, tininess))
            offsets.append(start)
        return _verdict.concat(parts, offsets)


def certified(form, tininess: str = TININESS_DEFAULT) -> bool:
    """Whether the certificate judges ``form`` (under either ``tininess`` reading of ``.ftz``)."""
    return _certificate.form_support(form).ok


def verdict_text(backend: str, form, tininess: str = TININESS_DEFAULT, certify: bool = False) -> str:
    """What the verdict of backend ``backend`` on ``form`` establishes (for reports): the
    certificate where ``certify`` (or the ``reference`` backend) and it applies, else agreement
    with the model. The GPU judges on the device, with the model."""
    if (certify or backend == "reference") and backend != "gpu" and certified(form, tininess):
        return _certificate.ESTABLISHES
    return f"tilecheck.allowed: agrees with the model (tininess {tininess})"


def _by_certificate(form, results, operands, tininess: str) -> _verdict.Disagreements:
    """The cases whose results the certificate rejects (host arrays)."""
    results = _verdict.to_host(results)
    operands = [_verdict.to_host(o) for o in operands]
    ok = _certificate.check_form(form, results, operands, tininess)
    bad = np.nonzero(~ok)[0].astype(np.int64)
    return _verdict.Disagreements(int(ok.shape[0]), bad, results[bad], [o[bad] for o in operands])


# ---------------------------------------------------------------------------------------------
# cpu: emitted PTX through tilecheck.sim


class CpuBackend(Backend):
    """Single-instruction kernels executed on the CPU by :func:`tilecheck.sim.execute`."""

    CHUNK = 1 << 17
    """Cases per simulated launch (bounds the simulator's per-thread register arrays)."""

    def __init__(self, *, db, target: str | None = None, tininess: str | None = None):
        super().__init__("cpu", {"executor": "tilecheck.sim: emitted PTX executed through the model"})
        self._sim = sim
        self.db = db
        self.target = target
        self.tininess = tininess
        self._kernels: dict = {}

    def support(self, form) -> Support:
        target = kernel_target(self.db, form, self.target)
        if self.db.target(target).sm < form.target.sm:
            return Support(f"{form.name} needs sm_{form.target.sm} (target {target})")
        reason = no_kernel_reason(form) or simulator_refusal(form)
        return SUPPORTED if reason is None else Support(reason)

    def kernel(self, form, predicated: bool = False):
        """The (cached) single-instruction kernel of ``form``."""
        key = (form.name, predicated)
        if key not in self._kernels:
            self._kernels[key] = single_instruction_kernel(form, kernel_target(self.db, form, self.target),
                                                           predicated=predicated, db=self.db)
        return self._kernels[key]

    def run(self, form, operands, mask=None, old=None) -> np.ndarray:
        kernel = self.kernel(form, mask is not None)
        n = _cases(form, operands)
        size, dtype = _out_size(form, n)
        out = np.zeros(size, dtype=dtype) if old is None else np.array(old, dtype=dtype, copy=True)
        per_in = [source_layout(form)[i][2] for i in range(len(operands))]
        per_out = size // n if n else 1
        for start in range(0, n, self.CHUNK):
            stop = min(n, start + self.CHUNK)
            srcs = [np.ascontiguousarray(o[start * k:stop * k]) for o, k in zip(operands, per_in)]
            part = np.ascontiguousarray(out[start * per_out:stop * per_out])
            m = None if mask is None else np.ascontiguousarray(mask[start:stop], dtype=np.uint32)
            args = kernel.arguments(srcs, part, m)
            if needs_compiled_engine(form):
                launch.execute_plan(kernel, args, BLOCK, db=self.db, tininess=self.tininess)
            else:
                self._sim.execute(kernel, kernel.name, args, grid=math.ceil((stop - start) / BLOCK), block=BLOCK,
                                  db=self.db, tininess=self.tininess)
            out[start * per_out:stop * per_out] = part
        return out

    def run_function(self, form, operands, mask=None, olds=None) -> list[np.ndarray]:
        kernel = self.kernel(form, mask is not None)
        sources, outs = function_arrays(kernel, operands, olds)
        m = None if mask is None else np.ascontiguousarray(mask, dtype=np.uint32)
        n = outs[0].size
        if n and needs_compiled_engine(form):
            launch.execute_plan(kernel, kernel.arguments(sources, outs, m), BLOCK, db=self.db, tininess=self.tininess)
        elif n:
            self._sim.execute(kernel, kernel.name, kernel.arguments(sources, outs, m), grid=math.ceil(n / BLOCK),
                              block=BLOCK, db=self.db, tininess=self.tininess)
        return outs


# ---------------------------------------------------------------------------------------------
# model and host references


class ModelBackend(Backend):
    """The model's exact path: integer-significand IEEE operations without the fast paths
    (exact forms), the representative value (approximate forms), a copy (memory forms)."""

    def __init__(self, tininess: str = TININESS_DEFAULT):
        super().__init__("model", {"executor": "tilecheck.model exact path (no fast paths)"})
        self.tininess = tininess

    def run(self, form, operands, mask=None, old=None) -> np.ndarray:
        if form.kind == "memory":
            result = np.array(operands[0], copy=True)
        elif form.kind == "contract":
            result = np.asarray(api.reference(form, *operands, tininess=self.tininess))
        else:
            result = _exact_path(form, operands, self.tininess)
        if mask is not None:
            keep = np.repeat(np.asarray(mask) == 0, result.size // max(len(mask), 1))
            result = np.where(keep, np.asarray(old, dtype=result.dtype), result)
        return result

    def run_function(self, form, operands, mask=None, olds=None) -> list[np.ndarray]:
        values = [np.asarray(o) != 0 if spec.ptx_type == "pred" else np.asarray(o).astype(np.uint64)
                  for o, spec in zip(operands, form.sources)]
        count = len(function_kernel.destination_names(form))
        with np.errstate(all="ignore"):
            out = api.evaluate(form, *values, tininess=self.tininess, destinations=count)
        dtype = function_kernel.operand_dtype(form.destinations[0])
        outs = [np.asarray(o).astype(dtype) for o in (out if count == 2 else (out,))]
        if mask is not None:
            keep = np.asarray(mask) == 0
            outs = [np.where(keep, np.asarray(old, dtype=dtype), o) for o, old in zip(outs, olds)]
        return outs


def _exact_path(form, operands, tininess: str) -> np.ndarray:
    """Exact forms through :func:`tilecheck.model.ops.apply` lane by lane (no fast path)."""
    fmt = form.format
    params = form.semantics.params
    op = form.semantics.function
    mode = ops.Mode(params.get("rounding", "rn"), bool(params.get("ftz", False)), tininess)
    rule = api.nan_rule(form, fmt)
    arrays = [np.asarray(o).astype(np.uint64) for o in operands]
    lanes = [api.split_lanes(np, a, fmt, form.lanes) for a in arrays]
    parts = []
    with np.errstate(all="ignore"):
        for lane in range(form.lanes):
            out = ops.apply(np, op, fmt, [p[lane] for p in lanes], mode, rule)
            if params.get("sat"):
                out = ops._saturate(np, fmt, out)
            parts.append(out)
    dtype = UINT_DTYPES[form.operands[0].container_bits]
    return api.join_lanes(np, parts, fmt).astype(dtype)


class ReferenceBackend(Backend):
    """The model's public evaluation (fast paths included), judged by certificate only: every
    form it runs must be certified, or the verdict would compare the model with itself."""

    judge_block: ClassVar[int] = 1 << 22

    def __init__(self, tininess: str = TININESS_DEFAULT):
        super().__init__("reference", {"executor": "tilecheck.evaluate (the model, fast paths included)",
                                       "verdict": _certificate.ESTABLISHES}, certify=True)
        self.tininess = tininess

    def support(self, form) -> Support:
        found = _certificate.form_support(form)
        return found if found.ok else Support(f"the reference backend is judged by certificate only: {found.reason}")

    def run(self, form, operands, mask=None, old=None) -> np.ndarray:
        if mask is not None:
            raise UsageError("the reference backend runs no predicated kernels")
        return np.asarray(api.evaluate(form, *operands, tininess=self.tininess))


class HostBackend(Backend):
    """The host's IEEE arithmetic through numpy (:mod:`tilecheck.diff.hostref`)."""

    def __init__(self):
        super().__init__("host", {"executor": "host IEEE arithmetic through numpy (rounds as the model's "
                                           "binary32 fast path does)"})

    def support(self, form) -> Support:
        return hostref.support(form)

    def run(self, form, operands, mask=None, old=None) -> np.ndarray:
        if mask is not None:
            raise UsageError("the host backend runs no predicated kernels")
        return hostref.evaluate(form, *operands)


# ---------------------------------------------------------------------------------------------
# recorded vectors


class VectorsBackend(Backend):
    """Results recorded in a vector file: :meth:`run` looks each case up."""

    runs_any_input: ClassVar[bool] = False

    def __init__(self, vector_file):
        super().__init__("vectors", {"file": vector_file.path, **{f"recorded {k}": v
                                                                  for k, v in vector_file.header.items()}})
        self.file = vector_file
        self._table: dict[str, dict[tuple[int, ...], int]] = {}
        for case in vector_file.cases:
            self._table.setdefault(case.form, {})[case.operands] = case.result

    def support(self, form) -> Support:
        return SUPPORTED if form.name in self._table else Support(f"{self.file.path} records no case of {form.name}")

    def recorded(self, form) -> tuple[list[np.ndarray], np.ndarray]:
        """Every recorded case of ``form`` in file order (repeated inputs included): operand arrays
        and results."""
        mine = [c for c in self.file.cases if c.form == form.name]
        layout = source_layout(form)
        ops = [np.array([c.operands[i] for c in mine], dtype=layout[i][1]) for i in range(len(layout))]
        return ops, np.array([c.result for c in mine], dtype=_out_size(form, 1)[1])

    def run(self, form, operands, mask=None, old=None) -> np.ndarray:
        if mask is not None:
            raise UsageError("recorded vectors hold no predicated runs")
        table = self._table.get(form.name, {})
        n = _cases(form, operands)
        out = np.zeros(n, dtype=_out_size(form, 1)[1])
        columns = [np.asarray(o).tolist() for o in operands]
        for i in range(n):
            key = tuple(int(c[i]) for c in columns)
            if key not in table:
                ops = " ".join(f"0x{v:x}" for v in key)
                raise UsageError(f"{self.file.path} has no recorded result for {form.name} {ops}")
            out[i] = table[key]
        return out


# ---------------------------------------------------------------------------------------------
# gpu: CuPy


def _import_cupy():
    """CuPy with at least one visible device, else :class:`DeviceUnavailableError`."""
    try:
        import cupy
    except ImportError as exc:
        raise DeviceUnavailableError(
            f"the gpu backend needs CuPy and an NVIDIA driver (pip install 'tilecheck[gpu]'): {exc}") from exc
    with device_errors(cupy, "counting the devices"):
        count = cupy.cuda.runtime.getDeviceCount()
    if count < 1:
        raise DeviceUnavailableError("no NVIDIA GPU: CuPy sees 0 devices")
    return cupy


def cuda_error_types(cupy) -> tuple[type, ...]:
    """CuPy's exception types for CUDA runtime, driver, NVRTC and device-memory failures (those
    this CuPy has)."""
    found = []
    for module, name in (("runtime", "CUDARuntimeError"), ("driver", "CUDADriverError"),
                         ("compiler", "CompileException"), ("memory", "OutOfMemoryError")):
        cls = getattr(getattr(cupy.cuda, module, None), name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


@contextmanager
def device_errors(cupy, doing: str):
    """Turn CuPy's CUDA runtime/driver/NVRTC/memory errors raised inside the block into
    :class:`DeviceUnavailableError` (an environment problem, exit 2) saying what was being done."""
    try:
        yield
    except cuda_error_types(cupy) as exc:
        kind = {"CompileException": "NVRTC could not compile a CuPy kernel",
                "CUDADriverError": "CUDA driver error", "CUDARuntimeError": "CUDA runtime error",
                "OutOfMemoryError": "out of device memory"}.get(type(exc).__name__, type(exc).__name__)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DeviceUnavailableError(f"{kind} while {doing}: {text}") from exc


@dataclass(frozen=True)
class GpuStatus:
    """Whether the gpu backend works here: ``available`` (``reason`` None), else ``reason`` says why
    not; ``details`` holds what the probe learned (device, compute capability, driver and runtime
    versions, CuPy).

    Not usable as a bool on purpose (test ``.available``): an empty reason once meant "yes"."""

    available: bool
    reason: str | None = None
    details: dict = field(default_factory=dict)

    def __bool__(self):
        raise TypeError("GpuStatus has no truth value: test .available")

    def to_json(self) -> dict:
        """Plain data for reports."""
        return {"available": self.available, "reason": self.reason, **self.details}


PROBE_FORM = "add.rn.f32"
"""The form :func:`gpu_status` compiles, launches and judges on the device."""


def gpu_status(*, db) -> GpuStatus:
    """Can the gpu backend run here? Never raises for environment problems.

    Beyond "CuPy imports and sees a device", this runs what every campaign needs: the
    single-instruction kernel of :data:`PROBE_FORM` is loaded through the driver's PTX JIT,
    launched on a few cases, and its results are judged on the device by the model (CuPy
    compiles those elementwise kernels with NVRTC). Any CUDA driver, runtime or NVRTC failure,
    or a wrong result, makes the status unavailable with the reason.
    """
    try:
        backend = GpuBackend(db=db, modes=("jit",))
        form = backend.db.form(PROBE_FORM)
        # 1+1, 2+(-2), 3+0.5, min subnormal + (-min subnormal): no NaN, whose bits may vary
        ops = [np.array([0x3F800000, 0x40000000, 0x40400000, 0x00000001], dtype=np.uint32),
               np.array([0x3F800000, 0xC0000000, 0x3F000000, 0x80000001], dtype=np.uint32)]
        found = backend.judge(form, ops)
        got = backend.run(form, ops)
    except DeviceUnavailableError as exc:
        return GpuStatus(False, exc.message)
    if found.count or got.tolist() != np.asarray(api.evaluate(form, *ops)).tolist():
        return GpuStatus(False, f"the probe kernel ({PROBE_FORM}) gave wrong results on the device: "
                                f"{[hex(v) for v in got.tolist()]}", dict(backend.details))
    return GpuStatus(True, None, dict(backend.details))


class GpuBackend(Backend):
    """Single-instruction kernels on an NVIDIA GPU through CuPy.

    ``modes``: ``jit`` loads the PTX text in memory (``cuModuleLoadData``; the driver compiles it),
    ``cubin`` loads the cubin the local ptxas assembled for the device's architecture. By default
    both when ptxas is present, else ``jit`` only. :meth:`judge` runs every mode; the verdict is
    computed on the device (the model takes its array namespace from its inputs) and only the
    rejected cases are copied back.
    """

    def __init__(self, *, db, target: str | None = None, modes: tuple[str, ...] | None = None, device: int = 0):
        cupy = _import_cupy()
        self.cupy = cupy
        self.db = db
        with device_errors(cupy, f"opening device {device}"):
            self.device = cupy.cuda.Device(device)
            self.device.use()
            cc = str(self.device.compute_capability)
            props = cupy.cuda.runtime.getDeviceProperties(device)
            driver, runtime = cupy.cuda.runtime.driverGetVersion(), cupy.cuda.runtime.runtimeGetVersion()
        gpu_name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        self.arch = f"sm_{cc}"
        if modes is None:
            try:
                ptxas.find_ptxas()
                modes = ("jit", "cubin")
            except TilecheckError:
                modes = ("jit",)
        for m in modes:
            if m not in ("jit", "cubin"):
                raise UsageError(f"unknown gpu code path {m!r}; known: jit, cubin")
        self.modes = tuple(modes)
        self.target = target or self._device_target(int(cc))
        details = {"gpu": gpu_name, "compute_capability": cc, "driver": driver,
                   "runtime": runtime, "cupy": cupy.__version__,
                   "target": self.target, "code": "+".join(self.modes)}
        if "cubin" in self.modes:
            details["ptxas"] = ptxas.ptxas_version()
            details["ptxas_path"] = ptxas.find_ptxas()
        super().__init__("gpu", details)
        self._functions: dict = {}
        self._modules: list = []  # keep loaded modules alive as long as their functions

    def _device_target(self, cc: int) -> str:
        # base targets only: an arch-specific (sm_90a) or family (sm_100f) target is a choice
        # the user makes with --target, not a default
        known = sorted((t for t in self.db.targets.values() if t.sm <= cc and not t.variant), key=lambda t: t.sm)
        if not known:
            raise DeviceUnavailableError(f"compute capability {cc} is older than every known target")
        return known[-1].name

    def support(self, form) -> Support:
        target = kernel_target(self.db, form, self.target)
        if int(self.details["compute_capability"]) < form.target.sm or self.db.target(target).sm < form.target.sm:
            return Support(f"{form.name} needs sm_{form.target.sm}; the device is {self.arch}")
        if no_kernel_reason(form) is not None:
            return Support(f"{form.name}: no single-instruction kernel: {no_kernel_reason(form)}")
        return SUPPORTED

    def function(self, form, predicated: bool = False, mode: str = "jit"):
        """The loaded kernel function (cached per form, predication and code path)."""
        key = (form.name, predicated, mode)
        if key not in self._functions:
            kernel = single_instruction_kernel(form, kernel_target(self.db, form, self.target),
                                               predicated=predicated, db=self.db)
            if mode == "jit":
                image = kernel.ptx.encode("utf-8") + b"\0"  # cuModuleLoadData wants a C string
            else:
                result = ptxas.assemble(kernel.ptx, self.arch)
                if not result.ok:
                    raise TilecheckError(f"ptxas rejected the kernel of {form.name} for {self.arch}: "
                                         + "; ".join(m.text for m in result.errors))
                image = result.cubin
            with device_errors(self.cupy, f"loading the {mode} kernel of {form.name} ({kernel.name})"):
                module = self.cupy.cuda.function.Module()
                module.load(image)
                self._modules.append(module)
                self._functions[key] = (module.get_function(kernel.name), kernel)
        return self._functions[key][0]

    def run_device(self, form, operands, mask=None, old=None, mode: str = "jit"):
        """Launch on device arrays (CuPy); returns the device output array."""
        cp = self.cupy
        fn = self.function(form, mask is not None, mode)
        layout = source_layout(form)
        n = int(operands[0].size // layout[0][2]) if operands else 0
        size, dtype = _out_size(form, n)
        out = cp.zeros(size, dtype=dtype) if old is None else cp.array(old, dtype=dtype, copy=True)
        if n == 0:
            return out
        args = [cp.ascontiguousarray(o, dtype=spec[1]) for o, spec in zip(operands, layout)] + [out]
        if mask is not None:
            args.append(cp.ascontiguousarray(mask, dtype=cp.uint32))
        # numpy scalars of the parameter's width: a Python int would travel as 8 bytes
        args.append(np.uint32(n))
        with device_errors(cp, f"running the {mode} kernel of {form.name}"):
            fn((math.ceil(n / BLOCK),), (BLOCK,), tuple(args))
            cp.cuda.get_current_stream().synchronize()
        return out

    def run(self, form, operands, mask=None, old=None, mode: str | None = None) -> np.ndarray:
        cp = self.cupy
        with device_errors(cp, f"running {form.name} on the device"):
            dev = [cp.asarray(o) for o in operands]
            out = self.run_device(form, dev, None if mask is None else cp.asarray(mask),
                                  None if old is None else cp.asarray(old), mode or self.modes[0])
            return out.get()

    def run_function(self, form, operands, mask=None, olds=None, mode: str | None = None) -> list[np.ndarray]:
        cp = self.cupy
        mode = mode or self.modes[0]
        fn = self.function(form, mask is not None, mode)
        kernel = self._functions[(form.name, mask is not None, mode)][1]
        sources, outs = function_arrays(kernel, operands, olds)
        n = outs[0].size
        with device_errors(cp, f"running the {mode} kernel of {form.name}"):
            dev_out = [cp.asarray(o) for o in outs]
            args = [cp.asarray(a) for a in sources] + dev_out
            if mask is not None:
                args.append(cp.asarray(np.ascontiguousarray(mask, dtype=np.uint32)))
            args.append(np.uint32(n))  # a Python int would travel as 8 bytes
            if n:
                fn((math.ceil(n / BLOCK),), (BLOCK,), tuple(args))
                cp.cuda.get_current_stream().synchronize()
            return [o.get() for o in dev_out]

    def run_program(self, program, arrays: list, target: str | None = None) -> None:
        """Launch a tile program's kernel (driver JIT of its PTX) with its launch configuration;
        the numpy tensor arrays in ``arrays`` receive the device's results in place."""
        cp = self.cupy
        kernel = program_kernel(program, target=target or self.target, db=self.db)
        args = bind_arguments(program, arrays, self.db.formats)  # validated numpy arrays and width-exact numpy scalars
        with device_errors(cp, f"running program {kernel.name} on the device"):
            module = cp.cuda.function.Module()
            module.load(kernel.ptx.encode("utf-8") + b"\0")
            self._modules.append(module)
            fn = module.get_function(kernel.name)
            device_args = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
            launch = program.launch or DEFAULT_LAUNCH
            fn(tuple(launch.grid), tuple(launch.block), tuple(device_args))
            cp.cuda.get_current_stream().synchronize()
            for host, dev in zip(args, device_args):
                if isinstance(host, np.ndarray):
                    host[...] = dev.get()

    def certifies(self, form, tininess: str = TININESS_DEFAULT) -> bool:
        """The GPU's verdict runs on the device with the model (:func:`tilecheck.allowed`)."""
        return False

    def judge(self, form, operands, tininess: str = TININESS_DEFAULT,
              ulp_reading: str = ULP_READING_DEFAULT) -> _verdict.Disagreements:
        cp = self.cupy
        with device_errors(cp, f"judging {form.name} on the device"):
            dev = [cp.asarray(o) for o in operands]
            found = []
            for mode in self.modes:
                out = self.run_device(form, dev, mode=mode)
                found.append(_verdict.disagreements(form, out, dev, tininess, ulp_reading))
            return _verdict.merge(found, self.modes)


# ---------------------------------------------------------------------------------------------


def select(name: str, *, db, target: str | None = None, vectors=None, tininess: str | None = None,
           gpu_modes: tuple[str, ...] | None = None, certify: bool = False) -> Backend:
    """The backend called ``name`` (see :data:`NAMES`).

    ``auto``: ``gpu`` when :func:`gpu_status` says it works, else ``cpu``. ``gpu`` without a device raises
    :class:`~tilecheck.errors.DeviceUnavailableError`; ``vectors`` needs a parsed vector file.
    ``certify``: host-side verdicts use the certificate where it applies (``reference`` always).
    """
    backend = _select(name, db, target, vectors, tininess, gpu_modes)
    backend.certify = backend.certify or certify
    return backend


def _select(name, db, target, vectors, tininess, gpu_modes) -> Backend:
    if name not in NAMES:
        raise UsageError(f"unknown backend {name!r}; known: {', '.join(NAMES)}")
    if name == "auto":
        name = "gpu" if gpu_status(db=db).available else "cpu"
    if name == "gpu":
        return GpuBackend(db=db, target=target, modes=gpu_modes)
    if name == "cpu":
        return CpuBackend(db=db, target=target, tininess=tininess)
    if name == "host":
        return HostBackend()
    if name == "model":
        return ModelBackend(tininess or TININESS_DEFAULT)
    if name == "reference":
        return ReferenceBackend(tininess or TININESS_DEFAULT)
    if vectors is None:
        raise UsageError("the vectors backend needs a vector file (--vectors FILE)")
    return VectorsBackend(vectors)
