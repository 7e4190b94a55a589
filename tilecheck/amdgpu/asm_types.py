"""The parsed form of AMDGCN assembly statements: typed operands and :class:`Instruction`.

=============================  ============================================================
Source text                    Object (``str()`` gives the text back in llc's spelling)
=============================  ============================================================
``v3``, ``v[4:5]``, ``v1.l``   ``VReg(3)``, ``VReg(4, 2)``, ``VReg(1, 1, "l")``
``s2``, ``s[0:1]``             ``SReg(2)``, ``SReg(0, 2)`` (also ``AReg`` ``a[0:3]``,
                               ``TtmpReg`` ``ttmp[4:5]``)
``vcc``, ``exec_lo``, ``off``  ``Special("vcc")`` ... (:data:`SPECIAL_REGISTERS`)
``16``, ``0x3ff``, ``1.0``     ``Literal(16)``, ``Literal(0x3ff, 16)``, ``Literal(1.0, 0)``
``-v1``, ``|v1|``, ``-|v1|``   ``SrcMod("neg", VReg(1))``, ``SrcMod("abs", ...)``, nested
``neg(v1)``, ``abs(v1)``       the same with ``functional=True``; ``sext(v1)`` likewise
``hwreg(HW_REG_MODE, 4, 2)``   ``FuncOperand("hwreg", ("HW_REG_MODE", 4, 2))``
``.LBB0_2``, ``f@rel32@lo+4``  ``SymbolRef(name, text)``
``op_sel:[0,1,0]``, ``clamp``  ``Instruction.modifiers``: ``{"op_sel": (0, 1, 0), "clamp": True}``
``vmcnt(0)``, ``mul:2``        ``{"vmcnt": 0}``, ``{"mul": 2}``
=============================  ============================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from tilecheck.errors import Location, UsageError


class AsmSyntaxError(UsageError):
    """AMDGCN assembly that the front end cannot read, located ``FILE:line:col``.

    Cause: a malformed operand (``v[5:4]``, ``|v1`` without its closing bar), a token that is no
    operand (``@``, an undefined symbol), an unknown modifier, or an unterminated ``.amdhsa_kernel``
    or ``.amdgpu_metadata`` block. Fix: correct the text at the location shown; code written by
    ``llc`` or Triton should always parse, so report anything else.
    """

    exit_code = 2


# --- operands -----------------------------------------------------------------------------------

class Operand:
    """Base of every operand. ``neg``/``abs``/``sext`` say which source modifiers wrap the value;
    ``base`` is the value with every :class:`SrcMod` removed."""

    @property
    def base(self) -> "Operand":
        return self

    neg = False
    abs = False
    sext = False


@dataclass(frozen=True)
class _Reg(Operand):
    """``count`` consecutive registers from ``index``; ``half`` is ``"l"``/``"h"`` for gfx11's
    16-bit halves (``v1.l``)."""

    index: int
    count: int = 1
    half: str | None = None
    prefix = ""

    def __str__(self) -> str:
        suffix = f".{self.half}" if self.half else ""
        if self.count == 1:
            return f"{self.prefix}{self.index}{suffix}"
        return f"{self.prefix}[{self.index}:{self.index + self.count - 1}]{suffix}"

    @property
    def indices(self) -> range:
        return range(self.index, self.index + self.count)


@dataclass(frozen=True)
class VReg(_Reg):
    """Vector registers ``v3`` / ``v[4:5]``."""
    prefix = "v"


@dataclass(frozen=True)
class SReg(_Reg):
    """Scalar registers ``s2`` / ``s[0:1]``."""
    prefix = "s"


@dataclass(frozen=True)
class AReg(_Reg):
    """Accumulation registers ``a0`` / ``a[0:3]`` (MFMA on gfx90a/gfx942)."""
    prefix = "a"


@dataclass(frozen=True)
class TtmpReg(_Reg):
    """Trap-handler temporaries ``ttmp4`` / ``ttmp[4:5]``."""
    prefix = "ttmp"


SPECIAL_REGISTERS = frozenset("""
    vcc vcc_lo vcc_hi exec exec_lo exec_hi m0 scc null off vccz execz
    flat_scratch flat_scratch_lo flat_scratch_hi xnack_mask xnack_mask_lo xnack_mask_hi
    tba tba_lo tba_hi tma tma_lo tma_hi lds_direct src_lds_direct
    src_vccz src_execz src_scc src_shared_base src_shared_limit src_private_base src_private_limit
    shared_base shared_limit private_base private_limit src_pops_exiting_wave_id pops_exiting_wave_id
""".split())


@dataclass(frozen=True)
class Special(Operand):
    """A named register or operand: ``vcc``, ``exec_lo``, ``m0``, ``scc``, ``null``, ``off`` ..."""

    name: str

    def __str__(self) -> str:
        return self.name


INLINE_FLOATS = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 0.15915494)


@dataclass(frozen=True)
class Literal(Operand):
    """A constant: an integer (``radix`` 10 or 16, as written) or a float (``radix`` 0).

    The bits it stands for depend on the operand's type (``1.0`` is 0x3c00 as f16), so the
    parser keeps the value and leaves encoding to the consumer; :attr:`is_inline` says whether
    the hardware has it as an inline constant (integers -16..64 and :data:`INLINE_FLOATS`).
    """

    value: Union[int, float]
    radix: int = 10

    def __str__(self) -> str:
        if self.radix == 16:
            return f"-0x{-self.value:x}" if self.value < 0 else f"0x{self.value:x}"
        if self.radix == 0:
            return "0.15915494" if self.value == 0.15915494 else repr(float(self.value))
        return str(self.value)

    @property
    def is_float(self) -> bool:
        return self.radix == 0

    @property
    def is_inline(self) -> bool:
        if self.is_float:
            return self.value in INLINE_FLOATS
        return -16 <= self.value <= 64


@dataclass(frozen=True)
class SymbolRef(Operand):
    """A symbol expression: a branch target ``.LBB0_2``, ``scaled_rcp@rel32@lo+4``.
    ``name`` is the symbol, ``text`` the whole expression."""

    name: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class FuncOperand(Operand):
    """A function-style operand: ``hwreg(HW_REG_MODE, 4, 2)``, ``sendmsg(MSG_DEALLOC_VGPRS)``."""

    name: str
    args: tuple

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class SrcMod(Operand):
    """A source modifier around an operand: ``kind`` is ``neg``, ``abs`` or ``sext``;
    ``functional`` is the ``neg(v1)``/``abs(v1)`` spelling rather than ``-v1``/``|v1|``."""

    kind: str
    operand: Operand
    functional: bool = False

    def __str__(self) -> str:
        if self.functional or self.kind == "sext":
            return f"{self.kind}({self.operand})"
        return f"-{self.operand}" if self.kind == "neg" else f"|{self.operand}|"

    @property
    def base(self) -> Operand:
        return self.operand.base

    def _has(self, kind: str) -> bool:
        return self.kind == kind or getattr(self.operand, kind)

    neg = property(lambda self: self._has("neg"))  # type: ignore[assignment]
    abs = property(lambda self: self._has("abs"))  # type: ignore[assignment]
    sext = property(lambda self: self._has("sext"))  # type: ignore[assignment]


FUNC_OPERANDS = frozenset({"hwreg", "sendmsg", "sendmsg_rtn", "gpr_idx", "swizzle", "lit", "lit64"})
# ``name(...)`` modifiers: s_waitcnt counters, s_delay_alu fields, s_waitcnt_depctr fields
FUNC_MODIFIER = re.compile(r"^(?:(?:vm|exp|lgkm|vs)cnt(?:_sat)?|instid[01]|instskip|depctr_\w+)$")
FLAGS = frozenset("""
    clamp glc slc dlc scc sc0 sc1 nt lds tfe gds idxen offen addr64 unorm da r128 a16 d16 lwe high
    done vm compr row_en
""".split())


class HexInt(int):
    """An integer modifier value written in hex (``row_mask:0xf``), so it prints back as hex."""

    def __str__(self) -> str:
        return f"-0x{-self:x}" if self < 0 else f"0x{self:x}"

    __repr__ = __str__


# --- instructions -------------------------------------------------------------------------------

ENCODINGS = ("_e64_dpp", "_e32", "_e64", "_sdwa", "_dpp8", "_dpp")


@dataclass(frozen=True, eq=False)
class Instruction:
    """One statement. ``mnemonic`` is without the ``encoding`` suffix (``_e32``, ``_e64``,
    ``_sdwa``, ``_dpp``, ``_dpp8``, ``_e64_dpp``; ``""`` if none). ``modifiers`` maps each
    trailing modifier's name to its value: ``True`` for a flag (``clamp``, ``glc``), an ``int``
    (``offset:16``, ``vmcnt(0)``, ``mul:2``), a ``str`` (``dst_sel:WORD_1``,
    ``instskip(NEXT)``) or a tuple of ints (``op_sel:[0,1,0]``). ``dual`` is the second half of
    a gfx11 VOPD pair (``v_dual_mul_f32 ... :: v_dual_add_f32 ...``). ``text`` is the statement
    as written, comment removed."""

    mnemonic: str
    encoding: str
    operands: tuple
    modifiers: dict
    path: str
    line: int
    col: int
    text: str
    dual: "Instruction | None" = None

    @property
    def name(self) -> str:
        """The mnemonic as written, encoding suffix included (``v_rcp_f32_e32``)."""
        return self.mnemonic + self.encoding

    @property
    def location(self) -> Location:
        return Location(self.path, self.line, self.col)

    def render(self) -> str:
        """The statement in llc's spelling, rebuilt from the parsed fields."""
        out = self.name
        if self.operands:
            out += " " + ", ".join(str(op) for op in self.operands)
        sep = " | " if self.mnemonic == "s_delay_alu" else " "
        mods = sep.join(format_modifier(k, v) for k, v in self.modifiers.items())
        if mods:
            out += (" " if self.operands or out else "") + mods
        if self.dual is not None:
            out += " :: " + self.dual.render()
        return out

    def __str__(self) -> str:
        return self.render()


def format_modifier(name: str, value) -> str:
    if value is True:
        return name
    if FUNC_MODIFIER.match(name):
        return f"{name}({value})"
    if isinstance(value, tuple):
        return f"{name}:[{','.join(str(v) for v in value)}]"
    return f"{name}:{value}"


def split_encoding(name: str) -> tuple[str, str]:
    """``v_add_f32_e64`` -> (``v_add_f32``, ``_e64``); a name without suffix gets ``""``."""
    for enc in ENCODINGS:
        if name.endswith(enc) and len(name) > len(enc):
            return name[: -len(enc)], enc
    return name, ""
