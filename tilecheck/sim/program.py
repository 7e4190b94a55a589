"""Running tile programs on numpy arrays: argument binding, :func:`run_program` (emit PTX, execute it
on the CPU through the model) and the approximate-form warning.
"""

from __future__ import annotations

import warnings

import numpy as np

from tilecheck.emit import program_kernel
from tilecheck.errors import DeviceUnavailableError, UsageError
from tilecheck.model.api import check_tininess
from tilecheck.sim.errors import ApproximateReferenceWarning
from tilecheck.sim.machine import execute
from tilecheck.tile.exprs import Const

BACKENDS = ("cpu",)


def bind_arguments(program, arrays, formats=None) -> list:
    """Check ``arrays`` against ``program``'s parameters; return the kernel arguments in order.

    Tensor parameters take C-contiguous, writeable numpy arrays of the tensor's size whose element
    width equals the tensor dtype's; a float tensor takes its own float dtype or unsigned bits
    (a float32 tensor: float32 or uint32), never signed integers or another float type (they
    would be read as bits silently). They are written in place. Scalar parameters take numbers (converted to the parameter's
    dtype, round-to-nearest for floats) or numpy scalars of the same width (taken as bits).
    ``formats`` is the spec database's formats table (see :meth:`~tilecheck.tile.exprs.Const.bits`).
    """
    params = program.params
    if len(arrays) != len(params):
        names = ", ".join(p.name for p in params)
        raise UsageError(f"{program.name} takes {len(params)} argument(s) ({names}), got {len(arrays)}")
    out = []
    for p, value in zip(params, arrays):
        if p.is_tensor:
            buffer = p.view.buffer
            if not isinstance(value, np.ndarray):
                raise UsageError(f"{program.name}: argument {p.name!r} must be a numpy array "
                                 f"({buffer.dtype} {buffer.shape}), got {type(value).__name__}")
            if buffer.dtype.kind == "float" and value.dtype.kind not in "uf" and value.dtype.name != buffer.dtype.name:
                raise UsageError(f"{program.name}: argument {p.name!r} is a {buffer.dtype} tensor; a {value.dtype} array "
                                 f"is neither its values nor its bits: give {buffer.dtype.name} values, or the bits as "
                                 f"uint{buffer.dtype.bytes * 8} (array.view(np.uint{buffer.dtype.bytes * 8}))")
            if buffer.dtype.kind == "float" and value.dtype.kind == "f" and value.dtype.name != buffer.dtype.name:
                raise UsageError(f"{program.name}: argument {p.name!r} is a {buffer.dtype} tensor, got {value.dtype} "
                                 f"values; convert them (array.astype(...)) or give the bits as uint{buffer.dtype.bytes * 8}")
            if value.dtype.itemsize != buffer.dtype.bytes or value.size != buffer.size:
                raise UsageError(f"{program.name}: argument {p.name!r} must hold {buffer.size} elements of "
                                 f"{buffer.dtype.bytes} bytes ({buffer.dtype} {buffer.shape}), got "
                                 f"{value.dtype} {value.shape}")
            if not value.flags.c_contiguous or not value.flags.writeable:
                raise UsageError(f"{program.name}: argument {p.name!r} must be a C-contiguous, writeable array")
            out.append(value)
        else:
            out.append(scalar_argument(program.name, p.name, p.scalar.dtype, value, formats))
    return out


def scalar_argument(program: str, name: str, dtype, value, formats=None) -> np.generic:
    """A scalar argument as a numpy scalar of the parameter's width (``dtype`` is a tile DType)."""
    if isinstance(value, np.generic):
        if dtype.kind == "float" and value.dtype.kind in "ui" and value.dtype.itemsize == dtype.bytes:
            return value  # an unsigned/signed integer of the float's width: its bits
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise UsageError(f"{program}: argument {name!r} ({dtype}) must be a number, got {type(value).__name__}")
    if dtype.kind == "bool":
        return np.uint8(bool(value))
    if dtype.kind == "float":
        if dtype.name == "bfloat16":
            return np.uint16(Const.typed(float(value), dtype).bits(formats=formats))
        return np.dtype(dtype.name).type(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise UsageError(f"{program}: argument {name!r} ({dtype}) must be an integer, got {value!r}")
        value = int(value)
    problem = Const.typed(int(value), dtype).problem
    if problem:
        raise UsageError(f"{program}: argument {name!r}: {problem}")
    return np.dtype(dtype.name).type(int(value))


def scalar_bits(value: np.generic) -> int:
    """The raw bits of a numpy scalar."""
    return int(np.asarray(value).reshape(1).view(f"u{value.dtype.itemsize}")[0])


def warn_approximate(forms, stacklevel: int = 3) -> None:
    """Warn that these approximate forms returned the model's reference value (no-op for none)."""
    forms = tuple(sorted(forms))
    if not forms:
        return
    warnings.warn(ApproximateReferenceWarning(
        f"approximate form(s) {', '.join(forms)}: the CPU backend returned the model's reference value (the "
        "correctly rounded result under the form's ftz setting), one of the values the form's contract "
        "allows; a GPU may return another -- judge it with tilecheck.allowed(form, result_bits, *operand_bits)",
        forms), stacklevel=stacklevel)


def run_program(program, *arrays, backend: str = "cpu", target: str | None = None, db, tininess=None):
    """Run ``program`` like a kernel launch on ``arrays`` (outputs written in place); return the
    tensor arguments, in parameter order.

    ``backend="cpu"`` emits the program's PTX for ``target`` (default: the spec database's, sm_90)
    and executes that PTX through the reference model (:func:`tilecheck.sim.execute`). Approximate
    forms yield the model's reference value and raise an :class:`ApproximateReferenceWarning`
    naming them. An illegal program raises :class:`~tilecheck.errors.IllegalTileOpError`.
    """
    if backend == "gpu":
        raise DeviceUnavailableError("Program.run(backend='gpu') is not available here: GPU execution belongs to "
                                     "the differential engine (tilecheck.diff); use backend='cpu'")
    if tininess is not None:
        check_tininess(tininess)
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    kernel = program_kernel(program, target=target, db=db)
    args = bind_arguments(program, arrays, db.formats)
    result = execute(kernel, kernel.name, args, grid=kernel.grid, block=kernel.block, db=db, tininess=tininess)
    warn_approximate(result.approximate)
    return tuple(a for p, a in zip(program.params, args) if p.is_tensor)
