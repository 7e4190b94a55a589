"""A stand-in for CuPy that runs on the CPU, to exercise the gpu code paths without a GPU.

It is *not* CuPy: arrays are numpy arrays of a subclass whose type lives in a module named
``cupy_fake`` (so :func:`tilecheck.model.xp.namespace` takes this module as the array namespace
and :func:`tilecheck.diff.verdict.to_host` calls ``.get()``), module functions are numpy's with
their array results converted, and a "kernel launch" runs the loaded PTX through
:func:`tilecheck.sim.execute`. What it checks: the backend's launch protocol (NUL-terminated PTX
image, numpy scalars of the parameter width, grid/block tuples), the model and the verdict
running in a namespace that is not numpy, and how much data travels back (``transfers``
records the size of every ``.get()``). What it cannot check: CuPy's own API differences.
"""

from __future__ import annotations

import types

import numpy as np


class ndarray(np.ndarray):  # noqa: N801 - mirrors cupy.ndarray
    """A "device" array."""

    def get(self):
        """Copy to the host (recorded in ``transfers``)."""
        STATE.transfers.append(int(self.size))
        return np.array(self.view(np.ndarray), copy=True)


ndarray.__module__ = "cupy_fake"


class _State:
    def __init__(self):
        self.transfers: list[int] = []
        self.launches: list[tuple] = []
        self.corrupt: set[int] = set()  # output indices a launch flips the low bit of
        self.ptx_by_kernel: dict[str, str] = {}
        self.loaded: list[bytes] = []


STATE = _State()


def _dev(x):
    if isinstance(x, np.ndarray) and not isinstance(x, ndarray):
        return x.view(ndarray)
    if isinstance(x, tuple):
        return tuple(_dev(v) for v in x)
    if isinstance(x, list):
        return [_dev(v) for v in x]
    return x


def _wrap(fn):
    def call(*args, **kwargs):
        return _dev(fn(*args, **kwargs))
    call.__name__ = getattr(fn, "__name__", "fn")
    return call


def asarray(a, dtype=None):
    """Host -> "device" (a copy, like a real transfer)."""
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    return np.array(a, dtype=dtype, copy=True).view(ndarray)


def array(a, dtype=None, copy=True):
    """A new "device" array."""
    return np.array(np.asarray(a), dtype=dtype, copy=True).view(ndarray)


def ascontiguousarray(a, dtype=None):
    """A contiguous "device" array."""
    return np.ascontiguousarray(np.asarray(a), dtype=dtype).view(ndarray)


class CUDARuntimeError(RuntimeError):
    """Stand-in for cupy.cuda.runtime.CUDARuntimeError."""


class _Runtime(types.SimpleNamespace):
    pass


class _Device:
    def __init__(self, index=0):
        self.id = index
        self.compute_capability = "90"

    def use(self):
        return None

    def synchronize(self):
        return None


class _Stream:
    def synchronize(self):
        return None


class _Function:
    def __init__(self, name: str, ptx: str):
        self.name, self.ptx = name, ptx

    def __call__(self, grid, block, args):
        from tilecheck import sim

        if not (isinstance(grid, tuple) and isinstance(block, tuple)):
            raise TypeError("grid and block must be tuples")
        host_args = []
        for a in args:
            if isinstance(a, ndarray):
                host_args.append(a.view(np.ndarray))  # shares memory: the kernel writes in place
            elif isinstance(a, np.generic):
                host_args.append(a)
            else:
                # CuPy would pass a Python int as 8 bytes (cupy#8485): the backend must not do that
                raise TypeError(f"kernel argument {a!r} is not a numpy scalar or device array")
        sim.execute(self.ptx, self.name, host_args, grid=grid, block=block)
        STATE.launches.append((self.name, grid, block))
        if STATE.corrupt:
            # the output array is the last array before the optional mask and the count
            arrays = [a for a in host_args if isinstance(a, np.ndarray)]
            out = arrays[-1] if "_pred" not in self.name else arrays[-2]
            for i in STATE.corrupt:
                if i < out.size:
                    out[i] ^= out.dtype.type(1)


class _Module:
    def __init__(self):
        self.ptx = None

    def load(self, image: bytes):
        STATE.loaded.append(bytes(image))
        if image[:4] == b"\x7fELF":
            self.ptx = None  # a cubin: kernels are looked up among PTX loaded before
            return
        if not image.endswith(b"\0"):
            raise ValueError("cuModuleLoadData needs a NUL-terminated PTX image")
        self.ptx = image[:-1].decode("utf-8")

    def get_function(self, name: str):
        if self.ptx is not None:
            STATE.ptx_by_kernel[name] = self.ptx
            return _Function(name, self.ptx)
        if name not in STATE.ptx_by_kernel:
            raise KeyError(f"fake cupy cannot run a cubin of {name} without its PTX loaded first")
        return _Function(name, STATE.ptx_by_kernel[name])


def _build():
    runtime = _Runtime(getDeviceCount=lambda: 1, CUDARuntimeError=CUDARuntimeError,
                       getDeviceProperties=lambda i: {"name": b"Fake GPU (numpy)"},
                       driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000)
    function = types.SimpleNamespace(Module=_Module)
    cuda = types.SimpleNamespace(runtime=runtime, Device=_Device, function=function,
                                 get_current_stream=lambda: _Stream())
    return cuda


cuda = _build()
__version__ = "0.0-fake"


def __getattr__(name):
    value = getattr(np, name)
    if callable(value) and not isinstance(value, type):
        return _wrap(value)
    return value


def reset() -> None:
    """Forget transfers, launches and faults of earlier tests."""
    global STATE
    STATE.__init__()
