"""The conversions to and from the 8-bit floats (``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.{f32,f16x2}``,
``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}``) against an oracle written here from the OCP OFP8 definition:
every E4M3/E5M2 value decoded from its fields into binary64 (all are exact there), and rounding to
nearest found by comparing the operand, exactly in binary64, with the midpoints between neighbours
(ties to the even code). It shares no arithmetic with tilecheck's model (no Format, no round_pack).
Every f16 operand and every 8-bit pattern is checked, and f32 operands at random and at each
midpoint and its neighbours."""

import numpy as np
import pytest

from tilecheck.model import api

# (exponent bits, mantissa bits, bias, has infinity): OCP OFP8 rev 1.0 §5.1
FORMATS = {"e4m3": (4, 3, 7, False), "e5m2": (5, 2, 15, True)}


def decode(name: str, code: int) -> float:
    """The value of one 8-bit pattern (NaN for the NaN patterns, inf for E5M2's infinities)."""
    e_bits, m_bits, bias, has_inf = FORMATS[name]
    sign = -1.0 if code & 0x80 else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if has_inf and e == (1 << e_bits) - 1:
        return sign * np.inf if m == 0 else np.nan
    if not has_inf and e == (1 << e_bits) - 1 and m == (1 << m_bits) - 1:
        return np.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)


def finite_codes(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The non-negative finite codes in increasing value, and their values."""
    codes = [c for c in range(0x80) if np.isfinite(decode(name, c))]
    return np.array(codes), np.array([decode(name, c) for c in codes])


def expected(name: str, x: np.ndarray, relu: bool = False) -> np.ndarray:
    """cvt.rn.satfinite to ``name`` of binary64 values ``x``: nearest, ties to the even code; beyond
    the largest finite value (infinities included) that value with the sign; NaN -> -1 (any NaN).
    ``relu``: negative results (-0 included, the reading tilecheck takes) become +0."""
    codes, values = finite_codes(name)
    mag = np.abs(x)
    mids = (values[:-1] + values[1:]) / 2  # exact: neighbours differ by a power of two times a small integer
    k = np.searchsorted(mids, np.where(np.isnan(mag), 0, mag), side="left")  # mag <= mids[k]
    k = np.minimum(k, len(values) - 1)
    tie = (k < len(mids)) & (mag == mids[np.minimum(k, len(mids) - 1)])
    odd = (codes[k] & 1) == 1
    k = np.where(tie & odd, k + 1, k)
    out = codes[k]
    out = np.where(mag > values[-1], codes[-1], out)  # .satfinite
    out = out | np.where(np.signbit(x), 0x80, 0)
    if relu:
        out = np.where(np.signbit(x), 0, out)
    return np.where(np.isnan(x), -1, out)


def agree(got: np.ndarray, want: np.ndarray, name: str) -> np.ndarray:
    nan = np.array([np.isnan(decode(name, int(c))) for c in range(256)])
    return np.where(want < 0, nan[got], got == want)


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("relu", [False, True])
def test_every_f16_to_8_bit(name, relu):
    h = np.arange(1 << 16, dtype=np.uint16)
    x = h.view(np.float16).astype(np.float64)
    want = expected(name, x, relu)
    form = f"cvt.rn.satfinite{'.relu' if relu else ''}.{name}x2.f16x2"
    # every f16 in the low lane, with 1.0 in the high one, and in the high lane
    low = np.asarray(api.evaluate(form, (np.uint32(0x3C00) << np.uint32(16)) | h.astype(np.uint32)))
    high = np.asarray(api.evaluate(form, h.astype(np.uint32) << np.uint32(16)))
    one = expected(name, np.array([1.0]))[0]
    assert (low >> 8 == one).all()
    assert agree(low & 0xFF, want, name).all()
    assert agree(high >> 8, want, name).all()


def _f32_operands(name: str, rng) -> np.ndarray:
    """Random binary32 patterns, and every midpoint of ``name``'s values with its two neighbours."""
    _, values = finite_codes(name)
    mids = np.concatenate([(values[:-1] + values[1:]) / 2, [values[-1] * 1.0625, values[-1] * 2]])
    m32 = mids.astype(np.float32).view(np.uint32)
    near = np.concatenate([m32, m32 - 1, m32 + 1])
    special = np.array([0x7F800000, 0x7FC00000, 0x7F800001, 0, 1, 0x00800000, 0x7F7FFFFF], dtype=np.uint32)
    bits = np.concatenate([rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32), near, special])
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("relu", [False, True])
def test_f32_to_8_bit(name, relu):
    bits = _f32_operands(name, np.random.default_rng(20261207))
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        x = bits.view(np.float32).astype(np.float64)
    want = expected(name, x, relu)
    form = f"cvt.rn.satfinite{'.relu' if relu else ''}.{name}x2.f32"
    packed = np.asarray(api.evaluate(form, bits, np.roll(bits, 1)))  # a in the upper byte, b in the lower
    assert agree(packed >> 8, want, name).all()
    assert agree(packed & 0xFF, np.roll(want, 1), name).all()


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("relu", [False, True])
def test_every_8_bit_pair_to_f16(name, relu):
    pairs = np.arange(1 << 16, dtype=np.uint16)
    got = np.asarray(api.evaluate(f"cvt.rn{'.relu' if relu else ''}.f16x2.{name}x2", pairs)).astype(np.uint32)
    values = np.array([decode(name, c) for c in range(256)])
    if relu:
        values = np.where(np.signbit(values) & ~np.isnan(values), 0.0, values)
    for lane in (0, 1):
        v = values[(pairs >> (8 * lane)) & 0xFF]
        half = ((got >> (16 * lane)) & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
        same = (half == v) & (np.signbit(half) == np.signbit(v))
        assert (same | (np.isnan(v) & np.isnan(half))).all()
