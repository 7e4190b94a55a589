"""The numpy backend of the semantics language: vectorised over arrays of cases.

Payloads: floats are uint64 arrays of bit patterns (any format; the interpreter tracks which),
ints are int64 arrays, bools are bool arrays. Python ints/bools may appear as operands (numpy
broadcasts them). Arithmetic is the reference model's (:mod:`tilecheck.model.ops`: IEEE NaN rule,
no implicit flushing -- bodies call ``flush`` where the MODE register says so); classification
uses :class:`~tilecheck.formats.Format`; comparisons use the exact float64 value of each pattern
(every format here fits in binary64).
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import Format, get_format
from tilecheck.model import ops
from tilecheck.model.dispatch import compute

_NUMPY_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
from tilecheck.model.ieee import flush_subnormal_bits, quiet
from tilecheck.model.xp import broadcast_all

_CMP = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
        ">=": np.greater_equal}


class NumpyBackend:
    """Primitive operations on numpy arrays (see :mod:`tilecheck.semantics.interp` for the protocol).

    ``shape`` is the shape of the case arrays (compile-time bools and ints are lifted to it).
    """

    def __init__(self, shape=()):
        self.shape = shape

    # ---- constants and control ----------------------------------------------------------
    def lift_bool(self, b: bool):
        return np.full(self.shape, b, dtype=bool)

    def lift_int(self, n: int):
        return np.full(self.shape, n, dtype=np.int64)

    def float_const(self, fmt: Format, bits: int):
        return np.uint64(bits)

    def select(self, cond, a, b):
        return np.where(cond, a, b)

    # ---- bools and ints -------------------------------------------------------------------
    def bool_and(self, a, b):
        return np.logical_and(a, b)

    def bool_or(self, a, b):
        return np.logical_or(a, b)

    def bool_not(self, a):
        return np.logical_not(a)

    def bool_eq(self, a, b):
        return np.equal(a, b)

    def int_add(self, a, b):
        return np.add(a, b, dtype=np.int64)

    def int_sub(self, a, b):
        return np.subtract(a, b, dtype=np.int64)

    def int_mul(self, a, b):
        return np.multiply(a, b, dtype=np.int64)

    def int_neg(self, a):
        return np.negative(a, dtype=np.int64)

    def int_abs(self, a):
        return np.abs(a)

    def int_min(self, a, b):
        return np.minimum(a, b)

    def int_max(self, a, b):
        return np.maximum(a, b)

    def int_cmp(self, op: str, a, b):
        return _CMP[op](a, b)

    def int_bit(self, a, i: int):
        return ((np.asarray(a, dtype=np.int64) >> np.int64(i)) & np.int64(1)) != 0

    # ---- floats ----------------------------------------------------------------------------
    @staticmethod
    def _u(x):
        return np.asarray(x, dtype=np.uint64)

    def float_cmp(self, fmt: Format, op: str, a, b):
        # IEEE comparison: NaN unordered (every comparison but != is False), -0 == +0
        return _CMP[op](fmt.to_float64(self._u(a)), fmt.to_float64(self._u(b)))

    def float_test(self, fmt: Format, what: str, x):
        x = self._u(x)
        if what == "nan":
            return fmt.is_nan(x)
        if what == "snan":
            return fmt.is_nan(x) & ((x & np.uint64(fmt.quiet_bit)) == 0)
        if what == "inf":
            return fmt.is_inf(x)
        if what == "zero":
            return fmt.is_zero(x)
        if what == "subnormal":
            return fmt.is_subnormal(x)
        if what == "normal":
            e = self.float_exponent(fmt, x)
            return (e != 0) & (e != (1 << fmt.exponent_bits) - 1)
        if what == "finite":
            return self.float_exponent(fmt, x) != (1 << fmt.exponent_bits) - 1
        if what == "neg":
            return (x & np.uint64(fmt.sign_mask)) != 0
        raise ValueError(what)

    def float_exponent(self, fmt: Format, x):
        _, field, _ = fmt.fields(self._u(x))
        return field

    def float_same(self, fmt: Format, a, b):
        return self._u(a) == self._u(b)

    def float_quiet(self, fmt: Format, x):
        x = self._u(x)
        return np.where(fmt.is_nan(x), quiet(np, fmt, x), x)

    def float_flush(self, fmt: Format, x):
        return flush_subnormal_bits(np, fmt, self._u(x))

    def float_abs(self, fmt: Format, x):
        return self._u(x) & np.uint64(fmt.magnitude_mask)

    def float_neg(self, fmt: Format, x):
        return self._u(x) ^ np.uint64(fmt.sign_mask)

    def float_copysign(self, fmt: Format, x, y):
        return (self._u(x) & np.uint64(fmt.magnitude_mask)) | (self._u(y) & np.uint64(fmt.sign_mask))

    def float_with_sign(self, fmt: Format, x, negative):
        mag = self._u(x) & np.uint64(fmt.magnitude_mask)
        return np.where(negative, mag | np.uint64(fmt.sign_mask), mag)

    def float_arith(self, fmt: Format, op: str, rm: str, args: list, scale):
        args = broadcast_all(np, *(self._u(a) for a in args))
        if isinstance(scale, int) and scale == 0:
            scale = None  # the interpreter passes 0 for "no scale": every op, fma's default path
        if scale is None and fmt.specials == "ieee" and args[0].ndim:
            # the model's one rounding, by its fastest path (bit-identical to ops.apply's exact one)
            shape = args[0].shape
            out = compute(np, op, fmt, [a.astype(fmt.uint).reshape(-1) for a in args], ops.Mode(rm),
                          ops.NanRule.ieee(fmt))
            return out.astype(np.uint64).reshape(shape)
        return ops.apply(np, op, fmt, args, ops.Mode(rm), ops.NanRule.ieee(fmt), scale)

    def float_ldexp(self, fmt: Format, rm: str, x, n):
        return ops.ldexp(np, fmt, self._u(x), n, ops.Mode(rm), ops.NanRule.ieee(fmt))

    def float_convert(self, src: Format, dst: Format, rm: str, x):
        return convert_bits(src, dst, rm, self._u(x))

    def float_fma_into(self, src: Format, dst: Format, rm: str, args: list):
        """``a*b + c`` of ``src`` rounded once into the narrower ``dst``.

        In binary64 the product of two operands of at most 24 bits is exact, and rounding the sum
        to odd at 53 bits then rounding to ``dst`` (<= 24 bits, so 53 >= p + 2) equals one
        rounding of the exact value (Boldo & Melquiond). Round-to-odd is built from the toward-zero
        result, with its last bit forced when the toward-minus and toward-plus results differ;
        zeros (whose sign depends on the mode) and infinities come from the FMA in mode ``rm``.
        """
        if src.precision > 24 or src.emax > 127:
            raise ValueError(f"fma_into from {src.name}: only formats that fit binary64's exact products")
        f64 = _binary64()
        a, b, c = broadcast_all(np, *(self.float_convert(src, f64, "rn", self._u(x)) for x in args))
        rule = ops.NanRule.ieee(f64)
        shape = a.shape

        def fma64(mode: str):  # the model's binary64 fma, by its fastest path
            return compute(np, "fma", f64, [x.reshape(-1) for x in (a, b, c)], ops.Mode(mode), rule).reshape(shape)

        tz, lo, hi = fma64("rz"), fma64("rm"), fma64("rp")
        in_mode = fma64(rm)
        odd = np.where(lo != hi, tz | np.uint64(1), tz)
        special = f64.is_zero(tz) | f64.is_inf(tz) | f64.is_nan(tz)
        wide = np.where(special, in_mode, odd)
        # a NaN operand: the first NaN operand quieted (in src), converted like cvt
        return self.float_convert(f64, dst, rm, wide)

    def float_frexp_exp(self, fmt: Format, x):
        x = self._u(x)
        _, field, frac = fmt.fields(x)
        field = field.astype(np.int64)
        frac = np.asarray(frac, dtype=np.uint64)
        # a subnormal's leading one: frexp of the fraction as a float64 (exact: frac < 2**52) gives
        # its bit length (log2 would round 2**52 - 1 up to 52.0)
        lead = np.frexp(np.maximum(frac, 1).astype(np.float64))[1].astype(np.int64) - 1
        sub = fmt.emin - fmt.mantissa_bits + lead + 1
        normal = field - fmt.bias + 1
        top = (1 << fmt.exponent_bits) - 1
        zero = (field == 0) & (frac == 0)
        return np.where((field == top) | zero, np.int64(0), np.where(field == 0, sub, normal))


def _binary64() -> Format:
    """binary64, the working format of :meth:`NumpyBackend.float_fma_into` (any database's f64
    has the same fields)."""
    return get_format("f64")


def convert_bits(src: Format, dst: Format, rm: str, x) -> np.ndarray:
    """Patterns of ``src`` converted to ``dst`` in mode ``rm`` as :func:`tilecheck.model.ops.convert`
    does (IEEE NaN rule), by numpy's casts where they are the same function: among binary16/32/64,
    exact when widening and round to nearest even when narrowing (subnormals and overflow included;
    tests/model/test_fast_convert.py checks it bit for bit). NaNs keep ops.convert's payload rule."""
    x = np.asarray(x, dtype=np.uint64)
    if x.ndim and src.name in _NUMPY_FLOAT and dst.name in _NUMPY_FLOAT and (dst.width > src.width or rm == "rn"):
        with np.errstate(all="ignore"):
            out = (x.astype(_UINT[src.width]).view(_NUMPY_FLOAT[src.name]).astype(_NUMPY_FLOAT[dst.name])
                   .view(_UINT[dst.width]).astype(np.uint64))
        nan = src.is_nan(x)
        if nan.any():
            out[nan] = ops.convert(np, src, dst, x[nan], ops.Mode(rm), ops.NanRule.ieee(dst))
        return out
    return ops.convert(np, src, dst, x, ops.Mode(rm), ops.NanRule.ieee(dst))
