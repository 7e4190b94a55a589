"""A strict stand-in for CuPy 14 that runs on the CPU, to exercise the gpu code paths without a GPU.

It is *not* CuPy, but it refuses what CuPy refuses, so code that passes against it has a chance
to run on a device:

* device arrays are their own type (:class:`ndarray`, from a module named ``cupy_fake`` so that
  :func:`tilecheck.model.xp.namespace` takes this module as the array namespace). They refuse
  implicit host conversion exactly like CuPy (``np.asarray(device_array)`` raises TypeError);
  ``.get()`` and :func:`asnumpy` are the way back, and every such copy is recorded in
  ``STATE.transfers``. numpy ufuncs and functions applied to them dispatch to this module
  (``__array_ufunc__`` / ``__array_function__``), as with CuPy.
* host arrays are refused where CuPy refuses them: as operands of device functions and
  operators, as index arrays, as values stored into a device array (only :func:`asarray` and
  :func:`array` transfer host data).
* the module offers only the names in :data:`API` and :data:`TYPES`, each checked against CuPy
  14.2's namespace; any other name raises AttributeError instead of falling through to numpy.
* kernels: ``cuda.function.Module.load`` takes a NUL-terminated PTX image (parsed by
  ``tilecheck.sim``; a PTX whose ``.target`` the device cannot run is refused) or a cubin,
  which must be an NVIDIA ELF (``EM_CUDA``) built for the device's architecture and defining
  the kernel asked for; it is executed through the PTX it was assembled from, identified by
  assembling each PTX the fake has seen with ptxas for the device and comparing the bytes. A
  launch runs the kernel through :func:`tilecheck.sim.execute`; a Python int argument is refused
  (CuPy would pass it as 8 bytes). A PTX that executor cannot parse (nvcc's, say the corpus of
  ``examples/cuda``) is run by the compiled-PTX executor (``tilecheck.sim.plan``, approximate
  instructions giving the model's representative value): array arguments are memory regions, a
  wrong argument count or scalar size is CUDA_ERROR_INVALID_VALUE, and an access outside the
  arrays (a grid larger than the data of a kernel without bounds check) CUDA_ERROR_ILLEGAL_ADDRESS.
* errors are CuPy's types: ``cuda.runtime.CUDARuntimeError``, ``cuda.driver.CUDADriverError``
  (message ``CUDA_ERROR_...: ...``), ``cuda.compiler.CompileException``; ``STATE.fail`` injects
  them (``{"nvrtc": "..."}`` makes every elementwise operation fail to compile,
  ``{"driver": "..."}`` every module load, ``{"launch": "..."}`` every launch,
  ``{"devices": 0}`` hides the device).

What it cannot check: timing, memory limits, and CuPy behaviours outside the names above.
"""

from __future__ import annotations

import hashlib
import re
import types

import numpy as np

# ---------------------------------------------------------------------------------------------
# state and errors


class _State:
    def __init__(self):
        self.transfers: list[int] = []
        self.launches: list[tuple] = []
        self.corrupt: set[int] = set()  # output indices a launch flips the low bit of
        self.loaded: list[bytes] = []
        self.ptx_seen: list[str] = []  # PTX texts loaded or registered (to identify cubins)
        self.cubin_ptx: dict[str, str] = {}  # sha256 of a verified cubin -> its PTX
        self.fail: dict = {}
        self.compute_capability = "90"


STATE = _State()


def reset() -> None:
    """Forget transfers, launches, loaded images and injected faults of earlier tests."""
    STATE.__init__()


def register_ptx(ptx: str) -> None:
    """Tell the fake about a PTX text, so a cubin assembled from it can be identified."""
    STATE.ptx_seen.append(ptx)


class CUDARuntimeError(RuntimeError):
    """Stand-in for ``cupy_backends.cuda.api.runtime.CUDARuntimeError``."""

    def __init__(self, status: int, message: str = "cudaErrorUnknown: unknown error"):
        self.status = status
        super().__init__(message)


class CUDADriverError(RuntimeError):
    """Stand-in for ``cupy_backends.cuda.api.driver.CUDADriverError``."""

    def __init__(self, status: int, message: str = "CUDA_ERROR_UNKNOWN: unknown error"):
        self.status = status
        super().__init__(message)


class CompileException(Exception):
    """Stand-in for ``cupy.cuda.compiler.CompileException`` (NVRTC failures)."""


class OutOfMemoryError(MemoryError):
    """Stand-in for ``cupy.cuda.memory.OutOfMemoryError``."""


def _check_nvrtc() -> None:
    # every elementwise operation of CuPy is an NVRTC-compiled kernel on first use
    if "nvrtc" in STATE.fail:
        raise CompileException(STATE.fail["nvrtc"])


# ---------------------------------------------------------------------------------------------
# device arrays


def _unwrap(x):
    """Host data of device arguments for numpy; refuse host arrays like CuPy does."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, tuple):
        return tuple(_unwrap(v) for v in x)
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    return x  # Python and numpy scalars, dtypes, None, slices, Ellipsis


def _wrap(x):
    if isinstance(x, np.ndarray):
        return ndarray(x)
    if isinstance(x, np.generic):
        return ndarray(np.asarray(x))  # CuPy returns 0-d device arrays, not host scalars
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    return x


def _device_call(fn, *args, **kwargs):
    _check_nvrtc()
    out = kwargs.get("out")
    result = fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
    return out if isinstance(out, ndarray) else _wrap(result)


class ndarray:  # noqa: N801 - mirrors cupy.ndarray
    """A "device" array: holds its data privately and never converts to numpy implicitly."""

    __slots__ = ("_a",)
    __array_priority__ = 100

    def __init__(self, data: np.ndarray):
        self._a = data

    # -- what CuPy forbids
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __iter__(self):
        raise TypeError("fake cupy: iterating a device array element by element is a transfer per element")

    # -- transfers
    def get(self, stream=None, order="C", out=None):
        """Copy to the host (recorded in ``STATE.transfers``)."""
        STATE.transfers.append(int(self._a.size))
        return np.array(self._a, copy=True)

    def tolist(self):
        """Python values (a transfer)."""
        return self.get().tolist()

    def item(self):
        """The single element as a Python scalar (a transfer)."""
        return self.get().item()

    def __bool__(self):
        return bool(self.get())

    def __int__(self):
        return int(self.get())

    def __float__(self):
        return float(self.get())

    # -- attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)

    def __len__(self):
        return len(self._a)

    def __repr__(self):
        return f"fakecupy.ndarray(shape={self.shape}, dtype={self.dtype})"

    # -- numpy interoperability (CuPy implements both protocols)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or ufunc.__name__ not in API:
            return NotImplemented
        return API[ufunc.__name__](*inputs, **kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        if func.__name__ not in API:
            return NotImplemented
        return API[func.__name__](*args, **kwargs)

    # -- methods CuPy's ndarray has
    def astype(self, dtype, copy=True, **kwargs):
        _check_nvrtc()
        return ndarray(self._a.astype(dtype, copy=copy))

    def view(self, dtype):
        return ndarray(self._a.view(dtype))

    def reshape(self, *shape, **kwargs):
        return ndarray(self._a.reshape(*shape, **kwargs))

    def ravel(self):
        return ndarray(self._a.ravel())

    def flatten(self):
        return ndarray(self._a.flatten())

    def copy(self):
        return ndarray(self._a.copy())

    def fill(self, value):
        self._a.fill(_unwrap(value))

    def any(self, axis=None):
        return _device_call(np.any, self, axis=axis)

    def all(self, axis=None):
        return _device_call(np.all, self, axis=axis)

    def sum(self, axis=None, dtype=None):
        return _device_call(np.sum, self, axis=axis, dtype=dtype)

    def max(self, axis=None):
        return _device_call(np.max, self, axis=axis)

    def min(self, axis=None):
        return _device_call(np.min, self, axis=axis)

    def argmax(self, axis=None):
        return _device_call(np.argmax, self, axis=axis)

    def nonzero(self):
        return _device_call(np.nonzero, self)

    # -- indexing
    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key)])

    def __setitem__(self, key, value):
        _check_nvrtc()
        self._a[_unwrap(key)] = _unwrap(value)


def _operator(fn, reflected=False):
    def method(self, other):
        if isinstance(other, np.ndarray) and not isinstance(other, ndarray):
            raise TypeError(f"Unsupported type {type(other)}")
        return _device_call(fn, other, self) if reflected else _device_call(fn, self, other)
    return method


for _name, _fn in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
                   "floordiv": np.floor_divide, "mod": np.remainder, "and": np.bitwise_and, "or": np.bitwise_or,
                   "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift,
                   "pow": np.power}.items():
    setattr(ndarray, f"__{_name}__", _operator(_fn))
    setattr(ndarray, f"__r{_name}__", _operator(_fn, reflected=True))
for _name, _fn in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                   "ge": np.greater_equal}.items():
    setattr(ndarray, f"__{_name}__", _operator(_fn))
ndarray.__neg__ = lambda self: _device_call(np.negative, self)
ndarray.__invert__ = lambda self: _device_call(np.invert, self)
ndarray.__abs__ = lambda self: _device_call(np.abs, self)
ndarray.__hash__ = None
ndarray.__module__ = "cupy_fake"


# ---------------------------------------------------------------------------------------------
# module functions: only names CuPy 14 has (checked against cupy 14.2's namespace)


def asarray(a, dtype=None, order=None):
    """Host -> device (a copy, like a real transfer); device arrays pass through."""
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return ndarray(np.array(a, dtype=dtype, copy=True))


def array(a, dtype=None, copy=True, order="K"):
    """A new device array from host or device data."""
    if isinstance(a, ndarray):
        return ndarray(np.array(a._a, dtype=dtype, copy=True))
    return ndarray(np.array(a, dtype=dtype, copy=True))


def ascontiguousarray(a, dtype=None):
    """A C-contiguous device array (device input only, like CuPy)."""
    if not isinstance(a, ndarray):
        raise TypeError(f"Unsupported type {type(a)}")
    return ndarray(np.ascontiguousarray(a._a, dtype=dtype))


def asnumpy(a, stream=None, order="C", out=None):
    """Device -> host (a transfer); host arrays pass through."""
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def _creator(fn):
    def create(*args, **kwargs):
        return _device_call(fn, *args, **kwargs)
    create.__name__ = fn.__name__
    return create


_NUMPY_FUNCTIONS = (
    "where", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "arange", "clip", "abs",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "negative",
    "sqrt", "floor", "sign", "signbit", "isfinite", "isnan", "isinf", "frexp", "ldexp", "maximum",
    "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and",
    "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift", "logical_and", "logical_or",
    "logical_not", "any", "all", "nonzero", "flatnonzero", "count_nonzero", "argmax", "bincount",
    "broadcast_arrays", "broadcast_to", "concatenate", "copyto", "repeat", "unique", "power", "log2", "trunc",
    "nextafter", "rint", "exp2",
)
API: dict = {name: _creator(getattr(np, name)) for name in _NUMPY_FUNCTIONS}
API.update(asarray=asarray, array=array, ascontiguousarray=ascontiguousarray, asnumpy=asnumpy)

TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16", "float32",
         "float64", "bool_", "dtype")
"""Scalar types and ``dtype``: CuPy re-exports numpy's (``cupy.uint64 is numpy.uint64``)."""

globals().update(API)
globals().update({name: getattr(np, name) for name in TYPES})


# ---------------------------------------------------------------------------------------------
# CUDA: runtime, driver, compiler, modules


_EM_CUDA = 190


def _elf_info(image: bytes) -> tuple[int, set[str]]:
    """(sm number from e_flags, defined symbol names) of a CUDA ELF; CUDADriverError otherwise."""
    import struct

    if image[:4] != b"\x7fELF" or image[4] != 2:
        raise CUDADriverError(200, "CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid")
    machine = struct.unpack_from("<H", image, 18)[0]
    if machine != _EM_CUDA:
        raise CUDADriverError(200, "CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid")
    flags = struct.unpack_from("<I", image, 48)[0]
    shoff = struct.unpack_from("<Q", image, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for sh in sections:
        if sh[1] == 2:  # SHT_SYMTAB
            strtab = sections[sh[6]]
            for off in range(sh[4], sh[4] + sh[5], sh[9] or 24):
                name_off = struct.unpack_from("<I", image, off)[0]
                start = strtab[4] + name_off
                names.add(image[start:image.index(b"\0", start)].decode("ascii", "replace"))
    # CUDA ELF e_flags: ptxas 13 puts the SM number in bits 8-15 (older ABIs: bits 0-7)
    sm = flags & 0xFF if (flags & 0xFF) >= 20 else (flags >> 8) & 0xFF
    return sm, names


_TARGET = re.compile(r"^\s*\.target\s+sm_(\d+)([af]?)", re.M)
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")


class _Function:
    def __init__(self, name: str, ptx: str, compiled=None):
        self.name, self.ptx, self.compiled = name, ptx, compiled

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        from tilecheck import sim
        from tilecheck.spec.database import load_database

        if not (isinstance(grid, tuple) and isinstance(block, tuple)):
            raise TypeError("grid and block must be tuples")
        if "launch" in STATE.fail:
            raise CUDADriverError(719, STATE.fail["launch"])
        host_args = []
        for a in args:
            if isinstance(a, ndarray):
                host_args.append(a._a)  # shares memory: the kernel writes in place
            elif isinstance(a, np.generic):
                host_args.append(a)
            else:
                # CuPy would pass a Python int as 8 bytes (cupy#8485): the backend must not do that
                raise TypeError(f"kernel argument {a!r} is not a numpy scalar or device array")
        if self.compiled is None:
            try:  # sim.execute refuses PTX past its subset before anything runs ...
                sim.execute(self.ptx, self.name, host_args, grid=grid, block=block, db=load_database())
            except sim.PtxError:  # ... (.local, calls, cvta.shared): the compiled-PTX executor runs it
                from tilecheck.sim.frontend import parse_module

                self.compiled = parse_module(self.ptx, "<module>")
        if self.compiled is not None:
            _run_compiled(self.compiled, self.name, host_args, grid, block)
        STATE.launches.append((self.name, grid, block))
        if STATE.corrupt:
            # the output array is the last array before the optional mask and the count
            arrays = [a for a in host_args if isinstance(a, np.ndarray)]
            out = arrays[-1] if "_pred" not in self.name else arrays[-2]
            for i in STATE.corrupt:
                if i < out.size:
                    out[i] ^= out.dtype.type(1)


class Module:
    """Stand-in for ``cupy.cuda.function.Module`` (``cuModuleLoadData`` + ``cuModuleGetFunction``)."""

    def __init__(self):
        self.ptx = None
        self.compiled = None  # the compiled-PTX front end's module, for PTX the older parser rejects
        self.symbols: set[str] = set()

    def load(self, image: bytes):
        """Load a NUL-terminated PTX image (driver JIT) or a cubin for the device."""
        if "driver" in STATE.fail:
            raise CUDADriverError(218, STATE.fail["driver"])
        image = bytes(image)
        STATE.loaded.append(image)
        device_sm = int(STATE.compute_capability)
        if image[:4] == b"\x7fELF":
            sm, self.symbols = _elf_info(image)
            if sm != device_sm:
                raise CUDADriverError(209, "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for "
                                           f"execution on the device (cubin for sm_{sm}, device sm_{device_sm})")
            self.ptx = _source_of(image, device_sm)
            return
        if not image.endswith(b"\0"):
            raise CUDADriverError(218, "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed "
                                       "(the image is not NUL-terminated)")
        ptx = image[:-1].decode("utf-8")
        match = _TARGET.search(ptx)
        if match is None:
            raise CUDADriverError(218, "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed (no .target)")
        sm, suffix = int(match.group(1)), match.group(2)
        if sm > device_sm or (suffix == "a" and sm != device_sm):
            raise CUDADriverError(218, f"CUDA_ERROR_INVALID_PTX: .target sm_{sm}{suffix} is not supported "
                                       f"on sm_{device_sm}")
        from tilecheck.sim.parser import parse_ptx

        self.compiled = None
        try:
            parse_ptx(ptx)
        except Exception as exc:  # the simulator's parsers stand in for the driver's
            from tilecheck.sim.frontend import parse_module

            try:  # nvcc's PTX: the compiled-PTX executor's front end
                self.compiled = parse_module(ptx, "<module>")
            except Exception:
                raise CUDADriverError(218, f"CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed: {exc}") from exc
        self.ptx = ptx
        self.symbols = set(_ENTRY.findall(ptx))
        register_ptx(ptx)

    def get_function(self, name: str):
        """The kernel ``name``; CUDADriverError CUDA_ERROR_NOT_FOUND when the module lacks it."""
        if self.ptx is None:
            raise CUDADriverError(400, "CUDA_ERROR_INVALID_HANDLE: invalid resource handle (nothing loaded)")
        if name not in self.symbols:
            raise CUDADriverError(500, "CUDA_ERROR_NOT_FOUND: named symbol not found")
        return _Function(name, self.ptx, self.compiled)


def _run_compiled(module, name: str, host_args: list, grid: tuple, block: tuple) -> None:
    """Run an ``.entry`` that the older executor cannot parse (nvcc's PTX) with the compiled-PTX
    executor, approximate instructions returning the model's representative value: each array
    argument is a memory region at its pointer, each scalar its value; the kernel's stores are
    written back into the arrays. Strict like a device: the argument count and scalar sizes must
    match the parameters, and an access outside the arrays (a grid larger than the data of a kernel
    without bounds check) is an illegal-address launch failure."""
    from tilecheck.errors import TilecheckError
    from tilecheck.sim.plan import Memory, RunContext, compile_function
    from tilecheck.spec.database import load_database

    fn = module.function(name)
    if fn.kind != "entry":
        raise CUDADriverError(500, "CUDA_ERROR_NOT_FOUND: named symbol not found (not an .entry)")
    if len(host_args) != len(fn.params):
        raise CUDADriverError(1, f"CUDA_ERROR_INVALID_VALUE: {name} takes {len(fn.params)} parameters, "
                                 f"launched with {len(host_args)}")
    if len(grid) > 3 or len(block) > 3 or int(np.prod(block)) > 1024 or min(*grid, *block) < 1:
        raise CUDADriverError(1, "CUDA_ERROR_INVALID_VALUE: invalid launch configuration")
    if (*grid[1:], *block[1:]).count(1) != len(grid) + len(block) - 2:  # (this module's `any` is CuPy's)
        raise AssertionError("fake cupy runs compiled PTX on one-dimensional launches only")
    plan = compile_function(fn, load_database(), name)
    regions = [(p.name, a.reshape(-1).view(np.uint8)) for p, a in zip(fn.params, host_args)
               if isinstance(a, np.ndarray)]
    memory = Memory(regions)
    threads = int(grid[0]) * int(block[0])
    lanes = plan.new_lanes(threads)
    k = 0
    for p, a in zip(fn.params, host_args):
        pbits = 8 * p.nbytes
        if isinstance(a, np.ndarray):
            if pbits != 64:
                raise CUDADriverError(1, f"CUDA_ERROR_INVALID_VALUE: pointer for the {pbits}-bit parameter {p.name}")
            lanes.params[p.name] = np.full(threads, memory.pointer(k), dtype=np.uint64)
            k += 1
        else:
            if 8 * a.dtype.itemsize != pbits:
                raise CUDADriverError(1, f"CUDA_ERROR_INVALID_VALUE: a {8 * a.dtype.itemsize}-bit value for the "
                                         f"{pbits}-bit parameter {p.name}")
            bits = np.asarray(a).view(np.dtype(f"u{a.dtype.itemsize}")).astype(np.uint64)
            lanes.params[p.name] = np.full(threads, bits, dtype=np.uint64)
    ctx = RunContext(approx="reference", memory=memory, block=int(block[0]), threads=threads)
    try:
        lanes = plan.run(lanes, ctx)
    except TilecheckError as exc:
        raise CUDADriverError(700, f"CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered "
                                   f"({exc})") from exc
    if lanes.size != threads or (lanes.unknown is not None and bool(lanes.unknown.sum())):
        raise AssertionError(f"fake cupy cannot give one result per thread of {name} (lanes forked or unknown)")
    for region, nbytes, offs, vals, done in lanes.stores:
        data = memory.regions[region][1]
        o = offs[done]
        v = vals[done].astype(np.uint64)
        for b in range(nbytes):
            data[o + b] = ((v >> np.uint64(8 * b)) & np.uint64(0xFF)).astype(np.uint8)


def _source_of(cubin: bytes, sm: int) -> str:
    """The PTX a cubin was assembled from: the seen PTX whose ptxas build is byte-identical."""
    key = hashlib.sha256(cubin).hexdigest()
    if key in STATE.cubin_ptx:
        return STATE.cubin_ptx[key]
    from tilecheck import ptxas

    for ptx in reversed(STATE.ptx_seen):
        result = ptxas.assemble(ptx, f"sm_{sm}")
        if result.ok and result.cubin == cubin:
            STATE.cubin_ptx[key] = ptx
            return ptx
    raise AssertionError("fake cupy cannot execute this cubin: it is not ptxas's build of any PTX it has "
                         "seen for this device (load the PTX first or register_ptx() it)")


class _Device:
    def __init__(self, index=0):
        if index >= _device_count():
            raise CUDARuntimeError(101, "cudaErrorInvalidDevice: invalid device ordinal")
        self.id = index

    @property
    def compute_capability(self):
        return STATE.compute_capability

    def use(self):
        return None

    def synchronize(self):
        return None


class _Stream:
    def synchronize(self):
        return None


def _device_count() -> int:
    if "runtime" in STATE.fail:
        raise CUDARuntimeError(35, STATE.fail["runtime"])
    return STATE.fail.get("devices", 1)


def _properties(index):
    _Device(index)
    return {"name": b"Fake GPU (numpy)", "major": int(STATE.compute_capability) // 10,
            "minor": int(STATE.compute_capability) % 10}


runtime = types.SimpleNamespace(getDeviceCount=_device_count, CUDARuntimeError=CUDARuntimeError,
                                getDeviceProperties=_properties, driverGetVersion=lambda: 13000,
                                runtimeGetVersion=lambda: 13000)
driver = types.SimpleNamespace(CUDADriverError=CUDADriverError)
compiler = types.SimpleNamespace(CompileException=CompileException)
memory = types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError)
function = types.SimpleNamespace(Module=Module)
cuda = types.SimpleNamespace(runtime=runtime, driver=driver, compiler=compiler, memory=memory, function=function,
                             Device=_Device, get_current_stream=lambda: _Stream())
__version__ = "14.0.0-fake"


def __getattr__(name):
    raise AttributeError(f"fake cupy has no {name!r}: tilecheck uses only the names in API and TYPES "
                         "(add it here only if CuPy 14 has it)")
