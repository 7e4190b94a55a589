"""AMDGCN assembly front end: the ``.s`` that ``llc -march=amdgcn`` and Triton (gfx942) write.

:func:`parse_asm` reads a whole file into an :class:`AsmModule`; every error is an
:class:`~tilecheck.amdgpu.asm_types.AsmSyntaxError` (a :class:`~tilecheck.errors.UsageError`, exit 2)
located ``FILE:line:col``. Nothing is executed or judged here.

=========================================  ========================================================
Source                                     Parsed into
=========================================  ========================================================
``.amdgcn_target "amdgcn-...--gfx942"``    ``AsmModule.target``, ``.processor``, ``.features``
``.amdhsa_code_object_version 5``          ``AsmModule.code_object_version``
``.globl F`` / ``.type F,@function``       ``Function.globl``; a ``.type``'d label starts a function
``F:`` ... ``.Lfunc_endN:``                ``Function.instructions`` (the body; ``.size F`` or the
                                           next function also end it)
``.LBB0_2:`` inside a body                 ``Function.labels``: name -> index of the next instruction
``.amdhsa_kernel F`` ... ``.end_...``      ``Function.descriptor``: ``{".amdhsa_kernarg_size": 288,
                                           ...}`` (ints; anything else kept as text)
``.amdgpu_metadata`` ... ``.end_...``      ``AsmModule.metadata`` (YAML), per kernel
                                           ``Function.metadata`` and ``Function.args``
``.set NAME, VALUE``                       ``AsmModule.symbols`` (LLVM 20+ writes register counts so)
instruction statements                     :class:`~tilecheck.amdgpu.asm_types.Instruction`: mnemonic,
                                           encoding suffix, typed operands, modifier dict, line/col
=========================================  ========================================================

Other directives (``.p2align``, ``.section``, ``.loc``, DWARF data ...) are skipped: they do not
change what the instructions compute. :func:`mnemonics` counts the instructions of a module.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import yaml

from tilecheck.amdgpu.asm_statement import parse_instruction
from tilecheck.amdgpu.asm_types import (AReg, AsmSyntaxError, FuncOperand, Instruction, Literal, Operand, SReg,
                                        Special, SrcMod, SymbolRef, TtmpReg, VReg, split_encoding)
from tilecheck.errors import Location, UsageError
from tilecheck.sources import read_source

__all__ = ["AsmModule", "Function", "KernelArg", "Instruction", "AsmSyntaxError", "parse_asm", "parse_asm_file",
           "parse_instruction", "mnemonics", "INVENTORY", "Operand", "VReg", "SReg", "AReg", "TtmpReg",
           "Special", "Literal", "SymbolRef", "FuncOperand", "SrcMod", "split_encoding"]


@dataclass(frozen=True)
class KernelArg:
    """One entry of a kernel's metadata ``.args``: where the argument sits in the kernarg segment."""

    name: str | None
    offset: int
    size: int
    value_kind: str
    address_space: str | None = None


@dataclass
class Function:
    """A function or kernel. ``descriptor`` is ``None`` for a non-kernel function."""

    name: str
    path: str
    line: int
    col: int
    globl: bool = False
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    label_locations: dict[str, Location] = field(default_factory=dict)
    descriptor: dict | None = None
    metadata: dict | None = None

    @property
    def is_kernel(self) -> bool:
        return self.descriptor is not None or self.metadata is not None

    @property
    def location(self) -> Location:
        return Location(self.path, self.line, self.col)

    @property
    def args(self) -> list[KernelArg]:
        """The kernel's arguments from the metadata (hidden ones included), in kernarg order."""
        if not self.metadata:
            return []
        return [KernelArg(a.get(".name"), int(a[".offset"]), int(a[".size"]), a[".value_kind"],
                          a.get(".address_space")) for a in self.metadata.get(".args", [])]

    @property
    def wavefront_size(self) -> int:
        """32 or 64: the descriptor's ``.amdhsa_wavefront_size32``, else the metadata's
        ``.wavefront_size``, else 64 (gfx9 has only wave64; its descriptor omits the field)."""
        if self.descriptor and ".amdhsa_wavefront_size32" in self.descriptor:
            return 32 if self.descriptor[".amdhsa_wavefront_size32"] else 64
        if self.metadata and ".wavefront_size" in self.metadata:
            return int(self.metadata[".wavefront_size"])
        return 64


@dataclass
class AsmModule:
    """A parsed ``.s`` file. ``functions`` keeps file order; :meth:`function` finds one by name."""

    path: str
    target: str | None = None
    code_object_version: int | None = None
    functions: list[Function] = field(default_factory=list)
    metadata: dict | None = None
    symbols: dict[str, str] = field(default_factory=dict)

    @property
    def processor(self) -> str | None:
        """``gfx942`` of ``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-``."""
        if not self.target:
            return None
        return self.target.split(":")[0].rsplit("-", 1)[-1]

    @property
    def features(self) -> dict[str, bool]:
        """Target features of the target id: ``{"xnack": False, "sramecc": True}``."""
        if not self.target:
            return {}
        return {f[:-1]: f.endswith("+") for f in self.target.split(":")[1:] if f[-1:] in "+-"}

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel]

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)


# --- lines --------------------------------------------------------------------------------------

_LABEL = re.compile(r"([A-Za-z_.$][\w.$]*):(?!:)")
_DIRECTIVE = re.compile(r"(\.[A-Za-z_][\w.]*)")
_FUNC_END = re.compile(r"^\.Lfunc_end\d+$")


def _blank_comments(text: str) -> list[str]:
    """The lines of ``text`` with every comment (``;`` and ``//`` to the end of the line,
    ``/* ... */`` across lines) turned into spaces, so that columns stay those of the file.
    A comment marker inside a string is text."""
    out, cur, i, quoted, block = [], [], 0, False, False
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            out.append("".join(cur).rstrip())
            cur, quoted = [], False
        elif block:
            if text.startswith("*/", i):
                cur.append("  ")
                i, block = i + 2, False
                continue
            cur.append(" ")
        elif c == '"':
            quoted = not quoted
            cur.append(c)
        elif not quoted and (c == ";" or text.startswith("//", i)):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif not quoted and text.startswith("/*", i):
            cur.append("  ")
            i, block = i + 2, True
            continue
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).rstrip())
    return out


class _YamlLoader(yaml.SafeLoader):
    """SafeLoader that reads LLVM's ``!str`` tag (``.name: !str n``) as a plain string."""


_YamlLoader.add_constructor("!str", lambda loader, node: loader.construct_scalar(node))


def _safe_yaml(text: str):
    """The one YAML document of ``text`` through :class:`_YamlLoader` (a SafeLoader: no object
    construction from tags)."""
    loader = _YamlLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _value(text: str):
    text = text.strip()
    try:
        return int(text, 0)
    except ValueError:
        return text


class _ModuleParser:
    def __init__(self, text: str, path: str):
        self.path = path
        self.lines = text.split("\n")
        self.clean = _blank_comments(text)
        self.module = AsmModule(path)
        self.func_names: set[str] = set()
        self.globls: set[str] = set()
        self.symbols: set[str] = set()
        self.descriptors: list[tuple[str, dict, Location]] = []

    def where(self, lineno: int, col: int) -> Location:
        return Location(self.path, lineno, col)

    def error(self, lineno: int, col: int, message: str) -> AsmSyntaxError:
        return AsmSyntaxError(message, self.where(lineno, col))

    def statements(self):
        """``(line, column, (kind, text))`` for every label and statement, comments removed.
        Columns are 1-based characters of the file's line (a tab counts one). The YAML of an
        ``.amdgpu_metadata`` block is not yielded: :meth:`_metadata` reads it from the raw lines."""
        in_metadata = False
        for n, line in enumerate(self.clean, 1):
            if in_metadata:  # YAML text, read by _metadata from self.lines
                in_metadata = line.strip() != ".end_amdgpu_metadata"
                continue
            in_metadata = line.split()[:1] == [".amdgpu_metadata"]
            pos = len(line) - len(line.lstrip())
            while True:
                m = _LABEL.match(line, pos)
                if not m:
                    break
                yield n, pos + 1, ("label", m.group(1))
                pos = m.end()
                pos += len(line[pos:]) - len(line[pos:].lstrip())
            rest = line[pos:].rstrip()
            if rest:
                yield n, pos + 1, ("stmt", rest)

    def prescan(self) -> None:
        """Names the file defines (labels, ``.globl``, ``.type``, ``.set``), so that an operand
        naming none of them is reported instead of taken for a symbol."""
        for _, _, (kind, text) in self.statements():
            if kind == "label":
                self.symbols.add(text)
                continue
            words = re.split(r"[\s,]+", text.strip())
            d = words[0]
            if d in (".globl", ".global", ".weak", ".hidden", ".protected", ".local") and len(words) > 1:
                self.symbols.update(words[1:])
                if d in (".globl", ".global"):
                    self.globls.update(words[1:])
            elif d == ".type" and len(words) > 2:
                self.symbols.add(words[1])
                if words[2] in ("@function", "%function", "STT_FUNC"):
                    self.func_names.add(words[1])
            elif d in (".set", ".equ", ".comm", ".lcomm", ".amdgpu_lds") and len(words) > 1:
                self.symbols.add(words[1])
            elif d == ".amdhsa_kernel" and len(words) > 1:
                self.func_names.add(words[1])

    def parse(self) -> AsmModule:
        self.prescan()
        current: Function | None = None
        it = iter(self.statements())
        for n, col, (kind, text) in it:
            if kind == "label":
                if text in self.func_names:
                    current = Function(text, self.path, n, col, globl=text in self.globls)
                    self.module.functions.append(current)
                elif _FUNC_END.match(text):
                    current = None
                elif current is not None:
                    current.labels[text] = len(current.instructions)
                    current.label_locations[text] = self.where(n, col)
                continue
            d = _DIRECTIVE.match(text)
            if d:
                name, arg = d.group(1), text[d.end():].strip()
                if name == ".amdgcn_target":
                    self.module.target = arg.strip('"')
                elif name == ".amdhsa_code_object_version":
                    self.module.code_object_version = _value(arg)
                elif name == ".size" and current is not None and arg.split(",")[0].strip() == current.name:
                    current = None
                elif name in (".set", ".equ"):
                    key, _, val = arg.partition(",")
                    self.module.symbols[key.strip()] = val.strip()
                elif name == ".amdhsa_kernel":
                    self._descriptor(n, col, arg, it)
                elif name == ".amdgpu_metadata":
                    self._metadata(n, col)
                elif name in (".end_amdhsa_kernel", ".end_amdgpu_metadata"):
                    raise self.error(n, col, f"{name} without its opening directive")
                continue
            if current is None:
                raise self.error(n, col, "instruction outside a function (no `.type NAME,@function` "
                                         "label before it)")
            current.instructions.append(parse_instruction(text, self.path, n, col, self.symbols))
        self._attach()
        return self.module

    def _descriptor(self, n: int, col: int, arg: str, it) -> None:
        name = arg.split()[0] if arg.split() else ""
        if not name:
            raise self.error(n, col, ".amdhsa_kernel without a kernel name")
        entries: dict = {}
        for m, c, (kind, text) in it:
            if kind == "stmt" and text.split()[0] == ".end_amdhsa_kernel":
                self.descriptors.append((name, entries, self.where(n, col)))
                return
            if kind != "stmt" or not text.startswith(".amdhsa_"):
                raise self.error(n, col, f"unterminated .amdhsa_kernel {name}: line {m} is not a "
                                         ".amdhsa_ field and no .end_amdhsa_kernel came before it")
            key, _, val = text.partition(" ")
            if not val.strip():
                raise self.error(m, c, f"descriptor field {key} without a value")
            entries[key] = _value(val)
        raise self.error(n, col, f"unterminated .amdhsa_kernel {name}: no .end_amdhsa_kernel")

    def _metadata(self, n: int, col: int) -> None:
        body: list[str] = []
        for raw, clean in zip(self.lines[n:], self.clean[n:]):
            if clean.strip() == ".end_amdgpu_metadata":
                break
            body.append(raw.rstrip("\r"))
        else:
            raise self.error(n, col, "unterminated .amdgpu_metadata: no .end_amdgpu_metadata")
        try:
            doc = _safe_yaml("\n".join(body))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, c = (n + 1 + mark.line, mark.column + 1) if mark else (n, col)
            raise self.error(line, c, f"malformed .amdgpu_metadata YAML: {exc.problem or exc}") from None
        if not isinstance(doc, dict):
            raise self.error(n, col, ".amdgpu_metadata is not a YAML mapping")
        self.module.metadata = doc

    def _attach(self) -> None:
        by_name = {f.name: f for f in self.module.functions}
        for name, entries, where in self.descriptors:
            if name not in by_name:
                raise AsmSyntaxError(f".amdhsa_kernel {name}: no function {name!r} in this file", where)
            if by_name[name].descriptor is not None:
                raise AsmSyntaxError(f"a second .amdhsa_kernel {name}", where)
            by_name[name].descriptor = entries
        for k in (self.module.metadata or {}).get("amdhsa.kernels", []) or []:
            f = by_name.get(k.get(".name"))
            if f is not None:
                f.metadata = k


def parse_asm(text: str, path: str = "<asm>") -> AsmModule:
    """Parse AMDGCN assembly text (``path`` names it in error locations)."""
    return _ModuleParser(text, path).parse()


def parse_asm_file(path) -> AsmModule:
    """Read and parse a ``.s`` file; a file that cannot be read is a usage error (exit 2)."""
    try:
        text = read_source(path, "an assembly file")
    except UsageError as exc:
        raise AsmSyntaxError(exc.message, exc.location or Location(str(path))) from None
    return parse_asm(text, str(path))


# --- inventory ----------------------------------------------------------------------------------

def _each(module: AsmModule):
    for f in module.functions:
        for inst in f.instructions:
            yield inst
            if inst.dual is not None:
                yield inst.dual


def mnemonics(module: AsmModule, *, encoding: bool = False) -> Counter:
    """How often each mnemonic occurs (both halves of a VOPD pair count); ``encoding=True``
    counts ``v_rcp_f32_e32`` and ``v_rcp_f32_e64`` apart."""
    return Counter(i.name if encoding else i.mnemonic for i in _each(module))


def encodings(module: AsmModule) -> Counter:
    """How often each encoding suffix occurs (``""`` for none)."""
    return Counter(i.encoding for i in _each(module))


def modifier_names(module: AsmModule) -> Counter:
    """How often each trailing modifier occurs."""
    return Counter(k for i in _each(module) for k in i.modifiers)


def operand_kinds(module: AsmModule) -> Counter:
    """How often each operand class occurs, source modifiers counted as ``SrcMod:neg`` etc."""
    out: Counter = Counter()
    for i in _each(module):
        for op in i.operands:
            out[type(op.base).__name__] += 1
            while isinstance(op, SrcMod):
                out[f"SrcMod:{op.kind}"] += 1
                op = op.operand
    return out


INVENTORY = {"mnemonics": mnemonics, "encodings": encodings, "modifiers": modifier_names,
             "operands": operand_kinds}
