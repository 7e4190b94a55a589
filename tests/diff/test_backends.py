"""Backends behind one interface, verdicts through tilecheck.allowed, shrinking, and the gpu
backend's code paths on a fake CuPy (no GPU here: nothing below claims a device result)."""

from __future__ import annotations

import numpy as np
import pytest

from diffhelpers import Faulty, requires_ptxas

from tilecheck.diff import backends, cases, shrink, verdict
from tilecheck.errors import DeviceUnavailableError, UsageError

SAMPLE = ["div.rn.f32", "div.rz.ftz.f32", "sqrt.rp.f32", "rcp.approx.f32", "div.approx.f32", "rsqrt.approx.ftz.f64",
          "div.rm.f64", "add.rn.f16x2", "fma.rn.bf16", "mul.rp.ftz.sat.f32", "ld.global.v4.f32", "st.global.b16",
          "add.rz.f32x2"]


@pytest.mark.parametrize("name", ["cpu", "model"])
def test_cpu_and_model_backends_agree_with_the_model(db, name):
    backend = backends.select(name, db=db)
    for form_name in SAMPLE:
        form = db.form(form_name)
        assert backend.support(form).ok
        found = backend.judge(form, cases.batch(form, 0, 0, 3000))
        assert found.cases == 3000 and found.count == 0, (name, form_name)


def test_the_cpu_backend_really_runs_the_emitted_kernel(db, monkeypatch):
    """Corrupting the simulator's store makes the cpu backend disagree: it is not the model."""
    from tilecheck import sim

    real = sim.execute

    def broken(kernel, name, args, **kw):
        result = real(kernel, name, args, **kw)
        out = [a for a in args if isinstance(a, np.ndarray)][-1]
        out[3] ^= out.dtype.type(1 << 20)
        return result

    monkeypatch.setattr(sim, "execute", broken)
    form = db.form("div.rn.f32")
    found = backends.CpuBackend(db=db).judge(form, cases.batch(form, 0, 0, 100))
    assert found.index.tolist() == [3]


def test_predicated_runs_keep_masked_off_outputs(db):
    cpu = backends.CpuBackend(db=db)
    for form_name in ("sqrt.rn.f32", "st.global.b16", "add.rn.f16x2"):
        form = db.form(form_name)
        ops = cases.batch(form, 0, 0, 256)
        mask = (np.arange(256) % 3 == 0).astype(np.uint32)
        dtype = ops[0].dtype
        old = np.full(256, 0x5A5A5A5A5A5A5A5A >> (64 - 8 * dtype.itemsize), dtype=dtype)
        got = cpu.run(form, ops, mask=mask, old=old)
        assert (got[mask == 0] == old[mask == 0]).all()
        assert verdict.ok_mask(form, got[mask != 0], [o[mask != 0] for o in ops]).all()


def test_verdict_finds_exactly_the_wrong_results(db):
    form = db.form("div.rn.f32")
    ops = cases.batch(form, 0, 0, 1000)
    found = Faulty().judge(form, ops)
    low = (ops[0] & 0xFF) == 0x5B
    expected = np.nonzero(low)[0]
    # flipping the last bit of a NaN keeps a NaN (allowed: unspecified NaN policy)
    from tilecheck.model import api

    ref = api.evaluate(form, *ops)
    real = expected[~np.isnan((ref[expected] ^ np.uint32(1)).view(np.float32))]
    assert found.index.tolist() == real.tolist() and found.count > 0
    assert found.operands[0].tolist() == ops[0][real].tolist()


def test_blocked_judging_matches_one_block(db):
    form = db.form("sqrt.rz.f32")
    ops = cases.batch(form, 1, 0, 5000)
    faulty = Faulty()
    whole = faulty.judge(form, ops)
    faulty.judge_block = 700  # an instance attribute shadows the class default
    blocked = faulty.judge(form, ops)
    assert whole.index.tolist() == blocked.index.tolist()
    assert whole.results.tolist() == blocked.results.tolist()


def test_memory_forms_are_judged_by_equality(db):
    form = db.form("ld.global.v2.f32")
    ops = cases.batch(form, 0, 0, 50)
    good = ops[0].copy()
    bad = good.copy()
    bad[7] ^= 1  # case 3, second register
    assert verdict.disagreements(form, good, ops).count == 0
    found = verdict.disagreements(form, bad, ops)
    assert found.index.tolist() == [3] and found.results.size == 2


def test_shrinking_reaches_simpler_operands_that_still_disagree(db):
    form = db.form("div.rn.f32")
    faulty = Faulty()
    a = np.array([0x4E12345B], dtype=np.uint32)
    b = np.array([0xC1ABCDEF], dtype=np.uint32)
    found = faulty.judge(form, [a, b])
    assert found.count == 1
    out = shrink.shrink(form, faulty, [int(a[0]), int(b[0])], int(found.results[0]))
    assert out.steps > 0
    assert shrink.complexity(form, out.operands) < shrink.complexity(form, (int(a[0]), int(b[0])))
    assert out.operands[0] & 0xFF == 0x5B  # still a failing case
    assert faulty.judge(form, [np.array([v], dtype=np.uint32) for v in out.operands]).count == 1


def test_shrink_proposals_are_strictly_simpler(db):
    form = db.form("fma.rn.f16x2")
    ops = (0xFC01BC00, 0x7BFF0001, 0x3C003C00)
    base = shrink.complexity(form, ops)
    props = shrink.proposals(form, ops)
    assert props and all(shrink.complexity(form, p) < base for p in props)


def test_vectors_backend_looks_results_up(db, tmp_path):
    from tilecheck.diff.vectors import read_vectors

    path = tmp_path / "v.vec"
    path.write_text("div.rn.f32 0x3f800000 0x40400000 0x3eaaaaab\n", encoding="utf-8")
    backend = backends.select("vectors", db=db, vectors=read_vectors(str(path), db=db))
    form = db.form("div.rn.f32")
    assert backend.run(form, [np.array([0x3F800000], np.uint32), np.array([0x40400000], np.uint32)]).tolist() == \
        [0x3EAAAAAB]
    with pytest.raises(UsageError, match="no recorded result"):
        backend.run(form, [np.array([1], np.uint32), np.array([2], np.uint32)])
    assert not backend.support(db.form("div.rz.f32")).ok


def test_gpu_backend_without_a_gpu_is_an_environment_error(db, no_cupy):
    with pytest.raises(DeviceUnavailableError, match="CuPy"):
        backends.select("gpu", db=db)
    status = backends.gpu_status(db=db)
    assert not status.available and "CuPy" in status.reason
    with pytest.raises(TypeError):
        bool(status)  # '' once meant "available": a status must be read through .available
    assert backends.select("auto", db=db).name == "cpu"


def test_unknown_backend_name(db):
    with pytest.raises(UsageError, match="unknown backend"):
        backends.select("tpu", db=db)


# ---------------------------------------------------------------------------------------------
# the gpu backend on a fake CuPy (tests/diff/fakecupy.py): launch protocol and data movement


def test_gpu_backend_records_the_device(db, fake_cupy):
    gpu = backends.GpuBackend(db=db, modes=("jit",))
    info = gpu.info()
    assert info["gpu"] == "Fake GPU (numpy)" and info["compute_capability"] == "90"
    assert info["driver"] == 13000 and info["target"] == "sm_90"
    status = backends.gpu_status(db=db)
    assert status.available and status.details["gpu"] == "Fake GPU (numpy)"
    # the probe compiled, launched and judged a kernel on the device
    assert fake_cupy.STATE.launches and any(b".entry tc_add_rn_f32" in img for img in fake_cupy.STATE.loaded)
    assert backends.select("auto", db=db).name == "gpu"


def test_gpu_judging_brings_back_only_disagreements(db, fake_cupy):
    gpu = backends.GpuBackend(db=db, modes=("jit",))
    for name in ("div.rn.f32", "sqrt.rz.f32", "div.rm.f64", "add.rn.f16x2"):
        form = db.form(name)
        ops = cases.batch(form, 0, 0, 20000)
        fake_cupy.reset()
        fake_cupy.STATE.corrupt = {11, 12345}
        found = gpu.judge(form, ops)
        assert found.cases == 20000
        assert set(found.index.tolist()) <= {11, 12345} and found.count >= 1, name
        assert found.labels == ["jit"] * found.count
        # nothing the size of the batch travelled back: only the rejected cases
        assert max(fake_cupy.STATE.transfers) <= found.count, (name, fake_cupy.STATE.transfers)
        fake_cupy.STATE.corrupt = set()
        assert gpu.judge(form, ops).count == 0
        image = fake_cupy.STATE.loaded[0]
        assert image.endswith(b"\0") and b".entry tc_" in image


def test_gpu_predicated_and_memory_kernels(db, fake_cupy):
    gpu = backends.GpuBackend(db=db, modes=("jit",))
    form = db.form("st.global.v2.f32")
    ops = cases.batch(form, 0, 0, 64)
    assert gpu.judge(form, ops).count == 0
    form = db.form("rcp.rn.f32")
    ops = cases.batch(form, 0, 0, 64)
    mask = (np.arange(64) % 2).astype(np.uint32)
    old = np.full(64, 0xDEADBEEF, dtype=np.uint32)
    got = gpu.run(form, ops, mask=mask, old=old)
    assert (got[mask == 0] == 0xDEADBEEF).all()
    assert verdict.ok_mask(form, got[mask == 1], [o[mask == 1] for o in ops]).all()


def test_model_verdicts_are_the_same_in_another_namespace(db, fake_cupy):
    """The model takes its namespace from its inputs: on 'device' arrays it gives numpy's answers."""
    from tilecheck.model import api

    for name in ("div.rz.ftz.f32", "sqrt.approx.f32", "rcp.approx.ftz.f64", "fma.rn.ftz.f16", "div.rp.f64",
                 "lg2.approx.f32", "lg2.approx.ftz.f32", "ex2.approx.f32", "sin.approx.ftz.f32", "tanh.approx.f16"):
        form = db.form(name)
        ops = cases.batch(form, 2, 0, 3000)
        ref = np.asarray(api.reference(form, *ops))
        ref = np.where(np.arange(ref.size) % 7 == 0, ref ^ ref.dtype.type(3), ref)
        host = np.asarray(api.allowed(form, ref, *ops))
        dev = api.allowed(form, fake_cupy.asarray(ref), *[fake_cupy.asarray(o) for o in ops])
        assert type(dev).__module__ == "cupy_fake"
        assert np.array_equal(dev.get(), host), name


@pytest.mark.parametrize("fault, words", [
    ({"nvrtc": "nvrtc: error: failed to load builtins"}, "NVRTC could not compile"),
    ({"driver": "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed"}, "CUDA driver error while loading"),
    ({"launch": "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure"}, "CUDA driver error while running"),
    ({"runtime": "cudaErrorInsufficientDriver: CUDA driver version is insufficient"}, "CUDA runtime error"),
    ({"devices": 0}, "0 devices"),
])
def test_cuda_failures_are_environment_errors_and_auto_falls_back(db, fake_cupy, fault, words):
    """Driver, runtime and NVRTC failures anywhere on the gpu path: DeviceUnavailableError (exit 2)
    from the backend, an unavailable status from gpu_status, and --backend auto picks cpu."""
    fake_cupy.STATE.fail = dict(fault)
    status = backends.gpu_status(db=db)
    assert not status.available and words in status.reason, status.reason
    assert backends.select("auto", db=db).name == "cpu"
    form = db.form("div.rn.f32")
    ops = cases.batch(form, 0, 0, 64)
    with pytest.raises(DeviceUnavailableError, match=words) as info:
        backends.GpuBackend(db=db, modes=("jit",)).judge(form, ops)
    assert info.value.exit_code == 2


def test_fuzz_with_a_failing_driver_exits_2(db, fake_cupy, capsys, tmp_path):
    from tilecheck import cli

    fake_cupy.STATE.fail = {"driver": "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed"}
    assert cli.main(["fuzz", "div.rn.f32", "--backend", "gpu", "--cases", "64", "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "CUDA driver error" in err and "Traceback" not in err


def test_fake_cupy_is_as_strict_as_cupy(fake_cupy):
    """The stand-in refuses what CuPy refuses (otherwise code passing here could fail on a GPU)."""
    dev = fake_cupy.asarray(np.arange(4, dtype=np.uint32))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(dev)
    with pytest.raises(TypeError, match="Unsupported type"):
        dev + np.arange(4, dtype=np.uint32)  # host and device arrays do not mix
    with pytest.raises(TypeError, match="Unsupported type"):
        fake_cupy.where(dev > 1, np.zeros(4, np.uint32), dev)
    with pytest.raises(AttributeError):
        fake_cupy.polyfit  # a numpy name that tilecheck does not use is not passed through
    assert type(np.add(dev, 1)).__module__ == "cupy_fake"  # numpy ufuncs dispatch to the device
    assert fake_cupy.asnumpy(dev * 2).tolist() == [0, 2, 4, 6]
    module = fake_cupy.cuda.function.Module()
    with pytest.raises(fake_cupy.cuda.driver.CUDADriverError, match="INVALID_PTX"):
        module.load(b".version 9.0\n.target sm_100\n.address_size 64\n\0")  # newer than the device
    with pytest.raises(fake_cupy.cuda.driver.CUDADriverError, match="INVALID_IMAGE"):
        module.load(b"\x7fELF" + bytes(60))


@requires_ptxas
def test_fake_cupy_checks_cubins(db, fake_cupy):
    from tilecheck import ptxas
    from tilecheck.emit import single_instruction_kernel

    kernel = single_instruction_kernel(db.form("div.rn.f32"), "sm_90", db=db)
    cubin = ptxas.assemble(kernel.ptx, "sm_90").cubin
    module = fake_cupy.cuda.function.Module()
    with pytest.raises(AssertionError, match="not ptxas's build"):
        module.load(cubin)  # its PTX was never seen: the fake cannot know what it computes
    fake_cupy.register_ptx(kernel.ptx)
    module.load(cubin)
    with pytest.raises(fake_cupy.cuda.driver.CUDADriverError, match="NOT_FOUND"):
        module.get_function("tc_div_rz_f32")
    module.get_function(kernel.name)
    other = ptxas.assemble(kernel.ptx.replace(".target sm_90", ".target sm_80"), "sm_80").cubin
    with pytest.raises(fake_cupy.cuda.driver.CUDADriverError, match="NO_BINARY_FOR_GPU"):
        fake_cupy.cuda.function.Module().load(other)


@requires_ptxas
def test_gpu_cubin_path_loads_a_ptxas_cubin(db, fake_cupy):
    gpu = backends.GpuBackend(db=db)
    assert gpu.modes == ("jit", "cubin") and "ptxas" in gpu.info()
    form = db.form("div.rn.f32")
    ops = cases.batch(form, 0, 0, 500)
    fake_cupy.reset()
    found = gpu.judge(form, ops)
    assert found.cases == 1000 and found.count == 0
    assert any(img[:4] == b"\x7fELF" and b"tc_div_rn_f32" in img for img in fake_cupy.STATE.loaded)


def test_gpu_program_run(db, fake_cupy):
    from tilecheck.tile.loader import load_programs

    gpu = backends.GpuBackend(db=db, modes=("jit",))
    (program,) = load_programs("examples/root_ratio.py")
    a = np.array([4.0, 16.0, 36.0, 64.0], dtype=np.float32).reshape(4, 1)
    out = np.zeros((4, 1), dtype=np.float32)
    gpu.run_program(program, [a, out])
    assert out.reshape(-1).tolist() == [1.0, 2.0, 3.0, 4.0]
