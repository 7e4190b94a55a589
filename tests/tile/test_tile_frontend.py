"""The T namespace and tracing: IR contents, locations, frontend diagnostics, ProgramError cases."""

from __future__ import annotations

import inspect

import pytest

from tilecheck.errors import IllegalTileOpError, ProgramError
from tilecheck.program import Program, T
from tilecheck.tile import T as IR_T
from tilecheck.tile import ir
from tilecheck.tile.exprs import Const, ScalarParam
from tilecheck.tile.ir import Instruction, Opaque
from tilecheck.tile.loader import load_programs


def _line_of(fragment: str) -> int:
    """Line number of the first line of this file containing ``fragment``."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(i for i, text in enumerate(lines, 1) if fragment in text and "_line_of" not in text)


def test_namespace_mirrors_the_seed_api():
    for name in ("function", "Tensor", "alloc_local", "device_entry", "ptx", "TileLayout", "thread_id",
                 "lane_id", "warp_id", "float32", "float16", "bfloat16", "float64", "uint32", "int32", "uint64"):
        assert hasattr(T, name), name
    assert callable(T.cuda.LaunchConfig) and callable(T.cuda.tile.apply)
    assert T.cuda.tile.SCOPES == ("thread", "warp", "warpgroup", "cta")
    assert isinstance(T.ptx["div.rn.f32"], Instruction)
    assert isinstance(T.float32(4), Const) and T.float32(4).dtype is T.float32


def test_tracing_records_the_ir():
    @T.function
    def kernel(A: T.Tensor((4, 1), "float32"), n: T.int32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=(2, 1), block=(32, 2)))
        acc = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], acc, A)  # line: ld-record
        T.cuda.tile.apply(
            T.ptx["div.rn.f32"], acc, acc, 3.0,  # line: multi-line-call
            pred=n > 0)

    assert isinstance(kernel, Program) and kernel.name == "kernel"
    assert kernel.location.line == _line_of("def kernel(A")
    tensor, scalar = kernel.params
    assert tensor.is_tensor and tensor.view.buffer.shape == (4, 1) and tensor.view.buffer.is_global
    assert isinstance(scalar.scalar, ScalarParam) and scalar.scalar.dtype is T.int32 and scalar.index == 1
    assert [b.name for b in kernel.locals] == ["acc"]
    assert kernel.launch.block == (32, 2) and kernel.launch.threads == 64 and kernel.launch.grid == (2, 1)
    ld, div = kernel.calls
    assert ld.location.line == _line_of("# line: ld-record") and ld.location.path == __file__
    assert div.location.line == _line_of("# line: multi-line-call") - 1  # where the call starts
    assert ld.spelling == "ld.global.f32" and ld.scope == "thread" and ld.index == 0
    assert isinstance(div.operands[2], Const) and div.operands[2].dtype is None
    assert div.pred.dtype is T.bool
    assert "div.rn.f32" in kernel.describe()


def test_operands_that_are_not_views_or_expressions_are_recorded_opaque():
    @T.function
    def odd(A: T.Tensor((4, 1), "float32")):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(42, r, object(), scope=3, pred="yes")

    (call,) = odd.calls
    assert isinstance(call.instruction, Opaque) and isinstance(call.operands[1], Opaque)
    assert isinstance(call.scope, Opaque) and isinstance(call.pred, Opaque)


def test_buffer_names_are_unique_and_taken_from_the_assignment():
    @T.function
    def names(A: T.Tensor((4, 1), "float32")):
        x = T.alloc_local((4, 1), "float32")
        x = T.alloc_local((4, 1), "float32")
        T.alloc_local((4, 1), "float32", name="explicit")
        return x

    assert [b.name for b in names.locals] == ["x", "x_1", "explicit"]


def test_string_annotations_are_evaluated(tmp_path):
    source = ("from __future__ import annotations\n"
              "from tilecheck.tile import T\n"
              "@T.function\n"
              "def lazy(A: T.Tensor((2, 1), 'float64'), n: T.uint32):\n"
              "    T.alloc_local((2, 1), 'float64')\n")
    (tmp_path / "lazy.py").write_text(source)
    (program,) = load_programs(tmp_path / "lazy.py")
    assert program.params[0].view.buffer.dtype is T.float64
    assert program.params[1].scalar.dtype is T.uint32
    assert program.location.line == 4


def test_frontend_diagnostics_for_bad_arguments():
    @T.function
    def bad(A: T.Tensor((4, 1), "floaty"), B: T.Tensor((0,), "float32")):
        T.alloc_local((4, 1), "float33")
        T.alloc_local("four", "float32")
        T.alloc_local((4, 1), "float32", layout=T.TileLayout("laneid", "m"))
        T.alloc_local((4, 1), "float32", layout=T.TileLayout("lane", "m"))
        T.alloc_local((4, 1), "float32", layout="rowmajor")
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=2048))
        T.device_entry(launch="1x1")

    codes = [d.code for d in bad.frontend_diagnostics]
    assert codes == ["TC801", "TC802", "TC801", "TC802", "TC802", "TC802", "TC802", "TC804", "TC804"]
    messages = " | ".join(d.message for d in bad.frontend_diagnostics)
    for fragment in ("float33", "extent 32", "unknown axis name 'lane'", "at most 1024 threads", "LaunchConfig"):
        assert fragment in messages
    assert bad.frontend_diagnostics[0].line == _line_of("def bad(A: T.Tensor((4, 1), \"floaty\")")
    assert {d.code for d in bad.check()} >= {"TC801", "TC802", "TC804"}


def test_apply_outside_a_traced_function_is_a_program_error():
    with pytest.raises(ProgramError, match="inside a function decorated with @T.function") as info:
        T.cuda.tile.apply(T.ptx["div.rn.f32"], 1, 2, 3)
    assert info.value.location.path == __file__


def test_missing_annotation_is_a_program_error():
    with pytest.raises(ProgramError, match="needs an annotation T.Tensor"):
        @T.function
        def no_annotation(A):
            pass


def test_varargs_are_a_program_error():
    with pytest.raises(ProgramError, match="plain positional parameters"):
        @T.function
        def varargs(*tensors: T.Tensor((4,), "float32")):
            pass


def test_errors_in_the_traced_body_are_located():
    with pytest.raises(ProgramError, match="NameError") as info:
        @T.function
        def typo(A: T.Tensor((4, 1), "float32")):
            r = T.alloc_local((4, 1), "float32")
            T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, undefined_name)  # noqa: F821  line: name-error
    assert info.value.location.line == _line_of("line: name-error")
    assert info.value.location.path == __file__


def test_runtime_expressions_have_no_truth_value():
    with pytest.raises(ProgramError, match="no Python truth value") as info:
        @T.function
        def branch(A: T.Tensor((4, 1), "float32"), n: T.int32):
            if n > 0:  # line: truthiness
                pass
    assert info.value.location.line == _line_of("line: truthiness")


def test_validate_raises_a_value_error_with_every_diagnostic(ptx_db):
    @T.function
    def two_faults(A: T.Tensor((4, 1), "float32")):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, A)
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, preserve_dst=True)

    with pytest.raises(ValueError) as info:
        two_faults.validate(db=ptx_db)
    assert isinstance(info.value, IllegalTileOpError)
    assert [d.code for d in info.value.diagnostics] == ["TC102", "TC502"]
    assert "2 legality violation(s)" in str(info.value)


def test_both_imports_trace_the_same_programs_with_every_operation():
    """``tilecheck.tile.T`` (the seed's import) is the facade's ``T``: one program class, with
    check/emit/run (tests/tile/test_one_namespace.py runs them)."""

    def body(A: IR_T.Tensor((4, 1), "float32")):
        r = IR_T.alloc_local((4, 1), "float32")
        IR_T.cuda.tile.apply(IR_T.ptx["ld.global.f32"], r, A)

    assert IR_T is T and Program is ir.Program
    seed, full = IR_T.function(body), T.function(body)
    assert type(seed) is type(full) is ir.Program and hasattr(seed, "run")
    assert seed.check() == [] == full.check() and [c.spelling for c in full.calls] == [c.spelling for c in seed.calls]
