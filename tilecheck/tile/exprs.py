"""Scalar expressions of tile programs: constants, scalar parameters, thread indices, comparisons.

The language is deliberately small. It covers what ``apply`` accepts as a scalar read input
(``T.float32(4)``, a Python number, a packed constant ``T.uint32(0x3c003c00)``, a scalar
parameter ``x: T.float32``) and what ``pred=`` accepts:

* leaves: :class:`Const` (typed, or an untyped Python literal), :class:`ScalarParam`,
  :class:`ThreadIndex` (``T.thread_id()``, ``T.lane_id()``, ``T.warp_id()``; int32);
* integer arithmetic ``+ - * // % & | ^ << >>`` between integer expressions (``&``, ``|``, ``^``
  also combine bool expressions);
* comparisons ``< <= > >= == !=`` (bool).

Problems found while building an expression (an out-of-range constant, float arithmetic, mixed
dtypes) do not raise: they are kept on the node (:meth:`Expr.problems`) and reported by the
checker at the apply call that uses the expression, with its line and operand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tilecheck.errors import ProgramError
from tilecheck.formats import get_format
from tilecheck.tile.trace import caller_location

# name -> (bits, kind, floating-point format name or None)
_TABLE: dict[str, tuple[int, str, str | None]] = {
    "bool": (8, "bool", None),
    "int8": (8, "int", None),
    "uint8": (8, "uint", None),
    "int16": (16, "int", None),
    "uint16": (16, "uint", None),
    "float16": (16, "float", "f16"),
    "bfloat16": (16, "float", "bf16"),
    "int32": (32, "int", None),
    "uint32": (32, "uint", None),
    "float32": (32, "float", "f32"),
    "int64": (64, "int", None),
    "uint64": (64, "uint", None),
    "float64": (64, "float", "f64"),
}


@dataclass(frozen=True, eq=False)
class DType:
    """One scalar data type: its name, width in bits and kind (``float``, ``int``, ``uint``, ``bool``).

    Calling it builds a typed constant: ``T.float32(4)`` or ``T.uint32(0x3c003c00)`` (a packed
    f16x2 constant must encode both halves; see :class:`tilecheck.tile.exprs.Const`).
    """

    name: str
    bits: int
    kind: str
    format: str | None  # the floating-point format (spec/formats) for float kinds

    @property
    def bytes(self) -> int:
        """Width in bytes (``bool`` is stored in one byte)."""
        return self.bits // 8

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integers (not bool, not float)."""
        return self.kind in ("int", "uint")

    def __call__(self, value):
        """A constant of this type (validated when the checker meets it)."""
        return Const.typed(value, self)

    def __repr__(self) -> str:
        return f"T.{self.name}"

    def __str__(self) -> str:
        return self.name


DTYPES: dict[str, DType] = {name: DType(name, bits, kind, fmt) for name, (bits, kind, fmt) in _TABLE.items()}


_ARITH = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod", "&": "and", "|": "or", "^": "xor",
          "<<": "shl", ">>": "shr"}
_BOOL_OPS = ("&", "|", "^")


class Expr:
    """Base of scalar expressions. Subclasses are frozen dataclasses compared by identity."""

    __hash__ = object.__hash__

    @property
    def dtype(self) -> DType | None:
        """The expression's dtype; None for an untyped Python literal."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """Every problem recorded on this node and its children."""
        return []

    def __bool__(self):
        raise ProgramError("a runtime scalar expression has no Python truth value while a tile program is traced; "
                           "pass it as pred=... instead of using it in `if`/`and`/`or`", caller_location())

    # arithmetic builds BinOp nodes; Python applies the reflected forms for literals on the left
    def _bin(self, op, other, reflected=False):
        other = as_expr(other)
        if other is None:
            return NotImplemented
        return BinOp(op, other, self) if reflected else BinOp(op, self, other)

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __floordiv__(self, o): return self._bin("//", o)
    def __rfloordiv__(self, o): return self._bin("//", o, True)
    def __mod__(self, o): return self._bin("%", o)
    def __rmod__(self, o): return self._bin("%", o, True)
    def __and__(self, o): return self._bin("&", o)
    def __rand__(self, o): return self._bin("&", o, True)
    def __or__(self, o): return self._bin("|", o)
    def __ror__(self, o): return self._bin("|", o, True)
    def __xor__(self, o): return self._bin("^", o)
    def __rxor__(self, o): return self._bin("^", o, True)
    def __lshift__(self, o): return self._bin("<<", o)
    def __rlshift__(self, o): return self._bin("<<", o, True)
    def __rshift__(self, o): return self._bin(">>", o)
    def __rrshift__(self, o): return self._bin(">>", o, True)

    def _cmp(self, op, other):
        other = as_expr(other)
        if other is None:
            return NotImplemented
        return Compare(op, self, other)

    def __lt__(self, o): return self._cmp("<", o)
    def __le__(self, o): return self._cmp("<=", o)
    def __gt__(self, o): return self._cmp(">", o)
    def __ge__(self, o): return self._cmp(">=", o)
    def __eq__(self, o): return self._cmp("==", o)  # noqa: D105 - builds a Compare node
    def __ne__(self, o): return self._cmp("!=", o)


@dataclass(frozen=True, eq=False)
class Const(Expr):
    """A constant. ``dtype`` None means an untyped Python literal whose type the form decides.

    ``problem`` holds why the value does not fit its dtype (reported where the constant is used).
    """

    value: object
    const_dtype: DType | None = None
    problem: str | None = None

    @classmethod
    def typed(cls, value, dtype: DType) -> "Const":
        """``T.<dtype>(value)``: a typed constant, validated against the dtype's range."""
        return cls(value, dtype, _typed_problem(value, dtype))

    @classmethod
    def literal(cls, value) -> "Const":
        """An untyped Python ``bool``/``int``/``float`` literal."""
        return cls(value, DTYPES["bool"] if isinstance(value, bool) else None)

    @property
    def dtype(self) -> DType | None:
        """The expression's dtype (see :class:`Expr`)."""
        return self.const_dtype

    def problems(self) -> list[str]:
        """Problems of this node and its children (see :class:`Expr`)."""
        return [self.problem] if self.problem else []

    def bits(self, dtype: DType | None = None, formats=None) -> int:
        """The constant's bit pattern in ``dtype`` (default: its own dtype).

        Floats round to nearest-even into the format; integers are taken modulo 2**bits (two's
        complement for negative values). Raises ``ValueError`` when neither dtype is known.
        ``formats`` (name -> Format) is the spec database's table the dtype's format is taken from
        (a NaN literal is that format's default NaN); without it, the default spec root's.
        """
        dtype = dtype or self.const_dtype
        if dtype is None:
            raise ValueError(f"untyped constant {self.value!r} needs a dtype to be encoded")
        value = self.value
        if dtype.kind == "float":
            fmt = formats[dtype.format] if formats else get_format(dtype.format)
            if isinstance(value, int) and not isinstance(value, bool):
                # exact, and no float() of an int beyond binary64's range (10**400 overflows to inf)
                return fmt.from_fraction(Fraction(value), "rn")
            number = float(value)
            if math.isnan(number):
                return fmt.default_nan
            if math.isinf(number):
                return fmt.inf | (fmt.sign_mask if number < 0 else 0)
            exact = Fraction(value) if isinstance(value, int) else Fraction(number)
            return fmt.from_fraction(exact, "rn", negative_zero=math.copysign(1.0, number) < 0)
        return int(value) % (1 << dtype.bits)

    def __repr__(self) -> str:
        return f"{self.const_dtype!r}({self.value!r})" if self.const_dtype else repr(self.value)


def _typed_problem(value, dtype: DType) -> str | None:
    if isinstance(value, Const):
        value = value.value
    if dtype.kind == "float":
        if isinstance(value, (int, float)):
            return None
        return f"T.{dtype.name}() needs a number, got {type(value).__name__}"
    if dtype.kind == "bool":
        ok = isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))
        return None if ok else f"T.bool() needs True/False, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int):
        return f"T.{dtype.name}() needs an integer, got {value!r}"
    low, high = (-(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1) if dtype.kind == "int" else (0, (1 << dtype.bits) - 1)
    if not low <= value <= high:
        return f"{value:#x} does not fit {dtype.name} (range {low:#x}..{high:#x})" if value >= 0 else \
            f"{value} does not fit {dtype.name} (range {low}..{high})"
    return None


@dataclass(frozen=True, eq=False)
class ScalarParam(Expr):
    """A scalar kernel parameter (``n: T.int32``), usable as a read input or in ``pred``."""

    name: str
    param_dtype: DType
    index: int  # position in the function's parameter list

    @property
    def dtype(self) -> DType:
        """The expression's dtype (see :class:`Expr`)."""
        return self.param_dtype

    def __repr__(self) -> str:
        return self.name


THREAD_INDICES = ("thread_id", "lane_id", "warp_id")


@dataclass(frozen=True, eq=False)
class ThreadIndex(Expr):
    """The issuing thread's index: ``thread_id`` (linear in the block), ``lane_id``, ``warp_id``."""

    kind: str

    @property
    def dtype(self) -> DType:
        """The expression's dtype (see :class:`Expr`)."""
        return DTYPES["int32"]

    def __repr__(self) -> str:
        return f"T.{self.kind}()"


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    """Integer (or bool ``& | ^``) arithmetic on two expressions."""

    op: str
    lhs: Expr
    rhs: Expr

    @property
    def dtype(self) -> DType | None:
        """The expression's dtype (see :class:`Expr`)."""
        if self.op in _BOOL_OPS and _is_bool(self.lhs) and _is_bool(self.rhs):
            return DTYPES["bool"]
        return self.lhs.dtype or self.rhs.dtype

    def problems(self) -> list[str]:
        """Problems of this node and its children (see :class:`Expr`)."""
        found = self.lhs.problems() + self.rhs.problems()
        if self.op in _BOOL_OPS and _is_bool(self.lhs) and _is_bool(self.rhs):
            return found
        for side in (self.lhs, self.rhs):
            kind = side.dtype.kind if side.dtype else ("float" if isinstance(getattr(side, "value", None), float) else "int")
            if kind != "int" and kind != "uint":
                found.append(f"'{self.op}' needs integer operands, got {side!r} ({side.dtype or 'a float literal'}); "
                             "tile programs compute no floating-point expressions: write the constant directly")
                return found
        if self.lhs.dtype and self.rhs.dtype and self.lhs.dtype is not self.rhs.dtype:
            found.append(f"'{self.op}' mixes {self.lhs.dtype} and {self.rhs.dtype}; give both sides one dtype")
        return found

    def __repr__(self) -> str:
        return f"({self.lhs!r} {self.op} {self.rhs!r})"


@dataclass(frozen=True, eq=False)
class Compare(Expr):
    """A comparison of two expressions; its dtype is ``bool``."""

    op: str
    lhs: Expr
    rhs: Expr

    @property
    def dtype(self) -> DType:
        """The expression's dtype (see :class:`Expr`)."""
        return DTYPES["bool"]

    def problems(self) -> list[str]:
        """Problems of this node and its children (see :class:`Expr`)."""
        found = self.lhs.problems() + self.rhs.problems()
        if self.lhs.dtype and self.rhs.dtype and self.lhs.dtype is not self.rhs.dtype:
            found.append(f"'{self.op}' compares {self.lhs.dtype} with {self.rhs.dtype}; give both sides one dtype")
        return found

    def __repr__(self) -> str:
        return f"({self.lhs!r} {self.op} {self.rhs!r})"


def _is_bool(expr: Expr) -> bool:
    return expr.dtype is DTYPES["bool"]


def as_expr(value) -> Expr | None:
    """``value`` as an expression: expressions as they are, Python numbers as untyped literals,
    numpy scalars as typed constants; None for anything else."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (bool, int, float)):
        return Const.literal(value)
    if isinstance(value, np.generic):
        dtype = DTYPES.get(value.dtype.name)
        if dtype is not None:
            return Const.typed(value.item(), dtype)
    return None
