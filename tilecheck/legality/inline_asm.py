"""The PTX inside CUDA C++ inline assembly: ``asm("div.rn.f32 %0, %1, %2;" : "=f"(d) : ...)``.

``extract(text, path)`` finds every ``asm`` / ``asm volatile`` / ``__asm__ __volatile__`` (and the
other spellings in :data:`ASM_KEYWORDS` / :data:`ASM_QUALIFIERS`) statement of a C++ source that
is followed by ``(``, outside comments and literals, in ordinary code and in ``#define`` bodies.
For each it returns an :class:`AsmStatement`: the template (adjacent string literals concatenated,
escapes decoded), the operands of the ``:`` sections, and the PTX instructions of the template
(:class:`AsmInstruction`) with ``%0`` / ``%[name]`` replaced by a register named after the
operand's constraint (:data:`CONSTRAINT_REGISTERS`) and located at their first character in the
C++ file.

This is a lexer, not a preprocessor: macros are not expanded. A statement whose template is not
only string literals (a macro name, ``#x`` stringification, an ``#if`` inside the statement) is
reported with ``problem`` set and no instructions. Malformed input that leaves the rest of the
file unreadable (an unterminated asm statement, string in one, raw string or block comment)
raises :class:`~tilecheck.errors.UsageError` naming ``path:line:col``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from tilecheck.errors import Location, UsageError

ASM_KEYWORDS = frozenset({"asm", "__asm__", "__asm"})
ASM_QUALIFIERS = frozenset({"volatile", "__volatile__", "__volatile", "inline", "__inline__", "goto"})

#: constraint letter -> (register prefix, what nvcc binds). The operand ``%k`` becomes
#: ``<prefix><k>`` (``%f2`` for operand 2 under ``"f"``): a readable stand-in for the register
#: nvcc allocates, typed like it. ``None`` is the immediate ``"n"``: it becomes the C++ expression
#: when that is an integer literal (nvcc pastes the value), else ``0``. ``c``/``b`` (8-bit) have
#: no 8-bit PTX register; they get a 32-bit one (nvcc 13 rejects every operand type for them).
CONSTRAINT_REGISTERS: dict[str, tuple[str | None, str]] = {
    "h": ("%h", "16-bit register (.u16/.s16/.b16/.f16)"),
    "r": ("%r", "32-bit register (.u32/.s32/.b32)"),
    "l": ("%rd", "64-bit register (.u64/.s64/.b64)"),
    "q": ("%q", "128-bit register (.b128)"),
    "f": ("%f", "32-bit float register (.f32)"),
    "d": ("%fd", "64-bit float register (.f64)"),
    "c": ("%r", "8-bit value, in a 32-bit register"),
    "b": ("%r", "8-bit value, in a 32-bit register"),
    "n": (None, "immediate integer"),
}
_MODIFIERS = "=+&%"  # output, in-out, early-clobber, commutative: none changes the register kind


@dataclass(frozen=True)
class AsmInstruction:
    """One PTX instruction of a template.

    ``text`` is the instruction as written (comments removed, whitespace runs collapsed, guard
    kept, no ``;``); ``opcode``/``operands``/``guard`` are read from it after substitution.
    ``line``/``col`` locate its first character in the C++ file.
    """

    opcode: str
    operands: tuple[str, ...]
    guard: str | None
    line: int
    col: int
    text: str
    statement_line: int


@dataclass(frozen=True)
class AsmStatement:
    """One ``asm(...)`` statement. ``problem`` says what kept the extraction from being complete
    (then ``instructions`` is empty when the template itself is unknown); ``macro`` names the
    ``#define`` holding the statement."""

    line: int
    col: int
    template: str
    outputs: tuple[tuple[str, str], ...]
    inputs: tuple[tuple[str, str], ...]
    instructions: tuple[AsmInstruction, ...]
    problem: str | None = None
    clobbers: tuple[str, ...] = ()
    macro: str | None = None


# --------------------------------------------------------------------------------------------
# lexing: just enough C++ to know what is code, comment and literal

@dataclass
class _Tok:
    kind: str  # "id", "str", "chr", "num", "op"
    start: int
    end: int
    text: str
    directive: int | None  # index into the lexer's directives when on a preprocessor line
    bad: bool = False  # an unterminated "..." / '...' (forgiven unless an asm statement holds it)


_STRING_PREFIXES = {"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"}
_RAW_OPEN = re.compile(r'([^ ()\\\t\v\f\n]{0,16})\(')


class _Source:
    """The text and its line starts, for offset -> (line, column)."""

    def __init__(self, text: str, path: str):
        self.text, self.path = text, path
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def error(self, offset: int, message: str) -> UsageError:
        return UsageError(message, Location(self.path, *self.where(offset)))


def _splice_at(text: str, i: int) -> int:
    """Length of a line splice (backslash-newline) at ``i``, else 0."""
    if text.startswith("\\\n", i):
        return 2
    if text.startswith("\\\r\n", i):
        return 3
    return 0


def _lex(src: _Source) -> tuple[list[_Tok], list[list]]:
    """Tokens outside comments, and the directives as ``[name, macro name or None]``."""
    text, n = src.text, len(src.text)
    toks: list[_Tok] = []
    directives: list[list] = []
    i, line_start, directive, dir_count = 0, True, None, 0
    while i < n:
        c = text[i]
        if c == "\n":
            i, line_start, directive = i + 1, True, None
            continue
        if c.isspace():
            i += 1
            continue
        splice = _splice_at(text, i)
        if splice:  # the line goes on: a #define stays open
            i += splice
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            while j > 0 and text[j - 1] == "\\" or j > 1 and text[j - 2:j] == "\\\r":
                j = text.find("\n", j + 1)  # a spliced // comment goes on too
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise src.error(i, "unterminated /* comment")
            i = j + 2
            continue
        start = i
        if c == "#" and line_start:
            directives.append([None, None])
            directive, dir_count = len(directives) - 1, 0
        line_start = False
        if c.isalpha() or c in "_$":
            while i < n and (text[i].isalnum() or text[i] in "_$"):
                i += 1
            word = text[start:i]
            if i < n and text[i] == '"' and word in _STRING_PREFIXES:
                i, bad = _raw_end(src, start, i + 1) if word.endswith("R") else _quoted_end(text, i, '"')
                tok = _Tok("str", start, i, text[start:i], directive, bad)
            elif i < n and text[i] == "'" and word in ("L", "u", "U", "u8"):
                i, bad = _quoted_end(text, i, "'")
                tok = _Tok("chr", start, i, text[start:i], directive, bad)
            else:
                tok = _Tok("id", start, i, word, directive)
        elif c.isdigit() or c == "." and i + 1 < n and text[i + 1].isdigit():
            i += 1  # a pp-number; ' between digits is a C++14 separator, not a char literal
            while i < n and (text[i].isalnum() or text[i] in "_." or text[i] == "'" and i + 1 < n
                             and text[i + 1].isalnum() or text[i] in "+-" and text[i - 1] in "eEpP"):
                i += 1
            tok = _Tok("num", start, i, text[start:i], directive)
        elif c in "\"'":
            i, bad = _quoted_end(text, i, c)
            tok = _Tok("str" if c == '"' else "chr", start, i, text[start:i], directive, bad)
        else:
            i += 2 if text.startswith("::", i) else 1
            tok = _Tok("op", start, i, text[start:i], directive)
        toks.append(tok)
        if directive is not None:  # "# define NAME": remember the macro's name
            dir_count += 1
            if dir_count == 2 and tok.kind == "id":
                directives[directive][0] = tok.text
            elif dir_count == 3 and tok.kind == "id" and directives[directive][0] == "define":
                directives[directive][1] = tok.text
    return toks, directives


def _quoted_end(text: str, i: int, quote: str) -> tuple[int, bool]:
    """End of the literal whose quote is at ``i``, and whether it is unterminated (a newline came
    first; it then ends there, so one stray apostrophe in ``#error don't`` costs one line)."""
    j, n = i + 1, len(text)
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += _splice_at(text, j) or 2
        elif ch == quote:
            return j + 1, False
        elif ch == "\n":
            return j, True
        else:
            j += 1
    return n, True


def _raw_end(src: _Source, start: int, j: int) -> tuple[int, bool]:
    """End of the raw string ``R"delim(...)delim"`` whose content starts at ``j``."""
    m = _RAW_OPEN.match(src.text, j)
    if not m:  # no valid delimiter: not a raw string C++ accepts
        return _quoted_end(src.text, j - 1, '"')[0], True
    close = ")" + m.group(1) + '"'
    k = src.text.find(close, m.end())
    if k < 0:
        raise src.error(start, "unterminated raw string literal")
    return k + len(close), False


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", "'": "'", '"': '"', "?": "?"}
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = {"x": re.compile(r"[0-9a-fA-F]+"), "u": re.compile(r"[0-9a-fA-F]{4}"), "U": re.compile(r"[0-9a-fA-F]{8}")}


def _decode(text: str, tok: _Tok) -> tuple[str, list[int]]:
    """The value of a string literal token and, per character, the offset in ``text`` it came
    from (an escape's backslash): the map that locates instructions in the file."""
    q = text.index('"', tok.start)
    if text[tok.start:q].endswith("R"):
        m = _RAW_OPEN.match(text, q + 1)
        body_start = m.end()
        body_end = tok.end - len(m.group(1)) - 2
        return text[body_start:body_end], list(range(body_start, body_end))
    chars, origins = [], []
    j, end = q + 1, tok.end - 1
    while j < end:
        ch = text[j]
        if ch != "\\":
            chars.append(ch), origins.append(j)
            j += 1
            continue
        splice = _splice_at(text, j)
        if splice:
            j += splice
            continue
        e = text[j + 1]
        if e in _ESCAPES:
            value, k = _ESCAPES[e], j + 2
        elif e in "01234567":
            m = _OCTAL.match(text, j + 1)
            value, k = chr(int(m.group(), 8)), m.end()
        elif e in "xuU":
            m = _HEX[e].match(text, j + 2)
            value, k = (chr(int(m.group(), 16)), m.end()) if m and int(m.group(), 16) < 0x110000 else (e, j + 2)
        else:
            value, k = e, j + 2
        chars.append(value), origins.append(j)
        j = k
    return "".join(chars), origins


# --------------------------------------------------------------------------------------------
# statements

def extract(text: str, path: str = "<cuda>") -> list[AsmStatement]:
    """Every asm statement of the C++ source ``text`` (``path`` names it in messages), in order.

    Raises :class:`~tilecheck.errors.UsageError` (``path:line:col: error: ...``) for an asm
    statement without its closing ``)``, an unterminated string inside one, an unterminated raw
    string or ``/*`` comment anywhere.
    """
    src = _Source(text, path)
    toks, directives = _lex(src)
    out: list[AsmStatement] = []
    t = 0
    while t < len(toks):
        kw = toks[t]
        if kw.kind == "id" and kw.text in ASM_KEYWORDS:
            k = t + 1
            while k < len(toks) and toks[k].kind == "id" and toks[k].text in ASM_QUALIFIERS:
                k += 1
            if k < len(toks) and toks[k].text == "(" and toks[k].directive == kw.directive:
                statement, t = _statement(src, toks, directives, t, k)
                out.append(statement)
                continue
        t += 1
    return out


def _statement(src: _Source, toks: list[_Tok], directives: list[list], t: int, p: int):
    """The statement whose keyword is ``toks[t]`` and ``(`` is ``toks[p]``, and the index after it."""
    kw = toks[t]
    macro = directives[kw.directive][1] if kw.directive is not None else None
    problems: list[str] = []
    where = "%d:%d" % src.where(kw.start)
    body, depth, q = [], 0, p
    while True:
        q += 1
        if q >= len(toks) or macro is not None and toks[q].directive != kw.directive:
            if macro is None:
                raise src.error(kw.start, f"unterminated asm statement: no ')' closes the '(' at "
                                          "%d:%d" % src.where(toks[p].start))
            problems.append(f"the asm statement is not closed within #define {macro}")
            break
        tok = toks[q]
        if tok.bad and tok.kind in ("str", "chr"):
            raise src.error(tok.start, f"unterminated {'string' if tok.kind == 'str' else 'character'} "
                                       f"literal in the asm statement at {where}")
        if tok.directive is not None and macro is None:  # #if/#else lines between the operands
            if "a preprocessor directive inside the statement" not in problems:
                problems.append("a preprocessor directive inside the statement")
            body.append(None)  # a marker: the template is not the literals around it
            continue
        if tok.kind == "op" and tok.text == ")" and depth == 0:
            break
        if depth == 0 and tok.kind == "op" and tok.text in (";", "{", "}", "]"):
            if macro is None:
                raise src.error(kw.start, f"unterminated asm statement: {tok.text!r} at "
                                          "%d:%d before its closing ')'" % src.where(tok.start))
            problems.append(f"{tok.text!r} before the closing ')'")
            break
        depth += _nesting(tok)
        body.append(tok)
    sections: list[list] = [[]]
    depth = 0
    for tok in body:
        if tok is not None and depth == 0 and tok.text in (":", "::"):
            sections.extend([] for _ in tok.text)  # "::" at the top is two colons: no outputs
            continue
        if tok is not None:
            depth += _nesting(tok)
        sections[-1].append(tok)
    if len(sections) > 5:
        problems.append(f"{len(sections) - 1} ':' sections (at most 4)")
    template, origins = "", []
    if not sections[0]:
        problems.append("no template string")
    for tok in sections[0]:
        if tok is None or tok.kind != "str":
            name = "a preprocessor directive" if tok is None else repr(tok.text)
            problems.append(f"the template holds {name}, which cannot be expanded here")
            template, origins = None, None
            break
        value, where_from = _decode(src.text, tok)
        template += value
        origins += where_from
    outputs = _operands(src, sections[1] if len(sections) > 1 else [], "output", problems)
    inputs = _operands(src, sections[2] if len(sections) > 2 else [], "input", problems)
    clobbers = _clobbers(src, sections[3] if len(sections) > 3 else [], problems)
    instructions = ()
    if template is not None:
        instructions = _instructions(src, template, origins, outputs + inputs, kw, problems)
    line, col = src.where(kw.start)
    statement = AsmStatement(line, col, template if template is not None else "",
                             tuple((c, e) for _, c, e in outputs), tuple((c, e) for _, c, e in inputs),
                             instructions, "; ".join(dict.fromkeys(problems)) or None, clobbers, macro)
    return statement, q + 1


def _nesting(tok: _Tok) -> int:
    """+1 for an opening bracket, -1 for a closing one, else 0."""
    if tok.kind != "op":
        return 0
    return 1 if tok.text in ("(", "[", "{") else -1 if tok.text in (")", "]", "}") else 0


def _items(tokens: list) -> list[list]:
    """The top-level comma-separated items of a section."""
    items, depth = [[]], 0
    for tok in tokens:
        if tok is not None and depth == 0 and tok.text == ",":
            items.append([])
            continue
        if tok is not None:
            depth += _nesting(tok)
        items[-1].append(tok)
    return [item for item in items if item] if any(items) else []


def _spelled(tokens: list) -> str:
    """Tokens as one line of text: a space where the source had whitespace or a comment."""
    out, prev = "", None
    for tok in tokens:
        if tok is None:
            continue
        if prev is not None and tok.start > prev.end:
            out += " "
        out, prev = out + tok.text, tok
    return out


def _operands(src: _Source, tokens: list, kind: str, problems: list[str]) -> list[tuple]:
    """``[name] "constraint"(expression)`` items as (name or None, constraint, expression)."""
    out = []
    for item in _items(tokens):
        name, rest = None, item
        if (len(rest) >= 3 and rest[0] is not None and rest[0].text == "[" and rest[1] is not None
                and rest[1].kind == "id" and rest[2] is not None and rest[2].text == "]"):
            name, rest = rest[1].text, rest[3:]
        k = 0
        while k < len(rest) and rest[k] is not None and rest[k].kind == "str":
            k += 1
        paren = rest[k:]
        if (k == 0 or len(paren) < 2 or None in paren or paren[0].text != "("
                or paren[-1].text != ")" or _items_closed(paren) != len(paren)):
            problems.append(f"cannot read the {kind} operand {_spelled(item)!r}")
            continue
        constraint = "".join(_decode(src.text, tok)[0] for tok in rest[:k])
        out.append((name, constraint, _spelled(paren[1:-1])))
    return out


def _items_closed(tokens: list) -> int:
    """Index after the bracket that closes ``tokens[0]``."""
    depth = 0
    for k, tok in enumerate(tokens):
        depth += _nesting(tok)
        if depth == 0:
            return k + 1
    return len(tokens) + 1


def _clobbers(src: _Source, tokens: list, problems: list[str]) -> tuple[str, ...]:
    out = []
    for item in _items(tokens):
        if None in item or any(tok.kind != "str" for tok in item):
            problems.append(f"cannot read the clobber {_spelled(item)!r}")
            continue
        out.append("".join(_decode(src.text, tok)[0] for tok in item))
    return tuple(out)


# --------------------------------------------------------------------------------------------
# the PTX of a template

_INT_LITERAL = re.compile(r"\(?\s*([-+]?(?:0[xX][0-9a-fA-F']+|[0-9][0-9']*))[uUlL]*\s*\)?")
_OPERAND_REF = re.compile(r"%(%|\d+|\[([A-Za-z_]\w*)\])")
_LABEL = re.compile(r"[A-Za-z_$][\w$]*\s*:(?!:)")
_GUARD = re.compile(r"@\s*!?\s*%{0,2}[\w$]+")


def _register(index: int, constraint: str, expression: str) -> str | None:
    """The text that stands for operand ``index`` (see :data:`CONSTRAINT_REGISTERS`)."""
    for letter in constraint.lstrip(_MODIFIERS):
        if letter in CONSTRAINT_REGISTERS:
            prefix = CONSTRAINT_REGISTERS[letter][0]
            if prefix is not None:
                return f"{prefix}{index}"
            m = _INT_LITERAL.fullmatch(expression.strip())
            return m.group(1).replace("'", "") if m else "0"
    return None


def _uncommented(template: str) -> str:
    """The template with PTX comments (``//`` to end of line, ``/* */``) blanked to spaces, so
    offsets (and the origin map) stay valid."""
    return re.sub(r"//[^\n]*|/\*.*?(?:\*/|\Z)", lambda m: re.sub(r"[^\n]", " ", m.group()), template,
                  flags=re.S)


def _instructions(src: _Source, template: str, origins: list[int], operands: list[tuple],
                  kw: _Tok, problems: list[str]) -> tuple[AsmInstruction, ...]:
    """The instructions of a template: statements end at ``;`` (not at newlines: an instruction
    may span lines); ``{``/``}`` scope braces, labels and ``.`` directives are not instructions."""
    registers, names = [], {}
    for index, (name, constraint, expression) in enumerate(operands):
        register = _register(index, constraint, expression)
        if register is None:
            problems.append(f"operand {index} has the constraint {constraint!r}, which has no register kind")
        registers.append(register)
        if name is not None:
            names[name] = index

    def substitute(match: re.Match) -> str:
        ref = match.group(1)
        if ref == "%":
            return "%"
        index = names.get(match.group(2)) if match.group(2) else int(ref)
        if index is None or index >= len(registers):
            problems.append(f"the template refers to {match.group()!r}, which is not an operand")
            return match.group()
        return registers[index] or match.group()

    clean = _uncommented(template)
    spans, start = [], None
    for k, ch in enumerate(clean):
        if start is None:
            if not ch.isspace() and ch not in "{}":
                start = k
        elif ch == ";":
            spans.append((start, k))
            start = None
    if start is not None:
        spans.append((start, len(clean)))  # the last instruction without its ';'
    stmt_line = src.where(kw.start)[0]
    out = []
    for begin, end in spans:
        while True:  # labels, and braces after them, before the instruction
            m = _LABEL.match(clean, begin, end)
            if not m:
                break
            begin = m.end()
            while begin < end and (clean[begin].isspace() or clean[begin] in "{}"):
                begin += 1
        raw = clean[begin:end]
        if not raw.strip() or raw.startswith("."):
            continue
        guard = None
        m = _GUARD.match(raw)
        if m:
            guard = _OPERAND_REF.sub(substitute, re.sub(r"\s+", "", m.group()))
            body = raw[m.end():]
        else:
            body = raw
        parts = _OPERAND_REF.sub(substitute, body).split(None, 1)
        if not parts:
            continue
        line, col = src.where(origins[begin])
        out.append(AsmInstruction(parts[0], _split_operands(parts[1]) if len(parts) > 1 else (), guard,
                                  line, col, " ".join(raw.split()), stmt_line))
    return tuple(out)


def _split_operands(text: str) -> tuple[str, ...]:
    """Operands at top-level commas (``{%r0, %r1}`` and ``[%rd2+4]`` stay whole)."""
    out, depth, current = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return tuple(" ".join(o.split()) for o in out)
