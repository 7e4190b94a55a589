"""Expression references: ``tilecheck verify FILE.ptx --against EXPR``.

``EXPR`` is an expression in the query language of ``tilecheck prove`` (:mod:`tilecheck.spec.query`:
Python-expression syntax, parsed with :mod:`ast`, never evaluated) whose calls are PTX forms of
the spec database, spelled as PTX spells them::

    add.rn.f32(mul.rn.f32(a, b), c)                        # multiply, round, add, round (-fmad=false)
    fma.rn.f32(a, b, c)                                    # one rounding
    cvt.rn.f16.f32(div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b)))

**Operands.** The free names of the expression are the kernel's operands in parameter order, in
the order of the names: sorted, the first name is the first operand (the first input buffer of a
kernel, in parameter order; the first parameter of a ``.func``), the second the second, and so
on. So ``a, b, c`` are the first, second and third operands wherever they are written:
``add.rn.f32(c, mul.rn.f32(a, b))`` adds the third operand to the product of the first two, and
``div.rn.f32(y, x)`` divides the second operand by the first. A name takes its format from
the operand position it fills (``cvt.f32.f16(a)``: ``a`` is f16); one name in positions of two
formats is a usage error.

**What may appear.** Every scalar floating-point form of the spec database whose result is one
value: the correctly rounded forms (``add sub mul div fma sqrt rcp rsqrt``, every rounding,
``.ftz``, ``.sat``) and the value-computing instructions around them (``cvt`` between floating-point
formats, ``abs neg min max copysign``); numeric literals exactly representable in the format of
the position they fill (``div.rn.f32(1.0, a)``), ``inf`` and ``nan``, and unary minus (the sign
bit flipped). Each call's operands must have the formats of the form's operands (``cvt.f32.f16``
takes f16 and gives f32). **Integers** are computed by PTX's integer arithmetic and bit logic
(:func:`integer_form`: ``add.s32``, ``mul.lo.u16``, ``mul.wide.s32``, ``min.s64``, ``shl.b32``,
``and.b16``; a ``.bN`` position takes any integer of its width, a name that also fills an ``sN``
or ``uN`` position taking that format; ``and``/``or``/``not`` are spelled as PTX spells
them, though Python reserves the words), and cross to and from floats through ``cvt`` (:data:`INT_CONVERSIONS`):
``cvt.rn.f32.s32(a)`` (Triton's ``x.to(tl.float32)`` of an int32 ``x``: ``a`` is s32),
``cvt.rzi.s32.f32(a)`` (``x.to(tl.int32)``: the result is s32), ``cvt.rn.f32.s32(cvt.rzi.s32.f32(a))``,
and between integers ``cvt.s8.s16(cvt.rzi.s16.f32(a))`` (Triton's ``x.to(tl.int8)``: the low byte of
the int16 conversion); an integer operand or result has an
:class:`~tilecheck.formats.IntegerFormat`, is compared bit for bit (no NaN or zero classes) and,
as a literal, is a decimal integer in its range (``cvt.rn.f32.s16(-32768)``). Integer division
(``div.s32``, ``rem.u16``: C's, the quotient truncated toward zero) has results the ISA leaves open
(a zero divisor, the most negative value over -1, a signed remainder of operands of different
signs): on those inputs the expression may have any value, and they are **unknown**, never verified
nor counted misrounded (:func:`tilecheck.model.api.unspecified`).

**Refused**, each a usage error naming the column: syntax errors; a name that is no form
(``mad.rn.f32``: the spec knows no floating-point ``mad``, write ``fma.rn.f32``) or a function
that is no PTX form (``add(rn, a, b)``, prove's IEEE operations: spell the form); an operand of
the wrong format; packed forms (``f16x2``) but the packed conversions; forms that compute neither a float, an integer nor a
predicate (``mov``, ``cvta``); an operand in a predicate position (compare it: ``setp.ne.s32(a, 0)``);
a predicate as the whole expression (a kernel stores values: ``selp.u16(1, 0, setp.gt.f32(a, b))``);
unary minus, ``inf``, ``nan`` or a fraction in an integer position; Python's comparisons and
conditionals (spell them as PTX does, below).

**Packed conversions** convert one element, as each of their lanes does (:func:`resolve_form`):
``cvt.rn.satfinite.e4m3x2.f32(a)`` is one binary32 rounded to E4M3, ``cvt.rn.f16x2.e5m2x2(a)`` one
E5M2 widened to f16 (PTX has no scalar conversion to or from the 8-bit floats).

**Predicates.** A choice is written as PTX makes it: ``setp`` compares (``setp.gt.f32(a, 0.0)``,
every comparison of the spec database, ``.ftz`` and the unordered ``gtu``/``nan`` ones included;
integers as ``setp.lt.s32``) and ``testp`` tests a class (``testp.notanumber.f32(a)``, libdevice's
``isnan``); each gives a predicate, and ``selp`` picks its first operand where the
predicate holds, else its second: Triton's leaky ReLU ``tl.where(x > 0, x, x * 0.01)`` is
``selp.f32(a, mul.rn.f32(a, 0.00999999977648258209228515625), setp.gt.f32(a, 0.0))``. A predicate
literal is ``True``, ``False``, ``1`` or ``0``.

**Approximate forms** mean their contracts. One that *is* the whole expression, applied to the
operands (``div.approx.f32(a, b)``), is that form's contract, as ``--against div.approx.f32``
(:func:`applied_contract`). Anywhere else an expression denotes a *set* of results per input
(:func:`_results`): an approximate call gives every result its contract allows for each value
of its arguments (:func:`tilecheck.sim.choices.allowed_choices`, the enumeration the simulator
forks on), and the calls around it are applied to each. The outermost call of
``ex2.approx.f32(mul.rn.f32(a, 1.44269504))`` (Triton's ``tl.exp``) is its contract applied to the
exact product; ``div.full.f32(1.0, add.rn.f32(ex2.approx.f32(mul.rn.f32(a, -1.44269504)), 1.0))``
(``tl.sigmoid``) accepts every quotient ``div.full.f32`` allows for every sum of an ``ex2``
result and one; ``cvt.rn.f16.f32(ex2.approx.f32(...))`` every half those results round to. A
result is correct where it is one of the set. Where some contract of the expression bounds
nothing for an input (its domain rules or its bound leave the result free: ``ex2.approx.f16``
below 2^-14, ``div.approx.f32`` past 2^126) the input is **unknown** (:meth:`ExpressionReference.unknown`),
never verified.

**Operands of different formats** (``mul.rn.f32(cvt.f32.f16(a), b)``: an f16 buffer and an f32
one) and of another width than the result (``div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))`` stored
as f32, ``cvt.rn.f16.f32(div.rn.f32(a, b))`` stored as f16) are verified as written: each buffer
holds elements of its operand's format (:func:`tilecheck.verify.compiled.find_abi`), the
exhaustive enumeration spans the operands' widths together (2^16 for ``cvt.f32.f16(a)``, 2^32 for
two f16 operands), and sampled inputs are drawn per operand where the formats differ.

**Values** are bit patterns throughout: each call is :func:`tilecheck.model.api.evaluate` of its
form on numpy arrays of its operands' bits (bit-exact; NaN results take the form's NaN policy),
and a result is judged as a one-form reference is: equal bits, NaNs by class.

**Sampled inputs** (:meth:`ExpressionReference.sample_mix`): the mix of
:func:`tilecheck.inputs.forms.mixed_operands` for the expression's *operation*, the outermost
arithmetic form once conversions, ``abs`` and ``neg`` are stepped through (``cvt.rn.f16.f32(div.rn.f32(..))``:
``div``, rounding ``rn``), constructed in the operands' format, where that operation takes as many
operands as the expression has: edge-class patterns, the operation's constructed hard cases (for
the example: f16 quotients on or next to an f16 rounding boundary, where the f32 intermediate
would double-round) and uniform bit patterns. Otherwise (``add.rn.f32(mul.rn.f32(a, b), c)``: an
add of three operands; ``min``) the hard cases' share goes to edge-class patterns: edge-class
patterns plus uniform patterns.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import ClassVar
from fractions import Fraction

import numpy as np

from tilecheck.errors import UnknownFormError, UsageError, echo
from tilecheck.formats import INTEGER_FORMATS, IntegerFormat, decimal_magnitude
from tilecheck.inputs import boundaries, generators, mix
from tilecheck.inputs.forms import mixed_operands, uniform_operands
from tilecheck.model import api, contracts
from tilecheck.sim.choices import allowed_choices  # the enumeration the simulator forks on
from tilecheck.spec.forms import lane_conversion
from tilecheck.spec.query import SPECIAL_NAMES, dotted, is_format_name, parse
from tilecheck.spec.registry import ROUNDINGS

__all__ = ["ExpressionReference", "parse_expression", "applied_contract", "looks_like_expression",
           "agree_by_class"]

WHAT = "--against"
VALUE_FUNCTIONS = ("cvt.float", "float.abs", "float.neg", "float.min", "float.max", "float.copysign")
"""Semantics keys of the ``function`` forms that compute one floating-point value (the rest move
bits, compare, select or compute integers)."""
INT_CONVERSIONS = ("cvt.from_int", "cvt.to_int", "cvt.int")
"""Semantics keys of the conversions between an integer and a float (``cvt.rn.f32.s32``,
``cvt.rzi.s32.f32``) and between integers (``cvt.s8.s16``: the low byte; ``cvt.s16.s8``: sign
extension): the only forms through which integers enter, change or leave a reference."""
PREDICATE_RESULTS = ("cmp.setp", "float.testp")
"""Semantics keys of the forms whose result is a predicate: ``setp`` compares, ``testp`` tests a class."""
PREDICATE_FUNCTIONS = (*PREDICATE_RESULTS, "sel.selp")
"""Semantics keys of the forms through which a reference chooses: those that give a predicate, and
``selp``, which takes one."""
INT_TYPES = {f"{k}{b}" for k in "sub" for b in (8, 16, 32, 64)}
"""PTX types of integer operands and results (``.b32``: bits, read as unsigned)."""


def integer_form(form) -> bool:
    """Whether ``form`` is integer arithmetic or bit logic on integer operands, one result
    (``add.s32``, ``mul.lo.u16``, ``mul.wide.s32``, ``min.s64``, ``shl.b32``, ``and.b16``): the
    semantics keys ``int.*`` and ``bits.*``, no predicate."""
    return (form.kind == "function" and form.semantics.key.startswith(("int.", "bits.")) and form.lanes == 1
            and len(form.destinations) == 1
            and all(o.ptx_type in INT_TYPES for o in (*form.sources, *form.destinations)))


BITS_FORMATS = {f"b{w}": IntegerFormat(f"b{w}", False, w) for w in (8, 16, 32, 64)}
"""The formats of ``.bN`` operands and results: bits, which any value of their width fills and
which fill any position of their width (:func:`_fits`: ``and.b16(cvt.s16.s8(a), ...)``,
``selp.b16(a, b, p)`` of f16 ``a`` and ``b``), read as unsigned where a value is shown."""


@dataclass(frozen=True)
class PredicateFormat:
    """The format of a predicate inside a reference (``setp``'s result, ``selp``'s selector): one
    bit, held as a numpy bool, as :func:`tilecheck.model.api.evaluate` gives and takes it. It is
    never an operand's or the result's format."""

    integer: ClassVar[bool] = True
    name: str = "pred"
    width: int = 1
    signed: bool = False
    low: int = 0
    high: int = 1
    uint: ClassVar[type] = np.bool_

    def from_int(self, value: int) -> int:
        """The pattern of ``value`` (0 or 1)."""
        return int(value) & 1


PRED = PredicateFormat()


def int_format(ptx_type: str):
    """The integer format of a PTX integer type (``b32``: :data:`BITS_FORMATS`), or None."""
    return BITS_FORMATS.get(ptx_type) or INTEGER_FORMATS.get(ptx_type)


def _fits(have, want) -> bool:
    """Whether a value of format ``have`` may fill a position of format ``want``: the same format,
    or values of one width one of which is bits (``.bN``), as a PTX register of N bits holds either:
    ``selp.b16(a, b, p)`` of two f16 operands, ``and.b32(a, 0x7fffffff)`` of an f32 (its magnitude)."""
    bits = have.name in BITS_FORMATS or want.name in BITS_FORMATS
    return have.name == want.name or (bits and have.width == want.width)


STEPPED_THROUGH = ("cvt.float", "float.abs", "float.neg")
"""Unary forms the search for an expression's operation steps through (see the module doc)."""


def looks_like_expression(text: str) -> bool:
    """True when ``--against`` text is meant as an expression (it calls something)."""
    return "(" in text


# ---------------------------------------------------------------------------------------------
# the typed tree


@dataclass(frozen=True)
class Var:
    """An operand: the ``index``-th free name in sorted order (the ``index``-th operand)."""

    name: str
    index: int
    fmt: object


@dataclass(frozen=True)
class Const:
    """A literal's bits in the format of the position it fills."""

    bits: int
    fmt: object


@dataclass(frozen=True)
class Neg:
    """Unary minus: the sign bit of ``arg`` flipped."""

    arg: object
    fmt: object


@dataclass(frozen=True)
class Call:
    """One form applied to its operands; ``fmt`` is its result's format."""

    form: object
    args: tuple
    fmt: object


def agree_by_class(fmt, got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """True where ``got`` equals ``expected`` bit for bit, or both are NaNs (NaN by class: PTX
    leaves the NaN pattern of most results unspecified)."""
    u = fmt.uint  # the format's own width: no widening passes
    g = np.asarray(got).astype(u, copy=False)
    e = np.asarray(expected).astype(u, copy=False)
    if fmt.integer:  # an integer has no NaN
        return g == e
    gn = (g & u(fmt.magnitude_mask)) > u(fmt.exponent_mask)
    en = (e & u(fmt.magnitude_mask)) > u(fmt.exponent_mask)
    return (g == e) | (gn & en)


@dataclass
class ExpressionReference:
    """What the code must compute, given as an expression over its operands (module doc). It
    offers what :class:`tilecheck.verify.compiled.Reference` offers: ``fmt`` is the result's
    format, ``operand_formats`` each operand's (in binding order), ``formats`` the spec
    database's formats table; ``op``, ``rounding`` and ``form`` are None and ``contract`` False
    (an expression has one exact value per input)."""

    text: str
    fmt: object
    root: object = field(repr=False)
    variables: list = field(default_factory=list)   # Var, in binding order
    formats: dict = field(default_factory=dict, repr=False)
    op: str | None = None
    rounding: str | None = None
    form: object = None
    _kept_sets: tuple | None = field(default=None, repr=False, compare=False)  # see _sets

    def __getstate__(self):
        """Pickled (to a worker) without the kept sets: they belong to this process's last block."""
        state = dict(self.__dict__)
        state["_kept_sets"] = None
        return state

    @property
    def arity(self) -> int:
        """How many operands the expression binds."""
        return len(self.variables)

    @property
    def operand_formats(self) -> list:
        """The format of each operand, in binding order."""
        return [v.fmt for v in self.variables]

    @property
    def outer(self):
        """The approximate form of the outermost call, or None (an exact expression)."""
        root = self.root
        return root.form if isinstance(root, Call) and root.form.kind == "contract" else None

    @property
    def approximate(self) -> bool:
        """True where some call of the expression is approximate."""
        return _has_contract(self.root)

    @property
    def leaves_open(self) -> bool:
        """True where some call's result may be left open by the ISA (``div.s32`` by zero)."""
        return _has_open(self.root)

    @property
    def contract(self) -> bool:
        """True where the reference is a set of results per input (some call is approximate, or
        may leave its result open): its judgement then reads the operands."""
        return self.approximate or self.leaves_open

    def open_why(self, operands: list[np.ndarray]) -> str | None:
        """Why the expression's value on the first input of ``operands`` is left open: the first
        call that leaves its result open there, and the ISA's words (None where none does)."""
        arrays = [a[:1] for a in self._arrays(operands)]
        with np.errstate(all="ignore"):
            for node in _calls(self.root):
                if api.leaves_results_open(node.form):
                    args = [int(np.asarray(_evaluate(a, arrays, (1,)))[0]) for a in node.args]
                    why = api.unspecified_why(node.form, *args)
                    if why is not None:
                        return f"{node.form.name} on {', '.join(hex(v) for v in args)}: {why}"
        return None

    def _open(self, operands: list[np.ndarray]) -> np.ndarray:
        """Per input: True where some call of the expression has a result the ISA leaves open
        (:func:`tilecheck.model.api.unspecified`), so that the expression may have any value."""
        arrays = self._arrays(operands)
        with np.errstate(all="ignore"):
            return _open_inputs(self.root, arrays, arrays[0].shape)

    @property
    def operation(self) -> tuple[str | None, str]:
        """``(operation, rounding)`` whose hard cases the sampled inputs hold: the outermost
        arithmetic form's, conversions, abs and neg stepped through; ``(None, "rn")`` where
        there is none (the module doc)."""
        node = _stepped(self.root)
        if isinstance(node, Call) and node.form.kind == "exact":
            sem = node.form.semantics
            return sem.operation, str(sem.params.get("rounding", "rn") or "rn")
        return None, "rn"

    def _values(self, nodes, operands: list[np.ndarray]) -> list[np.ndarray]:
        """The bits of typed ``nodes`` per input (``operands``: one bit array per operand)."""
        arrays = [np.asarray(o).astype(f.uint, copy=False) for o, f in zip(operands, self.operand_formats)]
        with np.errstate(all="ignore"):
            return [np.asarray(_evaluate(node, arrays, arrays[0].shape)) for node in nodes]

    def _arrays(self, operands: list[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(o).astype(f.uint, copy=False) for o, f in zip(operands, self.operand_formats)]

    def expected(self, operands: list[np.ndarray]) -> np.ndarray:
        """The expression's bits per input (``operands``: one bit array per operand); each
        approximate call gives its form's representative value (round to nearest)."""
        return np.asarray(self._values([self.root], operands)[0]).astype(self.fmt.uint, copy=False)

    def judge(self, got: np.ndarray, operands: list[np.ndarray], expected: np.ndarray,
              ulp_reading: str = "either") -> np.ndarray:
        """True where ``got`` is the expression's value (NaN by class); with approximate calls,
        where it is one of the expression's results under ``ulp_reading`` (:func:`_results`;
        an outermost approximate call accepts what its contract allows for each value of its
        arguments), or the input is unknown (some contract bounds nothing there)."""
        if not self.approximate:
            ok = agree_by_class(self.fmt, got, expected)
            return ok | self._open(operands) if self.leaves_open else ok
        ok, unknown = self._accepted(np.asarray(got).astype(self.fmt.uint), operands, ulp_reading)
        return ok | unknown

    def judge_at(self, got: np.ndarray, operands: list[np.ndarray], index: np.ndarray,
                 ulp_reading: str = "either") -> np.ndarray:
        """:meth:`judge` of results ``got[k]`` of input ``index[k]`` of ``operands`` (one input
        judged for several results: the lanes of a kernel forked on its approximate instructions).
        The sets are worked out once per input, not once per result."""
        if not self.approximate:
            ok = agree_by_class(self.fmt, got, self.expected(operands)[index])
            return ok | self._open(operands)[np.asarray(index, dtype=np.int64)] if self.leaves_open else ok
        sets, unknown = self._sets(self._arrays(operands), ulp_reading)
        got = np.asarray(got).astype(self.fmt.uint)
        index = np.asarray(index, dtype=np.int64)
        back = None
        if self.fmt.width <= 32:
            # forked lanes repeat (input, result) pairs: judge each pair once
            pairs, back = np.unique((index << 32) | got.astype(np.int64), return_inverse=True)
            index, got = pairs >> 32, (pairs & 0xFFFFFFFF).astype(self.fmt.uint)
        ok = unknown[index].copy()
        with np.errstate(all="ignore"):
            for accepted, valid in sets:  # each set judges only the pairs no set before accepted
                sel = np.flatnonzero(~ok & valid[index])
                if not sel.size:
                    continue
                at, g = index[sel], got[sel]
                if isinstance(accepted, np.ndarray):
                    ok[sel] = agree_by_class(self.fmt, g, accepted[at])
                else:
                    ok[sel] = np.asarray(accepted.take(at).contains(g), dtype=bool)
        return ok if back is None else ok[back.reshape(-1)]

    def unknown(self, operands: list[np.ndarray], ulp_reading: str = "either") -> np.ndarray:
        """Per input: True where some approximate call of the expression bounds nothing (its
        contract's domain rules or its bound leave the result free), so no result is wrong there
        and none is verified either."""
        open_ = self._open(operands) if self.leaves_open else np.zeros(np.shape(operands[0]), dtype=bool)
        if not self.approximate or self._always_bounded:
            return open_
        return open_ | self._accepted(None, operands, ulp_reading)[1]

    def judge_identical(self, got: np.ndarray, operands: list[np.ndarray], index: np.ndarray,
                        ulp_reading: str = "either") -> np.ndarray:
        """:meth:`judge_at` for code that stores this very expression
        (:func:`tilecheck.verify.identity.stored_expression`), whose results are the simulator's
        representatives: a result equal to the expression's representative is one of its results
        without working out the sets; any other is judged by :meth:`judge_at`."""
        index = np.asarray(index, dtype=np.int64)
        ok = agree_by_class(self.fmt, got, self.expected(operands)[index])
        if not ok.all():
            rest = np.flatnonzero(~ok)
            ok[rest] = self.judge_at(np.asarray(got)[rest], operands, index[rest], ulp_reading)
        return ok

    def unbounded(self, operands: list[np.ndarray], ulp_reading: str = "either") -> np.ndarray:
        """Per input, for code that stores this very expression
        (:func:`tilecheck.verify.identity.stored_expression`): True where some approximate call
        of it bounds nothing for some value its arguments can take (:func:`_free`). Its results are
        then the expression's own, so the set need not be enumerable to be met: a call with more
        allowed results than :func:`_results` enumerates leaves an input unknown only where a
        contract above it needs those results as arguments."""
        arrays = self._arrays(operands)
        shape = arrays[0].shape
        open_ = self._open(operands) if self.leaves_open else np.zeros(shape, dtype=bool)
        if not self.approximate:
            return open_
        with np.errstate(all="ignore"):
            return open_ | _free(self.root, arrays, shape, ulp_reading)

    @property
    def _always_bounded(self) -> bool:
        """True where no input can be unknown, so :meth:`unknown` need not work out the contract's
        sets (the most costly part of judging ``ex2.approx.f32(mul.rn.f32(a, c))``, and it was done
        twice): the only approximate call is the outermost, judged by its ranges (never by a count
        of choices), and its contract bounds every lane
        (:func:`tilecheck.model.contracts.may_bound_nothing`). An inner approximate call is
        enumerated, and one with more choices than the simulator enumerates is unknown there."""
        outer = self.outer
        if outer is None or any(_has_contract(a) for a in self.root.args):
            return False
        return not contracts.may_bound_nothing(outer)

    def _accepted(self, got, operands: list[np.ndarray], ulp_reading: str):
        """``(ok, unknown)`` per input of an expression with approximate calls: whether ``got``
        (None: not asked) is one of its results under ``ulp_reading``, and whether some contract of
        it bounds nothing there. An outermost approximate call is judged by its contract on each
        value of its arguments; any other expression by its set (:func:`_results`)."""
        arrays = self._arrays(operands)
        ok = np.zeros(arrays[0].shape, dtype=bool)
        sets, unknown = self._sets(arrays, ulp_reading)
        if got is not None:
            with np.errstate(all="ignore"):
                for accepted, valid in sets:
                    if isinstance(accepted, np.ndarray):  # one result per input
                        ok |= valid & agree_by_class(self.fmt, got, accepted)
                    else:  # what an outermost approximate call's contract allows
                        ok |= valid & np.asarray(accepted.contains(got), dtype=bool)
        return ok, unknown

    def _sets(self, arrays: list[np.ndarray], ulp_reading: str):
        """``([(accepted, valid)], unknown)``: the expression's results on ``arrays`` where
        ``valid`` -- ``accepted`` one result per input (an array) or the outermost call's allowed
        results (:class:`tilecheck.model.api.AllowedResults`) -- and the unknown inputs. The last
        operands' sets are kept: a block's judgement and its :meth:`unknown` ask for the same
        operands, and working the sets out is what costs."""
        kept = self._kept_sets
        if kept is not None and kept[0] == ulp_reading and len(kept[1]) == len(arrays) and all(
                k.shape == a.shape and np.array_equal(k, a) for k, a in zip(kept[1], arrays)):
            return kept[2], kept[3]
        shape = arrays[0].shape
        sets = []
        with np.errstate(all="ignore"):
            if self.outer is None:
                res = _results(self.root, arrays, shape, ulp_reading)
                for j in range(res.values.shape[1]):
                    sets.append((res.values[:, j], res.valid[:, j]))
                unknown = res.unknown
            else:
                args, unknown = _arguments(self.root, arrays, shape, ulp_reading)
                for cols, valid in args:
                    allowed = api.allowed_results(self.outer, *cols, ulp_reading=ulp_reading)
                    sets.append((allowed, valid))
                    unknown = unknown | (valid & np.asarray(allowed.unbounded, dtype=bool))
        self._kept_sets = (ulp_reading, [a.copy() for a in arrays], sets, unknown)
        return sets, unknown

    def sample_mix(self, n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], dict]:
        """``n`` operand tuples in the mix of the module doc, and how many of each source:
        ``(columns, {"edge": .., "hard": .., "uniform": ..})``."""
        op, rounding = self.operation
        formats = self.operand_formats
        if len({f.name for f in formats}) == 1:
            narrowing = self._narrowing_cases(n, rng)
            if narrowing is not None:
                return narrowing
            # an operation without constructions (or of another arity) gives its share to edge patterns
            return mixed_operands(op or "", formats[0], rounding, n, rng, self.arity)
        # operands of different formats (f16 times f32): each column its own format's edge
        # patterns, then uniform patterns; an input counts as an edge case where every operand is one
        cols, edges = [], []
        for f in formats:
            (col,), drawn = mixed_operands("", f, rounding, n, rng, 1)
            cols.append(col)
            edges.append(drawn["edge"])
        edge = min(edges)
        hard = self._midpoint_cases(op, n // 4, rng)
        if hard is None:
            return cols, {"edge": edge, "hard": 0, "uniform": n - edge}
        # the last quarter (uniform patterns) gives way to the constructed double-rounding cases
        at = n - n // 4
        for k, col in hard.items():
            cols[k] = np.concatenate([cols[k][:at], col.astype(cols[k].dtype)])
        return cols, {"edge": min(edge, at), "hard": n // 4, "uniform": at - min(edge, at)}

    def _narrowing_cases(self, n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], dict] | None:
        """For a chain of floating-point conversions of one operand to a narrower format
        (``cvt.rn.bf16.f64``, ``cvt.rn.bf16.f32(cvt.rn.f32.f64(a))``): the module doc's mix with
        its hard share the operand's values at and next to the result's rounding ties
        (:func:`tilecheck.inputs.boundaries.narrowing_midpoints`); None for any other expression."""
        node = self.root
        while isinstance(node, Call) and node.form.semantics.key == "cvt.float" and len(node.args) == 1:
            node = node.args[0]
        if self.arity != 1 or not isinstance(node, Var) or node is self.root:
            return None
        n_edge, n_hard, n_uniform = mix.split(n, [mix.MIX.edge, mix.MIX.hard, mix.MIX.uniform])
        hard = boundaries.narrowing_midpoints(node.fmt, self.fmt, n_hard, rng)
        if hard is None:
            return None
        edge = generators.edge_biased(node.fmt, n_edge, rng).astype(np.uint64)
        uniform = uniform_operands(node.fmt, n_uniform, rng, 1)[0].astype(np.uint64)
        return [np.concatenate([edge, hard, uniform])], {"edge": n_edge, "hard": n_hard, "uniform": n_uniform}

    def _midpoint_cases(self, op: str | None, n: int, rng: np.random.Generator) -> dict | None:
        """``{operand index: column}`` of ``n`` inputs whose operation -- a ``mul`` or ``div`` of two
        operands of different formats, each through conversions (``cvt.rn.f16.f32(mul.rn.f32(
        cvt.f32.f16(a), b))``) -- lands next to a midpoint of the result's format
        (:func:`tilecheck.inputs.boundaries.midpoint_pairs`); None where the expression is not so."""
        node = _stepped(self.root)
        if op not in ("mul", "div") or not isinstance(node, Call) or len(node.args) != 2:
            return None
        ends = [_stepped(a) for a in node.args]
        if not all(isinstance(e, Var) for e in ends) or ends[0].index == ends[1].index:
            return None
        pair = boundaries.midpoint_pairs(op, ends[0].fmt, ends[1].fmt, self.fmt, n, rng)
        if pair is None:
            return None
        return {ends[0].index: pair[0], ends[1].index: pair[1]}


def _evaluate(node, arrays: list[np.ndarray], shape) -> np.ndarray:
    """The bits of ``node`` per input, an approximate call giving its representative value."""
    if isinstance(node, Var):
        return arrays[node.index]
    if isinstance(node, Const):
        return np.full(shape, node.bits, dtype=node.fmt.uint)
    if isinstance(node, Neg):
        return np.asarray(_evaluate(node.arg, arrays, shape)) ^ node.fmt.uint(node.fmt.sign_mask)
    args = [_evaluate(a, arrays, shape) for a in node.args]
    value = api.reference if node.form.kind == "contract" else api.evaluate
    return np.asarray(value(node.form, *args)).astype(node.fmt.uint, copy=False)


def _stepped(node):
    """``node`` with the unary forms of :data:`STEPPED_THROUGH` and unary minus stepped through."""
    while isinstance(node, Neg) or (isinstance(node, Call) and node.form.semantics.key in STEPPED_THROUGH):
        node = node.arg if isinstance(node, Neg) else node.args[0]
    return node


def _calls(node):
    """The calls at and below ``node``, innermost first."""
    if isinstance(node, Neg):
        yield from _calls(node.arg)
    elif isinstance(node, Call):
        for a in node.args:
            yield from _calls(a)
        yield node


def _has_open(node) -> bool:
    """Whether some call at or below ``node`` may have a result the ISA leaves open."""
    if isinstance(node, Call):
        return api.leaves_results_open(node.form) or any(_has_open(a) for a in node.args)
    return isinstance(node, Neg) and _has_open(node.arg)


def _open_inputs(node, arrays: list[np.ndarray], shape) -> np.ndarray:
    """Per input: whether some call at or below ``node`` leaves its result open there (its
    arguments' values are exact: :meth:`_Checker.build` refuses an approximate one)."""
    open_ = np.zeros(shape, dtype=bool)
    if isinstance(node, Neg):
        return _open_inputs(node.arg, arrays, shape)
    if not isinstance(node, Call):
        return open_
    for a in node.args:
        if _has_open(a):
            open_ |= _open_inputs(a, arrays, shape)
    if api.leaves_results_open(node.form):
        open_ |= np.asarray(api.unspecified(node.form, *[_evaluate(a, arrays, shape) for a in node.args]), dtype=bool)
    return open_


def _has_contract(node) -> bool:
    if isinstance(node, Call):
        return node.form.kind == "contract" or any(_has_contract(a) for a in node.args)
    return isinstance(node, Neg) and _has_contract(node.arg)


@dataclass
class _Results:
    """A set of results per input: ``values`` (inputs x columns) where ``valid``, and the inputs
    where some contract below bounds nothing (``unknown``: any result stands)."""

    values: np.ndarray
    valid: np.ndarray
    unknown: np.ndarray


MAX_COLUMNS = 4096
"""The most results per input an expression's set may hold (products of several approximate
calls' sets grow fast): a larger one is a usage error, not a slow run."""


def _results(node, arrays: list[np.ndarray], shape, ulp_reading: str) -> _Results:
    """Every result ``node`` may have per input: one for an exact tree; an approximate call each
    result its contract allows (under ``ulp_reading``) for each combination of its arguments'
    results, the calls around it applied to each (module doc)."""
    if not _has_contract(node):
        value = _evaluate(node, arrays, shape)
        return _Results(value[:, None], np.ones(shape + (1,), dtype=bool), np.zeros(shape, dtype=bool))
    if isinstance(node, Neg):
        inner = _results(node.arg, arrays, shape, ulp_reading)
        return _Results(inner.values ^ node.fmt.uint(node.fmt.sign_mask), inner.valid, inner.unknown)
    args, unknown = _arguments(node, arrays, shape, ulp_reading)
    values, valid = [], []
    for cols, ok in args:
        if node.form.kind == "contract":
            ch = allowed_choices(node.form, list(cols), ulp_reading=ulp_reading)
            values.append(np.asarray(ch.values).astype(node.fmt.uint))
            valid.append(np.asarray(ch.valid, dtype=bool) & ok[:, None])
            unknown = unknown | (ok & np.asarray(ch.unbounded, dtype=bool))
        else:
            values.append(np.asarray(api.evaluate(node.form, *cols)).astype(node.fmt.uint, copy=False)[:, None])
            valid.append(ok[:, None])
    return _Results(np.concatenate(values, axis=1), np.concatenate(valid, axis=1), unknown)


def free_call(node, arrays: list[np.ndarray], ulp_reading: str):
    """For one input (``arrays`` of length 1), the first approximate call below ``node`` that
    :func:`_free` finds bounding nothing: ``(form, operand bits)``, ``(form, None)`` where its
    arguments' results are more than are enumerated, or None."""
    if not _has_contract(node):
        return None
    if isinstance(node, Neg):
        return free_call(node.arg, arrays, ulp_reading)
    for a in node.args:
        found = free_call(a, arrays, ulp_reading)
        if found is not None:
            return found
    if node.form.kind != "contract":
        return None
    with np.errstate(all="ignore"):
        args, unknown = _arguments(node, arrays, (1,), ulp_reading)
        if unknown[0]:
            return node.form, None
        for cols, valid in args:
            ops = [np.asarray(c).astype(np.uint64) for c in cols]
            if valid[0] and bool(np.asarray(contracts.unbounded_lanes(np, node.form, ops))[0]):
                return node.form, [int(o[0]) for o in ops]
    return None


def _free(node, arrays: list[np.ndarray], shape, ulp_reading: str) -> np.ndarray:
    """Per input: some approximate call below ``node`` (itself included) bounds nothing for some
    value its arguments can take (:func:`tilecheck.model.contracts.unbounded_lanes`), or its
    arguments' results are more than :func:`_results` enumerates (then that cannot be told)."""
    if not _has_contract(node):
        return np.zeros(shape, dtype=bool)
    if isinstance(node, Neg):
        return _free(node.arg, arrays, shape, ulp_reading)
    free = np.zeros(shape, dtype=bool)
    for a in node.args:
        free |= _free(a, arrays, shape, ulp_reading)
    if node.form.kind == "contract":
        args, unknown = _arguments(node, arrays, shape, ulp_reading)
        free |= unknown
        for cols, valid in args:
            free |= valid & np.asarray(contracts.unbounded_lanes(np, node.form, [np.asarray(c).astype(np.uint64)
                                                                                  for c in cols]), dtype=bool)
    return free


def _arguments(node: Call, arrays: list[np.ndarray], shape, ulp_reading: str):
    """The combinations of the results of ``node``'s arguments: ``([(columns, valid)], unknown)``,
    one combination per tuple of one column of each argument's set (valid where each is)."""
    sets = [_results(a, arrays, shape, ulp_reading) for a in node.args]
    unknown = np.zeros(shape, dtype=bool)
    for r in sets:
        unknown = unknown | r.unknown
    widths = [r.values.shape[1] for r in sets]
    total = int(np.prod(widths)) if widths else 1
    if total > MAX_COLUMNS:
        raise UsageError(f"{WHAT}: {node.form.name}'s arguments have up to {total} results per input "
                         f"together (more than {MAX_COLUMNS}): too many approximate calls combined")
    combos = []
    for index in np.ndindex(*widths):
        if any(not r.valid[:, j].any() for r, j in zip(sets, index)):
            continue  # a column no input uses
        ok = np.ones(shape, dtype=bool)
        for r, j in zip(sets, index):
            ok &= r.valid[:, j]
        combos.append(([r.values[:, j] for r, j in zip(sets, index)], ok))
    return combos, unknown


# ---------------------------------------------------------------------------------------------
# parsing and type-checking


def _err(node, message: str) -> UsageError:
    col = getattr(node, "col_offset", None)
    where = f" (column {col + 1})" if col is not None else ""
    return UsageError(f"{WHAT}{where}: {message}")


def _is_free(name: str) -> bool:
    return (name not in ROUNDINGS and name not in ("True", "False") and not is_format_name(name)
            and name.lower() not in SPECIAL_NAMES)


def _source_order(node):
    """``node`` and the nodes below it that may be operands, in the order their text is written
    (a call's arguments left to right), unlike :func:`ast.walk`, which goes breadth first."""
    yield node
    if isinstance(node, ast.Call):
        children = list(node.args)  # the function's dotted name holds no operand
    elif isinstance(node, ast.Attribute):
        children = []  # a dotted name outside a call is no operand either (refused when typed)
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _source_order(child)


class _Checker:
    """Turns the parsed expression into a typed tree, or raises a located usage error."""

    def __init__(self, text: str, db):
        self.text = text
        self.db = db
        self.formats = db.formats
        self.var_formats: dict[str, tuple[object, ast.AST]] = {}  # name -> (format, first position filled)
        self.order: list[str] = []

    # ---- forms ------------------------------------------------------------------------------
    def form(self, node: ast.Call):
        """The value-computing scalar form a call names (else a located error)."""
        if node.keywords:
            raise _err(node, "keyword arguments are not part of the query language")
        name = dotted(node.func)
        if name is None:
            raise _err(node, "call a PTX form by its spelling (add.rn.f32(a, b))")
        if "." not in name:
            raise _err(node, f"unknown function {echo(name)}: a reference calls PTX forms by their spelling "
                             "(add.rn.f32(a, b), cvt.rn.f16.f32(x)); prove's IEEE operations (add(rn, a, b)) "
                             "are not references here")
        form = resolve_form(self.db, name)
        if form is None:
            try:
                verdict = self.db.verdict(name)
            except UnknownFormError as exc:
                raise _err(node, exc.message) from None
            reason = verdict.reason or "the spec database has no such form"
            raise _err(node, f"{name} is not a form of the spec database: {reason}{_exact_spelling(name)}")
        if form.lanes != 1:
            raise _err(node, f"{name} is a packed form ({form.lanes} lanes); a reference computes one element: "
                             "use the scalar form")
        if form.kind == "contract":
            return form
        key = form.semantics.key if form.kind == "function" else None
        floats = form.kind == "exact" or key in VALUE_FUNCTIONS
        if integer_form(form):
            return form
        if key in PREDICATE_FUNCTIONS and len(form.destinations) == 1 and all(
                _format_of(form, o) is not None for o in (*form.sources, *form.destinations)):
            return form
        if not (floats or key in INT_CONVERSIONS) or len(form.destinations) != 1 or (floats and (
                form.destinations[0].element_format is None or any(o.element_format is None for o in form.sources))):
            raise _err(node, f"{name} ({form.semantics.key}) computes no floating-point value from "
                             "floating-point operands, no integer from integers, no comparison or choice and converts "
                             "no integer to or from a float; a reference is built of floating-point arithmetic, "
                             "conversions, abs, neg, min, max and copysign, integer arithmetic and bit logic, setp, "
                             "testp and selp")
        return form

    def operand_formats(self, form) -> list:
        return [_format_of(form, o) for o in form.sources]

    # ---- pass 1: the operands' formats and order ---------------------------------------------
    def bind(self, tree: ast.Expression) -> None:
        """Give every free name the format of the operand position it fills, in source order."""
        for node in _source_order(tree.body):
            if isinstance(node, ast.Name) and _is_free(node.id) and node.id not in self.order:
                self.order.append(node.id)
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func)
            form = resolve_form(self.db, name) if name and "." in name else None
            if form is None or form.lanes != 1 or any(_format_of(form, o) is None for o in form.sources):
                continue  # reported where the call is typed
            for arg, fmt in zip(node.args, self.operand_formats(form)):
                inner = arg.operand if isinstance(arg, ast.UnaryOp) else arg
                if isinstance(inner, ast.Name) and _is_free(inner.id) and fmt is PRED:
                    raise _err(inner, f"{inner.id} fills {form.name}'s predicate operand; an operand is a value: "
                                      f"compare it with setp (setp.ne.s32({inner.id}, 0))")
                if isinstance(inner, ast.Name) and _is_free(inner.id):
                    have = self.var_formats.get(inner.id)
                    if have is None or (_fits(have[0], fmt) and have[0].name.startswith("b")):
                        # (bits give way to the signedness another position states)
                        self.var_formats[inner.id] = (fmt, inner) if have is None else (fmt, have[1])
                    elif not _fits(have[0], fmt):
                        raise _err(inner, f"{inner.id} is {have[0].name} where it first fills an operand "
                                          f"(column {have[1].col_offset + 1}) and {fmt.name} here; an operand "
                                          "has one format (convert with cvt)")

    # ---- pass 2: the typed tree ----------------------------------------------------------------
    def build(self, node, expected=None):
        """The typed node of ``node``; ``expected``: the format of the position it fills."""
        if isinstance(node, ast.Call):
            form = self.form(node)
            formats = self.operand_formats(form)
            if len(node.args) != len(formats):
                packed = self.db.resolve(form.name)
                lane = (f" (in a reference, one lane of the packed conversion: one {formats[0].name} element)"
                        if packed is not None and packed is not form else "")
                raise _err(node, f"{form.name} takes {len(formats)} operand(s){lane}, got {len(node.args)}")
            args = []
            for arg, fmt, o in zip(node.args, formats, form.sources):
                typed = self.build(arg, fmt)
                if not _fits(typed.fmt, fmt):
                    raise _err(arg, f"{form.name} takes {fmt.name} as operand {o.name}; this operand is "
                                    f"{typed.fmt.name}")
                args.append(typed)
            if api.leaves_results_open(form) and any(_has_contract(a) for a in args):
                raise _err(node, f"{form.name} of an approximate call's result: its operands are sets of values, "
                                 "and which of them leave the result open is not worked out; not supported")
            return Call(form, tuple(args), _format_of(form, form.destinations[0]))
        if isinstance(node, ast.Name):
            return self.name(node, expected)
        if isinstance(node, ast.Constant):
            if expected is PRED and isinstance(node.value, (bool, int)) and node.value in (0, 1):
                return Const(int(node.value), PRED)
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise _err(node, f"{node.value!r} is not a floating-point value")
            if expected is None:
                raise _err(node, f"cannot tell the format of the literal {node.value}; use it as an operand of a form")
            if expected.integer:
                return Const(self.integer_literal(node, expected), expected)
            return Const(self.literal(node, expected), expected)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            if expected is not None and expected.integer and isinstance(node.operand, ast.Constant) \
                    and isinstance(node.operand.value, int) and isinstance(node.op, ast.USub):
                return Const(self.integer_literal(node.operand, expected, negate=True), expected)
            inner = self.build(node.operand, expected)
            if isinstance(node.op, ast.UAdd):
                return inner
            if inner.fmt.integer:
                raise _err(node, f"unary minus negates a float (it flips the sign bit); this operand is "
                                 f"{inner.fmt.name}")
            if isinstance(inner, Const):
                return Const(inner.bits ^ inner.fmt.sign_mask, inner.fmt)
            return Neg(inner, inner.fmt)
        if isinstance(node, (ast.Compare, ast.BoolOp, ast.IfExp)) or \
                (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            raise _err(node, "a reference computes one value: comparisons, conditionals and boolean operators "
                             "are prove's, not verify's")
        raise _err(node, f"{type(node).__name__} is not a value here")

    def name(self, node: ast.Name, expected):
        n = node.id
        if n.lower() in SPECIAL_NAMES:
            if expected is None:
                raise _err(node, f"cannot tell the format of {n}; use it as an operand of a form")
            if expected.integer:
                raise _err(node, f"{n} is no {expected.name} value")
            return Const(expected.inf if n.lower() in ("inf", "infinity") else expected.default_nan, expected)
        if not _is_free(n):
            raise _err(node, f"{echo(n)} is not a value here (a rounding or format name is spelled into the form: "
                             "add.rz.f32)")
        have = self.var_formats.get(n)
        if have is None:
            raise _err(node, f"cannot tell the format of {echo(n)}: use it as an operand of a form")
        return Var(n, self.order.index(n), have[0])

    def integer_literal(self, node, fmt, negate: bool = False) -> int:
        """An integer literal's bits in integer format ``fmt`` (it must be an integer in range;
        ``negate``: the literal under a unary minus)."""
        value = -node.value if negate and isinstance(node.value, int) else node.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise _err(node, f"{fmt.name} takes an integer here; {echo(ast.get_source_segment(self.text, node) or repr(value))} "
                             "is not one")
        if not fmt.low <= value <= fmt.high:
            raise _err(node, f"literal {value} is outside {fmt.name} ([{fmt.low}, {fmt.high}])")
        return fmt.from_int(value)

    def literal(self, node, fmt) -> int:
        """A numeric literal's bits in ``fmt``: it must be exactly representable (a reference does
        not round silently)."""
        value = node.value
        # the literal as written: Python would read 1.00000000000000001 as 1.0
        text = (ast.get_source_segment(self.text, node) or repr(value)).lower()
        if isinstance(value, int):
            exact = Fraction(value)
        else:
            exact = decimal_magnitude(text, fmt.emax, 2 - (1 << (fmt.exponent_bits - 1)) - fmt.mantissa_bits)
            if value == float("inf") or exact in ("overflow", "underflow", "too long") or exact is None:
                raise _err(node, f"literal {echo(text)} is not a finite {fmt.name} value (write inf, or "
                                 "an exactly representable number)")
        bits = fmt.from_fraction(exact)
        if bits & fmt.magnitude_mask == fmt.inf:
            raise _err(node, f"literal {echo(text)} overflows {fmt.name} (write inf if that is meant)")
        if fmt.to_fraction(bits) != exact:
            raise _err(node, f"literal {echo(text)} is not exactly representable in {fmt.name} "
                             f"(it rounds to {fmt.hex(bits)})")
        return bits


def _format_of(form, operand):
    """The format of one operand of ``form``: its float format, the integer format of an integer
    operand of a conversion between integers and floats (``cvt.rn.f32.s32``'s ``s32``), else None
    (bits, predicates, integer arithmetic: no reference value); a predicate of ``setp`` or ``selp``
    is :data:`PRED`, and their integer operands have their integer formats (``setp.eq.b64``)."""
    if operand.element_format is not None:
        return form.format_of(operand.element_format)
    if form.kind == "function" and form.semantics.key in PREDICATE_FUNCTIONS:
        return PRED if operand.ptx_type == "pred" else int_format(operand.ptx_type)
    if form.kind == "function" and form.semantics.key in INT_CONVERSIONS:
        return INTEGER_FORMATS.get(operand.ptx_type)
    if integer_form(form):
        return int_format(operand.ptx_type)
    return None


def _check(text: str, db):
    """The parsed tree, its typed tree and the operands (the module doc's rules)."""
    tree = parse(text, WHAT)
    checker = _Checker(text, db)
    checker.bind(tree)
    # operands are named in parameter order: the names sorted (a, b, c), not as they are written
    checker.order.sort()
    root = checker.build(tree.body)
    variables = [Var(n, i, checker.var_formats[n][0]) for i, n in enumerate(checker.order)]
    return tree, root, variables


WIDE_ENOUGH = {"f16": "f64", "bf16": "f64", "f32": "f64"}
"""For a format, one whose correctly rounded division and square root, rounded once more to it, are
its own correctly rounded ones (precision at least 2p + 2: Figueroa's innocuous double rounding)."""


def _exact_spelling(name: str) -> str:
    """For a correctly rounded operation PTX lacks in a format (``div.rn.f16``, ``sqrt.rn.bf16``),
    the spelling of it in forms PTX has, as a clause of a refusal; "" where there is none."""
    parts = name.split(".")
    if len(parts) != 3 or parts[0] not in ("div", "sqrt", "rcp") or parts[1] not in ("rn", "rz", "rm", "rp"):
        if parts[:2] == ["rsqrt", "rn"]:
            return (f"; --against {name} on its own is the correctly rounded reciprocal square root, but no "
                    "composition of PTX forms computes it exactly, so an expression cannot contain it")
        return ""
    op, rnd, fmt = parts
    wide = WIDE_ENOUGH.get(fmt)
    if wide is None:
        return ""
    widen = f"cvt.{wide}.{fmt}"
    args = f"({widen}(a), {widen}(b))" if op == "div" else f"({widen}(a))"
    if rnd != "rn":
        return (f"; --against {name} on its own is that correctly rounded operation (an expression can spell "
                f"it only where the rounding is to nearest)")
    return (f"; write it as cvt.rn.{fmt}.{wide}({op}.rn.{wide}{args}): exact, since {wide} holds the "
            f"{fmt} result rounded once more to the correctly rounded one (or --against {name} on its own)")


def resolve_form(db, name: str):
    """The form ``name`` means in a reference: the spec database's form, or for a packed conversion
    the conversion of one lane (:func:`tilecheck.spec.forms.lane_conversion`); None if there is none."""
    form = db.resolve(name)
    return None if form is None else (lane_conversion(form) or form)


def applied_contract(text: str, db):
    """The approximate form an expression consists of when it is one approximate form applied to
    distinct operands (``div.approx.f32(a, b)``), else None; that expression means the form's
    contract, as ``--against div.approx.f32`` does."""
    tree = parse(text.strip(), WHAT)
    body = tree.body
    if not isinstance(body, ast.Call) or body.keywords:
        return None
    name = dotted(body.func)
    form = db.resolve(name) if name and "." in name else None
    if form is None or form.kind != "contract" or form.lanes != 1 or len(body.args) != len(form.sources):
        return None
    names = [a.id if isinstance(a, ast.Name) and _is_free(a.id) else None for a in body.args]
    if None in names or len(set(names)) != len(names):
        return None
    return form


def parse_expression(text: str, db) -> ExpressionReference:
    """The reference ``text`` denotes (module doc), or a usage error naming the column."""
    text = text.strip()
    tree, root, variables = _check(text, db)
    if root.fmt is PRED:
        raise UsageError(f"{WHAT} {echo(text)}: the expression is a predicate; a kernel stores values "
                         "(select one with selp: selp.u16(1, 0, setp.gt.f32(a, b)))")
    if not variables:
        raise UsageError(f"{WHAT} {echo(text)}: the expression names no operand (a reference is computed from the "
                         "kernel's operands: a, b, ...)")
    return ExpressionReference(text, root.fmt, root, variables, db.formats)
