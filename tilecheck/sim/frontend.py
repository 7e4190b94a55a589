"""Parse whole PTX modules as compilers write them (nvcc 13, LLVM 19's NVPTX backend).

Module level: ``.version``, ``.target``, ``.address_size``, ``.file``, ``.pragma``, and functions:
``{.visible|.weak|.extern} .entry NAME(params)`` and ``.func (ret-params) NAME(params)`` with
bodies or as prototypes, and the performance directives after the parameters (``.reqntid``/``.maxntid``
kept in :attr:`Function.launch`). Parameters: ``.param .u64 name``, ``.param .align 2 .b8 name[2]``,
``.param .u64 .ptr .global .align 1 name`` (pointer parameters, as nvcc writes them for sm_100 and
Triton for every target). DWARF ``.section .debug_* { ... }`` blocks at module level are skipped.
Bodies: ``.reg`` declarations (``%r<N>`` ranges declare ``%r0 .. %r{N-1}``), nested ``{ ... }``
scopes (inline asm) whose ``.reg`` declarations are local to the scope (renamed here so they never
clash), labels, ``@p``/``@!p`` guards, ``.pragma`` (ignored: it does not change what the code
computes), ``.loc`` (each instruction keeps the last one as :attr:`Instr.source`, spelled with the
module's ``.file`` names, for reports), in-body ``.param`` declarations and direct ``call``s, whose callee
:meth:`PtxModule.function` inlines, and ``.local`` arrays (the stack frames of ``-G`` builds,
``.local .align 8 .b8 __local_depot0[16]``), which :attr:`Function.frames` lists.
``.shared`` variables, at module scope (:attr:`PtxModule.shared`) and at function scope (nvcc's
"demoted" ``__shared__`` arrays), are listed in :attr:`Function.shared` (module ones first);
``.extern .shared`` (dynamic shared memory, sized only at launch: Triton's ``global_smem``) is a
variable of no size placed after the others; the launch's size is the plan's
(:attr:`tilecheck.sim.plan.Plan.dynamic_shared`).
Comments ``//`` and ``/* */`` are blanked with their newlines kept, so every
statement keeps its line and column.

Anything else is an :class:`~tilecheck.sim.errors.UnsupportedPtxError` located ``FILE:line:col``
naming the construct: nothing is ever skipped silently. Parsing does not judge instructions; the
plan compiler (:mod:`tilecheck.sim.plan`) does.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace

from tilecheck.errors import Location
from tilecheck.sim.errors import PtxError, UnsupportedPtxError
from tilecheck.sim.names import NameNotFound, resolve
from tilecheck.sim.parser import Addr, Reg, Symbol, Vec, _operand, _split_operands, strip_comments
from tilecheck.sim.wide_int import CARRY, reads_carry, writes_carry
from tilecheck.spec.types import PTX_TYPES


@dataclass(frozen=True)
class Param:
    """A ``.param`` of a function: name, element type, alignment, array length (None: scalar)."""

    name: str
    ptx_type: str
    align: int | None
    array: int | None
    dynamic: bool = False  # ``.extern .shared ... name[]``: sized by the launch (its nbytes here: 0)

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        if self.dynamic:
            return 0
        t = PTX_TYPES.get(self.ptx_type)
        if self.ptx_type == "pred":
            width = 1
        elif t is not None:
            width = t.bits // 8
        else:  # a type outside the table (.b128): the digits of its name
            width = int(re.sub(r"\D", "", self.ptx_type) or 8) // 8
        return width * (self.array or 1)


@dataclass(frozen=True)
class Constant:
    """Initialized module data (``.global``/``.const NAME[N] = {...}``): libdevice's tables
    (``__cudart_i2opi_f``, ``__cudart_sin_cos_coeffs``), NVVM's reflection strings. Its bytes, little
    endian, zero-filled past the initializer; a kernel reads it, never writes it."""

    name: str
    space: str   # "global" or "const"
    align: int
    data: bytes
    line: int


def variable_layout(variables) -> tuple[dict, int]:
    """Where each of ``variables`` (``.local`` arrays, ``.shared`` variables) starts, one after
    another, each aligned as declared or to its element size (byte offsets), and the bytes they
    take together."""
    offsets, size = {}, 0
    # dynamic shared memory (sized at launch) follows every variable of a size, as CUDA places it
    for var in sorted(variables, key=lambda v: getattr(v, "dynamic", False)):
        if getattr(var, "dynamic", False):
            align = var.align or max(1, PTX_TYPES[var.ptx_type].bits // 8 if var.ptx_type in PTX_TYPES else 1)
            size = -(-size // align) * align
            offsets[var.name] = size
            continue
        align = var.align or max(1, var.nbytes // (var.array or 1))
        size = -(-size // align) * align
        offsets[var.name] = size
        size += var.nbytes
    return offsets, size


@dataclass(frozen=True)
class Instr:
    """One instruction: opcode with modifiers, operands, optional guard ``(reg, negated)``."""

    line: int
    col: int
    text: str
    opcode: str
    operands: tuple
    guard: tuple[str, bool] | None = None
    # the most recent ``.loc FILE LINE COL`` before it (nvcc -lineinfo, Triton): the file's number,
    # line and column, and for code inlined from a header the outermost plain ``.loc`` (or the
    # stated ``inlined_at``); :attr:`source`/:attr:`inlined_at` spell them with the ``.file`` names
    loc: tuple | None = None
    source: str | None = None      # "kernel.py:12:5"
    inlined_at: str | None = None  # "half_variants.cu:32:56" for an instruction of an inlined header


@dataclass(frozen=True)
class Label:
    """A label (branch target)."""

    line: int
    col: int
    name: str


@dataclass
class Function:
    """A ``.entry`` or ``.func``: parameters, return parameters, registers (name -> type), body."""

    name: str
    kind: str  # "entry" or "func"
    params: tuple[Param, ...]
    returns: tuple[Param, ...]
    registers: dict = field(default_factory=dict)
    body: tuple = ()
    line: int = 0
    col: int = 0
    defined: bool = True
    locals: tuple[Param, ...] = ()  # .param declared in the body (a call's arguments and result)
    frames: tuple[Param, ...] = ()  # .local arrays declared in the body (per-thread memory)
    launch: dict = field(default_factory=dict)  # ".reqntid"/".maxntid" -> (x, y, z) as the header states them
    shared: tuple[Param, ...] = ()  # .shared variables it can name: the module's, then its own (per CTA)
    constants: tuple[Constant, ...] = ()  # the initialized module data its instructions name


@dataclass
class PtxModule:
    """A parsed module: header directives and functions by name (in source order)."""

    path: str
    version: str | None
    target: str | None
    address_size: int | None
    functions: dict
    data: dict = field(default_factory=dict)  # module-level .global/.const variables: name -> Constant
    shared: tuple[Param, ...] = ()  # module-level .shared variables (every function may name them)

    def function(self, name: str) -> Function:
        """The defined function ``name`` designates: its PTX name, or its demangled or unqualified C++
        name where exactly one function answers to it (:func:`tilecheck.sim.names.resolve`); a usage
        error listing the defined ones (or the ambiguous candidates) otherwise."""
        defined = [f.name for f in self.functions.values() if f.defined]
        try:
            found = resolve(name, defined)
        except NameNotFound as exc:
            raise UnsupportedPtxError(exc.message, Location(self.path), unsupported=False) from None
        fn = self.functions[found]
        fn = _inline_calls(self, fn, (fn.name,), [0])
        return _with_module_data(self, _with_module_shared(self, fn))


_IDENT = r"[A-Za-z_$%][A-Za-z0-9_$]*"
# `.ptr [.space] [.align N]` after the type (kernel pointer parameters, as nvcc writes them for
# sm_100 and later) says what the pointer points at; the parameter's value is the same 64 bits
_PARAM = re.compile(r"^\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+"
                    r"(?:\.ptr\s+(?:\.(?:global|const|shared|local)\s+)?(?:\.align\s+\d+\s+)?)?"
                    r"(" + _IDENT + r")(?:\s*\[\s*(\d*)\s*\])?$")
_REG_RANGE = re.compile(r"^(%?[A-Za-z_$][A-Za-z0-9_$]*)<(\d+)>$")
_REG_NAME = re.compile(r"^%?[A-Za-z_$][A-Za-z0-9_$]*$")
_LABEL = re.compile(r"^([A-Za-z_$][A-Za-z0-9_$]*)\s*:$")
_GUARD = re.compile(r"^@(!?)(%?[A-Za-z_$][A-Za-z0-9_$]*)\s+")
_FUNC_HEAD = re.compile(r"((?:\.(?:visible|weak|extern)\s+)*)\.(entry|func)\b")
_IGNORED_BODY = (".loc", ".pragma")
_LOCAL_ARRAY = re.compile(r"^\.local\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(" + _IDENT + r")(?:\s*\[\s*(\d+)\s*\])?$")
_LINE_DIRECTIVE = re.compile(r"\.loc\s")
_PERF_DIRECTIVES = (".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".noreturn",
                    ".maxclusterrank", ".reqnctapercluster", ".explicitcluster")


class _Text:
    """Comment-free text with offset -> (line, column) mapping."""

    def __init__(self, text: str, path: str):
        self.raw = text
        self.clean = strip_comments(text)
        self.path = path
        self.starts = [0] + [i + 1 for i, c in enumerate(self.clean) if c == "\n"]

    def where(self, pos: int) -> Location:
        line = bisect.bisect_right(self.starts, pos)
        return Location(self.path, line, pos - self.starts[line - 1] + 1)

    def error(self, pos: int, message: str, unsupported: bool = True) -> UnsupportedPtxError:
        return UnsupportedPtxError(message, self.where(pos), unsupported=unsupported)


def parse_module(text: str, path: str = "<ptx>") -> PtxModule:
    """Parse a whole PTX module; raises UnsupportedPtxError (exit 2) at the first unsupported construct."""
    t = _Text(text, path)
    clean, n = t.clean, len(t.clean)
    pos = 0
    version = target = address_size = None
    functions: dict[str, Function] = {}
    data: dict[str, Location] = {}
    files: dict[int, str] = {}  # .file N "name" (Triton writes them after the functions)
    shared: list[Param] = []
    while True:
        while pos < n and clean[pos].isspace():
            pos += 1
        if pos >= n:
            break
        eol = clean.find("\n", pos)
        eol = n if eol < 0 else eol
        head = clean[pos:eol].strip()
        word = head.split()[0]
        if word == ".version":
            version = head.split()[1] if len(head.split()) > 1 else None
            pos = eol
        elif word == ".target":
            target = head[len(".target"):].strip()
            pos = eol
        elif word == ".address_size":
            try:
                address_size = int(head.split()[1])
            except (IndexError, ValueError):
                raise t.error(pos, f"malformed directive {head!r}", unsupported=False) from None
            pos = eol
        elif word in (".global", ".const") and _GLOBAL_DATA.match(clean, pos):
            # initialized module data: libdevice's tables, NVVM's reflection strings
            m = _GLOBAL_DATA.match(clean, pos)
            if m.group("name") in data:
                raise t.error(pos, f"module data {m.group('name')!r} declared twice", unsupported=False)
            data[m.group("name")] = _constant(t, pos, m)
            pos = m.end()
        elif word == ".shared" or (word == ".extern" and head.split()[1:2] == [".shared"]):
            decl, pos = _shared_decl(t, pos)
            if any(d.name == decl.name for d in shared):
                raise t.error(pos, f".shared variable {decl.name!r} declared twice", unsupported=False)
            shared.append(decl)
        elif word in (".file", ".pragma", ".section"):
            if word == ".file":
                fm = _FILE.match(clean, pos)
                if fm is None:
                    raise t.error(pos, f"malformed directive {head!r} (expected .file N \"name\")",
                                  unsupported=False)
                # `.file N "dir" "name"` (a directory first) reads as dir/name
                files[int(fm.group(1))] = "/".join(g for g in fm.group(2, 3) if g)
            if word == ".section":
                # DWARF sections (-G/-lineinfo output) describe, they do not compute: skip the block
                end = _matching_brace(t, clean.find("{", pos), pos)
                pos = end + 1
            else:
                semi = clean.find(";", pos)
                pos = eol if semi < 0 or semi > eol else semi + 1
        else:
            m = _FUNC_HEAD.match(clean, pos)
            if m is None:
                raise t.error(pos, f"unsupported module-level directive {word!r}")
            fn, pos = _parse_function(t, pos, m)
            if fn.name in functions and functions[fn.name].defined and fn.defined:
                raise t.error(pos, f"function {fn.name!r} defined twice", unsupported=False)
            if fn.defined or fn.name not in functions:
                functions[fn.name] = fn
    if not any(f.defined for f in functions.values()):
        raise UnsupportedPtxError("the module defines no .entry or .func", Location(path), unsupported=False)
    for fn in functions.values():
        fn.body = tuple(_with_source(item, files) for item in fn.body)
    return PtxModule(path, version, target, address_size, functions, data, tuple(shared))


_EXTERN_SHARED = re.compile(r"\.extern\s+\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(" + _IDENT + r")\s*\[\s*\]\s*;")
_SHARED = re.compile(r"\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(" + _IDENT + r")(?:\s*\[\s*(\d+)\s*\])?\s*;")


def _shared_decl(t: _Text, pos: int) -> tuple[Param, int]:
    """The ``.shared`` declaration at ``pos`` (module scope) and the position after it."""
    semi = t.clean.find(";", pos)
    text = " ".join(t.clean[pos:semi + 1 if semi >= 0 else len(t.clean)].split())
    return _shared_param(t, pos, text), (semi + 1 if semi >= 0 else len(t.clean))


def _shared_param(t: _Text, pos: int, text: str) -> Param:
    """A ``.shared [.align N] .type name[[count]];`` declaration as a :class:`Param`; ``.extern``
    (dynamic shared memory: its size is a launch argument, not in the module), initializers,
    unsized and multi-dimensional arrays are refused, located."""
    text = text if text.endswith(";") else text + ";"
    if text.startswith(".extern"):
        # dynamic shared memory (Triton's global_smem): its size is the launch's (Plan.dynamic_shared)
        m = _EXTERN_SHARED.fullmatch(text)
        if m is None or m.group(2) not in PTX_TYPES:
            raise t.error(pos, f"unsupported dynamic shared declaration {text!r} (.extern .shared [.align N] .type "
                               "name[]; only)")
        return Param(m.group(3), m.group(2), int(m.group(1)) if m.group(1) else None, None, dynamic=True)
    m = _SHARED.fullmatch(text)
    if m is None or m.group(2) not in PTX_TYPES:
        raise t.error(pos, f"unsupported shared declaration {text!r} (.shared [.align N] .type name[count]; only)")
    return Param(m.group(3), m.group(2), int(m.group(1)) if m.group(1) else None,
                 int(m.group(4)) if m.group(4) else None)


def _with_module_shared(module: "PtxModule", fn: Function) -> Function:
    """``fn`` with the module's ``.shared`` variables ahead of its own in :attr:`Function.shared`."""
    if not module.shared:
        return fn
    own = {p.name for p in fn.shared}
    clash = [p.name for p in module.shared if p.name in own]
    if clash:
        raise UnsupportedPtxError(f"function {fn.name} declares .shared {clash[0]!r}, which the module declares too",
                                  Location(module.path, fn.line, fn.col))
    return Function(fn.name, fn.kind, fn.params, fn.returns, fn.registers, fn.body, fn.line, fn.col, fn.defined,
                    fn.locals, fn.frames, fn.launch, module.shared + fn.shared)


def _with_module_data(module: "PtxModule", fn: Function) -> Function:
    """``fn`` with the initialized module data its instructions name in :attr:`Function.constants`."""
    named = {n for item in fn.body if isinstance(item, Instr) for n in _symbols(item.operands)}
    used = tuple(c for name, c in module.data.items() if name in named)
    return replace(fn, constants=used) if used else fn


_FILE = re.compile(r'\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')
_LOC = re.compile(r"^\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:\s*,\s*function_name\s+\S+?)?"
                  r"(?:\s*,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?\s*;?$")


def _with_source(item, files: dict):
    """``item`` with its ``.loc`` spelled ``FILE:LINE:COL`` in the ``.file`` names (an unnamed file's
    number where the module names none)."""
    if not isinstance(item, Instr) or item.loc is None:
        return item
    here, outer = item.loc

    def spell(triple):
        return f"{files.get(triple[0], f'file {triple[0]}')}:{triple[1]}:{triple[2]}"

    return replace(item, source=spell(here), inlined_at=spell(outer) if outer is not None else None)


def _symbols(operands) -> list[str]:
    """The identifiers an instruction's operands name (address bases included)."""
    out = []
    for op in operands:
        if isinstance(op, Symbol):
            out.append(op.name)
        elif isinstance(op, Addr) and isinstance(op.base, Symbol):
            out.append(op.base.name)
        elif isinstance(op, (Vec, tuple)):
            out += _symbols(op.items if isinstance(op, Vec) else op)
    return out


_GLOBAL_DATA = re.compile(r"\.(?P<space>global|const)\s+(?:\.align\s+(?P<align>\d+)\s+)?\.(?P<type>\w+)\s+"
                          r"(?P<name>" + _IDENT + r")(?:\s*\[\s*(?P<count>\d*)\s*\])?\s*=\s*"
                          r"(?P<init>\{[^{};]*\}|[^;{}]+)\s*;")
_INTEGER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uU]?")
_FLOAT_BITS = re.compile(r"0([fFdD])([0-9a-fA-F]+)")


def _constant(t: "_Text", pos: int, m: re.Match) -> Constant:
    """The :class:`Constant` a matched ``.global``/``.const`` declaration with an initializer
    declares: integers (decimal, hex, octal) and ``0f``/``0d`` float bit patterns of its element
    type, little endian; anything else (an address, ``generic(sym)``, a nested brace) is refused,
    located."""
    type_, count = m.group("type"), m.group("count")
    t_info = PTX_TYPES.get(type_)
    if t_info is None or type_ == "pred" or t_info.bits % 8:
        raise t.error(pos, f"module data {m.group('name')!r}: unsupported element type .{type_}")
    width = t_info.bits // 8
    init = m.group("init").strip()
    items = [x.strip() for x in init.strip("{}").split(",")] if init.startswith("{") else [init]
    if items == [""]:
        items = []
    n = int(count) if count else len(items) if init.startswith("{") else 1
    if len(items) > n:
        raise t.error(pos, f"module data {m.group('name')!r}: {len(items)} initializers for {n} elements",
                      unsupported=False)
    out = bytearray()
    for item in items:
        fb = _FLOAT_BITS.fullmatch(item)
        if fb and {"f": 4, "d": 8}[fb.group(1).lower()] == width:
            value = int(fb.group(2), 16)
        elif _INTEGER.fullmatch(item):
            digits = item.rstrip("uU")
            value = int(digits, 8) if re.fullmatch(r"[+-]?0[0-7]+", digits) else int(digits, 0)
        else:
            raise t.error(pos, f"module data {m.group('name')!r}: unsupported initializer {item!r} (integers and "
                               f"0f/0d bit patterns of .{type_} only)")
        out += (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    out += bytes(width * n - len(out))
    return Constant(m.group("name"), m.group("space"), int(m.group("align") or width), bytes(out),
                    t.where(pos).line)


def _matching_brace(t: _Text, open_pos: int, start: int) -> int:
    if open_pos < 0:
        raise t.error(start, "expected '{'", unsupported=False)
    depth = 0
    for i in range(open_pos, len(t.clean)):
        c = t.clean[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    raise t.error(open_pos, "unterminated '{'", unsupported=False)


def _params(t: _Text, start: int, close: int, seen: set | None = None) -> tuple[Param, ...]:
    """The parameters declared between ``start`` and ``close``; ``seen``: names declared before
    (a .func's return parameters), each name declared once (ptxas: "Duplicate definition")."""
    out = []
    seen = set() if seen is None else seen
    offset = start
    for part in t.clean[start:close].split(","):
        text = " ".join(part.split())
        lead = len(part) - len(part.lstrip())
        where = offset + lead
        offset += len(part) + 1
        if not text:
            continue
        m = _PARAM.match(text)
        if m is None:
            raise t.error(where, f"unsupported parameter declaration {text!r}")
        array = None
        if m.group(4) is not None:
            if not m.group(4):
                raise t.error(where, f"unsupported unsized parameter array {text!r}")
            array = int(m.group(4))
        if m.group(3) in seen:
            raise t.error(where, f"parameter {m.group(3)!r} declared twice", unsupported=False)
        seen.add(m.group(3))
        out.append(Param(m.group(3), m.group(2), int(m.group(1)) if m.group(1) else None, array))
    return tuple(out)


def _paren(t: _Text, pos: int) -> tuple[int, int]:
    """(index after '(', index of the matching ')') for the '(' at or after pos."""
    while pos < len(t.clean) and t.clean[pos].isspace():
        pos += 1
    if pos >= len(t.clean) or t.clean[pos] != "(":
        raise t.error(pos, "expected '('", unsupported=False)
    close = t.clean.find(")", pos)
    if close < 0:
        raise t.error(pos, "unterminated '('", unsupported=False)
    return pos + 1, close


def _parse_function(t: _Text, pos: int, m) -> tuple[Function, int]:
    clean = t.clean
    linkage = m.group(1).split()
    kind = m.group(2)
    head_pos = pos
    p = m.end()
    returns: tuple[Param, ...] = ()
    while p < len(clean) and clean[p].isspace():
        p += 1
    if kind == "func" and clean[p] == "(":
        a, b = _paren(t, p)
        returns = _params(t, a, b)
        p = b + 1
    nm = re.compile(r"\s*(" + _IDENT + r")").match(clean, p)
    if nm is None:
        raise t.error(p, "expected a function name", unsupported=False)
    name = nm.group(1)
    p = nm.end()
    params: tuple[Param, ...] = ()
    rest = clean[p:].lstrip()
    if rest.startswith("("):
        a, b = _paren(t, p)
        params = _params(t, a, b, {r.name for r in returns})
        p = b + 1
    # performance directives up to '{' (a body) or ';' (a prototype)
    brace, semi = clean.find("{", p), clean.find(";", p)
    if semi >= 0 and (brace < 0 or semi < brace):
        launch = _check_directives(t, p, semi)
        where = t.where(head_pos)
        return (Function(name, kind, params, returns, {}, (), where.line, where.column, defined=False, launch=launch),
                semi + 1)
    if brace < 0:
        raise t.error(head_pos, f"function {name} has no body", unsupported=False)
    if ".extern" in linkage:
        raise t.error(head_pos, f".extern function {name} has a body", unsupported=False)
    launch = _check_directives(t, p, brace)
    end = _matching_brace(t, brace, head_pos)
    registers, body = _parse_body(t, brace + 1, end)
    locals_ = registers.pop(_LOCAL_PARAM, ())
    frames = registers.pop(_LOCAL_FRAME, ())
    shared = registers.pop(_SHARED_VARS, ())
    where = t.where(head_pos)
    return (Function(name, kind, params, returns, registers, tuple(body), where.line, where.column, locals=locals_,
                     frames=frames, launch=launch, shared=shared), end + 1)


_LAUNCH = re.compile(r"\s*(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


def _check_directives(t: _Text, start: int, end: int) -> dict:
    """Check the performance directives between a function's parameters and its body; returns
    the block dimensions ``.reqntid``/``.maxntid`` state (``{".reqntid": (128, 1, 1)}``)."""
    launch = {}
    text = t.clean[start:end]
    for dm in re.finditer(r"\.\w+", text):
        if dm.group(0) not in _PERF_DIRECTIVES:
            raise t.error(start + dm.start(), f"unsupported function directive {dm.group(0)!r}")
        if dm.group(0) in (".reqntid", ".maxntid"):
            vm = _LAUNCH.match(text, dm.end())
            if vm is None or int(vm.group(1)) == 0:
                raise t.error(start + dm.start(), f"malformed directive {dm.group(0)!r} (expected 1 to 3 positive "
                                                  "block dimensions)", unsupported=False)
            dims = tuple(int(g) if g is not None else 1 for g in vm.groups())
            if 0 in dims:
                raise t.error(start + dm.start(), f"malformed directive {dm.group(0)!r}: a zero block dimension",
                              unsupported=False)
            launch[dm.group(0)] = dims
    return launch


def _parse_body(t: _Text, start: int, end: int):
    """Registers (unique name -> type) and the body statements of one function."""
    clean = t.clean
    registers: dict[str, str] = {}
    scopes: list[dict[str, str]] = [{}]  # innermost last: declared name -> unique name
    counter = [0]
    body: list = []
    scope_ids = [0]    # the open scopes' numbers, innermost last (labels are scoped like registers)
    paths: list = []   # per body item: the scope numbers it stands in
    i = start
    buf = None
    depth = 0
    loc = None  # the current .loc: ((file, line, col), the outermost line it is inlined at or None)
    parents: dict = {}  # an inlined .loc's (file, line, col) -> the one it is inlined at
    while i < end:
        c = clean[i]
        if buf is None:
            if c.isspace():
                i += 1
                continue
            if c == "{":
                scopes.append({})
                counter[0] += 1
                scope_ids.append(counter[0])
                i += 1
                continue
            if c == "}":
                if len(scopes) == 1:
                    raise t.error(i, "unbalanced '}'", unsupported=False)
                scopes.pop()
                scope_ids.pop()
                i += 1
                continue
            if _LINE_DIRECTIVE.match(clean, i):
                # `.loc FILE LINE COL[, function_name ..., inlined_at ...]` ends at the end of its line,
                # with no ';' (nvcc -lineinfo): read as a statement up to the next ';' it would
                # swallow the instruction that follows
                nl = clean.find("\n", i, end)
                nl = end if nl < 0 else nl
                text = " ".join(clean[i:nl].rstrip().rstrip(";").split())
                lm = _LOC.match(text)
                if lm is None:
                    raise t.error(i, f"malformed directive {text[:60]!r} (expected .loc FILE LINE COL)",
                                  unsupported=False)
                here = tuple(int(g) for g in lm.group(1, 2, 3))
                if lm.group(4) is None:
                    loc = (here, None)
                else:
                    # nvcc writes an inlining chain one link a line (`hpp:2725 inlined_at hpp:224`,
                    # `hpp:224 inlined_at cu:22`): follow the links seen so far to the user's line
                    at = tuple(int(g) for g in lm.group(4, 5, 6))
                    parents[here] = at
                    seen = {here}
                    while at in parents and at not in seen:
                        seen.add(at)
                        at = parents[at]
                    loc = (here, at)
                i = nl
                continue
            buf = i
            depth = 0
        if c == ":" and depth == 0:
            lm = _LABEL.match(clean[buf:i + 1].strip())
            if lm:
                where = t.where(buf)
                body.append(Label(where.line, where.column, lm.group(1)))
                paths.append(tuple(scope_ids))
                buf = None
                i += 1
                continue
        if c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
        elif c == ";" and depth == 0:
            text = " ".join(clean[buf:i].split())
            before = len(body)
            _statement(t, buf, text, registers, scopes, counter, body)
            if loc is not None:
                body[before:] = [replace(b, loc=loc) if isinstance(b, Instr) else b for b in body[before:]]
            paths.extend([tuple(scope_ids)] * (len(body) - before))
            buf = None
        i += 1
    if buf is not None and clean[buf:end].strip():
        raise t.error(buf, f"statement without ';': {clean[buf:end].strip()[:60]!r}", unsupported=False)
    if len(scopes) != 1:
        raise t.error(end, "unbalanced '{'", unsupported=False)
    if any(isinstance(b, Instr) and (writes_carry(b.opcode) or reads_carry(b.opcode)) for b in body):
        registers[CARRY] = "pred"  # the condition code's carry flag, a register like the others from here on
    return registers, _scoped_labels(t, body, paths)


def _scoped_labels(t: _Text, body: list, paths: list) -> list:
    """``body`` with each label that several scopes define renamed apart (``L1#s3``: the scope's
    number), and each branch to it naming the one of the innermost scope around the branch that
    defines it: PTX scopes labels like registers, so inline asm inlined twice (CUTLASS's
    ``LAB_WAIT:`` in braces) defines the same label in sibling scopes, which ptxas accepts. A label
    defined twice in one scope is an error, as ptxas says ("Duplicate definition of label")."""
    defs: dict[str, list] = {}
    for item, path in zip(body, paths):
        if isinstance(item, Label):
            for other, first in defs.get(item.name, ()):
                if other == path:
                    raise UnsupportedPtxError(f"label {item.name!r} defined twice in one scope (first at line "
                                              f"{first.line})", Location(t.path, item.line, item.col),
                                              unsupported=False)
            defs.setdefault(item.name, []).append((path, item))
    shared = {name for name, places in defs.items() if len(places) > 1}
    if not shared:
        return body

    def renamed(name: str, path: tuple) -> str:
        inner = [p for p, _ in defs[name] if path[:len(p)] == p]
        return f"{name}#s{max(inner, key=len)[-1]}" if inner else name  # (none: refused as unknown later)

    out = []
    for item, path in zip(body, paths):
        if isinstance(item, Label) and item.name in shared:
            item = replace(item, name=f"{item.name}#s{path[-1]}")
        elif isinstance(item, Instr) and any(isinstance(o, Symbol) and o.name in shared for o in item.operands):
            item = replace(item, operands=tuple(Symbol(renamed(o.name, path)) if isinstance(o, Symbol)
                                                and o.name in shared else o for o in item.operands))
        out.append(item)
    return out


def _statement(t: _Text, pos: int, text: str, registers, scopes, counter, body) -> None:
    where = t.where(pos)
    if text.startswith("."):
        word = text.split()[0]
        if word == ".reg" or word.startswith(".reg."):
            m = re.match(r"^\.reg\s*(?:\.align\s+\d+\s*)?\.(\w+)\s+(.*)$", text)
            if m is None or m.group(1) in ("v2", "v4", "v8"):
                raise t.error(pos, f"unsupported register declaration {text!r}")
            rtype = m.group(1)
            for item in m.group(2).split(","):
                item = item.strip()
                rng = _REG_RANGE.match(item)
                names = ([f"{rng.group(1)}{k}" for k in range(int(rng.group(2)))] if rng else
                         [item] if _REG_NAME.match(item) else None)
                if names is None:
                    raise t.error(pos, f"bad register name {item!r}", unsupported=False)
                for name in names:
                    if name in scopes[-1]:  # ptxas: "Duplicate definition of variable"
                        raise t.error(pos, f"register {name} declared twice in one scope ({text!r}); ptxas refuses "
                                           "it (a nested { } scope may declare it again)", unsupported=False)
                    unique = name
                    if len(scopes) > 1:  # a scope-local register: a name no other scope can spell
                        counter[0] += 1
                        unique = f"{name}#{counter[0]}"
                    scopes[-1][name] = unique
                    registers[unique] = rtype
            return
        if word in _IGNORED_BODY:
            return  # debug line info and pragmas do not change what the code computes
        if word == ".param":
            # a call's argument or result ("callseq" scopes): local to its scope, renamed like .reg
            m = _PARAM.match(text)
            if m is None:
                raise t.error(pos, f"unsupported parameter declaration {text!r}")
            counter[0] += 1
            unique = f"{m.group(3)}#{counter[0]}"
            scopes[-1][("param", m.group(3))] = unique
            array = int(m.group(4)) if m.group(4) else None
            registers[_LOCAL_PARAM] = registers.get(_LOCAL_PARAM, ()) + (
                Param(unique, m.group(2), int(m.group(1)) if m.group(1) else None, array),)
            return
        if word == ".local":
            # a per-thread array (nvcc -G's stack frame): named at function level, never in a scope
            m = _LOCAL_ARRAY.match(text)
            if m is None or m.group(2) not in PTX_TYPES or len(scopes) > 1:
                raise t.error(pos, f"unsupported local declaration {text!r}")
            registers[_LOCAL_FRAME] = registers.get(_LOCAL_FRAME, ()) + (
                Param(m.group(3), m.group(2), int(m.group(1)) if m.group(1) else None,
                      int(m.group(4)) if m.group(4) else None),)
            return
        if word == ".shared" or (word == ".extern" and text.split()[1:2] == [".shared"]):
            # per-CTA memory (nvcc's demoted __shared__ arrays): static storage, so named at
            # function level whatever the scope
            decl = _shared_param(t, pos, text)
            if any(p.name == decl.name for p in registers.get(_SHARED_VARS, ())):
                raise t.error(pos, f".shared variable {decl.name!r} declared twice", unsupported=False)
            registers[_SHARED_VARS] = registers.get(_SHARED_VARS, ()) + (decl,)
            return
        raise t.error(pos, f"unsupported directive {word!r}")
    guard = None
    if re.fullmatch(r"@!?\S+", text):  # (ptxas: "syntax error")
        raise t.error(pos, f"a guard with no instruction after it ({text!r})", unsupported=False)
    gm = _GUARD.match(text)
    body_text = text
    if gm:
        guard = (_resolve_name(gm.group(2), scopes), gm.group(1) == "!")
        body_text = text[gm.end():]
    parts = body_text.split(None, 1)
    if not parts:  # (ptxas: "syntax error")
        raise t.error(pos, "an empty statement (a ';' with no instruction before it)", unsupported=False)
    opcode = parts[0]
    if opcode.split(".")[0] == "call":
        body.append(_call(t, pos + (gm.end() if gm else 0), body_text, guard, scopes))
        return
    try:
        operands = tuple(_operand(o, where.line, t.path) for o in _split_operands(parts[1])) if len(parts) > 1 else ()
    except PtxError as exc:
        raise t.error(pos, exc.message, unsupported=False) from None
    operands = tuple(_resolve(op, scopes) for op in operands)
    op_pos = pos + (gm.end() if gm else 0)
    op_where = t.where(op_pos)
    body.append(Instr(op_where.line, op_where.column, text, opcode, operands, guard))


_LOCAL_FRAME = " frames"  # the body's .local arrays, kept like _LOCAL_PARAM while parsing
_SHARED_VARS = " shared"  # the body's .shared variables, likewise
_LOCAL_PARAM = " locals"  # the body's .param declarations, kept among the registers while parsing (no
# register name has a space) and moved to Function.locals
_CALL = re.compile(r"^(call(?:\.uni)?)\s+(?:\(([^()]*)\)\s*,\s*)?(" + _IDENT + r")\s*(?:,\s*\(([^()]*)\))?$")


def _call(t: _Text, pos: int, text: str, guard, scopes) -> Instr:
    """``call{.uni} (results), NAME, (arguments)`` to a function of the module; indirect calls
    (through a register, with a prototype) are unsupported."""
    m = _CALL.match(text)
    if m is None or m.group(3).startswith("%"):
        raise t.error(pos, f"unsupported call {text[:80]!r} (direct calls to a function of the module only)")
    names = [tuple(_resolve_param(x.strip(), scopes) for x in (g or "").split(",") if x.strip())
             for g in (m.group(2), m.group(4))]
    where = t.where(pos)
    return Instr(where.line, where.column, text, m.group(1), (names[0], Symbol(m.group(3)), names[1]), guard)


def _inline_calls(module: "PtxModule", fn: Function, stack: tuple, counter: list) -> Function:
    """``fn`` with every call replaced by the callee's body: its registers, labels and local
    parameters renamed apart, its parameters read from the call's argument parameters, its
    return parameter written to the call's result parameter, ``ret`` a branch past the body."""
    if not any(isinstance(i, Instr) and i.opcode.startswith("call") for i in fn.body):
        return fn
    locals_ = fn.locals
    frames = fn.frames
    shared = fn.shared
    registers = dict(fn.registers)
    body: list = []
    for item in fn.body:
        if not (isinstance(item, Instr) and item.opcode.startswith("call")):
            body.append(item)
            continue
        results, callee_sym, args = item.operands
        here = Location(module.path, item.line, item.col)
        if item.guard is not None:
            raise UnsupportedPtxError("unsupported predicated call", here)
        callee = module.functions.get(callee_sym.name)
        if callee is None or not callee.defined:
            raise UnsupportedPtxError(f"call to {callee_sym.name!r}, which the module does not define", here)
        if callee.name in stack:
            raise UnsupportedPtxError(f"recursive call to {callee.name!r}", here)
        if len(args) != len(callee.params) or len(results) != len(callee.returns):
            raise UnsupportedPtxError(f"call to {callee.name!r} with {len(args)} argument(s) and {len(results)} "
                                      f"result(s); it takes {len(callee.params)} and returns {len(callee.returns)}",
                                      here, unsupported=False)
        inner = _inline_calls(module, callee, stack + (callee.name,), counter)
        counter[0] += 1
        tag = f"@{counter[0]}"
        regs = {name: name + tag if name != CARRY else name for name in inner.registers}  # one flag per thread
        names = {p.name: a for p, a in zip(inner.params, args)}
        names.update({p.name: r for p, r in zip(inner.returns, results)})
        names.update({p.name: p.name + tag for p in inner.locals + inner.frames})
        names.update({i.name: i.name + tag for i in inner.body if isinstance(i, Label)})
        end = "$return" + tag
        registers.update({regs[k]: v for k, v in inner.registers.items()})
        locals_ += tuple(Param(p.name + tag, p.ptx_type, p.align, p.array) for p in inner.locals)
        frames += tuple(Param(p.name + tag, p.ptx_type, p.align, p.array) for p in inner.frames)
        # a callee's .shared variables are static, one per CTA however many calls: not renamed
        for p in inner.shared:
            have = [q for q in shared if q.name == p.name]
            if have and have[0] != p:
                raise UnsupportedPtxError(f"called function {callee.name} declares .shared {p.name!r}, which its "
                                          "caller declares differently", here)
            shared += () if have else (p,)

        def rename(op):
            if isinstance(op, Reg):
                return Reg(regs.get(op.name, op.name))
            if isinstance(op, Symbol):
                return Symbol(names.get(op.name, op.name))
            if isinstance(op, Vec):  # (the PTX spelling goes along: messages show it)
                return Vec(tuple(rename(o) for o in op.items), op.source)
            if isinstance(op, Addr):
                return Addr(rename(op.base), op.offset, op.source)
            return op

        for sub in inner.body:
            if isinstance(sub, Label):
                body.append(Label(sub.line, sub.col, names[sub.name]))
                continue
            guard = (regs.get(sub.guard[0], sub.guard[0]), sub.guard[1]) if sub.guard else None
            # replace(): the callee's instructions keep their source lines
            if sub.opcode == "ret" or sub.opcode.startswith("ret."):
                body.append(replace(sub, opcode="bra.uni", operands=(Symbol(end),), guard=guard))
            else:
                body.append(replace(sub, operands=tuple(rename(o) for o in sub.operands), guard=guard))
        body.append(Label(item.line, item.col, end))
    return Function(fn.name, fn.kind, fn.params, fn.returns, registers, tuple(body), fn.line, fn.col, fn.defined,
                    locals_, frames, fn.launch, shared)


def _resolve_param(name: str, scopes) -> str:
    """The unique name of a parameter declared in the body (a call's), or ``name`` itself."""
    for scope in reversed(scopes):
        if ("param", name) in scope:
            return scope[("param", name)]
    return name


def _resolve_name(name: str, scopes) -> str:
    for scope in reversed(scopes):
        if name in scope:
            return scope[name]
    return name


def _resolve(op, scopes):
    """Map scope-local register names to their unique names; bare identifiers declared as registers
    (``low``, ``high`` in nvcc's inline asm) become registers."""
    if isinstance(op, Reg):  # `%p|%q` (setp's two destinations): each name resolved
        return Reg("|".join(_resolve_name(part, scopes) for part in op.name.split("|")))
    if isinstance(op, Symbol):
        param = _resolve_param(op.name, scopes)
        if param != op.name:
            return Symbol(param)
        resolved = _resolve_name(op.name, scopes)
        return Reg(resolved) if resolved != op.name or any(op.name in s for s in scopes) else op
    if isinstance(op, Vec):  # (the PTX spelling goes along: messages show it)
        return Vec(tuple(_resolve(o, scopes) for o in op.items), op.source)
    if isinstance(op, Addr):
        return Addr(_resolve(op.base, scopes), op.offset, op.source)
    return op
