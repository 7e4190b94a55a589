"""Berkeley SoftFloat 3 as an oracle, through the ``softfloatpy`` binding.

``softfloat_op(op, fmt, rounding, *operand_bits) -> int`` for ``fmt`` in f16, f32, f64 and ``op``
in add, sub, mul, fma, div, sqrt, rcp (``rcp`` is SoftFloat's division of the exact constant 1,
which is the correctly rounded reciprocal). ``softfloat_op_flags`` also returns SoftFloat's
exception byte (0x01 inexact, 0x02 underflow, 0x04 overflow, 0x08 infinite, 0x10 invalid --
TestFloat's encoding).

What it does not do, and why:

* **No flush-to-zero**: SoftFloat 3 implements IEEE 754 only; FTZ is checked against the MPFR
  oracle (:mod:`tilecheck.oracle.mpfr`).
* **No bf16, tf32, e5m2 arithmetic, no rsqrt**: softfloatpy has only bf16 conversions, and
  SoftFloat has no rsqrt. :func:`softfloat_supports` says what is available.
* **NaN bits are the binding's, not IEEE-propagated**: the installed softfloatpy is built with
  a specialisation whose every NaN result is the *positive* default NaN (0x7E00, 0x7FC00000,
  0x7FF8000000000000) without payload propagation, unlike TestFloat's x86 vectors (negative
  default NaN) and unlike tilecheck's "quiet the first NaN operand" policy. Compare NaN results
  by class.

SoftFloat keeps its rounding mode, tininess mode and flags in global state; every call sets the
rounding mode, uses after-rounding tininess (TestFloat's default; it affects only the underflow
flag) and restores the previous modes, so calls do not leak state into each other or into other
users of the binding. Not thread-safe, like SoftFloat itself.

``softfloatpy`` is imported on first use; without it every function raises
:class:`~tilecheck.errors.ToolNotFoundError` (tests skip with that reason).
"""

from __future__ import annotations

from tilecheck.errors import ToolNotFoundError, UsageError
from tilecheck.oracle.common import check_call, check_format

__all__ = ["softfloat_op", "softfloat_op_flags", "softfloat_supports", "SOFTFLOAT_FORMATS",
           "SOFTFLOAT_OPS", "require_softfloat"]

#: Formats with SoftFloat arithmetic in softfloatpy (tilecheck name -> softfloatpy prefix).
SOFTFLOAT_FORMATS = {"f16": "f16", "f32": "f32", "f64": "f64"}
#: Operations the wrapper provides (tilecheck name -> SoftFloat function suffix).
SOFTFLOAT_OPS = {"add": "add", "sub": "sub", "mul": "mul", "fma": "mul_add", "div": "div",
                 "sqrt": "sqrt", "rcp": "div"}


def require_softfloat():
    """The ``softfloatpy`` module, or :class:`ToolNotFoundError` saying how to install it."""
    try:
        import softfloatpy
    except ImportError as exc:
        raise ToolNotFoundError("the SoftFloat oracle needs softfloatpy (Berkeley SoftFloat 3 "
                                "binding): pip install 'tilecheck[test]' (CPython 3.11, x86-64)") from exc
    return softfloatpy


def softfloat_supports(op: str, fmt) -> bool:
    """Whether :func:`softfloat_op` can evaluate ``op`` in ``fmt`` (independent of rounding)."""
    name = fmt if isinstance(fmt, str) else fmt.name
    return name in SOFTFLOAT_FORMATS and op in SOFTFLOAT_OPS


def softfloat_op(op: str, fmt, rounding: str, *operand_bits: int) -> int:
    """SoftFloat's result bits of ``op`` in ``fmt`` under ``rounding`` (rn rz rm rp); no FTZ."""
    return softfloat_op_flags(op, fmt, rounding, *operand_bits)[0]


def softfloat_op_flags(op: str, fmt, rounding: str, *operand_bits: int) -> tuple[int, int]:
    """``(result bits, exception flags)`` of one SoftFloat operation (flags as in TestFloat)."""
    sf = require_softfloat()
    f = check_format(fmt)
    bits = check_call(op, f, rounding, operand_bits)
    if not softfloat_supports(op, f):
        raise UsageError(f"SoftFloat (softfloatpy) has no {op} for {f.name}; supported formats "
                         f"{', '.join(SOFTFLOAT_FORMATS)}, ops {', '.join(SOFTFLOAT_OPS)}")
    cls = {"f16": sf.Float16, "f32": sf.Float32, "f64": sf.Float64}[f.name]
    nbytes = f.container_bits // 8
    args = [cls.from_bytes(b.to_bytes(nbytes, "big")) for b in bits]
    if op == "rcp":
        args = [cls.from_bytes(_one_bits(f).to_bytes(nbytes, "big")), *args]  # 1/a
    func = getattr(sf, f"{SOFTFLOAT_FORMATS[f.name]}_{SOFTFLOAT_OPS[op]}")
    mode = {"rn": sf.RoundingMode.NEAR_EVEN, "rz": sf.RoundingMode.MIN_MAG,
            "rm": sf.RoundingMode.MIN, "rp": sf.RoundingMode.MAX}[rounding]
    saved = (sf.get_rounding_mode(), sf.get_tininess_mode(), sf.get_exception_flags())
    try:
        sf.set_rounding_mode(mode)
        sf.set_tininess_mode(sf.TininessMode.AFTER_ROUNDING)
        sf.set_exception_flags(0)
        result = func(*args)
        flags = int(sf.get_exception_flags())
    finally:
        sf.set_rounding_mode(saved[0])
        sf.set_tininess_mode(saved[1])
        sf.set_exception_flags(saved[2])
    return int.from_bytes(result.to_bytes(), "big"), flags


def _one_bits(f) -> int:
    """Bits of +1.0: biased exponent = bias, fraction 0."""
    return f.bias << f.mantissa_bits
