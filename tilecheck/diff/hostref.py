"""A second implementation of some correctly rounded forms: the host's IEEE arithmetic through numpy.

Behind the ``host`` backend. It is *not* independent of the model where it matters most: binary32
results are ``RN32(RN64(op))`` exactly as in the model's fast path (:mod:`tilecheck.model.fast`),
so comparing the two checks NaN, flush and directed-step handling, not the rounding itself.
Exhaustive sweeps are judged by :mod:`tilecheck.diff.certificate` instead, which shares no
arithmetic with either. Covered forms:

* binary32 ``div``, ``rcp``, ``sqrt`` in every rounding mode, with and without ``.ftz``;
* binary64 ``div``, ``rcp``, ``sqrt``, ``add``, ``sub``, ``mul`` under ``.rn`` (native float64
  operations are correctly rounded to nearest).

How binary32 works. ``q = RN64(x)`` (native float64 division or square root of the exact binary32
operands) and ``c = RN32(q)`` is the correctly rounded nearest result: the exact result needs
``2p + 2 = 50 <= 53`` bits for the double rounding to be innocuous. Directed results start from
``c`` and an *exact integer residual* that says on which side of ``c`` the exact result lies -- a
different argument from the model's fast path (which compares ``q`` with ``c``) and from its
exact path (integer significands):

* sqrt: ``sign(a - c*c)``; rcp: ``sign(1 - |c*b|)``; div: ``sign(|a| - |c*b|)``, computed in
  float64 where it is exact: the product of two 24-bit significands has at most 48 bits, and it
  lies within a factor 2 of the other term, so the subtraction is exact (Sterbenz); see
  :func:`_directed`;
* then ``c`` moves one unit on its bit pattern toward the exact result where the mode asks for
  it; a quotient that rounded to infinity or zero is handled by the same rule (the exact result
  lies below infinity / above zero in magnitude).

``.ftz`` flushes subnormal inputs to signed zero first and subnormal results (judged after
rounding, the model's default ``tininess``) last. NaN results are whatever the host produces:
binary32 NaN bits are unspecified in PTX and compared by class.
"""

from __future__ import annotations

import numpy as np

from tilecheck.diff.support import SUPPORTED, Support
from tilecheck.errors import UsageError

__all__ = ["support", "evaluate"]

_U32 = np.uint32
BLOCK = 16384
"""Elements per block of the binary32 path."""
_F32_KEYS = ("fp.div", "fp.rcp", "fp.sqrt")
_F64_KEYS = ("fp.div", "fp.rcp", "fp.sqrt", "fp.add", "fp.sub", "fp.mul")


def support(form) -> Support:
    """Whether :func:`evaluate` covers ``form`` (the reason when it does not)."""
    key = form.semantics.key
    params = form.semantics.params
    if form.kind != "exact":
        return Support(f"{form.name} is not a correctly rounded form")
    if form.type == "f32" and key in _F32_KEYS:
        return SUPPORTED
    if form.type == "f64" and key in _F64_KEYS and params.get("rounding", "rn") == "rn":
        return SUPPORTED
    return Support(f"the host reference covers f32 div/rcp/sqrt (every mode) and f64 "
                   f"div/rcp/sqrt/add/sub/mul under .rn, not {form.name}")


def _flush(bits: np.ndarray) -> np.ndarray:
    """binary32 subnormals -> zero of the same sign."""
    sub = ((bits & _U32(0x7FFFFFFF)) < _U32(0x00800000))
    return np.where(sub, bits & _U32(0x80000000), bits)


def _f32(op: str, rounding: str, ftz: bool, a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    a = a.astype(_U32, copy=False)
    if ftz:
        a = _flush(a)
        b = _flush(b.astype(_U32)) if b is not None else None
    with np.errstate(all="ignore"):  # NaN/inf lanes; signalling NaNs quieten on conversion
        x = a.view(np.float32).astype(np.float64)
        if op == "sqrt":
            q = np.sqrt(x)
            y = None
        elif op == "rcp":
            y, x = x, np.ones_like(x)
            q = x / y
        else:
            y = b.astype(_U32, copy=False).view(np.float32).astype(np.float64)
            q = x / y
        c = q.astype(np.float32)
        cb = c.view(_U32)
        if rounding != "rn":
            cb = _directed(rounding, x, y, c, cb)
    if ftz:
        cb = _flush(cb)
    return cb


def _directed(rounding: str, x, y, c, cb):
    """Step the nearest result toward the exact one per ``rounding`` (see the module docstring).

    ``x / y`` (or ``sqrt(x)`` when ``y`` is None) is the exact result in float64 operands, ``c``
    its nearest binary32 value. The residual ``|x| - |c*y|`` (``x - c*c`` for sqrt) is exact in
    float64: ``c*y`` has at most 24 + 24 bits and, ``c`` being within 2**-23 relatively of the
    exact result (or a subnormal within a factor 2 of it), lies within a factor 2 of ``x`` --
    Sterbenz's lemma makes the subtraction exact. No product over- or underflows binary64.
    """
    c64 = c.astype(np.float64)
    prod = c64 * (c64 if y is None else y)
    side = np.sign(np.abs(x) - np.abs(prod))
    finite_c = np.isfinite(c64) & (c64 != 0)
    regular = np.isfinite(x) & (x != 0) & np.isfinite(c64 if y is None else y)
    if y is None:
        regular &= x > 0
    else:
        regular &= y != 0
    # a quotient that rounded to infinity lies below it, one that rounded to zero above it
    side = np.where(finite_c, side, np.where(np.isinf(c64), -1.0, 1.0))
    side = np.where(regular, side, 0.0)
    negative = np.signbit(c64)
    # side: sign of |exact| - |c|; on the pattern +1 moves away from zero, -1 toward it
    if rounding == "rz":
        step = -(side < 0).astype(np.int32)
    elif rounding == "rp":
        step = np.where(negative, -(side < 0).astype(np.int32), (side > 0).astype(np.int32))
    else:  # rm
        step = np.where(negative, (side > 0).astype(np.int32), -(side < 0).astype(np.int32))
    return (cb.view(np.int32) + step).view(_U32)


def _f64(op: str, a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    fa = a.astype(np.uint64).view(np.float64)
    fb = b.astype(np.uint64).view(np.float64) if b is not None else None
    with np.errstate(all="ignore"):
        out = {"sqrt": lambda: np.sqrt(fa), "rcp": lambda: 1.0 / fa, "div": lambda: fa / fb,
               "add": lambda: fa + fb, "sub": lambda: fa - fb, "mul": lambda: fa * fb}[op]()
    return out.view(np.uint64)


def evaluate(form, *operands: np.ndarray) -> np.ndarray:
    """Result containers of ``form`` on ``operands`` computed by the host (see :func:`support`)."""
    found = support(form)
    if not found.ok:
        raise UsageError(found.reason)
    op = form.semantics.function
    params = form.semantics.params
    a = np.asarray(operands[0])
    b = np.asarray(operands[1]) if len(operands) > 1 else None
    if form.type == "f64":
        return _f64(op, a, b)
    rounding, ftz = str(params.get("rounding", "rn")), bool(params.get("ftz", False))
    if a.size <= BLOCK:
        return _f32(op, rounding, ftz, a, b)
    # blocks small enough that every temporary stays in cache (several times faster)
    flat_a, flat_b = a.reshape(-1), (b.reshape(-1) if b is not None else None)
    out = np.empty(flat_a.size, dtype=_U32)
    for s in range(0, flat_a.size, BLOCK):
        out[s:s + BLOCK] = _f32(op, rounding, ftz, flat_a[s:s + BLOCK],
                                flat_b[s:s + BLOCK] if flat_b is not None else None)
    return out.reshape(a.shape)
