"""Triton's PTX (examples/triton, Triton 3.9 for sm_90, one element per thread): each committed
kernel verified end to end through the CLI against its documented operation, the module
constructs Triton writes parsed one by one, and the ones still refused located (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.parser import Reg, Vec
from tilecheck.sim.plan import Memory, RunContext, compile_function
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton"


def _verify(capsys, name: str, entry: str, against: str, cases: int = 300) -> tuple[int, dict]:
    code = main(["verify", str(TRITON / name), "--entry", entry, "--against", against, "--cases", str(cases),
                 "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


# (file, entry, reference, exit code, verdict) as measured on the committed PTX
VERDICTS = [
    # a / b on float32 is div.full.f32: within its own 2-ulp contract, not correctly rounded
    ("div_f32.ptx", "div_kernel", "div.full.f32", 0, "no-counterexample"),
    ("div_f32.ptx", "div_kernel", "div.rn.f32", 1, "counterexample"),
    ("div_rn_f32.ptx", "div_rn_kernel", "div.rn.f32", 0, "no-counterexample"),
    # tl.sqrt on float32 is sqrt.approx.ftz.f32; tl.sqrt_rn is sqrt.rn.f32
    ("sqrt_f32.ptx", "sqrt_kernel", "sqrt.approx.ftz.f32", 0, "no-counterexample"),
    ("sqrt_f32.ptx", "sqrt_kernel", "sqrt.rn.f32", 1, "counterexample"),
    ("sqrt_rn_f32.ptx", "sqrt_rn_kernel", "sqrt.rn.f32", 0, "no-counterexample"),
    # a / b on float16 / bfloat16: cvt.f32, div.full.f32, cvt.rn back -- the 2-ulp division
    # misrounds some quotients in the 16-bit format (found, not assumed)
    ("div_f16.ptx", "div_kernel", "div.rn.f16", 1, "counterexample"),
    ("div_bf16.ptx", "div_kernel", "div.rn.bf16", 1, "counterexample"),
]


@pytest.mark.parametrize("name,entry,against,code,verdict", VERDICTS,
                         ids=[f"{v[0]}-{v[2]}" for v in VERDICTS])
def test_triton_kernels_verify_end_to_end(capsys, name, entry, against, code, verdict):
    got, out = _verify(capsys, name, entry, against, cases=2000 if "16" in against else 300)
    assert (got, out["verdict"]) == (code, verdict), out["headline"]
    assert out["abi"] == ".entry"
    if verdict == "counterexample":
        cex = out["counterexamples"][0]
        assert cex["repro"].startswith(f"tilecheck verify {TRITON / name} --entry {entry}")
        # the registers on the path start at Triton's mov'd and predicated loads
        assert any("ld.global.b" in w for r in cex["register_path"] for w in r["written"])
    # the module's .version (9.4) is newer than the spec's newest: accepted, and said so
    assert out["producer"]["version"] == "9.4" and "newer than" in out["producer"]["version_note"]


def test_the_counterexample_of_half_division_reproduces(capsys):
    code, out = _verify(capsys, "div_f16.ptx", "div_kernel", "div.rn.f16", cases=2000)
    assert code == 1 and out["misrounded_by_value_count"] > 0
    assert "div.full.f32" in out["approximate_instructions"]
    repro = out["counterexamples"][0]["repro"].split()[2:]
    assert main(["verify", *repro]) == 1


def test_the_kernel_runs_with_the_block_it_requires(db):
    """``.reqntid 128``: Triton's offsets are %ctaid.x * 128 + (%tid.x & 127), so the ABI runs
    128 threads per CTA; every element of a 300-element launch is read and written once."""
    path = TRITON / "div_f32.ptx"
    module = parse_module(path.read_text(), str(path))
    fn = module.function("div_kernel")
    assert fn.launch == {".reqntid": (128, 1, 1)}
    plan = compile_function(fn, db, str(path))
    ref = compiled.parse_reference("div.full.f32", db)
    abi = compiled.find_abi(plan, ref, str(path))
    assert abi.block == 128 and abi.inputs == ["div_kernel_param_0", "div_kernel_param_1"]
    assert abi.output == "div_kernel_param_2"
    # the scalar count and the two scratch pointers are neither inputs nor the output
    assert [name for name, _ in abi.params if name not in abi.inputs + [abi.output]] == [
        "div_kernel_param_3", "div_kernel_param_4", "div_kernel_param_5"]


def test_masked_lanes_keep_the_value_moved_before_the_load(db):
    """Lanes past ``n`` fail ``setp.lt.s32``: their predicated loads do not happen (the register
    keeps the ``mov``'d 0) and their predicated store writes nothing."""
    path = TRITON / "div_f16.ptx"
    fn = parse_module(path.read_text(), str(path)).function("div_kernel")
    plan = compile_function(fn, db, str(path))
    lanes_n, count = 128, 100
    a = np.full(lanes_n, 0x3C00, dtype=np.uint16)  # 1.0
    b = np.full(lanes_n, 0x4000, dtype=np.uint16)  # 2.0
    memory = Memory([("a", a.view(np.uint8).copy()), ("b", b.view(np.uint8).copy()),
                     ("o", np.zeros(2 * lanes_n, dtype=np.uint8)), ("s1", np.zeros(8, dtype=np.uint8)),
                     ("s2", np.zeros(8, dtype=np.uint8))])
    lanes = plan.new_lanes(lanes_n)
    for k, name in enumerate(("div_kernel_param_0", "div_kernel_param_1", "div_kernel_param_2")):
        lanes.params[name] = np.full(lanes_n, memory.pointer(k), dtype=np.uint64)
    lanes.params["div_kernel_param_3"] = np.full(lanes_n, count, dtype=np.uint64)
    lanes.params["div_kernel_param_4"] = np.full(lanes_n, memory.pointer(3), dtype=np.uint64)
    lanes.params["div_kernel_param_5"] = np.full(lanes_n, memory.pointer(4), dtype=np.uint64)
    plan.run(lanes, RunContext(approx="reference", memory=memory, block=128, threads=lanes_n))
    rs1 = lanes.regs["%rs1"]
    assert (rs1[:count] == 0x3C00).all() and (rs1[count:] == 0).all()
    (region, nbytes, offs, vals, done), = lanes.stores
    assert region == 2 and nbytes == 2
    assert done[:count].all() and not done[count:].any()
    assert (vals[:count] == 0x3800).all()  # 1 / 2


# -- the module constructs, one by one ---------------------------------------------------------

HEAD = ".version 9.4\n.target sm_90a\n.address_size 64\n\n"
KERNEL = """.visible .entry k(
\t.param .u64 .ptr .global .align 1 k_param_0,
\t.param .u64 .ptr .global .align 16 k_param_1,
\t.param .u32 k_param_2,
\t.param .u64 .ptr .global .align 1 k_param_3,
\t.param .u64 .ptr .global .align 1 k_param_4
)
.reqntid 128
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<6>;
\t.loc\t1 3 0
\tld.param.b64 %rd3, [k_param_0];
\tld.param.b64 %rd4, [k_param_1];
\tld.param.b32 %r3, [k_param_2];
\tmov.u32 %r4, %tid.x;
\tand.b32 %r5, %r4, 127;
\tmov.u32 %r7, %ctaid.x;
\tshl.b32 %r7, %r7, 7;
\tor.b32 %r5, %r7, %r5;
\tsetp.lt.s32 %p1, %r5, %r3;
\tmul.wide.s32 %rd5, %r5, 4;
\tadd.s64 %rd1, %rd3, %rd5;
\tadd.s64 %rd2, %rd4, %rd5;
\t// begin inline asm
\tmov.u32 %r1, 0x0;
\t@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];
\t// end inline asm
\tsqrt.rn.f32 %r2, %r1;
\t@%p1 st.global.b32 [ %rd2 + 0 ], { %r2 };
\tret;
}
\t.file\t1 "k.py"
\t.section\t.debug_abbrev
\t{
.b8 1
.b8 17
.b8 0
\t}
\t.section\t.debug_macinfo\t{\t}
"""


def test_triton_module_constructs_parse(db):
    module = parse_module(HEAD + KERNEL, "k.ptx")
    assert (module.version, module.target, module.address_size) == ("9.4", "sm_90a", 64)
    fn = module.function("k")
    assert [p.name for p in fn.params] == [f"k_param_{i}" for i in range(5)]
    assert [p.ptx_type for p in fn.params] == ["u64", "u64", "u32", "u64", "u64"]
    assert fn.launch == {".reqntid": (128, 1, 1)}
    ld = next(i for i in fn.body if getattr(i, "opcode", "") == "ld.global.b32")
    assert ld.guard == ("%p1", False)
    assert ld.operands[0] == Vec((Reg("%r1"),)) and str(ld.operands[0]) == "{ %r1 }"
    assert ld.operands[1].base == Reg("%rd1") and ld.operands[1].offset == 0
    st = next(i for i in fn.body if getattr(i, "opcode", "") == "st.global.b32")
    assert st.operands[1] == Vec((Reg("%r2"),))
    compile_function(fn, db, "k.ptx")  # braces around one register are that register


@pytest.mark.parametrize("directive,launch", [(".reqntid 128", {".reqntid": (128, 1, 1)}),
                                              (".reqntid 64, 2", {".reqntid": (64, 2, 1)}),
                                              (".maxntid 256, 1, 1", {".maxntid": (256, 1, 1)}),
                                              (".maxntid 128\n.minnctapersm 1", {".maxntid": (128, 1, 1)})])
def test_launch_directives_are_kept(directive, launch):
    fn = parse_module(HEAD + KERNEL.replace(".reqntid 128", directive), "k.ptx").function("k")
    assert fn.launch == launch


def test_maxntid_bounds_the_block_and_a_2d_reqntid_is_refused(db):
    here = compiled.Location("k.ptx", 1, 1)
    fn = parse_module(HEAD + KERNEL.replace(".reqntid 128", ".maxntid 64"), "k.ptx").function("k")
    assert compiled.launch_block(fn, here) == 64
    fn = parse_module(HEAD + KERNEL.replace(".reqntid 128", ""), "k.ptx").function("k")
    assert compiled.launch_block(fn, here) == 256
    fn = parse_module(HEAD + KERNEL.replace(".reqntid 128", ".reqntid 64, 2"), "k.ptx").function("k")
    with pytest.raises(UnsupportedPtxError, match="multi-dimensional block"):
        compiled.launch_block(fn, here)


def test_the_kernel_verifies_through_the_cli(tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(HEAD + KERNEL)
    code = main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32", "--cases", "200", "--json", "-"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0 and out["verdict"] == "no-counterexample"
    assert out["producer"]["version_note"].startswith(".version 9.4 is newer than")
    assert "note: .version 9.4 is newer than" in captured.err  # the text report (on stderr with --json -) says so too


def test_module_strings_are_accepted_and_read_only_where_named(tmp_path, capsys):
    # NVVM's reflection string: module data no instruction names is no part of the function; one
    # the kernel names is laid out for it (its address moved into a register reads its bytes:
    # tests/sim/test_module_data.py)
    data = ".global .align 1 .b8 _$_str[11] = {95, 95, 67, 85, 68, 65, 95, 70, 84, 90};\n"
    module = parse_module(HEAD + data + KERNEL, "k.ptx")
    assert set(module.data) == {"_$_str"} and module.data["_$_str"].data == b"__CUDA_FTZ\0"
    assert module.function("k").constants == ()
    used = KERNEL.replace("\tret;", "\tmov.u64 %rd5, _$_str;\n\tret;")
    path = tmp_path / "k.ptx"
    path.write_text(HEAD + data + used)
    assert [c.name for c in parse_module(HEAD + data + used, "k.ptx").function("k").constants] == ["_$_str"]
    assert main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32", "--cases", "10"]) == 0


def test_version_note_only_for_versions_past_the_spec(db):
    assert compiled.version_note("9.0", db) is None and compiled.version_note("8.8", db) is None
    assert compiled.version_note("9.4", db).startswith(".version 9.4 is newer than the newest PTX ISA version "
                                                       "the spec records (9.0)")
    assert compiled.version_note("garbage", db) is None


# -- what is still refused, located --------------------------------------------------------------

def _error(tmp_path, capsys, text: str) -> str:
    path = tmp_path / "k.ptx"
    path.write_text(text)
    code = main(["verify", str(path), "--entry", "k", "--against", "sqrt.rn.f32", "--cases", "10"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    return err.replace(str(path), "FILE")


def test_a_malformed_section_block_is_a_located_error(tmp_path, capsys):
    text = HEAD + KERNEL.replace("\t.section\t.debug_macinfo\t{\t}\n", "\t.section\t.debug_info\n\t{\n.b8 1\n")
    line = text.splitlines().index("\t.section\t.debug_info") + 2
    assert f"FILE:{line}:2: error: unterminated '{{'" in _error(tmp_path, capsys, text)


def test_a_section_without_a_block_is_a_located_error(tmp_path, capsys):
    text = HEAD + KERNEL.replace("\t.section\t.debug_abbrev\n\t{\n.b8 1\n.b8 17\n.b8 0\n\t}\n", "")
    text = text.replace("\t.section\t.debug_macinfo\t{\t}\n", "\t.section\t.debug_str\n")
    line = text.splitlines().index("\t.section\t.debug_str") + 1
    assert f"FILE:{line}:2: error: expected '{{'" in _error(tmp_path, capsys, text)


def test_two_registers_in_braces_of_a_scalar_load_are_refused(tmp_path, capsys):
    text = HEAD + KERNEL.replace("ld.global.b32 { %r1 }", "ld.global.b32 { %r1, %r6 }")
    line = text.splitlines().index("\t@%p1 ld.global.b32 { %r1, %r6 }, [ %rd1 + 0 ];") + 1
    err = _error(tmp_path, capsys, text)
    assert f"FILE:{line}:7: error: 2 registers in braces '{{ %r1, %r6 }}' in the scalar access 'ld.global.b32'" in err


def test_two_registers_in_braces_of_a_scalar_store_are_refused(tmp_path, capsys):
    text = HEAD + KERNEL.replace("{ %r2 };", "{ %r2, %r6 };")
    line = text.splitlines().index("\t@%p1 st.global.b32 [ %rd2 + 0 ], { %r2, %r6 };") + 1
    assert f"FILE:{line}:7: error: 2 registers in braces" in _error(tmp_path, capsys, text)
