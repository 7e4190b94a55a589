"""Programs on the CPU: ``Program.run`` (emitted PTX through the simulator) against the IR interpreter
for every example and corpus program, mutated PTX that must be caught, the seed's value, the
approximate-form warning, pred semantics against a Python oracle, argument errors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tilecheck
from tilecheck.tile.ir import launch_of
from tilecheck.errors import DeviceUnavailableError, IllegalTileOpError, UsageError
from tilecheck.sim import ApproximateReferenceWarning, execute, interpret_program, run_program
from tilecheck.sim.program import bind_arguments
from tilecheck.spec.database import load_database
from tilecheck.program import T
from tilecheck.tile.loader import load_programs

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("sm_80", "sm_90", "sm_100")
FILES = (sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "programs" / "legal").glob("*.py"))
         + sorted((ROOT / "tests" / "emit" / "programs").glob("*.py")))


def _inputs(program, rng, scalars=None):
    """Arguments for a program: float tensors get finite values mixed with edge cases, other tensors
    random bits, scalar parameters small numbers (so that predicates go both ways)."""
    args = []
    for p in program.params:
        if p.is_tensor:
            b = p.view.buffer
            if b.dtype.kind == "float" and b.dtype.name != "bfloat16":
                values = rng.uniform(-50, 50, b.shape).astype(b.dtype.name)
                flat = values.reshape(-1)
                edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 1.0], dtype=b.dtype.name)
                flat[: min(len(edges), flat.size)] = edges[: flat.size]
                args.append(values)
            else:
                u = np.dtype(f"u{b.dtype.bytes}")
                args.append(rng.integers(0, np.iinfo(u).max, b.shape, dtype=u, endpoint=True))
        else:
            d = p.scalar.dtype
            given = (scalars or {}).get(p.name)
            if given is not None:
                args.append(given)
            elif d.kind == "float":
                args.append(float(rng.uniform(-4, 4)))
            elif d.kind == "bool":
                args.append(bool(rng.integers(0, 2)))
            else:
                low = -40 if d.kind == "int" else 0
                args.append(int(rng.integers(low, 40)))
    return args


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _same(x, y) -> bool:
    return all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for a, b in zip(x, y))


def _cases():
    db = load_database()
    cases = []
    for path in FILES:
        programs = load_programs(path)
        m = re.search(r"^# target: (sm_\d+)", path.read_text(), re.M)
        for target in ((m.group(1),) if m else TARGETS):
            for program in programs:
                if not any(d.severity == "error" for d in program.check(target=target, db=db)):
                    cases.append(pytest.param(path, program.name, target, id=f"{path.stem}.{program.name}-{target}"))
    return cases


CASES = _cases()


def test_every_file_is_compared():
    assert len({c.values[0] for c in CASES}) == len(FILES) >= 24
    assert len(CASES) >= 60


@pytest.mark.parametrize("path, name, target", CASES)
@pytest.mark.filterwarnings("ignore::tilecheck.sim.ApproximateReferenceWarning")
def test_emitted_ptx_matches_the_ir_interpreter(path, name, target):
    (program,) = [p for p in load_programs(path) if p.name == name]
    for seed in (1, 2):
        args = _inputs(program, np.random.default_rng(seed))
        via_ptx = run_program(program, *_copy(args), target=target, db=load_database())
        via_ir = interpret_program(program, *_copy(args), target=target, db=load_database())
        assert _same(via_ptx, via_ir), f"{name} on {target}, seed {seed}: emitted PTX and IR disagree"


def test_root_ratio_seed_value():
    (program,) = load_programs(ROOT / "examples" / "root_ratio.py")
    a = np.array([[4], [16], [36], [64]], dtype=np.float32)
    out = np.zeros((4, 1), dtype=np.float32)
    returned = program.run(a, out, backend="cpu")
    assert returned[0] is a and returned[1] is out  # written in place, the arrays handed back
    assert out.tolist() == [[1.0], [2.0], [3.0], [4.0]]
    again = np.zeros((4, 1), dtype=np.float32)
    interpret_program(program, a, again, db=load_database())
    assert again.tolist() == [[1.0], [2.0], [3.0], [4.0]]


# ---- the comparison catches emitter slips --------------------------------------------------------


def _run_text(program, text, args):
    bound = bind_arguments(program, args)
    launch = launch_of(program)
    execute(text, program.name, bound, grid=launch.grid, block=launch.block, db=load_database())
    return [a for p, a in zip(program.params, bound) if p.is_tensor]


@pytest.mark.parametrize("example, mutate", [
    # operand order: swap numerator and denominator of the first div
    ("root_ratio", lambda t: t.replace("div.rn.f32 %f1, %f1, 0f40800000", "div.rn.f32 %f1, 0f40800000, %f1", 1)),
    # repeat order: the second load reads the first element
    ("root_ratio", lambda t: t.replace("ld.global.f32 %f2, [%rd1+4]", "ld.global.f32 %f2, [%rd1]", 1)),
    # a dropped guard: every lane takes the square root
    ("predicated_sqrt", lambda t: t.replace("@%p1 sqrt.rn.f32", "sqrt.rn.f32")),
    # a wrong lane stride in the address arithmetic
    ("warp_strided", lambda t: t.replace("mul.wide.s32 %rd3, %r2, 16;", "mul.wide.s32 %rd3, %r2, 0;", 1)),
    # atom registers bound out of order
    ("warpgroup_fma", lambda t: re.sub(r"ld\.global\.v2\.f32 \{(%f\d+), (%f\d+)\}", r"ld.global.v2.f32 {\2, \1}",
                                       t, count=1)),
])
def test_mutated_ptx_is_caught(example, mutate):
    (program,) = load_programs(ROOT / "examples" / f"{example}.py")
    text = program.emit(target="sm_90")
    mutated = mutate(text)
    assert mutated != text, "the mutation did not apply"
    args = _inputs(program, np.random.default_rng(3), scalars={"n": 16})
    reference = interpret_program(program, *_copy(args), db=load_database())
    assert _same(_run_text(program, text, _copy(args)), reference)
    assert not _same(_run_text(program, mutated, _copy(args)), reference)


# ---- approximate forms ---------------------------------------------------------------------------


def test_approximate_forms_return_the_reference_and_say_so():
    (program,) = load_programs(ROOT / "examples" / "rcp_approx.py")
    a = np.array([[4], [16], [36], [64]], dtype=np.float32)
    out = np.zeros_like(a)
    with pytest.warns(ApproximateReferenceWarning, match=r"rcp\.approx\.ftz\.f32") as record:
        program.run(a, out)
    assert record[0].message.forms == ("rcp.approx.ftz.f32",)
    bits_in, bits_out = a.view(np.uint32).reshape(-1), out.view(np.uint32).reshape(-1)
    assert np.array_equal(bits_out, tilecheck.model.api.reference("rcp.approx.ftz.f32", bits_in))
    assert tilecheck.allowed("rcp.approx.ftz.f32", bits_out, bits_in).all()
    # other values are acceptable too (the CPU backend does not claim to be the GPU): one ulp above
    # an exact reciprocal (1/4, 1/16, 1/64) is within the 1-ulp contract
    exact = np.array([0, 1, 3])
    assert tilecheck.allowed("rcp.approx.ftz.f32", bits_out[exact] + np.uint32(1), bits_in[exact]).all()


def test_exact_programs_do_not_warn():
    (program,) = load_programs(ROOT / "examples" / "f64_div.py")
    a = np.array([[1.0], [2.0]])
    out = np.zeros((2, 4))
    program.run(a, out, 3.0)  # filterwarnings=error would turn any warning into a failure
    assert out[0, 0] == 1 / 3 and out[0, 1] < out[0, 3]  # rn and rz vs rp of 1/3


# ---- pred semantics: both sides against Python ---------------------------------------------------

PREDICATES = [
    ("floor division", lambda lane, n: (lane - n) // 3 == -2, lambda lane, n: (lane - n) // 3 == -2),
    ("floor modulo", lambda lane, n: (lane - n) % 5 == 3, lambda lane, n: (lane - n) % 5 == 3),
    ("truthy int", lambda lane, n: n - lane, lambda lane, n: n - lane != 0),
    # a negative amount reads as a huge unsigned one: clamped, the result is 0
    ("shift clamps", lambda lane, n: (lane << n) > 64, lambda lane, n: 0 <= n < 32 and _s32(lane << n) > 64),
    ("arithmetic shift", lambda lane, n: (n >> (lane % 8)) < -2, lambda lane, n: (n >> (lane % 8)) < -2),
    ("xor of bools", lambda lane, n: (lane < n) ^ (lane % 2 == 0), lambda lane, n: (lane < n) != (lane % 2 == 0)),
    ("wrapping product", lambda lane, n: lane * n * 100000000 > 0,
     lambda lane, n: _s32(_s32(lane * n) * 100000000) > 0),
]


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def _pred_program(expr):
    @T.function
    def predicated(A: T.Tensor((32, 1), "float32"), Out: T.Tensor((32, 1), "float32"), n: T.int32):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        r = T.alloc_local((32, 1, 1), "float32", layout=T.TileLayout("laneid", "m", "m"))
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A[:, None, :], scope="warp")
        T.cuda.tile.apply(T.ptx["add.rn.f32"], r, r, 1.0, scope="warp", pred=expr(T.lane_id(), n), preserve_dst=True)
        T.cuda.tile.apply(T.ptx["st.global.f32"], Out[:, None, :], r, scope="warp")
    return predicated


@pytest.mark.parametrize("what, expr, oracle", PREDICATES, ids=[p[0] for p in PREDICATES])
def test_pred_expressions_follow_their_semantics(what, expr, oracle):
    program = _pred_program(expr)
    for n in (-37, -5, 0, 3, 17, 40):
        a = np.zeros((32, 1), np.float32)
        want = np.array([[1.0 if oracle(lane, n) else 0.0] for lane in range(32)], np.float32)
        out_ptx, out_ir = np.full_like(a, 9), np.full_like(a, 9)
        run_program(program, a, out_ptx, n, db=load_database())
        interpret_program(program, a.copy(), out_ir, n, db=load_database())
        assert np.array_equal(out_ptx, want), f"{what}, n={n}: emitted PTX"
        assert np.array_equal(out_ir, want), f"{what}, n={n}: IR interpreter"


# ---- errors --------------------------------------------------------------------------------------


def test_argument_errors():
    (program,) = load_programs(ROOT / "examples" / "f64_div.py")
    a, out = np.zeros((2, 1)), np.zeros((2, 4))
    with pytest.raises(UsageError, match="takes 3 argument"):
        program.run(a, out)
    with pytest.raises(UsageError, match="must hold 8 elements"):
        program.run(a, np.zeros((2, 3)), 1.0)
    with pytest.raises(UsageError, match="C-contiguous"):
        program.run(a, np.zeros((4, 2)).T, 1.0)
    with pytest.raises(UsageError, match="must be a number"):
        program.run(a, out, "x")
    with pytest.raises(DeviceUnavailableError):
        program.run(a, out, 1.0, backend="gpu")
    with pytest.raises(UsageError, match="unknown backend"):
        program.run(a, out, 1.0, backend="tpu")


def test_illegal_program_does_not_run():
    (program,) = load_programs(ROOT / "tests" / "programs" / "illegal" / "tc204_repeat_extent.py")
    args = _inputs(program, np.random.default_rng(0))
    with pytest.raises(IllegalTileOpError):
        program.run(*args)
    with pytest.raises(IllegalTileOpError):
        interpret_program(program, *args, db=load_database())


def test_bit_arguments_for_float_tensors():
    # a float32 tensor may be passed as its uint32 bits; the result is the same bits
    (program,) = load_programs(ROOT / "examples" / "root_ratio.py")
    a = np.array([[4], [16], [36], [64]], dtype=np.float32).view(np.uint32)
    out = np.zeros((4, 1), np.uint32)
    program.run(a, out)
    assert out.view(np.float32).tolist() == [[1.0], [2.0], [3.0], [4.0]]
