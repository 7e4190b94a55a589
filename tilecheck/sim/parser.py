"""Parse the PTX subset tilecheck emits (and simple hand-written kernels like it).

Module level: comments, ``.version``, ``.target``, ``.address_size`` and ``.entry`` kernels
(optionally ``.visible``) with ``.param`` lists and the ``.reqntid``/``.maxntid`` directives.
Kernel bodies: ``.reg`` declarations (``%r<8>`` ranges or lists), labels, and instructions with an
optional ``@%p`` / ``@!%p`` guard. Operands: registers, special registers (``%tid.x``), integer and
float immediates (``0f3F800000``, ``0d...``, hex, decimal), vectors ``{%r1, %r2}`` and addresses
``[%rd1+8]`` / ``[param_x]``. Anything else raises :class:`~tilecheck.sim.errors.PtxError` with
its line number. Parsing does not judge instructions; :mod:`tilecheck.sim.machine` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from tilecheck.sim.errors import PtxError

SPECIAL_REGISTERS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%warpsize")
KNOWN_SPECIALS = frozenset([f"{r}.{c}" for r in ("%tid", "%ntid", "%ctaid", "%nctaid") for c in "xyz"]
                           + ["%laneid", "%warpid", "%nwarpid", "%warpsize"])
"""The special registers the simulator provides."""


class Operand:
    """Base of the operand nodes below: a node is shown as the PTX it stands for.

    ``str(op)`` is its PTX spelling (:func:`ptx_text`) and ``repr(op)`` that spelling quoted, so a
    message that formats an operand (``f"got {op!r}"``) names PTX text, ``'{ %rs1 }'``, as the
    messages that quote source text do, never ``Vec(items=(Reg(name='%rs1'),))``. The fields stay
    what code reads; only the display is PTX.
    """

    __slots__ = ()

    def __str__(self) -> str:
        return ptx_text(self)

    def __repr__(self) -> str:
        return repr(ptx_text(self))


@dataclass(frozen=True, repr=False)
class Reg(Operand):
    """A register operand (``%r1``, ``%p2``)."""

    name: str


@dataclass(frozen=True, repr=False)
class Special(Operand):
    """A special register (``%tid.x``, ``%laneid``)."""

    name: str


@dataclass(frozen=True, repr=False)
class Imm(Operand):
    """An immediate: ``value`` is an int for integers, the bit pattern for ``0f``/``0d`` floats
    (``float_bits`` 32 or 64), or a Python float for decimal float literals (``float_bits`` 0)."""

    text: str
    value: object
    float_bits: int | None = None


@dataclass(frozen=True, repr=False)
class Vec(Operand):
    """A vector operand ``{a, b, ...}``; ``source`` is its spelling in the PTX (empty: spelled from
    the items), kept for messages and ignored by comparisons."""

    items: tuple
    source: str = field(default="", compare=False)


@dataclass(frozen=True, repr=False)
class Addr(Operand):
    """An address ``[base+offset]``; ``base`` is a :class:`Reg` or a :class:`Symbol`; ``source`` as
    for :class:`Vec`."""

    base: object
    offset: int
    source: str = field(default="", compare=False)


@dataclass(frozen=True, repr=False)
class Symbol(Operand):
    """A label or parameter name."""

    name: str


# Suffixes the front end appends to make names unique (`%r1#3`: a register local to an inline-asm
# scope; `%r1@2`: a callee's register after inlining). No PTX identifier contains `#` or `@`, so
# removing them gives back the name the PTX spells.
_RENAMED = re.compile(r"[#@]\d+")


def ptx_text(op) -> str:
    """The PTX spelling of an operand node (for messages): ``%r1``, ``%tid.x``, ``0f3F800000``,
    ``{ %rs1 }``, ``[%rd1+8]``, ``param_x``; names the front end made unique are shown as the PTX
    spells them. A tuple (a call's parameter list) is ``(a, b)``; anything else is ``str(op)``.
    """
    if isinstance(op, (Reg, Special, Symbol)):
        return _RENAMED.sub("", op.name)
    if isinstance(op, Imm):
        return op.text
    if isinstance(op, Vec):
        return op.source or "{" + ", ".join(ptx_text(item) for item in op.items) + "}"
    if isinstance(op, Addr):
        if op.source:
            return op.source
        return f"[{ptx_text(op.base)}{op.offset:+d}]" if op.offset else f"[{ptx_text(op.base)}]"
    if isinstance(op, tuple):
        return "(" + ", ".join(ptx_text(item) for item in op) + ")"
    return str(op)


@dataclass(frozen=True)
class Statement:
    """One instruction (``opcode`` set) or label (``label`` set), with its 1-based source line."""

    line: int
    text: str
    opcode: str = ""
    operands: tuple = ()
    guard: tuple[str, bool] | None = None  # (predicate register, negated)
    label: str | None = None


@dataclass(frozen=True)
class KernelParamDecl:
    """A ``.param .u64 name`` of an entry."""

    name: str
    ptx_type: str
    line: int


@dataclass(frozen=True)
class Kernel:
    """One ``.entry``: parameters, register declarations, statements, labels, launch directives."""

    name: str
    params: tuple[KernelParamDecl, ...]
    registers: tuple[tuple[str, str], ...]  # (name, type) in declaration order
    statements: tuple[Statement, ...]
    reqntid: tuple[int, ...] | None
    maxntid: tuple[int, ...] | None
    line: int


@dataclass(frozen=True)
class Module:
    """A parsed PTX module."""

    version: str | None
    target: str | None
    address_size: int | None
    kernels: tuple[Kernel, ...]

    def kernel(self, name: str | None) -> Kernel:
        """The kernel called ``name`` (or the only one when ``name`` is None)."""
        if name is None:
            if len(self.kernels) != 1:
                raise PtxError(f"the module has {len(self.kernels)} kernels "
                               f"({', '.join(k.name for k in self.kernels)}); name one")
            return self.kernels[0]
        for k in self.kernels:
            if k.name == name:
                return k
        raise PtxError(f"no kernel {name!r} in the module (kernels: {', '.join(k.name for k in self.kernels)})")


_IDENT = r"[A-Za-z_$%][A-Za-z0-9_$]*"
_ENTRY = re.compile(r"(?:\.visible\s+|\.weak\s+)?\.entry\s+(" + _IDENT + r")\s*\(")
_PARAM = re.compile(r"^\.param\s+\.(\w+)\s+(" + _IDENT + r")$")
_REG_RANGE = re.compile(r"^(%?" + r"[A-Za-z_$][A-Za-z0-9_$]*)<(\d+)>$")
_REG_NAME = re.compile(r"^%?[A-Za-z_$][A-Za-z0-9_$]*$")
_LABEL = re.compile(r"^(" + r"[A-Za-z_$][A-Za-z0-9_$]*" + r")\s*:")
_GUARD = re.compile(r"^@(!?)(%?[A-Za-z_$][A-Za-z0-9_$]*)\s+")


def strip_comments(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments blanked out, newlines kept (line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(c if c == "\n" else " " for c in text[i:j]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def parse_ptx(text: str, source: str | None = None) -> Module:
    """Parse a PTX module (cached on the text). Raises :class:`PtxError` for unsupported syntax."""
    return _parse_cached(text, source)  # one cache key however the caller passes ``source``


@lru_cache(maxsize=64)
def _parse_cached(text: str, source: str | None) -> Module:
    clean = strip_comments(text)
    pos, n = 0, len(clean)
    version = target = address_size = None
    kernels = []
    while True:
        while pos < n and clean[pos].isspace():
            pos += 1
        if pos >= n:
            break
        line = _line_at(clean, pos)
        rest = clean[pos:]
        eol = clean.find("\n", pos)
        eol = n if eol < 0 else eol
        head = clean[pos:eol].strip()
        if head.startswith(".version"):
            version = head.split()[1] if len(head.split()) > 1 else None
            pos = eol
        elif head.startswith(".target"):
            target = head[len(".target"):].strip()
            pos = eol
        elif head.startswith(".address_size"):
            try:
                address_size = int(head.split()[1])
            except (IndexError, ValueError):
                raise PtxError(f"bad directive {head!r}", line, source) from None
            pos = eol
        else:
            match = _ENTRY.match(rest)
            if match is None:
                raise PtxError(f"unsupported module-level statement {head[:60]!r} "
                               "(the simulator reads .version, .target, .address_size and .entry kernels)",
                               line, source)
            kernel, pos = _parse_entry(clean, pos, match, source)
            kernels.append(kernel)
    if not kernels:
        raise PtxError("the module defines no .entry kernel", None, source)
    return Module(version, target, address_size, tuple(kernels))


def _parse_entry(clean: str, pos: int, match, source):
    name = match.group(1)
    line = _line_at(clean, pos)
    start = pos + match.end()
    close = clean.find(")", start)
    if close < 0:
        raise PtxError(f"unterminated parameter list of {name}", line, source)
    params = []
    offset = start
    for part in clean[start:close].split(","):
        text = " ".join(part.split())
        pline = _line_at(clean, offset)
        offset += len(part) + 1
        if not text:
            continue
        m = _PARAM.match(text)
        if m is None:
            raise PtxError(f"unsupported kernel parameter {text!r} (expected .param .<type> <name>)", pline, source)
        params.append(KernelParamDecl(m.group(2), m.group(1), pline))
    brace = clean.find("{", close)
    if brace < 0:
        raise PtxError(f"kernel {name} has no body", line, source)
    reqntid = maxntid = None
    for directive in re.split(r"(?=\.(?:reqntid|maxntid|minnctapersm|maxnreg|maxnctapersm)\b)",
                              clean[close + 1:brace].strip()):
        directive = directive.strip()
        if not directive:
            continue
        words = directive.split(None, 1)
        values = tuple(int(v) for v in words[1].replace(",", " ").split()) if len(words) > 1 else ()
        if words[0] == ".reqntid":
            reqntid = values
        elif words[0] == ".maxntid":
            maxntid = values
        elif words[0] not in (".minnctapersm", ".maxnreg", ".maxnctapersm"):
            raise PtxError(f"unsupported entry directive {directive!r}", _line_at(clean, close), source)
    depth, i = 0, brace
    while i < len(clean):
        if clean[i] == "{":
            depth += 1
        elif clean[i] == "}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    else:
        raise PtxError(f"kernel {name}: unterminated body", line, source)
    registers, statements = _parse_body(clean, brace + 1, i, source)
    return Kernel(name, tuple(params), tuple(registers), tuple(statements), reqntid, maxntid, line), i + 1


def _parse_body(clean: str, start: int, end: int, source):
    registers: list[tuple[str, str]] = []
    statements: list[Statement] = []
    buf_start = None
    depth = 0
    i = start
    while i < end:
        c = clean[i]
        if buf_start is None:
            if c.isspace():
                i += 1
                continue
            if re.match(r"\.loc\s", clean[i:i + 5]):
                # `.loc ...` ends at the end of its line, with no ';' (nvcc -lineinfo): it must not
                # swallow the instruction that follows
                nl = clean.find("\n", i, end)
                i = end if nl < 0 else nl
                continue
            buf_start = i
            if c == "{":
                raise PtxError("nested { } scopes are not supported", _line_at(clean, i), source)
        # a label ends at ':' when the text so far is a bare identifier
        if c == ":" and depth == 0 and _LABEL.match(clean[buf_start:i + 1].strip()):
            label = clean[buf_start:i].strip()
            statements.append(Statement(_line_at(clean, buf_start), label + ":", label=label))
            buf_start = None
            i += 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == ";" and depth == 0:
            text = " ".join(clean[buf_start:i].split())
            line = _line_at(clean, buf_start)
            _statement(text, line, registers, statements, source)
            buf_start = None
        i += 1
    if buf_start is not None and clean[buf_start:end].strip():
        raise PtxError(f"statement without ';': {clean[buf_start:end].strip()[:60]!r}",
                       _line_at(clean, buf_start), source)
    return registers, statements


def _statement(text: str, line: int, registers: list, statements: list, source) -> None:
    if text.startswith(".reg"):
        m = re.match(r"^\.reg\s+\.(\w+)\s+(.*)$", text)
        if m is None or m.group(1) in ("v2", "v4", "v8"):
            raise PtxError(f"unsupported register declaration {text!r}", line, source)
        rtype = m.group(1)
        for item in m.group(2).split(","):
            item = item.strip()
            rng = _REG_RANGE.match(item)
            if rng:
                registers.extend((f"{rng.group(1)}{k}", rtype) for k in range(int(rng.group(2))))
            elif _REG_NAME.match(item):
                registers.append((item, rtype))
            else:
                raise PtxError(f"bad register name {item!r}", line, source)
        return
    if text.startswith(".loc") or text.startswith(".pragma"):
        return  # debug line info and pragmas do not change what a kernel computes
    if text.startswith("."):
        raise PtxError(f"unsupported directive {text.split()[0]!r} in a kernel body", line, source)
    guard = None
    m = _GUARD.match(text)
    if m:
        guard = (m.group(2), m.group(1) == "!")
        text_body = text[m.end():]
    else:
        text_body = text
    parts = text_body.split(None, 1)
    opcode = parts[0]
    operands = tuple(_operand(o, line, source) for o in _split_operands(parts[1])) if len(parts) > 1 else ()
    statements.append(Statement(line, text, opcode, operands, guard))


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for c in text:
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur).strip())
    return out


_INT = re.compile(r"^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?$")
_FLOAT_HEX = re.compile(r"^([+-]?)0([fFdD])([0-9a-fA-F]+)$")
_FLOAT_DEC = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+[eE][+-]?\d+|\d+\.\d*[eE][+-]?\d+)$")


def _operand(text: str, line: int, source):
    if not text:
        raise PtxError("empty operand", line, source)
    if text.startswith("{"):
        if not text.endswith("}"):
            raise PtxError(f"bad vector operand {text!r}", line, source)
        return Vec(tuple(_operand(t, line, source) for t in _split_operands(text[1:-1])), text)
    if text.startswith("["):
        if not text.endswith("]"):
            raise PtxError(f"bad address operand {text!r}", line, source)
        inner = text[1:-1].replace(" ", "")
        m = re.match(r"^(%?[A-Za-z_$][A-Za-z0-9_$]*)(?:\+(-?\d+|-?0[xX][0-9a-fA-F]+)|-(\d+))?$", inner)
        if m is None:
            raise PtxError(f"unsupported address {text!r} (expected [reg], [reg+imm] or [param])", line, source)
        base_text = m.group(1)
        offset = int(m.group(2), 0) if m.group(2) else (-int(m.group(3)) if m.group(3) else 0)
        base = Reg(base_text) if base_text.startswith("%") else Symbol(base_text)
        return Addr(base, offset, text)
    if text.startswith("%"):
        head = text.split(".")[0]
        if head in SPECIAL_REGISTERS:
            if text not in KNOWN_SPECIALS:
                raise PtxError(f"unsupported special register {text!r}", line, source)
            return Special(text)
        if "." in text:
            raise PtxError(f"unknown special register {text!r}", line, source)
        return Reg(text)
    m = _FLOAT_HEX.match(text)
    if m:
        width = 32 if m.group(2) in "fF" else 64
        if len(m.group(3)) != width // 4:
            raise PtxError(f"float literal {text!r} needs {width // 4} hex digits", line, source)
        bits = int(m.group(3), 16)
        if m.group(1) == "-":
            bits ^= 1 << (width - 1)
        return Imm(text, bits, width)
    m = _INT.match(text)
    if m:
        body = m.group(2)
        if body.lower().startswith("0b"):
            value = int(body[2:], 2)
        elif body.lower().startswith("0x"):
            value = int(body, 16)
        elif len(body) > 1 and body.startswith("0"):
            value = int(body, 8)
        else:
            value = int(body)
        return Imm(text, -value if m.group(1) == "-" else value)
    if _FLOAT_DEC.match(text):
        return Imm(text, float(text), 0)
    if re.match(r"^[A-Za-z_$][A-Za-z0-9_$]*$", text):
        return Symbol(text)
    raise PtxError(f"cannot parse operand {text!r}", line, source)
