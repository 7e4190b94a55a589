"""Binary floating-point formats, driven by ``spec/formats/*.yaml``.

A :class:`Format` knows its field widths and special encodings and converts between bit patterns
and values: vectorised classification and field extraction on unsigned numpy arrays, and exact
scalar conversion to and from :class:`fractions.Fraction` (used to parse decimal operands and to
describe results). Nothing here rounds arrays: that is the reference model's job.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from tilecheck.errors import Location, OperandError, Problem, SpecError, UnknownFormError, echo
from tilecheck.specio.files import display_path, schema_problems, spec_root
from tilecheck.specio.yamlio import load_yaml

# Classification codes returned by Format.classify (small ints so arrays stay compact).
NEG_INF, NEG_NORMAL, NEG_SUBNORMAL, NEG_ZERO, POS_ZERO, POS_SUBNORMAL, POS_NORMAL, POS_INF, QNAN, SNAN = range(10)
CLASS_NAMES = ("-inf", "-normal", "-subnormal", "-zero", "+zero", "+subnormal", "+normal", "+inf",
               "qnan", "snan")

UINT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
"""The unsigned numpy dtype of each container width in bits, declared once."""
_UINT = UINT_DTYPES

# The rounding vocabulary, declared once (the spec registry re-exports it; every other module
# takes it from there or from here): rn nearest-even, rz toward zero, rm toward -inf, rp toward
# +inf; tininess "after" (IEEE 754 default: judged after rounding) or "before" rounding.
ROUNDINGS = ("rn", "rz", "rm", "rp")
TININESS = ("after", "before")
TININESS_DEFAULT = "after"


@dataclass(frozen=True)
class Format:
    """One binary floating-point format (see ``spec/schema/format.schema.json``)."""

    integer: ClassVar[bool] = False  # (an :class:`IntegerFormat` says True)
    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    container_bits: int
    specials: str  # "ieee" or "fn"
    default_nan: int
    canonical_nan: int
    softfloat_nan: int | None
    numpy_dtype: str | None
    summary: str = ""

    # ---- field geometry ------------------------------------------------------------------
    @property
    def width(self) -> int:
        """Number of significant bits in a pattern (1 + exponent + fraction)."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def precision(self) -> int:
        """Significand precision p, hidden bit included."""
        return self.mantissa_bits + 1

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def max_biased_exponent(self) -> int:
        """Largest biased exponent field that holds finite numbers."""
        top = (1 << self.exponent_bits) - 1
        return top - 1 if self.specials == "ieee" else top

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite number."""
        return self.max_biased_exponent - self.bias

    @property
    def uint(self):
        """numpy unsigned dtype of the container."""
        return _UINT[self.container_bits]

    @property
    def sign_mask(self) -> int:
        return 1 << (self.width - 1)

    @property
    def exponent_mask(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def mantissa_mask(self) -> int:
        return (1 << self.mantissa_bits) - 1

    @property
    def magnitude_mask(self) -> int:
        return self.sign_mask - 1

    @property
    def quiet_bit(self) -> int:
        return 1 << (self.mantissa_bits - 1)

    @property
    def inf(self) -> int:
        """Bits of +inf (ieee formats only)."""
        if self.specials != "ieee":
            raise ValueError(f"{self.name} has no infinity")
        return self.exponent_mask

    @property
    def max_finite(self) -> int:
        """Bits of the largest finite positive value."""
        if self.specials == "ieee":
            return self.exponent_mask - 1
        return self.magnitude_mask - 1  # fn: all-ones is NaN, one below is max

    @property
    def min_normal(self) -> int:
        return 1 << self.mantissa_bits

    @property
    def min_subnormal(self) -> int:
        return 1

    # ---- vectorised bit views ----------------------------------------------------------
    def bits(self, values) -> np.ndarray:
        """``values`` as an array of this format's unsigned container type (no value change)."""
        arr = np.asarray(values)
        if arr.dtype == self.uint:
            return arr
        if arr.dtype.kind in "iu":
            return arr.astype(self.uint)
        raise TypeError(f"{self.name} bit patterns must be unsigned integers, got {arr.dtype}")

    def fields(self, bits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Split patterns into (sign 0/1, biased exponent field, fraction field), as int64."""
        b = self.bits(bits).astype(np.uint64)
        sign = (b >> np.uint64(self.width - 1)).astype(np.int64) & 1
        exp = ((b >> np.uint64(self.mantissa_bits)) & np.uint64((1 << self.exponent_bits) - 1)).astype(np.int64)
        frac = (b & np.uint64(self.mantissa_mask)).astype(np.int64) if self.mantissa_bits < 63 else (b & np.uint64(self.mantissa_mask))
        return sign, exp, frac

    def is_nan(self, bits) -> np.ndarray:
        b = self.bits(bits)
        mag = b & self.uint(self.magnitude_mask)
        if self.specials == "ieee":
            return mag > self.uint(self.exponent_mask)
        return mag == self.uint(self.magnitude_mask)

    def is_inf(self, bits) -> np.ndarray:
        b = self.bits(bits)
        if self.specials != "ieee":
            return np.zeros(b.shape, dtype=bool)
        return (b & self.uint(self.magnitude_mask)) == self.uint(self.exponent_mask)

    def is_zero(self, bits) -> np.ndarray:
        return (self.bits(bits) & self.uint(self.magnitude_mask)) == 0

    def is_subnormal(self, bits) -> np.ndarray:
        mag = self.bits(bits) & self.uint(self.magnitude_mask)
        return (mag != 0) & (mag < self.uint(self.min_normal))

    def classify(self, bits) -> np.ndarray:
        """Class code per pattern (see ``CLASS_NAMES``), as uint8."""
        b = self.bits(bits)
        mag = b & self.uint(self.magnitude_mask)
        neg = (b & self.uint(self.sign_mask)) != 0
        out = np.empty(b.shape, dtype=np.uint8)
        zero = mag == 0
        sub = (mag != 0) & (mag < self.uint(self.min_normal))
        nan = self.is_nan(b)
        inf = self.is_inf(b)
        out[...] = np.where(neg, NEG_NORMAL, POS_NORMAL)
        out[zero] = np.where(neg, NEG_ZERO, POS_ZERO)[zero]
        out[sub] = np.where(neg, NEG_SUBNORMAL, POS_SUBNORMAL)[sub]
        out[inf] = np.where(neg, NEG_INF, POS_INF)[inf]
        if self.specials == "ieee":
            quiet = (b & self.uint(self.quiet_bit)) != 0
            out[nan] = np.where(quiet, QNAN, SNAN)[nan]
        else:
            out[nan] = QNAN
        return out

    def to_float64(self, bits) -> np.ndarray:
        """Exact float64 values of the patterns (every format here has p <= 53 and a range
        inside binary64's). NaNs come out as NaN (payload not preserved)."""
        if self.precision > 53 or self.emax > 1023 or self.emin - self.mantissa_bits < -1074:
            raise ValueError(f"{self.name} does not fit in float64")
        if self.numpy_dtype:
            with np.errstate(invalid="ignore"):  # signalling NaNs quieten on conversion
                return self.bits(bits).view(np.dtype(self.numpy_dtype)).astype(np.float64)
        sign, exp, frac = self.fields(bits)
        normal = exp != 0
        sig = np.where(normal, frac + (1 << self.mantissa_bits), frac).astype(np.float64)
        e = np.where(normal, exp, 1) - self.bias - self.mantissa_bits
        val = np.ldexp(sig, e.astype(np.int32))
        val = np.where(sign == 1, -val, val)
        val = np.where(self.is_inf(bits), np.where(sign == 1, -np.inf, np.inf), val)
        return np.where(self.is_nan(bits), np.nan, val)

    # ---- scalar exact conversions -------------------------------------------------------
    def to_fraction(self, bits: int) -> Fraction | None:
        """Exact value of a finite pattern; ``None`` for infinities and NaNs."""
        bits = int(bits)
        sign = -1 if bits & self.sign_mask else 1
        exp = (bits & self.exponent_mask) >> self.mantissa_bits
        frac = bits & self.mantissa_mask
        if self.specials == "ieee" and exp == (1 << self.exponent_bits) - 1:
            return None
        if self.specials == "fn" and (bits & self.magnitude_mask) == self.magnitude_mask:
            return None
        if exp == 0:
            value = Fraction(frac) * Fraction(2) ** (self.emin - self.mantissa_bits)
        else:
            value = Fraction(frac + (1 << self.mantissa_bits)) * Fraction(2) ** (exp - self.bias - self.mantissa_bits)
        return sign * value

    def power_bits(self, n: int) -> int:
        """The pattern of ``2**n``, clamped to the format's range (0 below it, infinity above it):
        the magnitude a contract rule's ``|x| > 2**n`` compares with."""
        if n > self.emax:
            return self.inf
        if n < self.emin - self.mantissa_bits:
            return 0
        return self.from_fraction(Fraction(2) ** n)

    def from_fraction(self, value: Fraction, rounding: str = "rn", negative_zero: bool = False) -> int:
        """Correctly round an exact rational to this format (scalar, exact; subnormals and
        overflow included). ``negative_zero`` gives the sign of a zero ``value``."""
        if rounding not in ROUNDINGS:
            raise ValueError(f"unknown rounding {rounding!r}")
        value = Fraction(value)
        neg = value < 0 or (value == 0 and negative_zero)
        mag = -value if value < 0 else value
        sign_bits = self.sign_mask if neg else 0
        if mag == 0:
            return sign_bits
        # exponent e with 2^e <= mag < 2^(e+1)
        e = mag.numerator.bit_length() - mag.denominator.bit_length()
        if Fraction(2) ** e > mag:
            e -= 1
        e = max(e, self.emin)
        quantum = Fraction(2) ** (e - self.mantissa_bits)
        scaled = mag / quantum
        q, r = divmod(scaled.numerator, scaled.denominator)
        rem = Fraction(r, scaled.denominator)
        away = {"rz": False, "rm": neg and rem > 0, "rp": (not neg) and rem > 0,
                "rn": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and q % 2 == 1)}[rounding]
        q += int(away)
        if q == 1 << self.precision:
            q >>= 1
            e += 1
        if e > self.emax:
            return sign_bits | self._overflow_magnitude(neg, rounding)
        if q < (1 << self.mantissa_bits):
            return sign_bits | q  # subnormal (or zero)
        biased = e + self.bias
        return sign_bits | (biased << self.mantissa_bits) | (q - (1 << self.mantissa_bits))

    def _overflow_magnitude(self, negative: bool, rounding: str) -> int:
        to_inf = rounding == "rn" or (rounding == "rp" and not negative) or (rounding == "rm" and negative)
        if to_inf:
            return self.inf if self.specials == "ieee" else self.magnitude_mask  # fn: NaN
        return self.max_finite

    def describe(self, bits: int) -> tuple[str, str]:
        """(decimal value text, class name) of one pattern, for reports."""
        cls = CLASS_NAMES[int(self.classify(np.array([bits], dtype=self.uint))[0])]
        value = self.to_fraction(bits)
        if value is None:
            if cls in ("qnan", "snan"):
                return ("nan", cls)
            return (("-" if cls.startswith("-") else "+") + "inf", cls)
        if value == 0:
            return ("-0.0" if bits & self.sign_mask else "0.0", cls)
        return (_fraction_text(value, self.precision), cls)

    def hex(self, bits: int) -> str:
        """``0x...`` with as many digits as the container has nibbles."""
        digits = (self.width + 3) // 4
        return f"0x{int(bits):0{digits}x}"

    def parse_operand(self, text: str, where: str = "operand", notes: list | None = None) -> int:
        """Bits from ``0x`` hex or a decimal literal (``1.5``, ``-2e-3``, ``inf``, ``-nan``, ``1/3``).

        Decimal literals are rounded to nearest-even exactly (via rationals, no double rounding).
        The work is bounded by the format's range: a decimal exponent far outside it is decided
        from the exponent alone (overflow or underflow) without building the power of ten. When
        ``notes`` is a list, a sentence is appended for every literal that did not convert
        exactly (overflow to infinity, underflow to zero, rounding). Raises
        :class:`OperandError` on malformed text or hex wider than the format.
        """
        s = text.strip()
        low = s.lower()
        if low.startswith(("0x", "-0x", "+0x")):
            if low.startswith(("-", "+")):
                raise OperandError(f"{where}: hex operand {echo(text)} must be a bit pattern without a sign")
            digits = s[2:].replace("_", "")
            if not digits or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise OperandError(f"{where}: {echo(text)} is not a hex bit pattern (0x followed by hex digits)")
            if len(digits.lstrip("0")) * 4 > self.width + 3:
                raise OperandError(f"{where}: {echo(text)} does not fit in {self.width}-bit {self.name} "
                                   f"(largest pattern {self.hex((1 << self.width) - 1)})")
            value = int(digits, 16)
            if value >> self.width:
                raise OperandError(f"{where}: {echo(text)} does not fit in {self.width}-bit {self.name} "
                                   f"(largest pattern {self.hex((1 << self.width) - 1)})")
            return value
        sign = -1 if low.startswith("-") else 1
        body = low[1:] if low[:1] in "+-" else low
        neg_bit = self.sign_mask if sign < 0 else 0
        if body in ("inf", "infinity"):
            if self.specials != "ieee":
                raise OperandError(f"{where}: {self.name} has no infinity")
            return self.inf | neg_bit
        if body == "nan":
            return self.default_nan | neg_bit
        magnitude = decimal_magnitude(body, self.emax, self.emin - self.mantissa_bits)
        if magnitude is None:
            raise OperandError(f"{where}: {echo(text)} is neither a hex bit pattern nor a decimal number "
                               "(nor inf, nan, or a ratio like 1/3)")
        if magnitude == "too long":
            raise OperandError(f"{where}: {echo(text)} has more than {_MAX_DIGITS} digits")
        if isinstance(magnitude, str):  # decided from the exponent alone
            if magnitude == "overflow":
                bits = neg_bit | self._overflow_magnitude(sign < 0, "rn")
                if notes is not None:
                    notes.append(f"{where}: {echo(text)} overflows {self.name}: it becomes "
                                 f"{self.describe(bits)[0]} ({self.hex(bits)})")
                return bits
            if notes is not None:
                notes.append(f"{where}: {echo(text)} underflows {self.name}: it becomes "
                             f"{'-' if sign < 0 else ''}0.0 ({self.hex(neg_bit)})")
            return neg_bit
        value = sign * magnitude
        bits = self.from_fraction(value, "rn", negative_zero=sign < 0)
        if notes is not None and value != 0:
            exact = self.to_fraction(bits)
            if exact is None:
                notes.append(f"{where}: {echo(text)} overflows {self.name}: it becomes "
                             f"{self.describe(bits)[0]} ({self.hex(bits)})")
            elif exact == 0:
                notes.append(f"{where}: {echo(text)} underflows {self.name}: it becomes "
                             f"{self.describe(bits)[0]} ({self.hex(bits)})")
            elif exact != value:
                notes.append(f"{where}: {echo(text)} is not exactly representable in {self.name}: "
                             f"rounded to nearest, {self.describe(bits)[0]} ({self.hex(bits)})")
        return bits


@dataclass(frozen=True)
class IntegerFormat:
    """A two's-complement (``s``) or unsigned (``u``) integer of ``container_bits`` bits, as the
    operands and results of ``cvt`` between integers and floats are (``cvt.rn.f32.s32``,
    ``cvt.rzi.s32.f32``). It offers what code judging values of either kind reads from a
    :class:`Format` -- ``name``, ``width``, ``uint``, :meth:`hex`, :meth:`describe`,
    :meth:`parse_operand` -- and says ``integer``: its values are compared bit for bit, with no
    NaN or signed-zero classes."""

    integer: ClassVar[bool] = True
    name: str
    signed: bool
    container_bits: int

    @property
    def width(self) -> int:
        """Bits of a value."""
        return self.container_bits

    @property
    def uint(self):
        """The unsigned numpy dtype of the format's width."""
        return _UINT[self.container_bits]

    @property
    def low(self) -> int:
        """The least value."""
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def high(self) -> int:
        """The greatest value."""
        return (1 << (self.width - 1 if self.signed else self.width)) - 1

    def to_int(self, bits: int) -> int:
        """The value a pattern holds."""
        bits = int(bits) & ((1 << self.width) - 1)
        return bits - (1 << self.width) if self.signed and bits >> (self.width - 1) else bits

    def from_int(self, value: int) -> int:
        """The pattern of ``value`` (which must lie in ``[low, high]``)."""
        return int(value) & ((1 << self.width) - 1)

    def describe(self, bits: int) -> tuple[str, str]:
        """(decimal value text, class name) of one pattern, for reports."""
        return (str(self.to_int(bits)), "integer")

    def hex(self, bits: int) -> str:
        """``0x...`` with as many digits as the value has nibbles."""
        return f"0x{int(bits):0{(self.width + 3) // 4}x}"

    def parse_operand(self, text: str, where: str = "operand", notes: list | None = None) -> int:
        """Bits from ``0x`` hex (a pattern) or a decimal integer (``-5``, ``1_000``) in range;
        :class:`OperandError` otherwise (``notes`` is never written: nothing is rounded)."""
        s = text.strip().replace("_", "")
        low = s.lower()
        if low.startswith("0x"):
            if not re.fullmatch(r"[0-9a-f]+", low[2:]) or int(low[2:], 16) >> self.width:
                raise OperandError(f"{where}: {echo(text)} is not a {self.width}-bit hex pattern of {self.name}")
            return int(low[2:], 16)
        if not re.fullmatch(r"[+-]?[0-9]+", s):
            raise OperandError(f"{where}: {echo(text)} is not an integer (decimal, or a 0x bit pattern) of {self.name}")
        value = int(s)
        if not self.low <= value <= self.high:
            raise OperandError(f"{where}: {value} is outside {self.name} ([{self.low}, {self.high}])")
        return self.from_int(value)


INTEGER_FORMATS = {f"{k}{b}": IntegerFormat(f"{k}{b}", k == "s", b) for k in "su" for b in (8, 16, 32, 64)}
"""The integer formats of ``cvt``'s integer operands and results, by PTX type name."""


# a decimal literal: digits with an optional point and exponent (underscores between digits allowed)
_DECIMAL = re.compile(r"(?P<int>[0-9](?:_?[0-9])*)?(?:\.(?P<frac>(?:[0-9](?:_?[0-9])*)?))?"
                      r"(?:e(?P<exp>[+-]?[0-9](?:_?[0-9])*))?")
_RATIO = re.compile(r"(?P<num>[0-9](?:_?[0-9])*)/(?P<den>[0-9](?:_?[0-9])*)")
# at most this many significant digits (Python refuses longer integer conversions by default;
# 800 digits already spell every binary64 value exactly)
_MAX_DIGITS = 4000
_LOG10_2 = math.log10(2)


def decimal_magnitude(body: str, emax: int, etiny: int):
    """The exact value of an unsigned decimal or ratio literal (lower case), or
    ``"overflow"``/``"underflow"`` when its decimal exponent alone puts it far outside the range of
    a format with largest exponent ``emax`` and smallest subnormal ``2**etiny``, ``"too long"``
    beyond ``_MAX_DIGITS`` digits; ``None`` if malformed.

    The work is bounded: a power of ten is built only when its exponent lies within a few hundred
    of the format's range, so ``1e99999999999`` costs as little as ``1e9``.
    """
    m = _RATIO.fullmatch(body)
    if m:
        num, den = m.group("num").replace("_", ""), m.group("den").replace("_", "")
        if len(num) > _MAX_DIGITS or len(den) > _MAX_DIGITS:
            return "too long"
        if int(den) == 0:
            return None
        return Fraction(int(num), int(den))
    m = _DECIMAL.fullmatch(body)
    if not m or (m.group("int") is None and not m.group("frac")):
        return None
    int_part = (m.group("int") or "").replace("_", "")
    frac_part = (m.group("frac") or "").replace("_", "")
    exp_text = (m.group("exp") or "0").replace("_", "")
    digits = (int_part + frac_part).lstrip("0")
    if not digits:
        return Fraction(0)
    if len(digits) > _MAX_DIGITS:
        return "too long"
    # the exponent text is bounded by the command line, but int() of it is cheap; 10**exp is not
    exp10 = int(exp_text) - len(frac_part)
    # value = int(digits) * 10**exp10, so 10**(k-1+exp10) <= value < 10**(k+exp10), k = len(digits)
    k = len(digits)
    top_binary = emax + 2  # at or above 2**(emax+2) round-to-nearest overflows
    bottom_binary = etiny - 2  # below 2**(etiny-1) round-to-nearest gives zero
    if k - 1 + exp10 > math.ceil(top_binary * _LOG10_2) + 1:
        return "overflow"
    if k + exp10 < math.floor(bottom_binary * _LOG10_2) - 1:
        return "underflow"
    n = int(digits)
    return Fraction(n * 10 ** exp10) if exp10 >= 0 else Fraction(n, 10 ** -exp10)


def _fraction_text(value: Fraction, precision: int) -> str:
    """Decimal text with enough digits to identify ``value`` at this precision."""
    digits = min(max(3, math.ceil(precision * math.log10(2)) + 2), 17)
    as_float = float(value)  # exact for every value of a format up to binary64
    if as_float != 0 and math.isfinite(as_float):
        return f"{as_float:.{digits}g}"
    return str(value)  # only for values outside binary64's range


def _hex(doc, key_path: tuple) -> int:
    node = doc.data
    for k in key_path:
        node = node[k]
    return int(node, 16)


def load_formats(root: str | Path) -> dict[str, Format]:
    """Every format under ``root/formats``, by name (cached per root); raises :class:`SpecError`."""
    formats, problems = read_formats(root)
    if problems:
        raise SpecError(list(problems))
    return formats


def read_formats(root: str | Path) -> tuple[dict[str, Format], tuple[Problem, ...]]:
    """The formats under ``root/formats`` that load, and the problems of those that do not (the
    spec database reports them with its own and goes on with the good ones)."""
    formats, problems = _load_formats(str(root), _where(Path(root)))
    return dict(formats), problems


@lru_cache(maxsize=None)
def _load_formats(root: str, resolved: str = "") -> tuple[dict[str, Format], tuple[Problem, ...]]:
    # ``resolved`` only keys the cache (see _where)
    folder = Path(root) / "formats"
    problems: list[Problem] = []
    formats: dict[str, Format] = {}
    files = sorted(folder.glob("*.yaml"))
    if not files:
        return {}, (Problem(Location(display_path(folder, Path(root))), "no format files found"),)
    for path in files:
        try:
            doc = load_yaml(path, display_path(path, Path(root)))
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        found = schema_problems(doc, "format", Path(root))
        if found:
            problems.extend(found)
            continue
        d = doc.data
        if d["name"] != path.stem:
            problems.append(Problem(doc.locate(("name",)), f"name {d['name']!r} must equal the file stem {path.stem!r}"))
            continue
        fmt = Format(
            name=d["name"], exponent_bits=d["exponent_bits"], mantissa_bits=d["mantissa_bits"],
            bias=d.get("bias", (1 << (d["exponent_bits"] - 1)) - 1), container_bits=d["container_bits"],
            specials=d["specials"], default_nan=_hex(doc, ("nan", "default")),
            canonical_nan=_hex(doc, ("nan", "canonical")),
            softfloat_nan=_hex(doc, ("nan", "softfloat_default")) if "softfloat_default" in d["nan"] else None,
            numpy_dtype=d.get("numpy_dtype"), summary=d["summary"],
        )
        if fmt.width > fmt.container_bits:
            problems.append(Problem(doc.locate(("container_bits",)),
                                    f"{fmt.width}-bit format does not fit a {fmt.container_bits}-bit container"))
        for key in ("default", "canonical"):
            value = _hex(doc, ("nan", key))
            if not bool(fmt.is_nan(np.array([value], dtype=fmt.uint))[0]):
                problems.append(Problem(doc.locate(("nan", key)), f"nan.{key} {d['nan'][key]} is not a NaN of {fmt.name}"))
        formats[fmt.name] = fmt
    return formats, tuple(problems)


def _where(root) -> str:
    """A cache key for a spec root: a relative root names another folder after a chdir (cheap for
    absolute roots, which is every root but a relative ``TILECHECK_SPEC_DIR``)."""
    return "" if root.is_absolute() else str(root.resolve())


@lru_cache(maxsize=None)
def reduced_format(exponent_bits: int, mantissa_bits: int) -> Format:
    """The IEEE-style format ``e{exponent_bits}m{mantissa_bits}`` that ``spec/formats`` need not
    hold (``tilecheck prove`` queries reason about such formats): bias ``2**(e-1) - 1``, infinities
    and NaNs in the all-ones exponent, default NaN the positive quiet NaN with an empty payload,
    in the smallest 8/16/32/64-bit container that holds it."""
    if exponent_bits < 2 or mantissa_bits < 1 or 1 + exponent_bits + mantissa_bits > 64:
        raise ValueError(f"no e{exponent_bits}m{mantissa_bits} format: need 2+ exponent bits, 1+ fraction bits, "
                         "at most 64 bits in all")
    width = 1 + exponent_bits + mantissa_bits
    inf = ((1 << exponent_bits) - 1) << mantissa_bits
    return Format(name=f"e{exponent_bits}m{mantissa_bits}", exponent_bits=exponent_bits, mantissa_bits=mantissa_bits,
                  bias=(1 << (exponent_bits - 1)) - 1, container_bits=next(c for c in (8, 16, 32, 64) if c >= width),
                  specials="ieee", default_nan=inf | (1 << (mantissa_bits - 1)), canonical_nan=(1 << (width - 1)) - 1,
                  softfloat_nan=None, numpy_dtype=None, summary=f"IEEE-style e{exponent_bits}m{mantissa_bits}")


def all_formats() -> dict[str, Format]:
    """Every format in ``spec/formats``, by name."""
    return load_formats(spec_root())


def get_format(name: str | Format) -> Format:
    """The format called ``name`` (``f16``, ``bf16``, ``f32``, ``f64``, ``tf32``, ``e5m2``, ``e4m3``) in the
    default spec root (:func:`spec_root`); a :class:`Format` is returned unchanged.

    For entry points that hold no database (a bare name from a user, the public functions that
    accept names). Code working for a loaded database takes its formats from there instead
    (``db.formats``, ``form.format``, ``form.format_of(name)``), so that a database loaded from
    another root computes with that root's formats."""
    if isinstance(name, Format):
        return name
    formats = load_formats(spec_root())
    try:
        return formats[name]
    except KeyError:
        raise UnknownFormError(f"unknown format {name!r}; known: {', '.join(sorted(formats))}") from None
