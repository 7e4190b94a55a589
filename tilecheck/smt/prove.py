"""``tilecheck prove``: SMT queries over PTX forms, AMD sequences and IEEE operations.

A query is one Python-syntax boolean expression (parsed with :mod:`ast`, never evaluated) that
must hold for every value of its free variables. The answer is **proved** (the negation is
unsatisfiable), **counterexample** (with the variables' values and the values of each side), or
**unknown** (the solver gave up or hit the time limit) -- unknown is never reported as proved.

Query language (see ``spec/amdgpu/README.md``, section "prove"):

* PTX forms by their spelling: ``div.rn.f32(x, c)``, ``rcp.rn.ftz.f32(c)``; approximate forms
  (``rcp.approx.f32(c)``) stand for *any* result their contract allows;
* sequences: ``amdgpu.fdiv64(n, d)``; their contract steps (the reciprocal) range over the
  contract (``--semantics`` picks the AMD semantics variant);
* IEEE operations in any format: ``add sub mul div fma sqrt (rm, ...)`` with ``rm`` one of
  ``rn rz rm rp``, ``cvt(rm, x, FORMAT)``; predicates ``is_nan is_inf is_zero is_subnormal is_normal
  is_neg is_finite``; ``flush(x)``; ``from_bits(0x3f800000, f32)``; ``implies(a, b)``;
* ``==`` / ``!=`` compare values *identically* (NaN equals NaN, +0 differs from -0 -- Z3's FP
  equality); ``<  <=  >  >=`` are IEEE comparisons; ``same(a, b)`` compares bit patterns;
  ``and or not``, ``a if c else b``;
* formats: ``f16 bf16 f32 f64`` and reduced IEEE-style formats ``eXmY`` (X exponent bits, Y
  fraction bits, e.g. ``e4m3`` here means IEEE-style, infinities included);
* ``inf``, ``infinity`` and ``nan`` (any case) are the values ``tilecheck eval`` reads them as
  (+infinity, the format's default NaN; ``-inf`` negates); numeric literals must be exactly
  representable in their format (``1e39`` in f32 is a usage error naming what eval would read);
* free variables take their format from where they are used (an operand of a form or sequence) or
  from ``--var x=f16``; numeric literals take the format of where they stand.
"""

from __future__ import annotations

import ast
import difflib
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

import z3

from tilecheck.errors import IllegalFormError, UnknownFormError, UsageError, echo
from tilecheck.formats import Format, decimal_magnitude, get_format, reduced_format
from tilecheck.smt import fp
from tilecheck.spec.amdgpu import amdgpu_forms, sequences
from tilecheck.spec.query import ALLOWED as _ALLOWED, REDUCED as _REDUCED, SPECIAL_NAMES, parse
from tilecheck.spec.query import dotted as _dotted, is_format_name as _is_format_name
from tilecheck.spec.registry import OPERATIONS, ROUNDINGS


def _describe(fmt: Format, bits: int) -> str:
    """hex (decimal value) of a pattern."""
    digits = (fmt.width + 3) // 4
    sign = -1 if bits >> (fmt.width - 1) else 1
    e = (bits >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1)
    f = bits & ((1 << fmt.mantissa_bits) - 1)
    if e == (1 << fmt.exponent_bits) - 1:
        text = ("nan" if f else ("-inf" if sign < 0 else "+inf"))
    else:
        value = Fraction(f if e == 0 else f + (1 << fmt.mantissa_bits)) * Fraction(2) ** ((e or 1) - fmt.bias - fmt.mantissa_bits)
        text = ("-" if sign < 0 else "") + (f"{float(value):.17g}" if value else "0.0")
    return f"0x{bits:0{digits}x} ({text})"


def qformat(name: str, formats: Mapping[str, Format] | None = None) -> Format:
    """``f16 bf16 f32 f64`` (from ``formats``, the spec database's table; without it from the
    default spec root's ``spec/formats``) or ``eXmY`` (:func:`tilecheck.formats.reduced_format`)."""
    if name in ("f16", "bf16", "f32", "f64"):
        return formats[name] if formats is not None else get_format(name)
    m = _REDUCED.match(name)
    if m:
        e, mb = int(m.group(1)), int(m.group(2))
        if e < 2 or mb < 2 or e + mb + 1 > 64:
            raise UsageError(f"format {name}: need at least 2 exponent and 2 fraction bits, at most 64 bits in all")
        return reduced_format(e, mb)
    raise UsageError(f"unknown format {echo(name)} (f16, bf16, f32, f64 or eXmY, e.g. e5m10)")


# ---------------------------------------------------------------------------------------------
# values


@dataclass
class Val:
    """A query value: a float (bit-vector pattern ``bits`` of format ``fmt``) or a bool."""

    fmt: Format | None
    bits: object = None  # z3 BitVecRef for floats
    boolean: object = None  # z3 BoolRef for bools

    @property
    def fp(self) -> z3.FPRef:
        return z3.fpBVToFP(self.bits, fp.sort(self.fmt))


def _from_fp(fmt: Format, x: z3.FPRef, nan_bits: int | None = None) -> Val:
    """Pattern of an FP result (Z3's single NaN becomes the default quiet NaN pattern)."""
    nan = nan_bits if nan_bits is not None else ((1 << (fmt.exponent_bits + fmt.mantissa_bits)) - (1 << fmt.mantissa_bits)) | (1 << (fmt.mantissa_bits - 1))
    return Val(fmt, z3.If(z3.fpIsNaN(x), z3.BitVecVal(nan, fmt.width), z3.fpToIEEEBV(x)))


@dataclass
class Built:
    """A query turned into Z3: the claim, side constraints (contracts), variables, shown terms."""

    claim: z3.BoolRef
    constraints: list
    variables: dict  # name -> Val
    shown: list  # (source text, Val)
    choices: list = field(default_factory=list)  # (label, Val) chosen inside contracts


class _Builder:
    def __init__(self, text: str, var_formats: dict, semantics: str, db):
        self.text = text
        self.var_formats = dict(var_formats)
        self.semantics = semantics
        self.db = db
        self.variables: dict[str, Val] = {}
        self.constraints: list = []
        self.shown: list = []
        # a form or sequence applied twice to the same operands is one run: approximate results
        # and contract steps must not be chosen independently for each mention
        self.memo: dict = {}
        self.choices: list = []  # values the solver chooses inside contracts, for reports

    def _qformat(self, name: str) -> Format:
        """A query's format name, the named ones from the database's own formats."""
        return qformat(name, self.db.formats)

    def err(self, node, message: str) -> UsageError:
        col = getattr(node, "col_offset", None)
        where = f" (column {col + 1})" if col is not None else ""
        return UsageError(f"query{where}: {message}")

    # ---- entry --------------------------------------------------------------------------
    def build(self, tree: ast.Expression) -> z3.BoolRef:
        """The claim as a Bool (side constraints accumulate in ``self.constraints``)."""
        self._infer(tree.body, None)
        v = self.expr(tree.body, None)
        if v.boolean is None:
            raise self.err(tree.body, "a query must be a boolean expression (a comparison, a predicate, ...)")
        return v.boolean

    # ---- format inference for free variables ---------------------------------------------
    def _infer(self, node, expected: Format | None) -> None:
        """First pass: give free variables the format of the operand position they occupy."""
        if isinstance(node, ast.Name) and expected is not None and self._is_free(node.id):
            self.var_formats.setdefault(node.id, expected.name)
            return
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            formats = self._operand_formats(name, node)
            for i, arg in enumerate(node.args):
                self._infer(arg, formats[i] if formats and i < len(formats) else None)
            return
        for child in ast.iter_child_nodes(node):
            self._infer(child, None)

    def _is_free(self, name: str) -> bool:
        return (name not in ROUNDINGS and name not in ("True", "False") and not _is_format_name(name)
                and name.lower() not in SPECIAL_NAMES)

    def _operand_formats(self, name: str | None, node) -> list | None:
        if name is None:
            return None
        form = self._ptx_form(name)
        if form is not None:
            elem = form.element_format
            return [self._qformat(elem)] * len(form.sources) if elem else None
        seq = self._sequence(name)
        if seq is not None:
            return [seq.fmt] * len(seq.inputs)
        return None

    # ---- lookups ----------------------------------------------------------------------------
    def _ptx_form(self, name: str):
        if "." not in name or name.startswith("amdgpu."):
            return None
        return self.db.resolve(name)

    def _sequence(self, name: str):
        return sequences(self.db).get(name)

    # ---- expressions ------------------------------------------------------------------------
    def expr(self, node, expected: Format | None) -> Val:
        if not isinstance(node, _ALLOWED):
            raise self.err(node, f"{type(node).__name__} is not part of the query language")
        if isinstance(node, ast.BoolOp):
            parts = [self.boolean(v) for v in node.values]
            return Val(None, boolean=z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return Val(None, boolean=z3.Not(self.boolean(node.operand)))
            v = self.float_(node.operand, expected)
            if isinstance(node.op, ast.USub):
                return Val(v.fmt, v.bits ^ (1 << (v.fmt.width - 1)))
            return v
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            c = self.boolean(node.test)
            a = self.expr(node.body, expected)
            b = self.expr(node.orelse, a.fmt or expected)
            if (a.boolean is None) != (b.boolean is None) or (a.fmt and b.fmt and a.fmt != b.fmt):
                raise self.err(node, "both branches of a conditional must have the same type")
            if a.boolean is not None:
                return Val(None, boolean=z3.If(c, a.boolean, b.boolean))
            return Val(a.fmt, z3.If(c, a.bits, b.bits))
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return Val(None, boolean=z3.BoolVal(node.value))
            if isinstance(node.value, (int, float)):
                if expected is None:
                    raise self.err(node, f"cannot tell the format of the literal {node.value}; use it as an operand")
                return self.literal(node, node.value, expected)
            raise self.err(node, f"{type(node.value).__name__} literals are not part of the query language")
        if isinstance(node, ast.Name):
            return self.name(node, expected)
        if isinstance(node, ast.Call):
            return self.call(node, expected)
        raise self.err(node, f"{type(node).__name__} here is not part of the query language")

    def literal(self, node, value, fmt: Format) -> Val:
        """A numeric literal in format ``fmt``: it must be exactly representable (a prover does not
        round silently); the message says what ``tilecheck eval`` would round it to."""
        text = (ast.get_source_segment(self.text, node) or repr(value)).lower()
        if isinstance(value, int):
            exact = Fraction(value)
        else:
            exact = decimal_magnitude(text, fmt.emax, 2 - (1 << (fmt.exponent_bits - 1)) - fmt.mantissa_bits)
            if exact == "overflow" or (isinstance(value, float) and value == float("inf") and exact is None):
                raise self.err(node, f"literal {echo(text)} overflows {fmt.name} (eval reads it as +inf); "
                                     "write inf if that is meant")
            if exact == "underflow":
                raise self.err(node, f"literal {echo(text)} underflows {fmt.name} (eval reads it as 0.0); "
                                     "write 0.0 if that is meant")
            if not isinstance(exact, Fraction):
                raise self.err(node, f"literal {echo(text)} is not a decimal number the query language reads")
        rounded = z3.simplify(z3.fpRealToFP(z3.RNE(), z3.RealVal(f"{exact.numerator}/{exact.denominator}"),
                                            fp.sort(fmt)))
        bits = z3.simplify(z3.fpToIEEEBV(rounded)).as_long()
        if bits & ((1 << (fmt.width - 1)) - 1) == fmt.inf:
            raise self.err(node, f"literal {echo(text)} overflows {fmt.name} (eval reads it as +inf); "
                                 "write inf if that is meant")
        back = z3.simplify(z3.fpToReal(rounded))
        if back.as_fraction() != exact:
            raise self.err(node, f"literal {echo(text)} is not exactly representable in {fmt.name} "
                                 f"(eval rounds it to {_describe(fmt, bits)}); write that value or from_bits(...)")
        return Val(fmt, z3.BitVecVal(bits, fmt.width))

    def special(self, node, expected: Format | None) -> Val:
        """``inf`` / ``infinity`` / ``nan``: the values ``tilecheck eval`` reads them as."""
        if expected is None:
            raise self.err(node, f"cannot tell the format of {node.id}; use it as an operand or compare it "
                                 "with a value of known format")
        bits = expected.inf if node.id.lower() in ("inf", "infinity") else expected.default_nan
        return Val(expected, z3.BitVecVal(bits, expected.width))

    def name(self, node, expected: Format | None) -> Val:
        n = node.id
        if n in self.variables:
            return self.variables[n]
        if n.lower() in SPECIAL_NAMES:
            return self.special(node, expected)
        if not self._is_free(n):
            raise self.err(node, f"{echo(n)} is not a value here")
        fmt_name = self.var_formats.get(n) or (expected.name if expected else None)
        if fmt_name is None:
            raise self.err(node, f"cannot tell the format of {echo(n)}: use it as an operand of a form, or give --var {n[:60]}=f32")
        fmt = self._qformat(fmt_name)
        v = Val(fmt, z3.BitVec(n, fmt.width))
        self.variables[n] = v
        return v

    def boolean(self, node):
        v = self.expr(node, None)
        if v.boolean is None:
            raise self.err(node, "expected a boolean")
        return v.boolean

    def float_(self, node, expected: Format | None) -> Val:
        v = self.expr(node, expected)
        if v.fmt is None:
            raise self.err(node, "expected a floating-point value")
        return v

    def compare(self, node) -> Val:
        out = []
        left_node = node.left
        left = None
        for op, right_node in zip(node.ops, node.comparators):
            hint = self._hint(left_node) or self._hint(right_node)
            left = left if left is not None else self.float_(left_node, hint)
            right = self.float_(right_node, left.fmt)
            if left.fmt != right.fmt:
                raise self.err(node, f"comparing {left.fmt.name} with {right.fmt.name}")
            a, b = left.fp, right.fp
            if isinstance(op, ast.Eq):
                out.append(a == b)
            elif isinstance(op, ast.NotEq):
                out.append(a != b)
            else:
                out.append({ast.Lt: z3.fpLT, ast.LtE: z3.fpLEQ, ast.Gt: z3.fpGT, ast.GtE: z3.fpGEQ}[type(op)](a, b))
            self._show(left_node, left)
            self._show(right_node, right)
            left, left_node = right, right_node
        return Val(None, boolean=z3.And(*out) if len(out) > 1 else out[0])

    def _show(self, node, v: Val) -> None:
        text = ast.get_source_segment(self.text, node) or ast.unparse(node)
        if not any(t == text for t, _ in self.shown):
            self.shown.append((text, v))

    def _hint(self, node) -> Format | None:
        """The format an expression will have, if it can be told without building it."""
        if isinstance(node, ast.Name) and node.id in self.var_formats:
            return self._qformat(self.var_formats[node.id])
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            form = self._ptx_form(name) if name else None
            if form is not None and form.element_format:
                return form.format
            seq = self._sequence(name) if name else None
            if seq is not None:
                return seq.fmt
            if name == "cvt" and len(node.args) == 3 and isinstance(node.args[2], ast.Name):
                return self._qformat(node.args[2].id)
            if name == "from_bits" and len(node.args) == 2 and isinstance(node.args[1], ast.Name):
                return self._qformat(node.args[1].id)
            for a in node.args:
                h = self._hint(a)
                if h is not None:
                    return h
        if isinstance(node, ast.UnaryOp):
            return self._hint(node.operand)
        return None

    # ---- calls ------------------------------------------------------------------------------
    def call(self, node, expected: Format | None) -> Val:
        if node.keywords:
            raise self.err(node, "keyword arguments are not part of the query language")
        name = _dotted(node.func)
        if name is None:
            raise self.err(node, "call a form, a sequence or an operation by name")
        form = self._ptx_form(name)
        if form is not None:
            return self.call_form(node, form)
        seq = self._sequence(name)
        if seq is not None:
            return self.call_sequence(node, seq)
        if "." in name:
            self._unknown_dotted(node, name)
        return self.call_builtin(node, name, expected)

    def _args(self, node, formats: list) -> list:
        if len(node.args) != len(formats):
            raise self.err(node, f"expected {len(formats)} argument(s), got {len(node.args)}")
        out = []
        for arg, f in zip(node.args, formats):
            v = self.float_(arg, f)
            if v.fmt != f:
                raise self.err(arg, f"expected {f.name}, got {v.fmt.name}")
            out.append(v)
        return out

    def call_form(self, node, form) -> Val:
        from tilecheck.smt import forms as smt_forms

        elem = form.element_format
        if not elem or form.lanes != 1:
            raise self.err(node, f"{form.name}: only scalar floating-point forms can be used in queries")
        f = self._qformat(elem)
        args = self._args(node, [f] * len(form.sources))
        key = (form.name, tuple(a.bits.get_id() for a in args))
        if key in self.memo:
            return self.memo[key]
        if form.kind == "contract":
            enc = smt_forms.encode(form, *[a.bits for a in args])
            self.constraints.append(enc.constraint)
            self.memo[key] = Val(f, enc.result)
            self.choices.append((f"{form.name}(...) (within its contract)", self.memo[key]))
            return self.memo[key]
        if form.kind != "exact":
            raise self.err(node, f"{form.name} moves bits; it has no value semantics")
        return Val(f, smt_forms.encode_bits(form, *[a.bits for a in args]))

    def call_sequence(self, node, seq) -> Val:
        from tilecheck.smt.amdgpu import encode_sequence

        f = seq.fmt
        args = self._args(node, [f] * len(seq.inputs))
        key = (seq.name, tuple(a.bits.get_id() for a in args))
        if key not in self.memo:
            trace, constraints = encode_sequence(seq.name, self.semantics,
                                                 dict(zip(seq.inputs, [a.bits for a in args])), db=self.db)
            self.constraints.extend(constraints)
            self.memo[key] = Val(f, trace.result)
            forms = amdgpu_forms(self.db)
            for step, names in trace.order:
                if step.op and forms[step.op].variant(self.semantics).program is None:
                    for n in names:  # a contract step: the solver picks the value, show it
                        self.choices.append((f"{seq.name}: {n} = {step.op}(...)", Val(f, trace.values[n])))
        return self.memo[key]

    def call_builtin(self, node, name: str, expected: Format | None) -> Val:
        args = node.args
        if name in ("add", "sub", "mul", "div", "fma", "sqrt"):
            arity = OPERATIONS[name]
            if len(args) != arity + 1:
                raise self.err(node, f"{name}(rm, ...) takes a rounding mode and {arity} operand(s)")
            rm = self.rounding(args[0])
            f = self._operands_format(args[1:], expected, node)
            xs = [self.float_(a, f) for a in args[1:]]
            self._same_format(node, xs)
            r = fp.ieee(name, rm, *[x.fp for x in xs])
            return _from_fp(f, r)
        if name == "cvt":
            if len(args) != 3 or not isinstance(args[2], ast.Name):
                raise self.err(node, "cvt(rm, x, FORMAT)")
            rm = self.rounding(args[0])
            dst = self._qformat(args[2].id)
            x = self.float_(args[1], self._hint(args[1]))
            return _from_fp(dst, z3.fpToFP(fp.rounding_mode(rm), x.fp, fp.sort(dst)))
        if name in ("is_nan", "is_inf", "is_zero", "is_subnormal", "is_normal", "is_neg", "is_finite"):
            if len(args) != 1:
                raise self.err(node, f"{name}(x)")
            x = self.float_(args[0], self._hint(args[0]) or expected)
            t = x.fp
            test = {"is_nan": z3.fpIsNaN, "is_inf": z3.fpIsInf, "is_zero": z3.fpIsZero,
                    "is_subnormal": z3.fpIsSubnormal, "is_normal": z3.fpIsNormal,
                    "is_neg": lambda v: z3.Extract(x.fmt.width - 1, x.fmt.width - 1, x.bits) == 1,
                    "is_finite": lambda v: z3.Not(z3.Or(z3.fpIsNaN(v), z3.fpIsInf(v)))}[name](t)
            return Val(None, boolean=test)
        if name == "flush":
            x = self.float_(args[0], self._hint(args[0]) or expected)
            sub = z3.fpIsSubnormal(x.fp)
            return Val(x.fmt, z3.If(sub, x.bits & (1 << (x.fmt.width - 1)), x.bits))
        if name == "same":
            f = self._operands_format(args, expected, node)
            a, b = (self.float_(a, f) for a in args)
            return Val(None, boolean=a.bits == b.bits)
        if name == "implies":
            if len(args) != 2:
                raise self.err(node, "implies(a, b)")
            return Val(None, boolean=z3.Implies(self.boolean(args[0]), self.boolean(args[1])))
        if name == "from_bits":
            if len(args) != 2 or not isinstance(args[0], ast.Constant) or not isinstance(args[1], ast.Name):
                raise self.err(node, "from_bits(0x..., FORMAT)")
            f = self._qformat(args[1].id)
            bits = int(args[0].value)
            if not 0 <= bits < (1 << f.width):
                raise self.err(node, f"{bits:#x} does not fit {f.name}")
            return Val(f, z3.BitVecVal(bits, f.width))
        raise self.err(node, f"unknown function {echo(name)}")

    def _unknown_dotted(self, node, name: str):
        """Raise for a dotted name that is neither a form nor a sequence: an illegal PTX spelling is
        IllegalFormError (exit 1, as in eval), anything else UnknownFormError with the nearest names."""
        col = f"query (column {node.col_offset + 1}): "
        if not name.startswith("amdgpu."):
            try:
                verdict = self.db.verdict(name)
            except UnknownFormError as exc:
                raise UnknownFormError(col + exc.message) from None
            if not verdict.legal:
                raise IllegalFormError(f"{col}{name}: {verdict.reason}", reason=verdict.reason, ptxas=verdict.ptxas)
        close = difflib.get_close_matches(name, list(sequences(self.db)), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownFormError(f"{col}unknown form or sequence {echo(name)}{hint}")

    def rounding(self, node) -> str:
        if not isinstance(node, ast.Name) or node.id not in ROUNDINGS:
            raise self.err(node, "expected a rounding mode: rn, rz, rm or rp")
        return node.id

    def _operands_format(self, args, expected, node) -> Format:
        for a in args:
            h = self._hint(a)
            if h is not None:
                return h
        if expected is not None:
            return expected
        raise self.err(node, "cannot tell the operands' format: declare a variable with --var x=f16")

    def _same_format(self, node, xs) -> None:
        if len({x.fmt for x in xs}) > 1:
            raise self.err(node, "operands of different formats; convert with cvt(rm, x, FORMAT)")


def build(text: str, assumptions=(), var_formats: dict | None = None, semantics: str = "observed", *, db) -> Built:
    """Turn a query (and assumptions, each a boolean query expression) into Z3 terms."""
    builder = _Builder(text, var_formats or {}, semantics, db)
    for name, fname in (var_formats or {}).items():
        builder._qformat(fname)  # validate early
    claim = builder.build(parse(text))
    assumed = []
    for a in assumptions:
        sub = _Builder(a, builder.var_formats, semantics, db)
        sub.variables = builder.variables
        sub.constraints = builder.constraints
        sub.memo = builder.memo
        sub.choices = builder.choices
        assumed.append(sub.build(parse(a)))
    return Built(claim, builder.constraints + assumed, builder.variables, builder.shown, builder.choices)


# ---------------------------------------------------------------------------------------------
# solving


@dataclass
class Outcome:
    """Answer to a query."""

    status: str  # proved | counterexample | unknown
    seconds: float
    solver: str
    reason: str = ""
    assignment: list = field(default_factory=list)  # (name, shown text)
    values: list = field(default_factory=list)  # (source text, shown text)


def solve(built: Built, timeout: float = 60.0, solver: str = "z3") -> Outcome:
    """Search for a counterexample to ``built.claim`` under its constraints."""
    if solver != "z3":
        raise UsageError(f"unknown solver {echo(solver)} (available: z3)")
    s = z3.SolverFor("QF_FPBV") if not _needs_reals(built) else z3.Solver()
    s.set("timeout", max(1, int(timeout * 1000)))
    for c in built.constraints:
        s.add(c)
    s.add(z3.Not(built.claim))
    started = time.perf_counter()
    answer = s.check()
    seconds = time.perf_counter() - started
    if answer == z3.unsat:
        return Outcome("proved", seconds, solver)
    if answer == z3.unknown:
        reason = s.reason_unknown()
        if "interrupted" in reason:  # Z3 catches SIGINT itself and answers unknown: pass it on
            raise KeyboardInterrupt
        return Outcome("unknown", seconds, solver, reason=reason)
    model = s.model()
    assignment = []
    for name, v in built.variables.items():
        bits = model.eval(v.bits, model_completion=True).as_long()
        assignment.append((name, _describe(v.fmt, bits)))
    for label, v in built.choices:
        bits = model.eval(v.bits, model_completion=True)
        if z3.is_bv_value(bits):
            assignment.append((label, _describe(v.fmt, bits.as_long())))
    values = []
    for text, v in built.shown:
        if v.bits is None:
            continue
        bits = model.eval(v.bits, model_completion=True)
        if z3.is_bv_value(bits):
            values.append((text, _describe(v.fmt, bits.as_long())))
    return Outcome("counterexample", seconds, solver, assignment=assignment, values=values)


def _needs_reals(built: Built) -> bool:
    seen = set()
    todo = [built.claim, *built.constraints]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_real(t) or (z3.is_app(t) and t.decl().kind() == z3.Z3_OP_FPA_TO_REAL):
            return True
        todo.extend(t.children())
    return False


# ---------------------------------------------------------------------------------------------
# named queries


RECORD = "spec/amdgpu/README.md"
"""Where the measured answer of every named query is recorded (the table under ``prove``)."""


@dataclass(frozen=True)
class Named:
    """A named query: text, assumptions, variable formats, and the answer measured for it.

    ``recorded`` is the answer the table in :data:`RECORD` records for the query (``proved``,
    ``counterexample``, or ``unknown`` when Z3 reached the time limit), ``measured`` the time it
    records (``"300 s timeout"`` for an unknown). Both are documentation of a past run -- never used
    as an answer -- and a test keeps them equal to the table: nothing is labelled proved that no
    run proved.
    """

    name: str
    query: str
    doc: str
    assume: tuple = ()
    var: tuple = ()
    recorded: str = ""
    measured: str = ""


NAMED: dict[str, Named] = {q.name: q for q in [
    Named("ptx.div-vs-rcp-mul.f32", "div.rn.f32(x, c) == mul.rn.f32(x, rcp.rn.f32(c))",
          "dividing by c is multiplying by the correctly rounded reciprocal of c?",
          recorded="counterexample", measured="8 s"),
    Named("ptx.div-by-4.f32", "div.rn.f32(x, 4.0) == mul.rn.f32(x, 0.25)",
          "division by a power of two is an exact multiplication (f32, all x)", recorded="proved", measured="0.2 s"),
    Named("ptx.div-by-3.f32", "div.rn.f32(x, 3.0) == mul.rn.f32(x, rcp.rn.f32(3.0))",
          "x/3 via the rounded reciprocal of 3", recorded="counterexample", measured="1-19 s"),
    Named("ptx.ftz-inputs.f32", "div.rn.ftz.f32(x, y) == div.rn.ftz.f32(flush(x), flush(y))",
          ".ftz flushes subnormal inputs first", recorded="unknown", measured="300 s timeout"),
    Named("f16.div-by-4", "div(rn, x, 4.0) == mul(rn, x, 0.25)", "power-of-two division in f16",
          var=(("x", "f16"),), recorded="proved", measured="0.05 s"),
    Named("f16.div-via-f32", "cvt(rn, div(rn, cvt(rn, a, f32), cvt(rn, b, f32)), f16) == div(rn, a, b)",
          "f16 division through f32 and one more rounding is correctly rounded (24 >= 2*11+2)",
          var=(("a", "f16"), ("b", "f16")), recorded="unknown", measured="300 s timeout"),
    Named("e3m3.div-via-e5m9", "cvt(rn, div(rn, cvt(rn, a, e5m9), cvt(rn, b, e5m9)), e3m3) == div(rn, a, b)",
          "double rounding of division is innocuous when p' >= 2p + 2 (reduced formats: p=4, p'=10)",
          var=(("a", "e3m3"), ("b", "e3m3")), recorded="proved", measured="1.3-4.8 s"),
    Named("e3m3.div-via-e4m6", "cvt(rn, div(rn, cvt(rn, a, e4m6), cvt(rn, b, e4m6)), e3m3) == div(rn, a, b)",
          "... and can fail when p' < 2p + 2 (p=4, p'=7)",
          var=(("a", "e3m3"), ("b", "e3m3")), recorded="counterexample", measured="0.4 s"),
    Named("e3m2.fma-via-e4m6", "cvt(rn, fma(rn, cvt(rn, a, e4m6), cvt(rn, b, e4m6), cvt(rn, c, e4m6)), e3m2) "
          "== fma(rn, a, b, c)", "fma through a slightly wider format (p=3 via p'=7) is not correctly rounded",
          var=(("a", "e3m2"), ("b", "e3m2"), ("c", "e3m2")), recorded="counterexample", measured="0.9 s"),
    Named("e3m4.fma-via-e5m11", "cvt(rn, fma(rn, cvt(rn, a, e5m11), cvt(rn, b, e5m11), cvt(rn, c, e5m11)), e3m4) "
          "== fma(rn, a, b, c)", "fma through a format with p' = 2p + 2 (p=5, p'=12) is still not correctly rounded",
          var=(("a", "e3m4"), ("b", "e3m4"), ("c", "e3m4")), recorded="counterexample", measured="3.5-25 s"),
    Named("bf16.fma-via-f32", "cvt(rn, fma(rn, cvt(rn, a, f32), cvt(rn, b, f32), cvt(rn, c, f32)), bf16) "
          "== fma(rn, a, b, c)", "bf16 fma through f32 and one more rounding (spec/ptx/fma.yaml records the counterexample 0xD640*0x1DA1+0x1480)",
          var=(("a", "bf16"), ("b", "bf16"), ("c", "bf16")), recorded="counterexample", measured="61 s"),
    Named("amdgpu.fdiv64", "amdgpu.fdiv64(n, d) == div.rn.f64(n, d)",
          "LLVM's AMDGPU fdiv double is correctly rounded for every reciprocal its contract allows",
          recorded="unknown", measured="300 s timeout"),
    Named("amdgpu.fdiv32", "amdgpu.fdiv32(n, d) == div.rn.f32(n, d)",
          "LLVM's AMDGPU fdiv float is correctly rounded for every reciprocal its contract allows",
          recorded="unknown", measured="300 s timeout"),
    Named("amdgpu.fdiv32.one-over-d", "amdgpu.fdiv32(1.0, d) == div.rn.f32(1.0, d)",
          "1/d through the f32 macro, d normal and not tiny/huge (no scaling)",
          assume=("is_normal(d)", "d > 1.0", "d < 2.0"), recorded="unknown", measured="300 s timeout"),
    Named("amdgpu.fdiv32.all-ones-denominator",
          "amdgpu.fdiv32(-1.0, from_bits(0x3fffffff, f32)) == div.rn.f32(-1.0, from_bits(0x3fffffff, f32))",
          "the Markstein exception found by the campaign: is -1/0x3fffffff right for every allowed seed?",
          recorded="counterexample", measured="7 s"),
    Named("amdgpu.fdiv64.all-ones-denominator",
          "amdgpu.fdiv64(1.0, from_bits(0x400fffffffffffff, f64)) == div.rn.f64(1.0, from_bits(0x400fffffffffffff, f64))",
          "is 1/(4 - 2^-51) right for every seed the v_rcp_f64 contract allows?",
          recorded="counterexample", measured="120 s"),
    Named("amdgpu.fdiv64.one-over-d", "amdgpu.fdiv64(1.0, d) == div.rn.f64(1.0, d)",
          "1/d through the f64 macro, d in (1, 2)", assume=("d > 1.0", "d < 2.0"),
          recorded="unknown", measured="300 s timeout"),
]}
