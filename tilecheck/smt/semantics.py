"""The Z3 backend of the semantics language (see :mod:`tilecheck.semantics.interp`).

Payloads: floats are bit-vector terms of the format's width (so NaN payloads survive: Z3's FP
sort has one NaN, and every arithmetic result passes through :func:`tilecheck.smt.fp.to_bits`
with the primitives' NaN rule -- quiet first NaN operand, else the default NaN); ints are 32-bit
signed bit-vectors (bodies compute with exponents and small constants only); bools are Z3 Bools.
Branches merge with ``z3.If``. Running a body with this backend on constant inputs and
simplifying gives concrete bits, which the tests compare with the numpy backend.
"""

from __future__ import annotations

import z3

from tilecheck.formats import Format, get_format
from tilecheck.smt import fp

INT_BITS = 32


class Z3Backend:
    """Primitive operations building Z3 terms."""

    # ---- constants and control ----------------------------------------------------------
    def lift_bool(self, b: bool):
        return z3.BoolVal(b)

    def lift_int(self, n: int):
        return z3.BitVecVal(n, INT_BITS)

    def float_const(self, fmt: Format, bits: int):
        return z3.BitVecVal(bits, fmt.width)

    def select(self, cond, a, b):
        return z3.If(cond, a, b)

    # ---- bools and ints -------------------------------------------------------------------
    def bool_and(self, a, b):
        return z3.And(a, b)

    def bool_or(self, a, b):
        return z3.Or(a, b)

    def bool_not(self, a):
        return z3.Not(a)

    def bool_eq(self, a, b):
        return a == b

    @staticmethod
    def _i(x):
        return z3.BitVecVal(x, INT_BITS) if isinstance(x, int) else x

    def int_add(self, a, b):
        return self._i(a) + self._i(b)

    def int_sub(self, a, b):
        return self._i(a) - self._i(b)

    def int_mul(self, a, b):
        return self._i(a) * self._i(b)

    def int_neg(self, a):
        return -self._i(a)

    def int_abs(self, a):
        a = self._i(a)
        return z3.If(a < 0, -a, a)

    def int_min(self, a, b):
        a, b = self._i(a), self._i(b)
        return z3.If(a < b, a, b)

    def int_max(self, a, b):
        a, b = self._i(a), self._i(b)
        return z3.If(a > b, a, b)

    def int_cmp(self, op: str, a, b):
        a, b = self._i(a), self._i(b)  # z3py's < <= > >= on bit-vectors are signed
        return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
                ">": lambda: a > b, ">=": lambda: a >= b}[op]()

    def int_bit(self, a, i: int):
        return z3.Extract(i, i, self._i(a)) == 1

    # ---- floats ----------------------------------------------------------------------------
    def float_cmp(self, fmt: Format, op: str, a, b):
        x, y = fp.to_fp(fmt, a), fp.to_fp(fmt, b)
        if op == "==":
            return z3.fpEQ(x, y)
        if op == "!=":
            return z3.Not(z3.fpEQ(x, y))
        return {"<": z3.fpLT, "<=": z3.fpLEQ, ">": z3.fpGT, ">=": z3.fpGEQ}[op](x, y)

    def float_test(self, fmt: Format, what: str, x):
        if what == "snan":
            return z3.And(fp.is_nan_bits(fmt, x), (x & fmt.quiet_bit) == 0)
        if what == "neg":
            return (x & fmt.sign_mask) != 0
        f = fp.to_fp(fmt, x)
        return {"nan": z3.fpIsNaN, "inf": z3.fpIsInf, "zero": z3.fpIsZero, "subnormal": z3.fpIsSubnormal,
                "normal": z3.fpIsNormal, "finite": lambda t: z3.Not(z3.Or(z3.fpIsNaN(t), z3.fpIsInf(t)))}[what](f)

    def float_exponent(self, fmt: Format, x):
        field = z3.Extract(fmt.width - 2, fmt.mantissa_bits, x)
        return z3.ZeroExt(INT_BITS - fmt.exponent_bits, field)

    def float_same(self, fmt: Format, a, b):
        return a == b

    def float_quiet(self, fmt: Format, x):
        return fp.quiet_bits(fmt, x)

    def float_flush(self, fmt: Format, x):
        return fp.flush_bits(fmt, x)

    def float_abs(self, fmt: Format, x):
        return x & fmt.magnitude_mask

    def float_neg(self, fmt: Format, x):
        return x ^ fmt.sign_mask

    def float_copysign(self, fmt: Format, x, y):
        return (x & fmt.magnitude_mask) | (y & fmt.sign_mask)

    def float_with_sign(self, fmt: Format, x, negative):
        mag = x & fmt.magnitude_mask
        if isinstance(negative, bool):
            return mag | fmt.sign_mask if negative else mag
        return z3.If(negative, mag | fmt.sign_mask, mag)

    def float_arith(self, fmt: Format, op: str, rm: str, args: list, scale):
        xs = [fp.to_fp(fmt, a) for a in args]
        if op == "fma" and not (isinstance(scale, int) and scale == 0):
            if isinstance(scale, int):
                r = fp.fma_scaled(fmt, rm, *xs, scale)
            else:
                # a data-dependent scale: enumerate is impossible; bodies pass literal scales
                raise ValueError("fma_scaled needs a compile-time scale in the Z3 backend; "
                                 "branch on the condition and call it with literals")
        else:
            r = fp.ieee(op, rm, *xs)
        return fp.to_bits(fmt, r, fp.propagate_nan(fmt, args))

    def float_ldexp(self, fmt: Format, rm: str, x, n):
        r = fp.ldexp(fmt, rm, fp.to_fp(fmt, x), n)
        return fp.to_bits(fmt, r, x | fmt.quiet_bit)

    def float_convert(self, src: Format, dst: Format, rm: str, x):
        r = z3.fpToFP(fp.rounding_mode(rm), fp.to_fp(src, x), fp.sort(dst))
        # NaN: quiet, sign kept, payload's top bits kept (as the numpy backend)
        sign = z3.Extract(src.width - 1, src.width - 1, x)
        payload = z3.Extract(src.mantissa_bits - 1, 0, x) if src.mantissa_bits else None
        shift = dst.mantissa_bits - src.mantissa_bits
        if shift >= 0:
            pay = z3.Concat(payload, z3.BitVecVal(0, shift)) if shift else payload
        else:
            pay = z3.Extract(src.mantissa_bits - 1, -shift, payload)
        nan = z3.Concat(sign, z3.BitVecVal((1 << dst.exponent_bits) - 1, dst.exponent_bits), pay) | dst.quiet_bit
        return fp.to_bits(dst, r, nan)

    def float_fma_into(self, src: Format, dst: Format, rm: str, args: list):
        # as the numpy backend: exact product in binary64, the sum rounded to odd there, then
        # one rounding to dst (Boldo-Melquiond); zeros and infinities from the FMA in mode rm
        f64 = get_format("f64")
        wide = [self.float_convert(src, f64, "rn", a) for a in args]
        xs = [fp.to_fp(f64, b) for b in wide]
        tz = z3.fpFMA(z3.RTZ(), *xs)
        exact = z3.fpEQ(z3.fpFMA(z3.RTN(), *xs), z3.fpFMA(z3.RTP(), *xs))
        ro = z3.fpBVToFP(fp.round_to_odd_bits(tz, exact), fp.sort(f64))
        # (a NaN too: fpToIEEEBV of a NaN is unspecified, so the odd-rounding branch must not decide it)
        special = z3.Or(z3.fpIsZero(tz), z3.fpIsInf(tz), z3.fpIsNaN(tz))
        ro = z3.If(special, z3.fpFMA(fp.rounding_mode(rm), *xs), ro)
        return self.float_convert(f64, dst, rm, fp.to_bits(f64, ro, fp.propagate_nan(f64, wide)))

    def float_frexp_exp(self, fmt: Format, x):
        field = self.float_exponent(fmt, x)
        top = (1 << fmt.exponent_bits) - 1
        sub = z3.BitVecVal(0, INT_BITS)
        for i in range(fmt.mantissa_bits):  # the highest set fraction bit wins (last If outermost)
            sub = z3.If(z3.Extract(i, i, x) == 1, z3.BitVecVal(fmt.emin - fmt.mantissa_bits + i + 1, INT_BITS), sub)
        frac_zero = z3.Extract(fmt.mantissa_bits - 1, 0, x) == 0
        return z3.If(z3.Or(field == top, z3.And(field == 0, frac_zero)), z3.BitVecVal(0, INT_BITS),
                     z3.If(field == 0, sub, field - fmt.bias + 1))
