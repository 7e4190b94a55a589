"""Extended-precision integer arithmetic on numpy arrays: the carry chain, funnel shifts, leading zeros.

What libdevice's argument reductions are made of (Payne-Hanek for ``sinf``/``cosf``/``sin``/``cos``:
a 32 x 192-bit product through ``mad.lo.cc`` / ``madc.hi``, a funnel shift, a normalising ``clz``).
Each function takes unsigned arrays of one width (bit patterns, ``uint32`` or ``uint64``) and returns
arrays of that width; carries are ``bool`` arrays. Semantics (PTX ISA 9.1):

* §9.7.2 extended-precision arithmetic: ``add.cc`` / ``addc{.cc}`` ``d = a + b + CC.CF``,
  ``sub.cc`` / ``subc{.cc}`` ``d = a - (b + CC.CF)`` (the flag is then the borrow-out),
  ``mad{.lo,.hi}.cc`` / ``madc{.lo,.hi}{.cc}`` ``d = (a * b)<half> + c + CC.CF``. The flag is the
  carry (borrow) out of the n-bit addition (subtraction) of the bit patterns, for ``.s`` types too:
  signedness changes only which half of the product ``.hi`` takes.
* §9.7.8.7 ``shf.{l,r}.{clamp,wrap}.b32``: the 64-bit value ``b:a`` shifted by ``min(c, 32)`` or
  ``c & 31``; ``.l`` keeps its upper 32 bits, ``.r`` its lower 32.
* §9.7.1.15 ``clz.b32/.b64``: leading zero bits (the width for zero).
* §9.7.1.20 ``bfi.b32/.b64 f, a, b, c, d``: ``b`` with the ``d & 0xff`` low bits of ``a`` inserted
  from bit ``c & 0xff`` on, bits past the most significant one dropped (nvcc's ``sinf`` packs its
  reduced argument's exponent with it).
"""

from __future__ import annotations

import numpy as np

from tilecheck.model.instructions import integer_product
from tilecheck.model.xp import bit_length

_U64 = np.uint64

CARRY = "%cc.cf"
"""The condition code's carry flag as a predicate register of the function (a name no PTX register
can have): written by the ``.cc`` forms, read by ``addc``, ``subc`` and ``madc``."""

CARRY_IN = ("addc", "subc", "madc")
"""The opcodes that read the carry flag."""


def writes_carry(opcode: str) -> bool:
    """True for an instruction that writes the carry flag (a ``.cc`` form)."""
    return "cc" in opcode.split(".")[1:]


def reads_carry(opcode: str) -> bool:
    """True for an instruction that reads the carry flag."""
    return opcode.split(".", 1)[0] in CARRY_IN


def _unsigned(x: np.ndarray, width: int) -> np.ndarray:
    return x.astype(np.uint32 if width == 32 else np.uint64, copy=False)


def add_carry(a: np.ndarray, b: np.ndarray, carry: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a + b + carry) mod 2^width`` and whether that sum reached ``2^width`` (the carry-out)."""
    a, b = _unsigned(a, width).astype(_U64), _unsigned(b, width).astype(_U64)
    cin = carry.astype(_U64)
    if width == 32:
        s = a + b + cin  # below 2^33: exact in 64 bits
        return (s & _U64(0xFFFFFFFF)).astype(np.uint32), (s >> _U64(32)).astype(bool)
    s1 = a + b  # wraps modulo 2^64
    s2 = s1 + cin
    return s2, (s1 < a) | (s2 < s1)


def sub_borrow(a: np.ndarray, b: np.ndarray, borrow: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a - (b + borrow)) mod 2^width`` and whether ``b + borrow`` exceeded ``a`` (the borrow-out)."""
    a, b = _unsigned(a, width), _unsigned(b, width)
    bin_ = borrow.astype(bool)
    d = a - b - bin_.astype(a.dtype)  # numpy's unsigned arithmetic wraps modulo 2^width
    return d, (a < b) | ((a == b) & bin_)


def mul_halves(a: np.ndarray, b: np.ndarray, width: int, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The low and the high ``width`` bits of the exact ``2 * width``-bit product of ``a`` and ``b``
    (two's complement when ``signed``; the low half does not depend on it): the model's product."""
    dt = np.uint32 if width == 32 else np.uint64
    hi, lo = integer_product(np, _unsigned(a, width).astype(_U64), _unsigned(b, width).astype(_U64), width, signed)
    return lo.astype(dt), hi.astype(dt)


def funnel_shift(a: np.ndarray, b: np.ndarray, c: np.ndarray, left: bool, clamp: bool) -> np.ndarray:
    """``shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`` (module doc): 32-bit arrays in, 32-bit out."""
    c = c.astype(_U64)
    n = np.minimum(c, _U64(32)) if clamp else c & _U64(31)
    v = (b.astype(_U64) << _U64(32)) | a.astype(_U64)
    out = (v << n) >> _U64(32) if left else v >> n  # n <= 32: the bits kept never leave 64 bits
    return (out & _U64(0xFFFFFFFF)).astype(np.uint32)


def count_leading_zeros(a: np.ndarray, width: int) -> np.ndarray:
    """``clz.b{width}``: the number of zero bits above the highest set bit, ``width`` for zero (u32)."""
    return (width - bit_length(np, _unsigned(a, width).astype(_U64))).astype(np.uint32)


def bit_field_insert(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, width: int) -> np.ndarray:
    """``bfi.b{width} f, a, b, c, d`` (module doc): ``width``-bit arrays ``a``, ``b``; 32-bit ``c``
    (start), ``d`` (length); ``width``-bit out. A zero length, or a start past the most significant
    bit, gives ``b``."""
    a, b = _unsigned(a, width).astype(_U64), _unsigned(b, width).astype(_U64)
    pos = c.astype(_U64) & _U64(0xFF)
    length = d.astype(_U64) & _U64(0xFF)
    out = b.copy()
    for i in range(width):  # bit by bit, as the ISA states it
        target = pos + _U64(i)
        inside = (_U64(i) < length) & (target < _U64(width))
        at = np.minimum(target, _U64(width - 1))
        bit = (a >> _U64(i)) & _U64(1)
        out = np.where(inside, (out & ~(_U64(1) << at)) | (bit << at), out)
    return out.astype(np.uint32 if width == 32 else np.uint64)
