"""``spec/amdgpu-int`` against the simulator and llvm-mc-19, and intops against plain Python integers.

* drift: every key of ``intops.VALU_INT`` / ``intops.SALU`` and every ``SALU_SAVEEXEC`` prefix has
  an entry, every ``semantics: intops`` entry is computed by that table, and every
  ``semantics: simulator`` entry is one the simulator's step preparation recognises (and every
  no-op of ``steps.NOPS`` is named); every mnemonic of the committed AMDGCN corpus is named here or
  computed by a ``spec/amdgpu`` form;
* encodings: every recorded line assembles to its bytes with llvm-mc 19+ (skipped with a reason
  when none is installed, as ``test_encodings.py`` does);
* located errors: a malformed file is ``FILE:line:col: error: ...``, also through ``tilecheck spec
  check`` (exit 2);
* semantics: one independent check per family, written from the manuals' pseudo-code with Python
  ints (arbitrary precision, so no wrap-around can hide), on random and edge 32-bit values.
"""

from __future__ import annotations

import re
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

from tilecheck.amdgpu import intops, steps
from tilecheck.amdgpu.asm import mnemonics, parse_asm_file
from tilecheck.amdgpu.encoding import assemble_all, llvm_mc
from tilecheck.amdgpu.floatops import UnknownFloatInstruction, float_semantics
from tilecheck.amdgpu.machine import Machine
from tilecheck.cli import main
from tilecheck.errors import SpecError
from tilecheck.spec.amdgpu_integer import FOLDER, load_integer_instructions
from tilecheck.spec.database import clear_cache, load_database
from tilecheck.specio.files import spec_root

TABLE = load_integer_instructions()
M32 = (1 << 32) - 1
M64 = (1 << 64) - 1
HERE = Path(__file__).resolve().parent

# --- drift ----------------------------------------------------------------------------------------


def test_every_intops_key_has_an_entry_and_every_intops_entry_is_a_key():
    keys = set(intops.VALU_INT) | set(intops.SALU)
    assert sorted(keys - set(TABLE)) == []
    claimed = {n for n, i in TABLE.items() if i.semantics == "intops"}
    assert sorted(n for n in claimed - keys if not n.startswith(intops.SALU_SAVEEXEC)) == []
    # a table key is computed by the table: it may not claim the simulator
    assert sorted(n for n in keys if TABLE[n].semantics != "intops") == []


def test_every_saveexec_prefix_is_named_and_computed():
    for prefix in intops.SALU_SAVEEXEC:
        names = [n for n in TABLE if n.startswith(prefix + "_b")]
        assert names, prefix
        for n in names:
            assert TABLE[n].semantics == "intops"
            intops.saveexec_result(n.rsplit("_b", 1)[0], np.uint64(5), np.uint64(3))  # an operation exists for it


def _fake(name: str):
    return types.SimpleNamespace(mnemonic=name, operands=(None, None, None, None), modifiers={}, dual=None,
                                 text=name, location=None, name=name, encoding="")


# the step kinds of the instructions machine.py implements itself
SIMULATOR_KINDS = {"nop", "branch", "sload", "vload", "vstore", "mode", "cselect", "readfirstlane", "cndmask", "pack"}


@pytest.mark.parametrize("name", sorted(n for n, i in TABLE.items() if i.semantics == "simulator"))
def test_every_simulator_entry_is_one_the_simulator_prepares(name):
    step = steps.prepare_step(0, _fake(name), None)
    assert step.kind in SIMULATOR_KINDS, (name, step.kind)
    if step.kind in ("vload", "vstore"):  # the width must be one the machine reads and writes
        assert re.split(r"_(load|store)_", name, maxsplit=1)[-1] in Machine._SIZES, name


def test_every_no_op_is_named():
    assert sorted(set(steps.NOPS) - set(TABLE)) == []
    assert all(TABLE[n].semantics == "simulator" for n in steps.NOPS)


def test_no_entry_duplicates_a_float_form():
    # an instruction is named once in the database: here or in spec/amdgpu
    forms = load_database().extras["amdgpu"]["forms"]
    assert sorted(set(TABLE) & set(forms)) == []
    assert load_database().extras["amdgpu-integer"].keys() == TABLE.keys()


def test_every_corpus_instruction_is_named_in_the_spec_database():
    # the committed AMDGCN corpus (llc and Triton): each mnemonic is an entry here or is computed
    # by a spec/amdgpu form (float_semantics finds it), so the rule holds for what compilers emit
    db = load_database()
    corpus = set()
    for path in sorted((HERE.parent.parent / "examples" / "amdgpu").rglob("*.s")):
        corpus |= set(mnemonics(parse_asm_file(path)))
    assert len(corpus) > 50
    unnamed = []
    for m in sorted(corpus):
        single = "v_" + m.removeprefix("v_dual_") if m.startswith("v_dual_") else m  # VOPD halves run as VOP2
        if single in TABLE:
            continue
        try:
            float_semantics(single, db)
        except UnknownFloatInstruction:
            unnamed.append(m)
    assert unnamed == []


# --- encodings ------------------------------------------------------------------------------------


def test_every_encoding_matches_llvm_mc():
    mc, why = llvm_mc()
    if mc is None:
        pytest.skip(why)
    encs = [e for instr in TABLE.values() for e in instr.encodings]
    assert len(encs) >= len(TABLE)
    bad = []
    for e, (got, err) in zip(encs, assemble_all(mc, encs)):
        if got != e.bytes:
            shown = ",".join(f"0x{b:02x}" for b in got) if got else err
            bad.append(f"{e.location}: {e.asm} ({e.mcpu}): llvm-mc gives {shown}")
    assert bad == []


# --- located errors -------------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "spec"
    (r / "schema").mkdir(parents=True)
    shutil.copy(spec_root() / "schema" / "amdgpu-integer.schema.json", r / "schema")
    shutil.copytree(spec_root() / FOLDER, r / FOLDER)
    return r


def _break(path: Path, old: str, new: str) -> tuple[int, int]:
    """Replace the first ``old`` by ``new``; the line and column where ``new`` starts."""
    text = path.read_text(encoding="utf-8")
    at = text.index(old)
    path.write_text(text[:at] + new + text[at + len(old):], encoding="utf-8")
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def test_the_copy_loads(root):
    assert load_integer_instructions(root).keys() == TABLE.keys()


def test_yaml_syntax_error_is_located(root):
    path = root / FOLDER / "scalar.yaml"
    line, _ = _break(path, "  - name: s_mov_b32\n", "  - name: [s_mov_b32\n")
    with pytest.raises(SpecError) as info:
        load_integer_instructions(root)
    (p,) = info.value.problems
    assert p.location.path.endswith("amdgpu-int/scalar.yaml") and p.location.line in (line, line + 1)
    assert info.value.exit_code == 2
    assert re.match(r"\S+scalar\.yaml:\d+:\d+: error: YAML syntax", str(info.value))


def test_schema_problems_are_located(root):
    path = root / FOLDER / "vector-integer.yaml"
    line, col = _break(path, "    semantics: intops\n", "    semantics: intop\n")
    line2, col2 = _break(path, "    pseudo:", "    pseudocode:")
    with pytest.raises(SpecError) as info:
        load_integer_instructions(root)
    found = {(p.location.line, p.location.column): p.message for p in info.value.problems}
    assert (line, col + len("    semantics: ")) in found and "intop" in found[(line, col + len("    semantics: "))]
    assert any("pseudocode: unknown field" in m for m in found.values()), found
    assert any(str(p).startswith(f"{path}:{line2}:{col2 + 4}: error:") for p in info.value.problems), found


def test_duplicates_and_foreign_encodings_are_located(root):
    path = root / FOLDER / "scalar.yaml"
    line, col = _break(path, "  - name: s_mov_b64\n", "  - name: s_mov_b32\n")
    _break(path, '{asm: "s_not_b32 s1, s2"', '{asm: "s_not_b64 s1, s2"')
    with pytest.raises(SpecError) as info:
        load_integer_instructions(root)
    messages = [str(p) for p in info.value.problems]
    assert any(m.startswith(f"{path}:{line}:{col + len('  - name: ')}: error: instruction s_mov_b32 listed twice") for m in messages), messages
    assert any("is not an instance of s_not_b32" in m for m in messages), messages


def test_spec_check_exits_2_with_the_location(tmp_path, capsys):
    root = tmp_path / "spec"
    shutil.copytree(HERE.parent / "spec" / "fixtures" / "mini", root)
    shutil.copytree(HERE / "fixtures" / "mini", root, dirs_exist_ok=True)
    shutil.copytree(spec_root() / "schema", root / "schema")
    shutil.copytree(spec_root() / FOLDER, root / FOLDER)
    line, col = _break(root / FOLDER / "memory.yaml", "family: memory", "family: memroy")
    clear_cache()
    try:
        code = main(["spec", "check", str(root)])
    finally:
        clear_cache()
    out = capsys.readouterr()
    assert code == 2
    assert f"memory.yaml:{line}:{col + len('family: ')}: error: family 'memroy' must equal the file stem" in out.out + out.err


# --- semantics against Python integers --------------------------------------------------------------

EDGES = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 0x00008000, 0xFFFF7FFF]


def _words(seed: int, n: int = 2000) -> list[int]:
    rng = np.random.default_rng(seed)
    return EDGES + [int(x) for x in rng.integers(0, 1 << 32, n, dtype=np.uint64)]


def _run(op: intops.IntOp, *cols):
    out = op.fn(*(np.asarray(c, dtype=np.uint64) if not isinstance(c[0], bool) else np.asarray(c, bool) for c in cols))
    return [[int(v) for v in np.asarray(o).astype(np.uint64)] for o in (out if isinstance(out, tuple) else (out,))]


def _signed(x: int, bits: int = 32) -> int:
    return x - (1 << bits) if x >> (bits - 1) else x


def _cols(seed: int, k: int) -> list[list[int]]:
    w = _words(seed)
    rng = np.random.default_rng(seed + 1)
    return [w] + [[w[i] for i in rng.permutation(len(w))] for _ in range(k - 1)]


def test_vector_add_and_sub_carries():
    a, b = _cols(1, 2)
    d, carry = _run(intops.VALU_INT["v_add_co_u32"], a, b)
    assert d == [(x + y) & M32 for x, y in zip(a, b)]
    assert carry == [int(x + y >= 1 << 32) for x, y in zip(a, b)]
    cin = [bool(x & 1) for x in b]
    for name in ("v_addc_co_u32", "v_add_co_ci_u32"):
        d, carry = _run(intops.VALU_INT[name], a, b, cin)
        assert d == [(x + y + c) & M32 for x, y, c in zip(a, b, cin)]
        assert carry == [int(x + y + c >= 1 << 32) for x, y, c in zip(a, b, cin)]
    for name in ("v_subb_co_u32", "v_sub_co_ci_u32"):
        d, borrow = _run(intops.VALU_INT[name], a, b, cin)
        assert d == [(x - y - c) & M32 for x, y, c in zip(a, b, cin)]
        assert borrow == [int(x - y - c < 0) for x, y, c in zip(a, b, cin)]


def test_vector_mad_64():
    a, b, lo, hi = _cols(2, 4)
    c = [h << 32 | l for h, l in zip(hi, lo)]
    d, carry = _run(intops.VALU_INT["v_mad_u64_u32"], a, b, c)
    exact = [x * y + z for x, y, z in zip(a, b, c)]
    assert d == [e & M64 for e in exact] and carry == [e >> 64 for e in exact]
    d, d1 = _run(intops.VALU_INT["v_mad_i64_i32"], a, b, c)
    exact = [_signed(x) * _signed(y) + _signed(z, 64) for x, y, z in zip(a, b, c)]
    # {D1.i1, D0.i64} is the 65-bit two's complement sum: D1 its bit 64
    assert d == [e & M64 for e in exact] and d1 == [(e >> 64) & 1 for e in exact]


def test_perm_on_hand_derived_selectors():
    perm = intops.VALU_INT["v_perm_b32"]
    s0, s1 = 0x11223344, 0x55667788  # bytes 7..4 = 11 22 33 44, bytes 3..0 = 55 66 77 88
    cases = {
        0x00010203: 0x88776655,  # result byte k picks byte 3-k of S1: S1 byte-reversed
        0x07060504: 0x11223344,  # bytes 4-7 are S0's, in order
        0x04000501: 0x44883377,
        0x0C0C0C0C: 0x00000000,  # 12: constant 0x00
        0x0D0E0FFF: 0xFFFFFFFF,  # 13 and above: 0xff
        0x0C0D0C0D: 0x00FF00FF,
    }
    for sel, want in cases.items():
        assert _run(perm, [s0], [s1], [sel])[0] == [want], hex(sel)
    # 8-11: the sign bits S1[15], S1[31], S0[15], S0[31], each repeated over the byte
    assert _run(perm, [0x80000000], [0x00008000], [0x0B0A0908])[0] == [0xFF0000FF]
    assert _run(perm, [0x00008000], [0x80000000], [0x0B0A0908])[0] == [0x00FFFF00]


def test_bfe_sign_and_zero_extension():
    x, off, width = _cols(3, 3)
    off = [o & 31 for o in off]  # only [4:0] is read; keep the whole word for the table to mask
    width = [w & 31 for w in width]
    for signed, name in ((False, "v_bfe_u32"), (True, "v_bfe_i32")):
        want = []
        for v, o, w in zip(x, off, width):
            field = (v >> o) & ((1 << w) - 1)
            if signed and w and field >> (w - 1):
                field -= 1 << w  # sign-extend from bit w-1
            want.append(field & M32)
        assert _run(intops.VALU_INT[name], x, off, width)[0] == want, name
    # by hand: bits [11:8] of 0x00000f00 = 0b1111 -> -1; of 0x00000700 -> 7
    assert _run(intops.VALU_INT["v_bfe_i32"], [0xF00, 0x700, 0xF00], [8, 8, 8], [4, 4, 0])[0] == [M32, 7, 0]


def test_alignbit_and_shifts():
    a, b, c = _cols(4, 3)
    assert _run(intops.VALU_INT["v_alignbit_b32"], a, b, c)[0] == [((x << 32 | y) >> (s & 31)) & M32
                                                                   for x, y, s in zip(a, b, c)]
    assert _run(intops.VALU_INT["v_ashrrev_i32"], c, a)[0] == [(_signed(x) >> (s & 31)) & M32 for x, s in zip(a, c)]
    wide = [x << 32 | y for x, y in zip(a, b)]
    assert _run(intops.VALU_INT["v_lshl_add_u64"], wide, c, wide)[0] == [((w << (s & 7)) + w) & M64
                                                                         for w, s in zip(wide, c)]


def test_vector_compares_signedness():
    a, b = _cols(5, 2)
    ops = {"eq": int.__eq__, "ne": int.__ne__, "lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__}
    for p, f in ops.items():
        assert _run(intops.VALU_INT[f"v_cmp_{p}_i32"], a, b)[0] == [int(f(_signed(x), _signed(y))) for x, y in zip(a, b)]
        assert _run(intops.VALU_INT[f"v_cmp_{p}_u32"], a, b)[0] == [int(f(x, y)) for x, y in zip(a, b)]
        # 16-bit compares read the low halves, the signed ones as i16
        assert _run(intops.VALU_INT[f"v_cmp_{p}_i16"], a, b)[0] == [int(f(_signed(x & 0xFFFF, 16), _signed(y & 0xFFFF, 16)))
                                                                     for x, y in zip(a, b)]
    # by hand: -1 < 1 signed, 0xffffffff > 1 unsigned
    assert _run(intops.VALU_INT["v_cmp_lt_i32"], [M32], [1])[0] == [1]
    assert _run(intops.VALU_INT["v_cmp_lt_u32"], [M32], [1])[0] == [0]
    wide_a = [x << 32 | y for x, y in zip(a, b)]
    wide_b = [y << 32 | x for x, y in zip(a, b)]
    assert _run(intops.VALU_INT["v_cmp_lt_i64"], wide_a, wide_b)[0] == [int(_signed(x, 64) < _signed(y, 64))
                                                                         for x, y in zip(wide_a, wide_b)]


def test_scalar_shift_add_scc_and_overflow():
    a, b = _cols(6, 2)
    for k in (1, 2, 3, 4):
        d, scc = _run(intops.SALU[f"s_lshl{k}_add_u32"], a, b)
        tmp = [(x << k) + y for x, y in zip(a, b)]  # the manual's 64-bit tmp: shifted-out bits count
        assert d == [t & M32 for t in tmp] and scc == [int(t >= 1 << 32) for t in tmp], k
    d, scc = _run(intops.SALU["s_add_i32"], a, b)
    assert d == [(x + y) & M32 for x, y in zip(a, b)]
    assert scc == [int(not -(1 << 31) <= _signed(x) + _signed(y) < 1 << 31) for x, y in zip(a, b)]
    d, scc = _run(intops.SALU["s_sub_i32"], a, b)
    assert scc == [int(not -(1 << 31) <= _signed(x) - _signed(y) < 1 << 31) for x, y in zip(a, b)]
    d, scc = _run(intops.SALU["s_min_i32"], a, b)
    assert d == [x if _signed(x) < _signed(y) else y for x, y in zip(a, b)]
    assert scc == [int(_signed(x) < _signed(y)) for x, y in zip(a, b)]
    cin = [bool(y & 2) for y in b]
    d, scc = _run(intops.SALU["s_subb_u32"], a, b, cin)
    assert d == [(x - y - c) & M32 for x, y, c in zip(a, b, cin)] and scc == [int(y + c > x) for x, y, c in zip(a, b, cin)]
    fields = [(y & 31) | ((y >> 8 & 31) << 16) for y in b]  # s_bfe_u32: offset S1[4:0], width S1[22:16]
    d, scc = _run(intops.SALU["s_bfe_u32"], a, fields)
    want = [(x >> (f & 31)) & ((1 << (f >> 16)) - 1) for x, f in zip(a, fields)]
    assert d == want and scc == [int(v != 0) for v in want]


def test_scalar_logic_scc():
    a, b = _cols(7, 2)
    for name, f in (("s_andn2_b32", lambda x, y: x & ~y), ("s_and_not1_b32", lambda x, y: x & ~y),
                    ("s_orn2_b32", lambda x, y: x | ~y), ("s_nand_b32", lambda x, y: ~(x & y)),
                    ("s_xnor_b32", lambda x, y: ~(x ^ y))):
        d, scc = _run(intops.SALU[name], a, b)
        want = [f(x, y) & M32 for x, y in zip(a, b)]
        assert d == want and scc == [int(v != 0) for v in want], name


def test_saveexec_new_exec():
    s, e = _cols(8, 2)
    ops = {"s_and_saveexec": lambda s, e: s & e, "s_or_saveexec": lambda s, e: s | e, "s_xor_saveexec": lambda s, e: s ^ e,
           "s_andn2_saveexec": lambda s, e: s & ~e, "s_and_not1_saveexec": lambda s, e: s & ~e,
           "s_orn2_saveexec": lambda s, e: s | ~e, "s_or_not1_saveexec": lambda s, e: s | ~e,
           "s_andn1_saveexec": lambda s, e: ~s & e}
    assert set(ops) == set(intops.SALU_SAVEEXEC)
    for name, f in ops.items():
        got = intops.saveexec_result(name, np.asarray(s, np.uint64), np.asarray(e, np.uint64)) & np.uint64(M32)
        assert [int(v) for v in got] == [f(x, y) & M32 for x, y in zip(s, e)], name
