"""Interpreter of the semantics language, parameterised by a backend.

A :class:`Program` is a parsed, checked body (see :mod:`tilecheck.semantics.lang`). :func:`run`
interprets it with a **backend** that supplies the primitive operations on its own payloads:

* :class:`tilecheck.model.semantics.NumpyBackend` -- uint64 bit-pattern arrays, vectorised
  over any number of cases;
* ``tilecheck.smt.semantics.Z3Backend`` -- Z3 bit-vector terms;
* :class:`TypeBackend` (here) -- no values at all: running a body with it type-checks the body
  (names, arities, kinds, formats, definite assignment), which :func:`compile_body` does once at
  load time so that errors are located spec errors rather than surprises during a campaign.

Values carry a static :class:`Type` (``float`` of a format, ``int``, ``bool``, literal ``number``,
``rounding``, ``format``); the interpreter does all type dispatch, so backends stay small.
``if``/``elif``/``else`` on a data-dependent condition runs both branches and merges every name
with ``backend.select(cond, then, else)`` (``numpy.where`` / ``z3.If``); a condition that is a
compile-time constant (a MODE parameter) runs one branch only. A name assigned on only one branch
is undefined afterwards; reading it is a located error.
"""

from __future__ import annotations

import ast
import difflib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Mapping

from tilecheck.errors import SemanticsError
from tilecheck.formats import Format, get_format
from tilecheck.semantics.lang import Origin, error_at, parse

FLOAT, INT, BOOL, NUM, ROUNDING, FORMAT, UNDEF = "float", "int", "bool", "number", "rounding", "format", "undefined"

ROUNDING_NAMES = {"NEAREST_EVEN": "rn", "TOWARD_ZERO": "rz", "TOWARD_NEGATIVE": "rm", "TOWARD_POSITIVE": "rp"}
FORMAT_NAMES = ("f16", "bf16", "f32", "f64")


@dataclass(frozen=True)
class Type:
    """Static type of a value: ``kind`` and, for floats, the format."""

    kind: str
    fmt: Format | None = None

    def __str__(self) -> str:
        return f"float {self.fmt.name}" if self.kind == FLOAT else self.kind


def float_type(fmt: Format | str) -> Type:
    """The type of floats of ``fmt`` (a name is looked up in the default spec root's formats)."""
    return Type(FLOAT, get_format(fmt))


T_INT, T_BOOL, T_NUM, T_ROUNDING, T_FORMAT = Type(INT), Type(BOOL), Type(NUM), Type(ROUNDING), Type(FORMAT)


class Val:
    """A typed value: ``v`` is a backend payload, or a Python constant (bool, int, Fraction/float
    for literal numbers, a rounding name, a Format) when known at compile time."""

    __slots__ = ("type", "v")

    def __init__(self, type_: Type, v):
        self.type = type_
        self.v = v

    @property
    def kind(self) -> str:
        return self.type.kind


def _static(v) -> bool:
    return isinstance(v, (bool, int, Fraction, float, str, Format))


# ---------------------------------------------------------------------------------------------
# backends


class TypeBackend:
    """A backend without values: every operation returns ``None``. Used to type-check bodies."""

    def __getattr__(self, name: str) -> Callable:
        if name.startswith(("float_", "int_", "bool_", "lift_", "select")):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


# ---------------------------------------------------------------------------------------------
# programs


@dataclass
class Program:
    """A checked body ready to run.

    ``inputs``/``outputs``/``params`` map names to types; ``constants`` are extra compile-time
    integer constants (per-form thresholds such as ``T``, ``K``); ``fmt`` is the body's default
    float format (literals and format-dependent names such as ``INF`` use it); ``formats`` the
    table the format names of the body (``f32``, ``f64``, ...) denote, the spec database's.
    """

    source: str
    tree: ast.Module
    origin: Origin
    fmt: Format
    inputs: dict[str, Type]
    outputs: dict[str, Type]
    params: dict[str, Type]
    constants: dict[str, int] = field(default_factory=dict)
    formats: Mapping[str, Format] = field(default_factory=dict, repr=False)


def compile_body(source: str, origin: Origin, *, fmt: Format | str, inputs: dict[str, Type],
                 outputs: dict[str, Type], params: dict[str, Type] | None = None,
                 constants: dict[str, int] | None = None, formats: Mapping[str, Format] | None = None) -> Program:
    """Parse ``source`` and type-check it; raise a located :class:`SemanticsError` on any problem
    (syntax, a construct outside the language, an unknown name or primitive, a type error, a name
    read before it is assigned on every path, an output not assigned on every path).

    ``formats`` (name -> Format) is what the body's format names denote: the spec loader passes its
    database's table. Without it, and for ``fmt`` given by name, the default spec root's formats
    are used."""
    tree = parse(source, origin)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.func.id not in PRIMITIVES:
            raise error_at(origin, node.func, _unknown_primitive(node.func.id))
    if formats is None:
        formats = {name: get_format(name) for name in FORMAT_NAMES}
    if not isinstance(fmt, Format):
        fmt = formats[fmt] if fmt in formats else get_format(fmt)  # the latter names the unknown format
    program = Program(source, tree, origin, fmt, dict(inputs), dict(outputs), dict(params or {}),
                      dict(constants or {}), formats)
    names = set(program.inputs) | set(program.params) | set(program.constants)
    clash = names & (set(PRIMITIVES) | set(ROUNDING_NAMES) | set(FORMAT_NAMES) | set(_FORMAT_CONSTANTS))
    if clash:
        raise error_at(origin, None, f"input/parameter name(s) {', '.join(sorted(clash))} shadow built-in names")
    run(program, TypeBackend(), {name: None for name in program.inputs},
        {name: None for name in program.params}, check=True)
    return program


def _unknown_primitive(name: str) -> str:
    close = difflib.get_close_matches(name, list(PRIMITIVES), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown primitive {name!r}{hint}; primitives: {', '.join(sorted(PRIMITIVES))}"


def run(program: Program, backend, inputs: dict, params: dict | None = None, *, check: bool = False) -> dict:
    """Interpret ``program`` with ``backend``; return the outputs' payloads by name.

    ``inputs`` maps each input name to a backend payload (bit patterns for floats, booleans for
    bools); ``params`` maps parameter names to compile-time values (a rounding name ``"rn"``..., a
    bool, an int). Booleans that stayed compile-time constants are lifted into payloads.
    """
    params = params or {}
    missing = set(program.inputs) - set(inputs)
    if missing:
        raise SemanticsError(f"missing input(s) {', '.join(sorted(missing))}", program.origin.locate(None, None))
    env: dict[str, Val] = {}
    for name, t in program.inputs.items():
        env[name] = Val(t, inputs[name])
    for name, t in program.params.items():
        if name not in params:
            raise SemanticsError(f"missing parameter {name!r}", program.origin.locate(None, None))
        value = params[name]
        if not check and not _static(value):
            raise SemanticsError(f"parameter {name!r} must be a compile-time constant, got {value!r}",
                                 program.origin.locate(None, None))
        env[name] = Val(t, value)
    interp = _Interp(program, backend, check)
    env = interp.block(program.tree.body, env)
    out = {}
    for name, t in program.outputs.items():
        val = env.get(name)
        if val is None or val.kind == UNDEF:
            how = "is never assigned" if val is None else "is not assigned on every path"
            raise error_at(program.origin, None if val is None else val.v, f"output {name!r} {how}")
        val = interp.coerce(val, t, None, f"output {name!r}")
        out[name] = interp.payload(val)
    return out


# ---------------------------------------------------------------------------------------------
# the interpreter


class _Interp:
    def __init__(self, program: Program, backend, check: bool):
        self.p = program
        self.b = backend
        self.check = check
        self.F = program.fmt

    # ---- helpers --------------------------------------------------------------------------
    def err(self, node, message: str) -> SemanticsError:
        return error_at(self.p.origin, node, message)

    def payload(self, val: Val):
        """The backend payload of ``val`` (lifting compile-time bools/ints)."""
        if val.kind == BOOL and isinstance(val.v, bool):
            return self.b.lift_bool(val.v)
        if val.kind == INT and isinstance(val.v, int) and not isinstance(val.v, bool):
            return self.b.lift_int(val.v)
        return val.v

    def num_to_float(self, val: Val, fmt: Format, node) -> Val:
        v = val.v
        if isinstance(v, float) and v == 0:
            bits = fmt.sign_mask if math.copysign(1.0, v) < 0 else 0
        else:
            frac = Fraction(v)
            bits = fmt.from_fraction(frac, "rn")
            if fmt.to_fraction(bits) != frac:
                raise self.err(node, f"literal {v} is not exactly representable in {fmt.name}")
        return Val(Type(FLOAT, fmt), self.b.float_const(fmt, bits))

    def num_to_int(self, val: Val, node) -> int:
        frac = Fraction(val.v)
        if frac.denominator != 1:
            raise self.err(node, f"{val.v} is not an integer")
        return int(frac)

    def coerce(self, val: Val, t: Type, node, what: str) -> Val:
        """Convert ``val`` to type ``t`` where the language allows it (literal numbers become
        floats or ints); raise a located error otherwise."""
        if val.type == t:
            return val
        if val.kind == NUM and t.kind == FLOAT:
            return self.num_to_float(val, t.fmt, node)
        if val.kind == NUM and t.kind == INT:
            return Val(T_INT, self.num_to_int(val, node))
        raise self.err(node, f"{what} must be {t}, got {val.type}")

    def floats(self, vals: list[Val], nodes: list, fname: str) -> tuple[Format, list]:
        """Common format of float arguments (literals adopt it; all literals -> the body's format)."""
        fmts = {v.type.fmt for v in vals if v.kind == FLOAT}
        for v, n in zip(vals, nodes):
            if v.kind not in (FLOAT, NUM):
                raise self.err(n, f"{fname}: expected a float, got {v.type}")
        if len(fmts) > 1:
            names = ", ".join(sorted(f.name for f in fmts))
            raise self.err(nodes[0], f"{fname}: operands have different formats ({names}); convert with cvt()")
        fmt = fmts.pop() if fmts else self.F
        return fmt, [self.coerce(v, Type(FLOAT, fmt), n, fname).v for v, n in zip(vals, nodes)]

    def ints(self, vals: list[Val], nodes: list, fname: str) -> list:
        out = []
        for v, n in zip(vals, nodes):
            if v.kind == NUM:
                out.append(self.num_to_int(v, n))
            elif v.kind == INT:
                out.append(v.v)
            else:
                raise self.err(n, f"{fname}: expected an int, got {v.type}")
        return out

    def rounding(self, val: Val, node, fname: str) -> str:
        if val.kind != ROUNDING:
            raise self.err(node, f"{fname}: the first argument must be a rounding mode (rm, NEAREST_EVEN, ...), got {val.type}")
        return val.v

    def boolean(self, val: Val, node, what: str):
        if val.kind != BOOL:
            raise self.err(node, f"{what} must be a bool, got {val.type}")
        return val.v

    def select(self, cond, a: Val, b: Val, node) -> Val:
        """Merge two values under a data-dependent condition."""
        a, b = self.unify(a, b, node)
        if a.kind == UNDEF or b.kind == UNDEF:
            return a if a.kind == UNDEF else b
        if a.v is b.v:
            return a
        if a.kind in (ROUNDING, FORMAT):
            if a.v != b.v:
                raise self.err(node, f"a {a.kind} must not depend on data")
            return a
        return Val(a.type, self.b.select(cond, self.payload(a), self.payload(b)))

    def unify(self, a: Val, b: Val, node) -> tuple[Val, Val]:
        if a.kind == UNDEF or b.kind == UNDEF or a.type == b.type:
            if a.kind == NUM and b.kind == NUM and a.v != b.v:
                # two different literals on two paths: they must become ints
                return Val(T_INT, self.num_to_int(a, node)), Val(T_INT, self.num_to_int(b, node))
            return a, b
        if a.kind == NUM:
            return self.coerce(a, b.type, node, "value"), b
        if b.kind == NUM:
            return a, self.coerce(b, a.type, node, "value")
        raise self.err(node, f"a name gets {a.type} on one path and {b.type} on the other")

    # ---- statements -----------------------------------------------------------------------
    def block(self, stmts: list, env: dict) -> dict:
        for node in stmts:
            env = self.stmt(node, env)
        return env

    def stmt(self, node, env: dict) -> dict:
        if isinstance(node, ast.Assign):
            name = node.targets[0].id
            if name in PRIMITIVES or name in ROUNDING_NAMES or name in FORMAT_NAMES or name in _FORMAT_CONSTANTS \
                    or name in self.p.params or name in self.p.constants:
                raise self.err(node.targets[0], f"cannot assign to {name!r}: it names a primitive, constant or parameter")
            val = self.expr(node.value, env)
            if val.kind in (ROUNDING, FORMAT) and not _static(val.v):
                raise self.err(node, "rounding modes and formats are constants")
            env = dict(env)
            env[name] = val
            return env
        if isinstance(node, ast.If):
            cond = self.boolean(self.expr(node.test, env), node.test, "an if condition")
            if isinstance(cond, bool):
                return self.block(node.body if cond else node.orelse, env)
            then_env = self.block(node.body, dict(env))
            else_env = self.block(node.orelse, dict(env))
            merged = {}
            for name in set(then_env) | set(else_env):
                t, e = then_env.get(name), else_env.get(name)
                if t is None or e is None:
                    merged[name] = Val(Type(UNDEF), node)
                elif t is e:
                    merged[name] = t
                else:
                    merged[name] = self.select(cond, t, e, node)
            return merged
        if isinstance(node, (ast.Pass, ast.Expr)):
            return env  # ast.Expr here is a comment string (lang.parse refuses others)
        raise self.err(node, f"{type(node).__name__} is not part of the semantics language")

    # ---- expressions ----------------------------------------------------------------------
    def expr(self, node, env: dict) -> Val:
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            raise self.err(node, f"{type(node).__name__} is not part of the semantics language")
        return method(node, env)

    def e_Constant(self, node, env):
        v = node.value
        if isinstance(v, bool):
            return Val(T_BOOL, v)
        if isinstance(v, int):
            return Val(T_NUM, v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise self.err(node, "write infinities as INF")
            return Val(T_NUM, v if v == 0 else Fraction(v))
        raise self.err(node, f"{type(v).__name__} literals are not part of the language")

    def e_Name(self, node, env):
        name = node.id
        if name in env:
            val = env[name]
            if val.kind == UNDEF:
                raise self.err(node, f"{name!r} is not assigned on every path that reaches here")
            return val
        if name in self.p.constants:
            return Val(T_INT, self.p.constants[name])
        if name in ROUNDING_NAMES:
            return Val(T_ROUNDING, ROUNDING_NAMES[name])
        if name in FORMAT_NAMES:
            if name not in self.p.formats:
                raise self.err(node, f"format {name!r} is not in the spec database's formats")
            return Val(T_FORMAT, self.p.formats[name])
        if name in _FORMAT_CONSTANTS:
            return _FORMAT_CONSTANTS[name](self, self.F)
        if name in PRIMITIVES:
            raise self.err(node, f"{name!r} is a primitive: call it")
        known = list(env) + list(self.p.constants) + list(ROUNDING_NAMES) + list(_FORMAT_CONSTANTS)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise self.err(node, f"unknown name {name!r}{hint}")

    def e_UnaryOp(self, node, env):
        val = self.expr(node.operand, env)
        if isinstance(node.op, ast.Not):
            b = self.boolean(val, node.operand, "the operand of not")
            return Val(T_BOOL, (not b) if isinstance(b, bool) else self.b.bool_not(b))
        if isinstance(node.op, ast.UAdd):
            if val.kind not in (FLOAT, INT, NUM):
                raise self.err(node, f"unary + needs a number, got {val.type}")
            return val
        # USub
        if val.kind == NUM:
            v = val.v
            return Val(T_NUM, -0.0 if v == 0 and math.copysign(1.0, float(v)) > 0 else (0.0 if v == 0 else -v))
        if val.kind == INT:
            return Val(T_INT, -val.v if isinstance(val.v, int) else self.b.int_neg(val.v))
        if val.kind == FLOAT:
            return Val(val.type, self.b.float_neg(val.type.fmt, val.v))
        raise self.err(node, f"unary - needs a number, got {val.type}")

    _ARITH = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}

    def e_BinOp(self, node, env):
        a = self.expr(node.left, env)
        b = self.expr(node.right, env)
        if isinstance(node.op, ast.Pow):
            if a.kind != NUM or b.kind != NUM:
                raise self.err(node, "** is only allowed between literal numbers (e.g. 2.0**64)")
            e = Fraction(b.v)
            if e.denominator != 1:
                raise self.err(node, "** needs an integer exponent")
            base = Fraction(a.v)
            if base == 0 and e < 0:
                raise self.err(node, "0 ** negative")
            return Val(T_NUM, base ** int(e))
        op = self._ARITH[type(node.op)]
        if a.kind == NUM and b.kind == NUM:
            x, y = Fraction(a.v), Fraction(b.v)
            if op == "div":
                if y == 0:
                    raise self.err(node, "division by the literal zero")
                return Val(T_NUM, x / y)
            return Val(T_NUM, {"add": x + y, "sub": x - y, "mul": x * y}[op])
        kinds = {a.kind, b.kind} - {NUM}
        if kinds == {INT}:
            if op == "div":
                raise self.err(node, "integer division is not part of the language")
            x, y = self.ints([a, b], [node.left, node.right], op)
            if isinstance(x, int) and isinstance(y, int):
                return Val(T_INT, {"add": x + y, "sub": x - y, "mul": x * y}[op])
            return Val(T_INT, getattr(self.b, "int_" + op)(x, y))
        if kinds == {FLOAT}:
            fmt, (x, y) = self.floats([a, b], [node.left, node.right], op)
            return Val(Type(FLOAT, fmt), self.b.float_arith(fmt, op, "rn", [x, y], 0))
        raise self.err(node, f"cannot apply {type(node.op).__name__} to {a.type} and {b.type}")

    def e_BoolOp(self, node, env):
        vals = [self.boolean(self.expr(v, env), v, "an operand of and/or") for v in node.values]
        is_and = isinstance(node.op, ast.And)
        dynamic = []
        for v in vals:
            if isinstance(v, bool):
                if is_and and not v:
                    return Val(T_BOOL, False)
                if not is_and and v:
                    return Val(T_BOOL, True)
            else:
                dynamic.append(v)
        if not dynamic:
            return Val(T_BOOL, is_and)
        out = dynamic[0]
        for v in dynamic[1:]:
            out = self.b.bool_and(out, v) if is_and else self.b.bool_or(out, v)
        return Val(T_BOOL, out)

    _CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

    def e_Compare(self, node, env):
        left = self.expr(node.left, env)
        result: object = True
        for op_node, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node, env)
            r = self.compare(self._CMP[type(op_node)], left, right, node)
            if isinstance(r, bool):
                if not r:
                    return Val(T_BOOL, False)
            else:
                result = r if result is True else self.b.bool_and(result, r)
            left = right
        return Val(T_BOOL, result)

    def compare(self, op: str, a: Val, b: Val, node):
        kinds = {a.kind, b.kind}
        if kinds == {NUM}:
            x, y = Fraction(a.v), Fraction(b.v)
            return {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]
        if kinds - {NUM} == {FLOAT}:
            fmt, (x, y) = self.floats([a, b], [node, node], "comparison")
            return self.b.float_cmp(fmt, op, x, y)
        if kinds - {NUM} == {INT}:
            x, y = self.ints([a, b], [node, node], "comparison")
            if isinstance(x, int) and isinstance(y, int):
                return {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]
            return self.b.int_cmp(op, x, y)
        if kinds == {BOOL} and op in ("==", "!="):
            x, y = a.v, b.v
            if isinstance(x, bool) and isinstance(y, bool):
                return (x == y) if op == "==" else (x != y)
            eq = self.b.bool_eq(self.payload(a), self.payload(b))
            return eq if op == "==" else self.b.bool_not(eq)
        if kinds in ({ROUNDING}, {FORMAT}) and op in ("==", "!="):
            if not (_static(a.v) and _static(b.v)) and not self.check:
                raise self.err(node, "rounding modes and formats are constants")
            if a.v is None or b.v is None:
                return self.b.bool_eq(None, None)
            return (a.v == b.v) if op == "==" else (a.v != b.v)
        raise self.err(node, f"cannot compare {a.type} with {b.type} using {op}")

    def e_IfExp(self, node, env):
        cond = self.boolean(self.expr(node.test, env), node.test, "a conditional expression's test")
        if isinstance(cond, bool):
            return self.expr(node.body if cond else node.orelse, env)
        a = self.expr(node.body, env)
        b = self.expr(node.orelse, env)
        return self.select(cond, a, b, node)

    def e_Call(self, node, env):
        prim = PRIMITIVES[node.func.id]
        args = [self.expr(a, env) for a in node.args]
        if not (prim.min_args <= len(args) <= prim.max_args):
            count = str(prim.min_args) if prim.min_args == prim.max_args else f"{prim.min_args}-{prim.max_args}"
            raise self.err(node, f"{prim.name} takes {count} argument(s): {prim.signature}; got {len(args)}")
        return prim.impl(self, node, args)


# ---------------------------------------------------------------------------------------------
# primitives


@dataclass(frozen=True)
class Primitive:
    """One primitive: name, signature text, documentation and implementation."""

    name: str
    signature: str
    doc: str
    min_args: int
    max_args: int
    impl: Callable


def _test(what: str):
    def impl(it: _Interp, node, args):
        fmt, (x,) = it.floats(args, node.args, what)
        return Val(T_BOOL, it.b.float_test(fmt, what, x))
    return impl


def _unary_float(method: str, fname: str):
    def impl(it: _Interp, node, args):
        fmt, (x,) = it.floats(args, node.args, fname)
        return Val(Type(FLOAT, fmt), getattr(it.b, method)(fmt, x))
    return impl


def _p_exponent(it, node, args):
    fmt, (x,) = it.floats(args, node.args, "exponent")
    return Val(T_INT, it.b.float_exponent(fmt, x))


def _p_same(it, node, args):
    fmt, (x, y) = it.floats(args, node.args, "same")
    return Val(T_BOOL, it.b.float_same(fmt, x, y))


def _p_abs(it, node, args):
    (a,) = args
    if a.kind == INT:
        return Val(T_INT, abs(a.v) if isinstance(a.v, int) else it.b.int_abs(a.v))
    if a.kind == NUM:
        return Val(T_NUM, abs(Fraction(a.v)))
    fmt, (x,) = it.floats(args, node.args, "abs")
    return Val(Type(FLOAT, fmt), it.b.float_abs(fmt, x))


def _p_minmax(which: str):
    def impl(it, node, args):
        x, y = it.ints(args, node.args, which)
        if isinstance(x, int) and isinstance(y, int):
            return Val(T_INT, min(x, y) if which == "min" else max(x, y))
        return Val(T_INT, getattr(it.b, "int_" + which)(x, y))
    return impl


def _p_copysign(it, node, args):
    fmt, (x, y) = it.floats(args, node.args, "copysign")
    return Val(Type(FLOAT, fmt), it.b.float_copysign(fmt, x, y))


def _p_with_sign(it, node, args):
    fmt, (x,) = it.floats(args[:1], node.args[:1], "with_sign")
    neg = it.boolean(args[1], node.args[1], "with_sign's second argument")
    return Val(Type(FLOAT, fmt), it.b.float_with_sign(fmt, x, it.payload(args[1]) if not isinstance(neg, bool) else neg))


def _p_from_bits(it, node, args):
    if args[0].kind != NUM:
        raise it.err(node.args[0], "from_bits needs a literal integer bit pattern")
    bits = it.num_to_int(args[0], node.args[0])
    fmt = it.F
    if len(args) == 2:
        if args[1].kind != FORMAT:
            raise it.err(node.args[1], "from_bits's second argument must be a format (f16, bf16, f32, f64)")
        fmt = args[1].v or it.F
    if not 0 <= bits < (1 << fmt.width):
        raise it.err(node.args[0], f"{bits:#x} is not a {fmt.width}-bit pattern of {fmt.name}")
    return Val(Type(FLOAT, fmt), it.b.float_const(fmt, bits))


def _p_arith(op: str, nfloat: int):
    def impl(it, node, args):
        rm = it.rounding(args[0], node.args[0], op)
        fmt, xs = it.floats(args[1:1 + nfloat], node.args[1:1 + nfloat], op)
        return Val(Type(FLOAT, fmt), it.b.float_arith(fmt, op, rm, xs, 0))
    return impl


def _p_fma_scaled(it, node, args):
    rm = it.rounding(args[0], node.args[0], "fma_scaled")
    fmt, xs = it.floats(args[1:4], node.args[1:4], "fma_scaled")
    (n,) = it.ints(args[4:5], node.args[4:5], "fma_scaled")
    return Val(Type(FLOAT, fmt), it.b.float_arith(fmt, "fma", rm, xs, n))


def _p_ldexp(it, node, args):
    fmt, (x,) = it.floats(args[:1], node.args[:1], "ldexp")
    (n,) = it.ints(args[1:2], node.args[1:2], "ldexp")
    rm = it.rounding(args[2], node.args[2], "ldexp") if len(args) == 3 else "rn"
    return Val(Type(FLOAT, fmt), it.b.float_ldexp(fmt, rm, x, n))


def _p_cvt(it, node, args):
    rm = it.rounding(args[0], node.args[0], "cvt")
    if args[2].kind != FORMAT:
        raise it.err(node.args[2], "cvt's third argument must be a format (f16, bf16, f32, f64)")
    src, (x,) = it.floats(args[1:2], node.args[1:2], "cvt")
    dst = args[2].v or it.F
    if src == dst:
        return Val(Type(FLOAT, dst), x)
    return Val(Type(FLOAT, dst), it.b.float_convert(src, dst, rm, x))


def _p_fma_into(it, node, args):
    rm = it.rounding(args[0], node.args[0], "fma_into")
    if args[4].kind != FORMAT:
        raise it.err(node.args[4], "fma_into's last argument must be a format (f16, bf16, f32, f64)")
    src, xs = it.floats(args[1:4], node.args[1:4], "fma_into")
    dst = args[4].v or it.F
    if src == dst:
        return Val(Type(FLOAT, dst), it.b.float_arith(dst, "fma", rm, xs, 0))
    if dst.width > src.width:
        raise it.err(node.args[4], f"fma_into rounds into a narrower format; {dst.name} is wider than {src.name}")
    return Val(Type(FLOAT, dst), it.b.float_fma_into(src, dst, rm, xs))


def _p_frexp_exp(it, node, args):
    fmt, (x,) = it.floats(args, node.args, "frexp_exp")
    return Val(T_INT, it.b.float_frexp_exp(fmt, x))


def _p_bit(it, node, args):
    (n,) = it.ints(args[:1], node.args[:1], "bit")
    if args[1].kind != NUM:
        raise it.err(node.args[1], "bit's second argument must be a literal bit index")
    i = it.num_to_int(args[1], node.args[1])
    if not 0 <= i < 32:
        raise it.err(node.args[1], f"bit index {i} is outside 0..31")
    if isinstance(n, int):
        return Val(T_BOOL, bool((n >> i) & 1))
    return Val(T_BOOL, it.b.int_bit(n, i))


def _prim(name, signature, doc, lo, hi, impl):
    return Primitive(name, signature, doc, lo, hi, impl)


PRIMITIVES: dict[str, Primitive] = {p.name: p for p in [
    _prim("is_nan", "is_nan(x) -> bool", "x is a NaN (quiet or signalling)", 1, 1, _test("nan")),
    _prim("is_snan", "is_snan(x) -> bool", "x is a signalling NaN", 1, 1, _test("snan")),
    _prim("is_inf", "is_inf(x) -> bool", "x is +-infinity", 1, 1, _test("inf")),
    _prim("is_zero", "is_zero(x) -> bool", "x is +-0", 1, 1, _test("zero")),
    _prim("is_subnormal", "is_subnormal(x) -> bool", "x is non-zero with a zero exponent field (the manuals' DENORM)",
          1, 1, _test("subnormal")),
    _prim("is_normal", "is_normal(x) -> bool", "x is finite, non-zero and not subnormal", 1, 1, _test("normal")),
    _prim("is_finite", "is_finite(x) -> bool", "x is neither infinite nor NaN", 1, 1, _test("finite")),
    _prim("is_neg", "is_neg(x) -> bool", "x's sign bit is set (also for -0 and NaNs)", 1, 1, _test("neg")),
    _prim("exponent", "exponent(x) -> int", "the biased exponent field of x (0 for zeros and subnormals, "
          "all ones for Inf/NaN), as in the AMD manuals", 1, 1, _p_exponent),
    _prim("same", "same(a, b) -> bool", "a and b have identical bit patterns", 2, 2, _p_same),
    _prim("quiet", "quiet(x) -> float", "x with the quiet bit set if x is a NaN, else x", 1, 1,
          _unary_float("float_quiet", "quiet")),
    _prim("flush", "flush(x) -> float", "a subnormal x becomes zero of the same sign; others unchanged", 1, 1,
          _unary_float("float_flush", "flush")),
    _prim("abs", "abs(x) -> float | int", "x with the sign bit cleared (NaNs too); for ints the magnitude", 1, 1, _p_abs),
    _prim("copysign", "copysign(x, y) -> float", "x's magnitude with y's sign bit", 2, 2, _p_copysign),
    _prim("with_sign", "with_sign(x, negative) -> float", "x's magnitude with the sign bit set iff negative", 2, 2,
          _p_with_sign),
    _prim("from_bits", "from_bits(pattern[, format]) -> float", "the float with this literal bit pattern "
          "(format defaults to the body's)", 1, 2, _p_from_bits),
    _prim("add", "add(rm, a, b) -> float", "a + b rounded once in mode rm", 3, 3, _p_arith("add", 2)),
    _prim("sub", "sub(rm, a, b) -> float", "a - b rounded once in mode rm", 3, 3, _p_arith("sub", 2)),
    _prim("mul", "mul(rm, a, b) -> float", "a * b rounded once in mode rm", 3, 3, _p_arith("mul", 2)),
    _prim("div", "div(rm, a, b) -> float", "a / b rounded once in mode rm", 3, 3, _p_arith("div", 2)),
    _prim("fma", "fma(rm, a, b, c) -> float", "a * b + c rounded once in mode rm", 4, 4, _p_arith("fma", 3)),
    _prim("fma_scaled", "fma_scaled(rm, a, b, c, n) -> float", "(a * b + c) * 2**n rounded once in mode rm "
          "(V_DIV_FMAS's fused post-scale); an infinite a*b+c stays infinite", 5, 5, _p_fma_scaled),
    _prim("ldexp", "ldexp(x, n[, rm]) -> float", "x * 2**n rounded once (nearest-even unless rm is given); "
          "NaNs are quieted, zeros and infinities unchanged", 2, 3, _p_ldexp),
    _prim("cvt", "cvt(rm, x, format) -> float", "x converted to format (exact when widening, rounded in mode rm "
          "when narrowing)", 3, 3, _p_cvt),
    _prim("fma_into", "fma_into(rm, a, b, c, format) -> float", "a * b + c (floats of one format) rounded once "
          "in mode rm into a narrower format (V_FMA_MIXLO_F16: f32 operands, one rounding to f16); NaN rule "
          "as fma, then the NaN converted as cvt does", 5, 5, _p_fma_into),
    _prim("frexp_exp", "frexp_exp(x) -> int", "the e of x = m * 2**e with 0.5 <= |m| < 1 (subnormals "
          "normalised); 0 for zeros, infinities and NaNs", 1, 1, _p_frexp_exp),
    _prim("bit", "bit(n, i) -> bool", "bit i (a literal 0..31) of the int n's 32-bit two's complement pattern",
          2, 2, _p_bit),
    _prim("min", "min(a, b) -> int", "the smaller of two ints", 2, 2, _p_minmax("min")),
    _prim("max", "max(a, b) -> int", "the larger of two ints", 2, 2, _p_minmax("max")),
]}


def _fconst(bits_of: Callable[[Format], int]):
    def make(it: _Interp, fmt: Format) -> Val:
        return Val(Type(FLOAT, fmt), it.b.float_const(fmt, bits_of(fmt)))
    return make


def _iconst(value_of: Callable[[Format], int]):
    def make(it: _Interp, fmt: Format) -> Val:
        return Val(T_INT, value_of(fmt))
    return make


# Names whose value depends on the body's format.
_FORMAT_CONSTANTS: dict[str, Callable] = {
    "INF": _fconst(lambda f: f.inf),
    "MAX": _fconst(lambda f: f.max_finite),
    "MIN_NORMAL": _fconst(lambda f: f.min_normal),
    "MIN_SUBNORMAL": _fconst(lambda f: f.min_subnormal),
    "QNAN": _fconst(lambda f: f.default_nan),
    "BIAS": _iconst(lambda f: f.bias),
    "MANT_BITS": _iconst(lambda f: f.mantissa_bits),
    "EXP_ALL_ONES": _iconst(lambda f: (1 << f.exponent_bits) - 1),
}

BUILTIN_CONSTANTS_DOC = {
    "INF": "+infinity of the body's format",
    "MAX": "largest finite value of the body's format",
    "MIN_NORMAL": "smallest positive normal value",
    "MIN_SUBNORMAL": "smallest positive subnormal value",
    "QNAN": "the format's default quiet NaN (spec/formats: nan.default); -QNAN flips its sign bit",
    "BIAS": "exponent bias (int)",
    "MANT_BITS": "number of stored fraction bits (int)",
    "EXP_ALL_ONES": "the all-ones exponent field of Inf/NaN (int)",
    "NEAREST_EVEN, TOWARD_ZERO, TOWARD_NEGATIVE, TOWARD_POSITIVE": "rounding modes",
    "f16, bf16, f32, f64": "formats (for cvt and from_bits)",
    "True, False": "bools",
}
