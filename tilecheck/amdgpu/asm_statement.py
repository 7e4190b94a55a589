"""Operands and instruction statements of AMDGCN assembly (the syntax ``llc -march=amdgcn`` prints).

:func:`parse_instruction` turns one statement (``v_fma_f32 v5, -v2, v3, 1.0 clamp``) into an
:class:`~tilecheck.amdgpu.asm_types.Instruction` (whose module says what each operand becomes);
:mod:`tilecheck.amdgpu.asm` finds the statements of a whole ``.s`` file.

Grammar (the subset LLVM 19 writes, plus the hand-written spellings llvm-mc accepts for the same
things)::

    statement := mnemonic[encoding] [operand {"," operand}] {modifier} [":: " statement]
    operand   := ["-"] "|" base "|"  |  "-" base  |  ("neg"|"abs"|"sext") "(" operand ")"  |  base
    base      := register | special | literal | function-operand | symbol-expression
    modifier  := name ":" value  |  counter "(" args ")"  |  flag      (separated by " ", "|" or "&")

Mnemonics are not checked (the simulator decides what it supports); operand tokens are, so a
typo is a located :class:`~tilecheck.amdgpu.asm_types.AsmSyntaxError`, not a silently wrong
operand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Collection

from tilecheck.amdgpu.asm_types import (FLAGS, FUNC_MODIFIER, FUNC_OPERANDS, SPECIAL_REGISTERS, AReg,
                                        AsmSyntaxError, FuncOperand, HexInt, Instruction, Literal, Operand, SReg,
                                        Special, SrcMod, SymbolRef, TtmpReg, VReg, split_encoding)
from tilecheck.errors import Location, echo

_TOKEN = re.compile(r"""
    (?P<ws>[ \t]+)
  | (?P<num>0[xX][0-9A-Fa-f]+|\d+\.\d+(?:[eE][-+]?\d+)?|\d+)
  | (?P<ident>[A-Za-z_.$][\w.$@]*)
  | (?P<str>"[^"]*")
  | (?P<punct>::|[,\[\]():|+\-&])
""", re.X)
_REG = re.compile(r"^(v|s|a|ttmp)(\d+)(?:\.([lh]))?$")
_REG_CLASSES = {"v": VReg, "s": SReg, "a": AReg, "ttmp": TtmpReg}
_MNEMONIC = re.compile(r"^[a-z][a-z0-9_]*$")
_WORD_TAIL = re.compile(r"[\w.]*")  # the rest of a malformed number such as 0x1fz, for the message


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int  # offset in the statement
    space_before: bool = field(default=False)


class _Parser:
    def __init__(self, text: str, path: str, line: int, col: int, symbols: Collection[str] | None):
        self.text, self.path, self.line, self.col0, self.symbols = text, path, line, col, symbols
        self.toks = self._lex()
        self.i = 0

    # positions and errors
    def error(self, pos: int, message: str) -> AsmSyntaxError:
        return AsmSyntaxError(message, Location(self.path, self.line, self.col0 + pos))

    def _lex(self) -> list[_Tok]:
        toks, pos, space = [], 0, False
        while pos < len(self.text):
            m = _TOKEN.match(self.text, pos)
            if m is None:
                raise self.error(pos, f"unknown operand token {echo(self.text[pos])}")
            if m.lastgroup == "ws":
                space = True
            else:
                if m.lastgroup == "num" and m.end() < len(self.text) and (self.text[m.end()].isalnum()
                                                                          or self.text[m.end()] == "_"):
                    end = _WORD_TAIL.match(self.text, m.end()).end()
                    raise self.error(pos, f"malformed number {echo(self.text[pos:end])}")
                toks.append(_Tok(m.lastgroup, m.group(), pos, space))
                space = False
            pos = m.end()
        return toks

    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, text: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.kind in ("punct", "ident") and t.text == text

    def take(self) -> _Tok:
        t = self.peek()
        if t is None:
            raise self.error(len(self.text), "unexpected end of statement")
        self.i += 1
        return t

    def expect(self, text: str, what: str) -> _Tok:
        t = self.peek()
        if t is None or t.text != text:
            pos = t.pos if t is not None else len(self.text)
            raise self.error(pos, f"expected {text!r} {what}")
        return self.take()

    # the statement
    def statement(self) -> Instruction:
        first = self.take()
        if first.kind != "ident" or not _MNEMONIC.match(first.text):
            raise self.error(first.pos, f"expected a mnemonic, found {echo(first.text)}")
        mnemonic, encoding = split_encoding(first.text)
        operands: list[Operand] = []
        modifiers: dict = {}
        if self.peek() is not None and not self.at("::") and not self._modifier_ahead():
            operands.append(self.operand())
            while self.at(","):
                self.take()
                operands.append(self.operand())
        while self.peek() is not None and not self.at("::"):
            t = self.peek()
            if t.text in ("|", "&") and modifiers:
                self.take()
                continue
            if not t.space_before and t.kind != "punct":
                raise self.error(t.pos, f"expected ',' or a space before {echo(t.text)}")
            self.modifier(modifiers)
        inst_text = self.text[first.pos:].strip()  # a VOPD pair's text is both halves
        dual = None
        if self.at("::"):
            self.take()
            start = self.peek()
            if start is None:
                raise self.error(len(self.text), "expected the second instruction of a VOPD pair after '::'")
            dual = self.statement()
            if dual.dual is not None:
                raise self.error(start.pos, "a VOPD pair has two halves: a second '::'")
        return Instruction(mnemonic, encoding, tuple(operands), modifiers, self.path, self.line,
                           self.col0 + first.pos, inst_text, dual)

    def _modifier_ahead(self) -> bool:
        t, nxt = self.peek(), self.peek(1)
        if t is None or t.kind != "ident":
            return False
        if nxt is not None and nxt.text == ":":
            return True
        if nxt is not None and nxt.text == "(" and FUNC_MODIFIER.match(t.text):
            return True
        return t.text in FLAGS and t.text != "scc"

    # operands
    def operand(self) -> Operand:
        t = self.peek()
        if t is None:
            raise self.error(len(self.text), "expected an operand")
        if t.text == "-":
            self.take()
            nxt = self.peek()
            if nxt is not None and nxt.kind == "num" and not nxt.space_before:
                return self.literal(negative=True)
            inner = self.operand()
            if isinstance(inner, SrcMod) and inner.kind == "neg":
                raise self.error(t.pos, "malformed operand: two negations")
            return SrcMod("neg", inner)
        if t.text == "|":
            self.take()
            inner = self.operand()
            if not self.at("|"):
                raise self.error(t.pos, "unterminated |...| (absolute value)")
            self.take()
            return SrcMod("abs", inner)
        if t.kind == "ident" and t.text in ("neg", "abs", "sext") and self.at("(", 1):
            self.take()  # the name
            self.take()  # "("
            inner = self.operand()
            self.expect(")", f"closing {t.text}(...)")
            return SrcMod(t.text, inner, functional=True)
        return self.base()

    def base(self) -> Operand:
        t = self.peek()
        if t.kind == "num":
            return self.literal()
        if t.kind != "ident":
            raise self.error(t.pos, f"unknown operand token {echo(t.text)}")
        m = _REG.match(t.text)
        if m:
            self.take()
            return _REG_CLASSES[m.group(1)](int(m.group(2)), 1, m.group(3))
        if t.text in _REG_CLASSES and self.at("[", 1):
            return self.reg_range()
        if t.text in SPECIAL_REGISTERS:
            self.take()
            return Special(t.text)
        if self.at("(", 1):
            if t.text not in FUNC_OPERANDS:
                raise self.error(t.pos, f"unknown operand function {echo(t.text)}")
            self.take()
            return FuncOperand(t.text, self.args())
        return self.symbol()

    def literal(self, negative: bool = False) -> Literal:
        t = self.take()
        sign = -1 if negative else 1
        if t.text[:2].lower() == "0x":
            return Literal(sign * int(t.text, 16), 16)
        if "." in t.text:
            return Literal(sign * float(t.text), 0)
        return Literal(sign * int(t.text), 10)

    def reg_range(self) -> Operand:
        t = self.take()
        open_ = self.take()
        if not any(tok.text == "]" for tok in self.toks[self.i:]):
            raise self.error(open_.pos, f"malformed register range: unterminated {t.text}[")
        lo = self.take()
        if not lo.text.isdigit():
            raise self.error(lo.pos, f"malformed register range in {t.text}[...]: expected a register number")
        hi_val = int(lo.text)
        if self.at(":"):
            self.take()
            hi = self.take()
            if not hi.text.isdigit():
                raise self.error(hi.pos, f"malformed register range in {t.text}[...]: expected a register number")
            hi_val = int(hi.text)
        if not self.at("]"):
            raise self.error(open_.pos, f"malformed register range: unterminated {t.text}[")
        self.take()
        if hi_val < int(lo.text):
            raise self.error(t.pos, f"malformed register range {t.text}[{lo.text}:{hi_val}]: "
                                    "the last register is below the first")
        return _REG_CLASSES[t.text](int(lo.text), hi_val - int(lo.text) + 1)

    def args(self) -> tuple:
        """``(a, b, c)`` of a function operand or modifier: ints, names, strings, literals."""
        open_ = self.expect("(", "")
        out: list = []
        while not self.at(")"):
            t = self.peek()
            if t is None:
                raise self.error(open_.pos, "unterminated '(': no ')' closes it")
            if t.kind == "num" or t.text == "-":
                out.append(self.operand())
            elif t.kind in ("ident", "str"):
                self.take()
                out.append(t.text)
            else:
                raise self.error(t.pos, f"unknown operand token {echo(t.text)}")
            if self.at(","):
                self.take()
            elif self.peek() is None:
                raise self.error(open_.pos, "unterminated '(': no ')' closes it")
            elif not self.at(")"):
                raise self.error(self.peek().pos, "expected ',' or ')'")
        self.take()
        return tuple(a.value if isinstance(a, Literal) and not a.is_float and a.radix == 10 else
                     HexInt(a.value) if isinstance(a, Literal) and a.radix == 16 else a for a in out)

    def symbol(self) -> SymbolRef:
        t = self.take()
        name = t.text.split("@", 1)[0]
        if self.symbols is not None and name not in self.symbols:
            raise self.error(t.pos, f"unknown operand {echo(t.text)}: not a register and not a symbol "
                                    "this file defines")
        end = t.pos + len(t.text)
        while self.at("+") or self.at("-"):
            self.take()
            nxt = self.take()
            if nxt.kind not in ("num", "ident"):
                raise self.error(nxt.pos, f"malformed symbol expression at {echo(nxt.text)}")
            end = nxt.pos + len(nxt.text)
        return SymbolRef(name, self.text[t.pos:end].replace(" ", ""))

    # modifiers
    def modifier(self, into: dict) -> None:
        t = self.take()
        if t.kind != "ident":
            raise self.error(t.pos, f"unknown operand token {echo(t.text)}")
        if self.at(":"):
            self.take()
            value = self.modifier_value(t)
        elif self.at("(") and FUNC_MODIFIER.match(t.text):
            args = self.args()
            value = args[0] if len(args) == 1 else args
        elif t.text in FLAGS:
            value = True
        else:
            raise self.error(t.pos, f"unknown modifier {echo(t.text)}")
        if t.text in into:
            raise self.error(t.pos, f"repeated modifier {t.text!r}")
        into[t.text] = value

    def modifier_value(self, name: _Tok):
        t = self.peek()
        if t is None or t.space_before:
            raise self.error(name.pos, f"malformed modifier {name.text}: expected a value after ':'")
        if t.text == "[":
            self.take()
            vals = []
            while True:
                v = self.take()
                if not v.text.isdigit():
                    raise self.error(v.pos, f"malformed modifier {name.text}:[...]: expected a number")
                vals.append(int(v.text))
                if self.at("]"):
                    self.take()
                    return tuple(vals)
                self.expect(",", f"in {name.text}:[...]")
        if t.kind == "num" or t.text == "-":
            lit = self.operand()
            if not isinstance(lit, Literal) or lit.is_float:
                raise self.error(t.pos, f"malformed modifier {name.text}: expected an integer")
            return HexInt(lit.value) if lit.radix == 16 else lit.value
        if t.kind == "ident":
            if self.at("(", 1) and t.text in FUNC_OPERANDS:
                self.take()
                return FuncOperand(t.text, self.args())
            self.take()
            return t.text
        raise self.error(t.pos, f"malformed modifier {name.text}: unexpected {echo(t.text)}")


def parse_instruction(text: str, path: str = "<asm>", line: int = 1, col: int = 1,
                      symbols: Collection[str] | None = None) -> Instruction:
    """Parse one statement (no comment, no label) that starts at ``line``:``col`` of ``path``.

    ``symbols`` is the set of names the file defines; a bare name that is neither a register nor
    one of them is an "unknown operand" error. ``None`` accepts any name as a symbol.
    """
    p = _Parser(text, path, line, col, symbols)
    if not p.toks:
        raise p.error(0, "empty statement")
    return p.statement()
