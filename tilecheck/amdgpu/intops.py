"""Integer, bit and lane-mask semantics of the AMDGCN instructions around the arithmetic.

One table, :data:`VALU_INT` (vector ALU) and :data:`SALU` (scalar ALU), maps each mnemonic to its
operand widths and a numpy function over unsigned arrays (``uint64`` holding 16-, 32- or 64-bit
values; ``x`` for every lane of a wave, or for every wave of a batch in the scalar case). The
functions are the manuals' pseudo-code (AMD CDNA3 / RDNA3 ISA guides: "D.u32 = S0.u32 & S1.u32"
...) and nothing else: no floating point is computed here (:mod:`tilecheck.amdgpu.floatops` and the
``spec/amdgpu`` forms do that). ``spec/amdgpu-int/*.yaml`` (schema ``amdgpu-integer``, loader
:mod:`tilecheck.spec.amdgpu_integer`) names the same instructions, with the manual's pseudo-code and
llvm-mc-19 encodings, so that the database lists every instruction the simulator executes;
``tests/amdgpu/test_integer_specs.py`` keeps the table and the specs from drifting apart.

A function returns the destination value(s); carry-out and SCC results are returned as bool arrays
after the value (``("u32", "carry")`` in :attr:`IntOp.results`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

M16 = np.uint64(0xFFFF)
M32 = np.uint64(0xFFFFFFFF)
M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_MASK = {16: M16, 32: M32, 64: M64}


@dataclass(frozen=True)
class IntOp:
    """One instruction: ``sources`` widths in bits, ``results`` (``"u32"``, ``"u64"``, ``"carry"``
    for a lane bit written to VCC or an SGPR pair, ``"scc"``), ``fn`` over uint64 arrays."""

    sources: tuple
    results: tuple
    fn: Callable
    reads_carry: bool = False   # v_addc/v_subb, s_addc/s_subb: the last source is the carry in (a bool array)


def _u(x) -> np.ndarray:
    return np.asarray(x, dtype=np.uint64)


def _s32(x) -> np.ndarray:
    """The signed value of 32-bit patterns (int64)."""
    x = _u(x) & M32
    return x.astype(np.int64) - ((x >> np.uint64(31)).astype(np.int64) << 32)


def _s64(x) -> np.ndarray:
    return _u(x).view(np.int64) if _u(x).ndim else np.int64(_u(x))


def _sh(x, width: int) -> np.ndarray:
    """A shift amount: the low log2(width) bits."""
    return _u(x) & np.uint64(width - 1)


def _bits(x, offset, count) -> np.ndarray:
    return (_u(x) >> offset) & ((np.uint64(1) << count) - np.uint64(1))


def _bfe_u32(s0, s1, s2):
    off, n = _u(s1) & np.uint64(31), _u(s2) & np.uint64(31)
    return np.where(n == 0, np.uint64(0), (_u(s0) >> off) & ((np.uint64(1) << n) - np.uint64(1)))


def _bfe_i32(s0, s1, s2):
    off, n = _u(s1) & np.uint64(31), _u(s2) & np.uint64(31)
    field = (_u(s0) >> off) & ((np.uint64(1) << n) - np.uint64(1))
    sign = (field >> np.maximum(n, np.uint64(1)) - np.uint64(1)) & np.uint64(1)
    ext = np.where((sign == 1) & (n > 0), field | (M32 ^ ((np.uint64(1) << n) - np.uint64(1))), field)
    return np.where(n == 0, np.uint64(0), ext & M32)


def _perm(s0, s1, sel):
    """V_PERM_B32: each result byte picks a byte of {S0, S1} (bytes 0-3 of S1, 4-7 of S0) or a
    constant by the selector byte: 8-11 the sign of bytes 1,3,5,7 repeated, 12 = 0x00, >= 13 = 0xff."""
    data = (_u(s0) << np.uint64(32)) | (_u(s1) & M32)
    out = np.zeros(np.broadcast_shapes(np.shape(data), np.shape(sel)), dtype=np.uint64)
    for k in range(4):
        b = (_u(sel) >> np.uint64(8 * k)) & np.uint64(0xFF)
        byte = (data >> (np.minimum(b, np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
        sign = np.where(((data >> (np.uint64(8) * ((b - np.uint64(8)) * np.uint64(2) + np.uint64(1))
                                   + np.uint64(7))) & np.uint64(1)) == 1, np.uint64(0xFF), np.uint64(0))
        val = np.where(b < 8, byte, np.where(b < 12, sign, np.where(b == 12, np.uint64(0), np.uint64(0xFF))))
        out |= val << np.uint64(8 * k)
    return out


def _cmp(pred: str, signed: bool, width: int):
    def f(a, b):
        if signed:
            x, y = (_s32(a), _s32(b)) if width == 32 else (_s64(a), _s64(b))
        else:
            x, y = _u(a) & _MASK[width], _u(b) & _MASK[width]
        return {"eq": x == y, "ne": x != y, "lg": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                "ge": x >= y, "f": np.zeros(np.shape(x), bool), "t": np.ones(np.shape(x), bool)}[pred]
    return f


def _add_co(a, b):
    s = (_u(a) & M32) + (_u(b) & M32)
    return s & M32, s > M32


def _addc_co(a, b, c):
    s = (_u(a) & M32) + (_u(b) & M32) + np.asarray(c, bool).astype(np.uint64)
    return s & M32, s > M32


def _sub_co(a, b):
    a, b = _u(a) & M32, _u(b) & M32
    return (a - b) & M32, b > a


def _subb_co(a, b, c):
    a, b, c = _u(a) & M32, _u(b) & M32, np.asarray(c, bool).astype(np.uint64)
    return (a - b - c) & M32, b + c > a


def _mad_u64_u32(a, b, c):
    """D.u64 = S0.u32 * S1.u32 + S2.u64 (mod 2^64; the carry out is returned too)."""
    p = (_u(a) & M32) * (_u(b) & M32)
    s = p + _u(c)
    return s, s < p


def _mad_i64_i32(a, b, c):
    """{D1.i1, D0.i64} = 65'I(S0.i32) * 65'I(S1.i32) + 65'I(S2.i64): D0 the sum mod 2^64, D1 bit 64 of
    the 65-bit sum, i.e. whether the exact sum is negative (it always fits in 65 bits)."""
    p = np.asarray(_s32(a) * _s32(b), dtype=np.int64)  # |S0 * S1| <= 2^62: no int64 overflow
    c = _u(c)
    s = p.astype(np.uint64) + c
    p_neg, c_neg, s_neg = p < 0, (c >> np.uint64(63)) == 1, (s >> np.uint64(63)) == 1
    # addends of one sign: the exact sum has that sign even where the 64-bit sum wrapped;
    # of opposite signs: no wrap, so the 64-bit sum's sign is the exact one
    return s, np.where(p_neg == c_neg, p_neg, s_neg)


VALU_INT: dict[str, IntOp] = {
    "v_mov_b32": IntOp((32,), ("u32",), lambda a: _u(a) & M32),
    "v_mov_b64": IntOp((64,), ("u64",), lambda a: _u(a)),
    "v_not_b32": IntOp((32,), ("u32",), lambda a: ~_u(a) & M32),
    "v_bfrev_b32": IntOp((32,), ("u32",), lambda a: np.vectorize(lambda v: int(f"{int(v):032b}"[::-1], 2),
                                                                  otypes=[np.uint64])(_u(a) & M32)),
    "v_and_b32": IntOp((32, 32), ("u32",), lambda a, b: _u(a) & _u(b) & M32),
    "v_or_b32": IntOp((32, 32), ("u32",), lambda a, b: (_u(a) | _u(b)) & M32),
    "v_xor_b32": IntOp((32, 32), ("u32",), lambda a, b: (_u(a) ^ _u(b)) & M32),
    "v_or3_b32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: (_u(a) | _u(b) | _u(c)) & M32),
    "v_xor3_b32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: (_u(a) ^ _u(b) ^ _u(c)) & M32),
    "v_and_or_b32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: ((_u(a) & _u(b)) | _u(c)) & M32),
    "v_bfi_b32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: ((_u(a) & _u(b)) | (~_u(a) & _u(c))) & M32),
    "v_bfe_u32": IntOp((32, 32, 32), ("u32",), _bfe_u32),
    "v_bfe_i32": IntOp((32, 32, 32), ("u32",), _bfe_i32),
    "v_perm_b32": IntOp((32, 32, 32), ("u32",), _perm),
    "v_alignbit_b32": IntOp((32, 32, 32), ("u32",),
                            lambda a, b, c: (((_u(a) << np.uint64(32)) | (_u(b) & M32)) >> _sh(c, 32)) & M32),
    "v_lshlrev_b32": IntOp((32, 32), ("u32",), lambda a, b: (_u(b) << _sh(a, 32)) & M32),
    "v_lshrrev_b32": IntOp((32, 32), ("u32",), lambda a, b: (_u(b) & M32) >> _sh(a, 32)),
    "v_ashrrev_i32": IntOp((32, 32), ("u32",),
                           lambda a, b: (_s32(b) >> _sh(a, 32).astype(np.int64)).astype(np.uint64) & M32),
    "v_lshlrev_b16": IntOp((16, 16), ("u16",), lambda a, b: (_u(b) << _sh(a, 16)) & M16),
    "v_lshrrev_b16": IntOp((16, 16), ("u16",), lambda a, b: (_u(b) & M16) >> _sh(a, 16)),
    "v_lshlrev_b64": IntOp((32, 64), ("u64",), lambda a, b: _u(b) << _sh(a, 64)),
    "v_lshrrev_b64": IntOp((32, 64), ("u64",), lambda a, b: _u(b) >> _sh(a, 64)),
    "v_lshl_or_b32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: ((_u(a) << _sh(b, 32)) | _u(c)) & M32),
    "v_lshl_add_u32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: ((_u(a) << _sh(b, 32)) + _u(c)) & M32),
    "v_add_lshl_u32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: ((_u(a) + _u(b)) << _sh(c, 32)) & M32),
    "v_lshl_add_u64": IntOp((64, 32, 64), ("u64",), lambda a, b, c: (_u(a) << (_u(b) & np.uint64(7))) + _u(c)),
    "v_add_u32": IntOp((32, 32), ("u32",), lambda a, b: (_u(a) + _u(b)) & M32),
    "v_add_nc_u32": IntOp((32, 32), ("u32",), lambda a, b: (_u(a) + _u(b)) & M32),
    "v_sub_u32": IntOp((32, 32), ("u32",), lambda a, b: (_u(a) - _u(b)) & M32),
    "v_sub_nc_u32": IntOp((32, 32), ("u32",), lambda a, b: (_u(a) - _u(b)) & M32),
    "v_subrev_u32": IntOp((32, 32), ("u32",), lambda a, b: (_u(b) - _u(a)) & M32),
    "v_subrev_nc_u32": IntOp((32, 32), ("u32",), lambda a, b: (_u(b) - _u(a)) & M32),
    "v_add3_u32": IntOp((32, 32, 32), ("u32",), lambda a, b, c: (_u(a) + _u(b) + _u(c)) & M32),
    "v_mul_lo_u32": IntOp((32, 32), ("u32",), lambda a, b: ((_u(a) & M32) * (_u(b) & M32)) & M32),
    "v_mul_hi_u32": IntOp((32, 32), ("u32",), lambda a, b: ((_u(a) & M32) * (_u(b) & M32)) >> np.uint64(32)),
    "v_mul_u32_u24": IntOp((32, 32), ("u32",),
                           lambda a, b: ((_u(a) & np.uint64(0xFFFFFF)) * (_u(b) & np.uint64(0xFFFFFF))) & M32),
    "v_add_co_u32": IntOp((32, 32), ("u32", "carry"), _add_co),
    "v_addc_co_u32": IntOp((32, 32, 1), ("u32", "carry"), _addc_co, reads_carry=True),
    "v_add_co_ci_u32": IntOp((32, 32, 1), ("u32", "carry"), _addc_co, reads_carry=True),
    "v_sub_co_u32": IntOp((32, 32), ("u32", "carry"), _sub_co),
    "v_subb_co_u32": IntOp((32, 32, 1), ("u32", "carry"), _subb_co, reads_carry=True),
    "v_sub_co_ci_u32": IntOp((32, 32, 1), ("u32", "carry"), _subb_co, reads_carry=True),
    "v_mad_u64_u32": IntOp((32, 32, 64), ("u64", "carry"), _mad_u64_u32),
    "v_mad_i64_i32": IntOp((32, 32, 64), ("u64", "carry"), _mad_i64_i32),
    "v_min_u32": IntOp((32, 32), ("u32",), lambda a, b: np.minimum(_u(a) & M32, _u(b) & M32)),
    "v_max_u32": IntOp((32, 32), ("u32",), lambda a, b: np.maximum(_u(a) & M32, _u(b) & M32)),
    "v_min_i32": IntOp((32, 32), ("u32",), lambda a, b: np.minimum(_s32(a), _s32(b)).astype(np.uint64) & M32),
    "v_max_i32": IntOp((32, 32), ("u32",), lambda a, b: np.maximum(_s32(a), _s32(b)).astype(np.uint64) & M32),
}
"""Vector integer and bit operations (per lane)."""

for _t, _signed, _w in (("u32", False, 32), ("i32", True, 32), ("u64", False, 64), ("i64", True, 64),
                        ("u16", False, 16), ("i16", True, 16)):
    for _p in ("eq", "ne", "lt", "le", "gt", "ge", "f", "t"):
        _fn = _cmp(_p, _signed, 32 if _w == 16 else _w)
        if _w == 16:  # 16-bit compares read the low halves; signed ones sign-extend them
            def _fn(a, b, p=_p, s=_signed):
                if s:
                    x = (_u(a) & M16).astype(np.int64)
                    y = (_u(b) & M16).astype(np.int64)
                    x, y = x - ((x >> 15) << 16), y - ((y >> 15) << 16)
                    return _cmp(p, True, 64)(x.astype(np.uint64), y.astype(np.uint64))
                return _cmp(p, False, 32)(_u(a) & M16, _u(b) & M16)
        VALU_INT[f"v_cmp_{_p}_{_t}"] = IntOp((_w, _w), ("carry",), _fn)


def _scmp(pred, signed, width=32):
    f = _cmp(pred, signed, width)
    return lambda a, b: f(a, b)


SALU: dict[str, IntOp] = {
    "s_mov_b32": IntOp((32,), ("u32",), lambda a: _u(a) & M32),
    "s_mov_b64": IntOp((64,), ("u64",), lambda a: _u(a)),
    "s_movk_i32": IntOp((32,), ("u32",), lambda a: (_s32(_u(a) & M16 | np.where((_u(a) >> np.uint64(15)) & np.uint64(1) == 1, np.uint64(0xFFFF0000), np.uint64(0)))).astype(np.uint64) & M32),
    "s_brev_b32": IntOp((32,), ("u32",), VALU_INT["v_bfrev_b32"].fn),
    "s_not_b32": IntOp((32,), ("u32", "scc"), lambda a: (~_u(a) & M32, (~_u(a) & M32) != 0)),
    "s_not_b64": IntOp((64,), ("u64", "scc"), lambda a: (~_u(a), ~_u(a) != 0)),
    "s_add_u32": IntOp((32, 32), ("u32", "scc"), _add_co),
    "s_addc_u32": IntOp((32, 32, 1), ("u32", "scc"), _addc_co, reads_carry=True),
    "s_sub_u32": IntOp((32, 32), ("u32", "scc"), _sub_co),
    "s_subb_u32": IntOp((32, 32, 1), ("u32", "scc"), _subb_co, reads_carry=True),
    "s_add_i32": IntOp((32, 32), ("u32", "scc"), lambda a, b: ((_u(a) + _u(b)) & M32,
                                                             _ovf_add(a, b))),
    "s_sub_i32": IntOp((32, 32), ("u32", "scc"), lambda a, b: ((_u(a) - _u(b)) & M32, _ovf_sub(a, b))),
    "s_mul_i32": IntOp((32, 32), ("u32",), lambda a, b: ((_u(a) & M32) * (_u(b) & M32)) & M32),
    "s_mul_hi_u32": IntOp((32, 32), ("u32",), VALU_INT["v_mul_hi_u32"].fn),
    "s_lshl_b32": IntOp((32, 32), ("u32", "scc"), lambda a, b: _nz((_u(a) << _sh(b, 32)) & M32)),
    "s_lshr_b32": IntOp((32, 32), ("u32", "scc"), lambda a, b: _nz((_u(a) & M32) >> _sh(b, 32))),
    "s_ashr_i32": IntOp((32, 32), ("u32", "scc"),
                        lambda a, b: _nz((_s32(a) >> _sh(b, 32).astype(np.int64)).astype(np.uint64) & M32)),
    "s_lshl_b64": IntOp((64, 32), ("u64", "scc"), lambda a, b: _nz(_u(a) << _sh(b, 64))),
    "s_lshr_b64": IntOp((64, 32), ("u64", "scc"), lambda a, b: _nz(_u(a) >> _sh(b, 64))),
    "s_ashr_i64": IntOp((64, 32), ("u64", "scc"),
                        lambda a, b: _nz((_u(a).view(np.int64) >> _sh(b, 64).astype(np.int64)).view(np.uint64))),
    "s_lshl1_add_u32": IntOp((32, 32), ("u32", "scc"), lambda a, b: _carry_add((_u(a) << np.uint64(1)) & M32, b, a, 1)),
    "s_lshl2_add_u32": IntOp((32, 32), ("u32", "scc"), lambda a, b: _carry_add((_u(a) << np.uint64(2)) & M32, b, a, 2)),
    "s_lshl3_add_u32": IntOp((32, 32), ("u32", "scc"), lambda a, b: _carry_add((_u(a) << np.uint64(3)) & M32, b, a, 3)),
    "s_lshl4_add_u32": IntOp((32, 32), ("u32", "scc"), lambda a, b: _carry_add((_u(a) << np.uint64(4)) & M32, b, a, 4)),
    "s_bfe_u32": IntOp((32, 32), ("u32", "scc"),
                       lambda a, b: _nz(_bfe_u32(a, _u(b) & np.uint64(31), (_u(b) >> np.uint64(16)) & np.uint64(0x7F)))),
    "s_min_u32": IntOp((32, 32), ("u32", "scc"), lambda a, b: (np.minimum(_u(a) & M32, _u(b) & M32), (_u(a) & M32) < (_u(b) & M32))),
    "s_max_u32": IntOp((32, 32), ("u32", "scc"), lambda a, b: (np.maximum(_u(a) & M32, _u(b) & M32), (_u(a) & M32) > (_u(b) & M32))),
    "s_min_i32": IntOp((32, 32), ("u32", "scc"), lambda a, b: (np.minimum(_s32(a), _s32(b)).astype(np.uint64) & M32, _s32(a) < _s32(b))),
    "s_max_i32": IntOp((32, 32), ("u32", "scc"), lambda a, b: (np.maximum(_s32(a), _s32(b)).astype(np.uint64) & M32, _s32(a) > _s32(b))),
    "s_bitcmp0_b32": IntOp((32, 32), ("scc",), lambda a, b: ((_u(a) >> _sh(b, 32)) & np.uint64(1)) == 0),
    "s_bitcmp1_b32": IntOp((32, 32), ("scc",), lambda a, b: ((_u(a) >> _sh(b, 32)) & np.uint64(1)) == 1),
}
"""Scalar operations (per wave): values and SCC."""

for _w, _suffix in ((32, "b32"), (64, "b64")):
    _m = _MASK[_w]
    for _name, _f in (("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b),
                      ("andn2", lambda a, b: a & ~b), ("orn2", lambda a, b: a | ~b), ("nand", lambda a, b: ~(a & b)),
                      ("nor", lambda a, b: ~(a | b)), ("xnor", lambda a, b: ~(a ^ b)),
                      ("and_not1", lambda a, b: a & ~b), ("or_not1", lambda a, b: a | ~b)):
        SALU[f"s_{_name}_{_suffix}"] = IntOp((_w, _w), (f"u{_w}", "scc"),
                                             lambda a, b, f=_f, m=_m: _nz(f(_u(a), _u(b)) & m))
for _t, _signed in (("u32", False), ("i32", True)):
    for _p in ("eq", "lg", "lt", "le", "gt", "ge"):
        SALU[f"s_cmp_{_p}_{_t}"] = IntOp((32, 32), ("scc",), _scmp(_p, _signed))
for _p in ("eq", "lg"):
    SALU[f"s_cmp_{_p}_u64"] = IntOp((64, 64), ("scc",), _scmp(_p, False, 64))


def _nz(v):
    return v, v != 0


def _ovf_add(a, b):
    s = _s32(a) + _s32(b)
    return (s > 0x7FFFFFFF) | (s < -0x80000000)


def _ovf_sub(a, b):
    s = _s32(a) - _s32(b)
    return (s > 0x7FFFFFFF) | (s < -0x80000000)


def _carry_add(shifted, b, a, n):
    s = shifted + (_u(b) & M32)
    lost = (_u(a) & M32) >> np.uint64(32 - n)
    return s & M32, (s > M32) | (lost != 0)


SALU_SAVEEXEC = ("s_and_saveexec", "s_or_saveexec", "s_xor_saveexec", "s_andn2_saveexec", "s_orn2_saveexec",
                 "s_and_not1_saveexec", "s_or_not1_saveexec", "s_andn1_saveexec")
"""``s_X_saveexec_bW sdst, ssrc``: sdst = EXEC; EXEC = ssrc OP EXEC; SCC = EXEC != 0.

``s_andn2_wrexec_b64`` is not one of them: it writes the *new* EXEC to sdst (EXEC = S0 & ~EXEC;
D = EXEC), and :func:`saveexec_result` had no operation for it (a KeyError inside the simulator), so the
simulator now refuses it as an unsupported instruction, with its location."""


def saveexec_result(name: str, src, exec_):
    """The new EXEC of ``s_X_saveexec`` (the SGPR destination receives the old EXEC)."""
    op = name.rsplit("_saveexec", 1)[0].removeprefix("s_")
    s, e = _u(src), _u(exec_)
    return {"and": s & e, "or": s | e, "xor": s ^ e, "andn2": s & ~e, "orn2": s | ~e, "and_not1": s & ~e,
            "or_not1": s | ~e, "andn1": ~s & e}[op]
