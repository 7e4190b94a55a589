"""Initialized module data and 32-bit local addresses, as libdevice's functions use them.

libdevice's sinf/cosf/sin/cos (what Triton's tl.sin and tl.cos call) read constant tables declared
at module scope (``.global .align 4 .b8 __cudart_i2opi_f[24] = {65, 144, ...};``) through their
address (``mov.b64 %rd5, __cudart_i2opi_f; ld.global.nc.b32 %r25, [%rd6];``) and keep a small
array in local memory addressed with 32 bits (``mov.b32 %SPL, __local_depot0;
st.local.b32 [%SPL+24], %r57;``). The kernels below read a table of known bytes: the result tells
where the bytes landed (little endian, aligned as declared, zero past the initializer), and a
changed table changes the verdict.
"""

from __future__ import annotations

import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.sim.frontend import parse_module
from tilecheck.verify import compiled

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# thread i's element: a[i] in %f1, &out[i] in %rd5
LOAD = """  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [o];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r9, %ntid.x;
  mad.lo.s32 %r1, %r2, %r9, %r1;
  mul.wide.s32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
"""

# out[i] = a[i] * table[1] (a float32 read from the table's second word: 2.0 when the table is
# {1.0, 2.0} written as bytes, little endian); the first word is padding the kernel skips
TABLE_KERNEL = """
.global .align 1 .b8 $str[5] = {70, 84, 90, 0, 0};
.global .align 4 .b8 table[8] = {0, 0, 128, 63, 0, 0, 0, 64};
.visible .entry scale(.param .u64 a, .param .u64 o)
{
  .reg .b32 %r<10>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
{load}  mov.b64 %rd6, table;
  ld.global.nc.f32 %f2, [%rd6+4];
  mul.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd5], %f3;
  ret;
}
""".replace("{load}", LOAD)


def _write(tmp_path, body: str, name: str = "k.ptx") -> str:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return str(path)


def test_a_table_of_bytes_is_read_little_endian(tmp_path, db):
    path = _write(tmp_path, TABLE_KERNEL)
    assert compiled.verify_ptx(path, "scale", "mul.rn.f32(a, 2.0)", db=db, cases=2000).verdict_word \
        == "no-counterexample"
    assert compiled.verify_ptx(path, "scale", "mul.rn.f32(a, 1.0)", db=db, cases=2000).verdict_word \
        == "counterexample"


def test_a_changed_table_changes_the_verdict(tmp_path, db):
    # the second word 0x40400000 (3.0): what the kernel computes follows the bytes
    path = _write(tmp_path, TABLE_KERNEL.replace("0, 0, 0, 64}", "0, 0, 64, 64}"))
    assert compiled.verify_ptx(path, "scale", "mul.rn.f32(a, 3.0)", db=db, cases=2000).verdict_word \
        == "no-counterexample"


def test_initializers_are_typed_aligned_and_zero_filled(tmp_path):
    text = HEADER + (".global .align 8 .b32 words[3] = {1, 0x10, -1};\n"
                     ".global .f32 half = 0f3F000000;\n"
                     ".global .align 16 .b8 tail[6] = {7};\n" + TABLE_KERNEL.split("\n", 3)[3])
    module = parse_module(text, "m.ptx")
    assert module.data["words"].data == bytes([1, 0, 0, 0, 16, 0, 0, 0, 255, 255, 255, 255])
    assert module.data["words"].align == 8
    assert module.data["half"].data == bytes([0, 0, 0, 63])
    assert module.data["tail"].data == bytes([7, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("decl,what", [
    (".global .align 8 .u64 p = generic(table);", "unsupported initializer 'generic(table)'"),
    (".global .align 4 .b8 t[2] = {1, 2, 3};", "3 initializers for 2 elements"),
    (".global .align 4 .b8 table[8] = {0};", "module data 'table' declared twice"),
])
def test_bad_module_data_is_a_located_error(tmp_path, capsys, decl, what):
    path = _write(tmp_path, TABLE_KERNEL + decl + "\n")
    code = main(["verify", path, "--entry", "scale", "--against", "mul.rn.f32(a, 2.0)"])
    err = capsys.readouterr().err
    line = len((HEADER + TABLE_KERNEL).splitlines()) + 1
    assert code == 2 and what in err and f"k.ptx:{line}:" in err and "Traceback" not in err


def test_a_store_into_module_data_is_refused(tmp_path, db):
    path = _write(tmp_path, TABLE_KERNEL.replace("st.global.f32 [%rd5], %f3;", "st.global.f32 [%rd6], %f3;"))
    with pytest.raises(UnsupportedPtxError):
        compiled.verify_ptx(path, "scale", "mul.rn.f32(a, 2.0)", db=db, cases=64)


# out[i] = a[i] * 2.0 computed through local memory addressed with 32 bits: the product stored at
# [%SPL+4] and read back through a register holding %SPL + 4
LOCAL32_KERNEL = """
.visible .entry twice(.param .u64 a, .param .u64 o)
{
  .local .align 4 .b8 __local_depot0[8];
  .reg .b32 %SPL;
  .reg .b32 %r<10>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<6>;
  mov.b32 %SPL, __local_depot0;
{load}  mul.rn.f32 %f2, %f1, 0f40000000;
  st.local.f32 [%SPL+4], %f2;
  add.u32 %r3, %SPL, 4;
  ld.local.f32 %f3, [%r3];
  st.global.f32 [%rd5], %f3;
  ret;
}
""".replace("{load}", LOAD)


def test_local_memory_addressed_with_32_bits(tmp_path, db):
    path = _write(tmp_path, LOCAL32_KERNEL)
    assert compiled.verify_ptx(path, "twice", "mul.rn.f32(a, 2.0)", db=db, cases=2000).verdict_word \
        == "no-counterexample"
    # reading the other word of the array (never written: not the product) is caught
    wrong = _write(tmp_path, LOCAL32_KERNEL.replace("add.u32 %r3, %SPL, 4;", "add.u32 %r3, %SPL, 0;"), "w.ptx")
    assert compiled.verify_ptx(wrong, "twice", "mul.rn.f32(a, 2.0)", db=db, cases=2000).verdict_word \
        == "counterexample"


def test_only_registers_every_write_of_which_derives_from_a_table_read_constants(tmp_path):
    # %rd6 holds the table's address (plus 4): its load is a constant, no element's bytes; %rd7 is
    # written from the table once and from the operand buffer once, so its loads stay leaves
    from tilecheck.verify.slicing import Slicer

    body = TABLE_KERNEL.replace("  mov.b64 %rd6, table;\n", "  mov.b64 %rd6, table;\n  add.s64 %rd6, %rd6, 0;\n"
                                "  mov.b64 %rd7, table;\n  mov.b64 %rd7, %rd4;\n")
    fn = parse_module(HEADER + body, "k.ptx").function("scale")
    assert Slicer(fn).tables == frozenset({"%rd6"})
