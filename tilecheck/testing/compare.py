"""Comparing result bit patterns, scalar and vectorised, and describing a mismatch.

Two results *agree* when their bits are equal, or -- with ``nan="class"`` -- when both are NaNs
of any sign and payload (SoftFloat's default NaN is negative and TestFloat's vectors carry it;
PTX f32/f16 results are an "unspecified NaN"). ``nan="bits"`` compares NaNs bit for bit too.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format, get_format

__all__ = ["same_result", "mismatch_mask", "describe_case"]


def _is_nan_int(f: Format, bits: int) -> bool:
    return (bits & f.magnitude_mask) > f.exponent_mask


def same_result(fmt: Format | str, got: int, want: int, nan: str = "class") -> bool:
    """Whether two scalar results agree (see the module docstring for ``nan``)."""
    f = get_format(fmt)
    if nan not in ("class", "bits"):
        raise ValueError(f"nan must be 'class' or 'bits', got {nan!r}")
    got, want = int(got), int(want)
    if nan == "class" and _is_nan_int(f, got) and _is_nan_int(f, want):
        return True
    return got == want


def mismatch_mask(fmt: Format | str, got, want, nan: str = "class") -> np.ndarray:
    """Boolean array, True where ``got`` and ``want`` (unsigned arrays) disagree."""
    f = get_format(fmt)
    if nan not in ("class", "bits"):
        raise ValueError(f"nan must be 'class' or 'bits', got {nan!r}")
    g = f.bits(got)
    w = f.bits(want)
    differ = g != w
    if nan == "class":
        differ &= ~(f.is_nan(g) & f.is_nan(w))
    return differ


def describe_case(fmt: Format | str, op: str, rounding: str, operands, got: int, want: int,
                  **settings) -> str:
    """One line: ``op.rounding.fmt`` with settings, each operand as hex (value, class), and the
    two results the same way -- enough to reproduce a mismatch by hand."""
    f = get_format(fmt)

    def show(b: int) -> str:
        text, cls = f.describe(int(b))
        return f"{f.hex(int(b))} ({text}, {cls})"

    extra = "".join(f" {k}={v}" for k, v in settings.items())
    ins = ", ".join(show(b) for b in operands)
    return f"{op}.{rounding}.{f.name}{extra}({ins}): got {show(got)}, expected {show(want)}"
