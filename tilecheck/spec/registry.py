"""The semantics registry: the vocabulary every other module derives from.

* every semantics key a spec may name (``fp.div``, ``approx.rcp_hi``, ...) with its kind, arity
  and parameters, and per key its *operation* (``div``, ``rcp``), its *function* (the key's name
  after the dot: ``rcp_hi``) and whether it is a *high-word* variant (``rcp_hi``: computed from
  the upper 32 bits of an f64);
* :data:`OPERATIONS`: each arithmetic operation with its arity;
* :data:`SPECIAL_WORDS`: the class words of contracts' special-value tables;
* :data:`ROUNDINGS`, :data:`TININESS` and :data:`TININESS_DEFAULT` (declared in
  :mod:`tilecheck.formats`, the lowest layer that rounds, and re-exported here).

A form's ``semantics: {key: fp.div, rounding: "{rnd}", ftz: "{ftz}"}`` names an entry here. The
spec loader checks keys and parameters against this table (an unknown key is a located spec
error); the reference model, the Z3 encoding and the CPU simulator each implement every key, and a
test asserts that none is missing -- except where an entry's ``smt`` says why Z3 cannot (``ex2``:
a transcendental function), and there the Z3 layer refuses the form with that reason. This module is data: it imports nothing from the model.

Kinds: ``exact`` (one correctly rounded result), ``contract`` (approximate: a set of allowed
results), ``memory`` (ld/st) and ``function``: the instructions around the arithmetic (cvt, setp,
selp, mov, abs, neg, min, max, copysign, testp, integer arithmetic, logic, shifts, cvta), one result
per input, operand types per operand, implemented by ``tilecheck.model.instructions`` and
``tilecheck.smt.instructions`` (the single-instruction kernel pipeline takes the other kinds only).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecheck.formats import ROUNDINGS, TININESS, TININESS_DEFAULT

__all__ = ["ROUNDINGS", "TININESS", "TININESS_DEFAULT", "OPERATIONS", "ENTRIES", "Entry", "Param", "coerce",
           "operation_of", "function_of", "is_high_word", "SPECIAL_WORDS", "SPECIAL_CLASSES",
           "SPECIAL_RESULT_WORDS", "special_result_bits"]

HIGH_WORD_SUFFIX = "_hi"


@dataclass(frozen=True)
class Param:
    """One parameter of a registry entry."""

    kind: str  # "bool", "rounding", "choice", "int"
    default: object = None
    choices: tuple = ()
    doc: str = ""


@dataclass(frozen=True)
class Entry:
    """A semantics key: what it computes, its arity and parameters."""

    key: str
    kind: str  # "exact" (one correctly rounded result), "contract" (approximate), "memory", "function"
    arity: int  # number of source operands
    doc: str
    params: dict = field(default_factory=dict)
    smt: str = ""  # why the Z3 layer cannot encode the key ("" when it can)

    @property
    def function(self) -> str:
        """The key's name after the namespace: ``fp.div`` -> ``div``, ``approx.rcp_hi`` -> ``rcp_hi``."""
        return self.key.split(".", 1)[1]

    @property
    def high_word(self) -> bool:
        """True for the f64 variants computed from the upper 32 bits of the operand (``rcp_hi``)."""
        return self.function.endswith(HIGH_WORD_SUFFIX)

    @property
    def operation(self) -> str:
        """The arithmetic operation computed: ``div``, ``rcp`` (also for ``rcp_hi``), ``ld``."""
        return self.function[:-len(HIGH_WORD_SUFFIX)] if self.high_word else self.function


_RND = Param("rounding", "rn", ROUNDINGS, "IEEE rounding: rn nearest-even, rz toward zero, rm toward -inf, rp toward +inf")
_FTZ = Param("bool", False, (), "flush subnormal inputs and results to sign-preserving zero")
_SAT = Param("bool", False, (), "clamp the result to [0.0, 1.0]; NaN results become +0.0")
_ISAT = Param("bool", False, (), "clamp to the destination's integer range instead of wrapping")
_MULMODE = Param("choice", "lo", ("lo", "hi", "wide"), "which part of the exact product")
_RELU = Param("bool", False, (), "negative results become 0")
_RELU_F = Param("bool", False, (), "negative results become +0; NaN becomes the canonical NaN")
_SATFINITE = Param("bool", False, (), "results beyond the largest finite value (infinities included) become it")
_CVT_RND = Param("choice", "", ("", "rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi"),
                 "rounding: empty (none: exact widening or same format), rn rz rm rp rna to the destination precision, "
                 "rni rzi rmi rpi to an integral value in the same format")
_INT_RND = Param("choice", "rzi", ("rni", "rzi", "rmi", "rpi"), "integer rounding: nearest-even, zero, down, up")
_CMP = Param("choice", "eq", ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
                              "gtu", "geu", "num", "nan"), "comparison operator")
_NANQ = Param("bool", False, (), "(.NaN) any NaN operand gives the canonical NaN")
_XORSIGN = Param("bool", False, (), "(.xorsign.abs) compare the magnitudes and give the result the XOR of the "
                                    "operands' sign bits (a NaN result keeps no such sign)")
_SPACE = Param("choice", "global", ("global", "param", "local", "generic"),
               "state space: .global, .param (kernel and function parameters), .local (per-thread) or none "
               "(generic address)")
_NC = Param("bool", False, (), "(.nc) through the non-coherent read-only cache: the data must not change while "
                               "the kernel runs; the bits loaded are those of ld.global")
_TESTP = Param("choice", "finite", ("finite", "infinite", "number", "notanumber", "normal", "subnormal"),
               "the class tested")

ENTRIES: dict[str, Entry] = {
    e.key: e
    for e in [
        Entry("fp.add", "exact", 2, "a + b, correctly rounded", {"rounding": _RND, "ftz": _FTZ, "sat": _SAT}),
        Entry("fp.sub", "exact", 2, "a - b, correctly rounded", {"rounding": _RND, "ftz": _FTZ, "sat": _SAT}),
        Entry("fp.mul", "exact", 2, "a * b, correctly rounded", {"rounding": _RND, "ftz": _FTZ, "sat": _SAT}),
        Entry("fp.fma", "exact", 3, "a * b + c with a single rounding", {"rounding": _RND, "ftz": _FTZ, "sat": _SAT}),
        Entry("fp.div", "exact", 2, "a / b, correctly rounded", {"rounding": _RND, "ftz": _FTZ}),
        Entry("fp.rcp", "exact", 1, "1 / a, correctly rounded", {"rounding": _RND, "ftz": _FTZ}),
        Entry("fp.sqrt", "exact", 1, "square root of a, correctly rounded", {"rounding": _RND, "ftz": _FTZ}),
        Entry("approx.div", "contract", 2, "approximate a / b (div.approx: a * rcp(b); div.full: scaled)",
              {"ftz": _FTZ, "variant": Param("choice", "approx", ("approx", "full"), "which PTX approximation")}),
        Entry("approx.rcp", "contract", 1, "approximate 1 / a", {"ftz": _FTZ}),
        Entry("approx.sqrt", "contract", 1, "approximate square root", {"ftz": _FTZ}),
        Entry("approx.rsqrt", "contract", 1, "approximate 1 / sqrt(a)", {"ftz": _FTZ}),
        Entry("approx.ex2", "contract", 1, "approximate 2^a (base-2 exponential)", {"ftz": _FTZ},
              smt="2^a is transcendental: the theory of floating point has no exponential (the reference "
                  "model decides its contract exactly)"),
        Entry("approx.lg2", "contract", 1, "approximate log2(a) (base-2 logarithm)", {"ftz": _FTZ},
              smt="log2(a) is transcendental: the theory of floating point has no logarithm (the reference "
                  "model decides its contract exactly)"),
        Entry("approx.sin", "contract", 1, "approximate sine of a (radians)", {"ftz": _FTZ},
              smt="sin(a) is transcendental: the theory of floating point has no sine (the model decides its "
                  "bound: tilecheck/model/sincos.py)"),
        Entry("approx.cos", "contract", 1, "approximate cosine of a (radians)", {"ftz": _FTZ},
              smt="cos(a) is transcendental: the theory of floating point has no cosine (the model decides its "
                  "bound: tilecheck/model/sincos.py)"),
        Entry("approx.tanh", "contract", 1, "approximate hyperbolic tangent of a",
              smt="tanh(a) is transcendental: the theory of floating point has no hyperbolic tangent "
                  "(the model decides its bound: tilecheck/model/tanh.py)"),
        Entry("approx.rcp_hi", "contract", 1,
              "f64 reciprocal from the upper 32 bits of a (1.11.20); low result word zero"),
        Entry("approx.rsqrt_hi", "contract", 1,
              "f64 reciprocal square root from the upper 32 bits of a; low result word zero"),
        Entry("mem.ld", "memory", 1, "load registers from memory: the bits unchanged",
              {"space": _SPACE, "nc": _NC}),
        Entry("mem.st", "memory", 2, "store registers to memory: the bits unchanged", {"space": _SPACE}),
        # -- the instructions around the arithmetic (kind "function": one result per input, operand
        # types per operand; implemented by tilecheck.model.instructions and tilecheck.smt.instructions)
        Entry("bits.mov", "function", 1, "copy the source bits (reinterpretation between same-size types)"),
        Entry("bits.and", "function", 2, "bitwise a & b (logical and for .pred)"),
        Entry("bits.or", "function", 2, "bitwise a | b"),
        Entry("bits.xor", "function", 2, "bitwise a ^ b"),
        Entry("bits.not", "function", 1, "bitwise ~a"),
        Entry("bits.cnot", "function", 1, "a == 0 ? 1 : 0"),
        Entry("bits.shl", "function", 2, "a << b (b a u32; amounts above the width give 0)"),
        Entry("bits.shr", "function", 2,
              "a >> b, arithmetic for .sN, logical for .uN/.bN; amounts above the width clamp to the width"),
        Entry("int.add", "function", 2, "a + b modulo 2^n", {"sat": _ISAT}),
        Entry("int.sub", "function", 2, "a - b modulo 2^n", {"sat": _ISAT}),
        Entry("int.mul", "function", 2, "a * b: low half, high half or the double-width product", {"mode": _MULMODE}),
        Entry("int.mad", "function", 3, "a * b + c with the product's low half, high half or double-width",
              {"mode": _MULMODE, "sat": _ISAT}),
        Entry("int.div", "function", 2, "a / b truncated toward zero; a zero divisor's result unspecified"),
        Entry("int.rem", "function", 2, "a - b * (a / b), the dividend's sign; a zero divisor's result unspecified, "
                                        "a negative operand's machine-dependent"),
        Entry("int.abs", "function", 1, "|a| modulo 2^n (MININT stays MININT)"),
        Entry("int.neg", "function", 1, "-a modulo 2^n"),
        Entry("int.min", "function", 2, "the smaller of a and b (signed or unsigned per type)", {"relu": _RELU}),
        Entry("int.max", "function", 2, "the larger of a and b (signed or unsigned per type)", {"relu": _RELU}),
        Entry("cvt.float", "function", 1,
              "floating-point to floating-point conversion: exact widening, one rounding when narrowing, "
              "or rounding to an integral value in the same format",
              {"rounding": _CVT_RND, "ftz": _FTZ, "sat": _SAT, "relu": _RELU_F, "satfinite": _SATFINITE}),
        Entry("cvt.pack", "function", 2,
              "two values converted and packed into one register: the upper half from a, the lower from b",
              {"rounding": _CVT_RND, "relu": _RELU_F, "satfinite": _SATFINITE}),
        Entry("cvt.lanes", "function", 1,
              "each lane of a packed value converted, the upper lane into the upper half",
              {"rounding": _CVT_RND, "relu": _RELU_F, "satfinite": _SATFINITE}),
        Entry("cvt.to_int", "function", 1,
              "floating-point to integer: round to integral, clamp to the destination range; NaN gives 0 "
              "(0x80..0 when the source is .f64 or the destination 64-bit)",
              {"rounding": _INT_RND, "ftz": _FTZ}),
        Entry("cvt.from_int", "function", 1, "integer to floating-point, rounded once",
              {"rounding": _CVT_RND, "sat": _SAT, "ftz": _FTZ}),
        Entry("cvt.int", "function", 1, "integer width change: sign/zero extension by source type, truncation, "
                                        "or clamping with .sat", {"sat": _ISAT}),
        Entry("cmp.setp", "function", 2, "p = a CMP b (q = !p for two destinations)", {"cmp": _CMP, "ftz": _FTZ}),
        Entry("cmp.setp_bool", "function", 3, "p = (a CMP b) BOOLOP c (q = !(a CMP b) BOOLOP c)",
              {"cmp": _CMP, "ftz": _FTZ, "boolop": Param("choice", "and", ("and", "or", "xor"), "combining operation")}),
        Entry("sel.selp", "function", 3, "d = c ? a : b (bit copy)"),
        Entry("bits.prmt", "function", 3, "byte i of d is byte c[4i+2:4i] of {b, a}, or that byte's sign "
                                          "replicated where c[4i+3] is set"),
        Entry("float.abs", "function", 1, "clear the sign bit (NaN per the form's policy)", {"ftz": _FTZ}),
        Entry("float.neg", "function", 1, "flip the sign bit (NaN per the form's policy)", {"ftz": _FTZ}),
        Entry("float.min", "function", 2, "IEEE minNum with -0 < +0; .NaN: any NaN input gives the canonical NaN; "
                                          ".xorsign.abs: of the magnitudes, with the XOR of the signs",
              {"ftz": _FTZ, "nan": _NANQ, "xorsign": _XORSIGN}),
        Entry("float.max", "function", 2, "IEEE maxNum with -0 < +0; .NaN: any NaN input gives the canonical NaN; "
                                          ".xorsign.abs: of the magnitudes, with the XOR of the signs",
              {"ftz": _FTZ, "nan": _NANQ, "xorsign": _XORSIGN}),
        Entry("float.copysign", "function", 2, "the magnitude of b with the sign of a"),
        Entry("float.testp", "function", 1, "is a of the class (a predicate)", {"test": _TESTP}),
        Entry("addr.cvta", "function", 1,
              "state-space <-> generic address; the model's global window is the identity (as the simulator's)",
              {"space": Param("choice", "global", ("global", "shared", "local", "const", "param"), "state space")}),
    ]
}


# The words of a contract's special-value table: class word -> (class, sign). ``sign`` is +1 or
# -1, or None for either sign; ``finite`` is every non-NaN, non-infinite value. A table row may
# also give hex bits instead of a word.
SPECIAL_WORDS: dict[str, tuple[str, int | None]] = {
    "any": ("any", None), "nan": ("nan", None), "inf": ("inf", None), "zero": ("zero", None),
    "subnormal": ("subnormal", None), "normal": ("normal", None), "finite": ("finite", None),
    "+inf": ("inf", 1), "-inf": ("inf", -1), "+0": ("zero", 1), "-0": ("zero", -1),
    "+subnormal": ("subnormal", 1), "-subnormal": ("subnormal", -1),
    "+normal": ("normal", 1), "-normal": ("normal", -1),
    "+finite": ("finite", 1), "-finite": ("finite", -1),
}


SPECIAL_CLASSES: tuple[str, ...] = tuple(dict.fromkeys(cls for cls, _ in SPECIAL_WORDS.values()))
"""The unsigned classes the words name (``any nan inf zero subnormal normal finite``): a backend
implements these and derives every signed word from :data:`SPECIAL_WORDS`."""

SPECIAL_RESULT_WORDS = ("nan", "+inf", "-inf", "+0", "-0")
"""The words a special-value table's result may be (besides hex bits): a NaN, or pinned bits."""


def special_result_bits(fmt, word: str) -> int | None:
    """The bits a special-table result word pins (hex bits, signed infinities and zeros); None for
    words that name a class (``nan``: any NaN, judged by class)."""
    if word.startswith("0x"):
        return int(word, 16)
    cls, sign = SPECIAL_WORDS.get(word, (None, None))
    if sign is None:
        return None
    sign_bits = fmt.sign_mask if sign == -1 else 0
    if cls == "inf":
        return fmt.inf | sign_bits
    if cls == "zero":
        return sign_bits
    return None


# Every arithmetic operation a key computes, with its number of operands.
OPERATIONS: dict[str, int] = {e.operation: e.arity for e in ENTRIES.values() if e.kind != "memory"}


def operation_of(key: str) -> str:
    """The operation of a semantics key (``approx.rcp_hi`` -> ``rcp``)."""
    return ENTRIES[key].operation


def function_of(key: str) -> str:
    """The function of a semantics key (``approx.rcp_hi`` -> ``rcp_hi``)."""
    return ENTRIES[key].function


def is_high_word(key: str) -> bool:
    """True for the high-word variants (``approx.rcp_hi``, ``approx.rsqrt_hi``)."""
    return ENTRIES[key].high_word


def coerce(entry: Entry, name: str, value: object) -> object:
    """Turn a spec parameter value (after axis substitution) into its typed value.

    Booleans accept YAML booleans, the empty string (absent qualifier) and the qualifier word
    itself (``ftz`` for ``ftz``). Raises ``ValueError`` with a message on a bad value.
    """
    param = entry.params.get(name)
    if param is None:
        known = ", ".join(sorted(entry.params)) or "none"
        raise ValueError(f"{entry.key} has no parameter {name!r} (parameters: {known})")
    if param.kind == "bool":
        if isinstance(value, bool):
            return value
        if value == "":
            return False
        if isinstance(value, str) and value.lower() == name:  # the qualifier word (.NaN for nan)
            return True
        raise ValueError(f"{entry.key}.{name} must be a boolean, '' or {name!r}, got {value!r}")
    if param.kind in ("rounding", "choice"):
        if value not in param.choices:
            raise ValueError(f"{entry.key}.{name} must be one of {', '.join(param.choices)}, got {value!r}")
        return value
    if param.kind == "int":
        if not isinstance(value, int):
            raise ValueError(f"{entry.key}.{name} must be an integer, got {value!r}")
        return value
    raise AssertionError(f"unknown parameter kind {param.kind}")
