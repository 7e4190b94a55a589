"""The records of an emitted kernel's ABI: its parameters and what is needed to launch it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecheck.errors import UsageError


@dataclass(frozen=True)
class KernelParam:
    """One ``.param`` of an emitted kernel.

    ``role``: ``source``, ``output``, ``mask``, ``count`` (single-instruction kernels) or ``tensor``,
    ``scalar`` (program kernels). ``operand`` is the form operand (``a``) or program parameter name;
    ``dtype`` the element dtype a pointer parameter's array holds (None for plain scalars);
    ``per_thread`` how many elements of it one thread uses.
    """

    name: str
    ptx_type: str
    role: str
    operand: str | None = None
    dtype: np.dtype | None = None
    per_thread: int = 1


@dataclass(frozen=True)
class EmittedKernel:
    """A PTX module holding one kernel, with what is needed to launch it.

    ``ptx`` is the module text, ``name`` the ``.entry`` name, ``version`` its ``.version``,
    ``params`` the parameters in order (see the module docstring for single-instruction kernels).
    Program kernels carry the launch they must run with (``grid``, ``block``: 1-3 extents; the
    PTX fixes the block with ``.reqntid``); single-instruction kernels run with any 1-D launch
    covering ``n`` threads (both None).
    """

    name: str
    ptx: str
    version: str
    target: str
    params: tuple[KernelParam, ...]
    form: str | None = None
    predicated: bool = False
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None

    def arguments(self, sources, out, mask=None) -> list:
        """The argument list of a single-instruction kernel, in parameter order, ``n`` included.

        ``sources``: one array per source parameter; ``out``: the output array (holding the old
        values for a predicated kernel), or a sequence of them, one per output parameter, for a
        kernel with several (``setp ... p|q``); ``mask``: uint32 array (predicated kernels only).
        """
        if self.form is None:
            raise UsageError(f"{self.name} is a program kernel; pass its arguments in parameter order")
        src_params = [p for p in self.params if p.role == "source"]
        sources = list(sources)
        if len(sources) != len(src_params):
            raise UsageError(f"{self.name} takes {len(src_params)} source array(s), got {len(sources)}")
        out_params = [p for p in self.params if p.role == "output"]
        outs = [out] if isinstance(out, np.ndarray) else list(out)
        if len(outs) != len(out_params):
            raise UsageError(f"{self.name} takes {len(out_params)} output array(s), got {len(outs)}")
        if not isinstance(outs[0], np.ndarray):
            raise UsageError(f"{self.name}: {out_params[0].name} needs a numpy array, got {type(outs[0]).__name__}")
        n = outs[0].size // out_params[0].per_thread
        args = []
        for p, a in zip(src_params, sources):
            _check_array(self.name, p, a, n)
            args.append(a)
        for p, a in zip(out_params, outs):
            _check_array(self.name, p, a, n)
            args.append(a)
        if self.predicated:
            if mask is None:
                raise UsageError(f"{self.name} is predicated: pass a uint32 mask array")
            mask_param = next(p for p in self.params if p.role == "mask")
            _check_array(self.name, mask_param, mask, n)
            args.append(mask)
        elif mask is not None:
            raise UsageError(f"{self.name} is not predicated: it takes no mask")
        args.append(np.uint32(n))
        return args


def _check_array(kernel: str, param: KernelParam, array, n: int) -> None:
    if not isinstance(array, np.ndarray):
        raise UsageError(f"{kernel}: {param.name} needs a numpy array, got {type(array).__name__}")
    if array.dtype.itemsize != param.dtype.itemsize:
        raise UsageError(f"{kernel}: {param.name} holds {param.dtype} containers, got dtype {array.dtype}")
    if array.size != n * param.per_thread:
        raise UsageError(f"{kernel}: {param.name} needs {n * param.per_thread} elements ({param.per_thread} per "
                         f"thread for n={n}), got {array.size}")
