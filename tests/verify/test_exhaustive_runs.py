"""Exhaustive compiled-PTX runs take shortcuts for speed (forking by appending copies, cache-sized
runs within a block, worker processes, a binary32 1/sqrt reference in fewer passes); each gives
what the slow path gives, and the known misrounded inputs of ``__frsqrt_rn`` are still found."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tilecheck.model import contracts, ops
from tilecheck.sim import plan as plan_module
from tilecheck.spec.database import load_database
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
FLOAT = str(ROOT / "examples" / "cuda" / "float.ptx")
BLOCK = compiled.EXHAUSTIVE_BLOCK
# blocks holding misrounded inputs of the exhaustive run (README): x just below 4^0 and 4^1, and
# the largest subnormal, which the code scales into that case
KNOWN = {0x3F7F0000: 0x3F7FFFFE, 0x407F0000: 0x407FFFFE, 0x007F0000: 0x007FFFFF}


@pytest.fixture(scope="module")
def frsqrt():
    return compiled.prepare(FLOAT, "k_frsqrt_rn", "rsqrt.rn.f32", db=load_database())


def test_frsqrt_blocks_report_the_known_misrounded_inputs_as_the_slow_path_does(frsqrt):
    """Each block reports exactly its known misrounded input; per input, the lanes and verdicts
    equal one whole-block run that forks by gathering (the path a trace takes)."""
    for start, bad in KNOWN.items():
        tally = compiled.run_range(frsqrt, start, start + BLOCK)
        assert tally.inputs == [[bad]] and tally.misrounded == 1 and tally.unknown == 0
        ops_ = compiled.exhaustive_block(frsqrt.ref, start, start + BLOCK)
        slow, _, _, _ = compiled.run_block(frsqrt.plan, frsqrt.abi, frsqrt.ref,
                                           compiled._pack(frsqrt.abi, frsqrt.ref, ops_), frsqrt.ctx_args, trace=True)
        assert slow.lanes == tally.lanes
        assert (np.flatnonzero(slow.bad) + start).tolist() == [bad]


def test_a_fork_that_keeps_one_choice_misses_them(frsqrt, monkeypatch):
    """The check above can fail: forking that keeps only each lane's last allowed value (the
    highest; the misrounding needs the lowest, RN-2ulp) finds none of them."""
    real = plan_module._fork_appending

    def last_only(L, s, c, wname, values, valid):
        keep = np.zeros_like(valid)
        last = valid.shape[1] - 1 - np.argmax(valid[:, ::-1], axis=1)
        keep[np.arange(valid.shape[0]), last] = True
        return real(L, s, c, wname, values, keep & valid)

    monkeypatch.setattr(plan_module, "_fork_appending", last_only)
    start = 0x3F7F0000
    assert compiled.run_range(frsqrt, start, start + BLOCK).misrounded == 0


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_processes_give_the_serial_tally(frsqrt, method):
    """Ranges run in worker processes (forked, or started afresh) merge to the serial tally."""
    size = 1 << 14  # small blocks: a quick run
    starts = [0x3F7FC000, 0x007FC000, 0x40000000]
    ranges = [(s, s + size) for s in starts]
    serial = compiled.Tally()
    for s, e in ranges:
        serial.merge(compiled.run_range(frsqrt, s, e, block=size))
    # one fresh process is enough to cover the spawn path (it imports and compiles on its own)
    par = compiled.run_ranges(frsqrt, ranges, workers=2 if method == "fork" else 1, block=size, method=method)
    assert par.to_json() == serial.to_json()
    assert par.inputs == [[0x3F7FFFFE], [0x007FFFFF]]


def test_merged_worker_tallies_are_let_go():
    """Each range's tally holds up to MISROUNDED_CAP misrounded inputs: the parent lets go of it
    once merged, so a sweep where many inputs misround (bfloat16 __hdiv: about 7% of all pairs)
    keeps only the running tally, not one per range (it ran out of memory otherwise)."""
    p = compiled.prepare(str(ROOT / "examples" / "cuda" / "half.ptx"), "k_hdiv_bf16", "div.rn.bf16",
                         db=load_database())
    size = 1 << 12
    ranges = [(s, s + size) for s in range(0x65000000, 0x65000000 + 24 * size, size)]  # divisors 0x6500, 0x6501
    alive = []

    def count(_):
        gc.collect()
        alive.append(sum(type(o) is compiled.Tally for o in gc.get_objects()))  # (type(): no weak proxy is followed)

    tally = compiled.run_ranges(p, ranges, workers=2, block=size, progress=count, method="fork")
    assert tally.misrounded > 0 and len(alive) == len(ranges)
    assert alive[-1] <= 3, alive  # the running tally and the one being merged


_ORPHAN_SCRIPT = """
import sys
from tilecheck.spec.database import load_database
from tilecheck.verify import compiled
p = compiled.prepare(sys.argv[1], "k_hdiv_bf16", "div.rn.bf16", db=load_database())
size = 1 << 16
ranges = [(s, s + size) for s in range(0x65000000, 0x65000000 + 256 * size, size)]
compiled.run_ranges(p, ranges, workers=2, block=size, progress=lambda n: print("merged", flush=True), method="fork")
"""


def _live_children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` and that have not exited (zombies excluded)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(d.name))
    return out


def test_worker_processes_end_when_their_parent_is_killed():
    """A run killed from outside (for memory, say) leaves no worker behind: each worker asks the
    kernel to end it with its parent, instead of waiting forever to hand a result to a pipe that
    nobody reads."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT, str(ROOT / "examples" / "cuda" / "half.ptx")],
                            stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "merged"  # the workers are running ranges
        workers = _live_children(proc.pid)
        assert len(workers) == 2, workers
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    deadline = time.time() + 20
    while time.time() < deadline and _orphans(workers):
        time.sleep(0.2)
    assert not _orphans(workers), "worker processes outlived their parent"


def _orphans(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (not exited, not zombies)."""
    out = []
    for w in pids:
        try:
            state = Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(w)
    return out


def test_runs_within_a_block_give_the_whole_block_result(frsqrt, monkeypatch):
    """Cache-sized runs inside a block (plans run step by step as numpy) judge every input as one
    run of the block does."""
    start = 0x3F7F0000
    ops_ = compiled.exhaustive_block(frsqrt.ref, start, start + BLOCK)
    monkeypatch.setenv("TILECHECK_FUSE", "0")
    monkeypatch.setattr(compiled, "RUN_CHUNK", 1 << 12)
    calls = []
    real = compiled.run_block
    monkeypatch.setattr(compiled, "run_block", lambda *a, **k: calls.append(1) or real(*a, **k))
    parts = compiled.run_inputs(frsqrt, ops_)
    assert len(calls) == BLOCK >> 12
    whole = real(frsqrt.plan, frsqrt.abi, frsqrt.ref, compiled._pack(frsqrt.abi, frsqrt.ref, ops_),
                               frsqrt.ctx_args)
    assert parts.lanes == whole.lanes
    for name in ("bad", "unknown", "by_value"):
        assert np.array_equal(getattr(parts, name), getattr(whole, name)), name


def test_binary32_rsqrt_reference_is_correctly_rounded():
    """The binary32 shortcut equals the model's exact 1/sqrt, on random patterns, specials and
    inputs whose 1/sqrt lies next to a binary32 midpoint (the lanes it decides exactly)."""
    formats = load_database().formats
    f32 = formats["f32"]
    rng = np.random.default_rng(5)
    near = [0x3F09F038, 0x3F3A18E3, 0x3F7FFFFE, 0x3F8A5C86, 0x3FBA2A39, 0x3FD2208F, 0x3FED3230, 0x4009F038,
            0x007FFFFF]
    a = np.concatenate([rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32),
                        np.arange(1 << 12, dtype=np.uint32), np.array(near, dtype=np.uint32),
                        np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x80000000, 0x80000001, 0x7F7FFFFF,
                                  0x00800000, 1], dtype=np.uint32)])
    got = compiled._rsqrt_reference(f32, a, "rn", formats["f64"])
    rule = ops.NanRule(False, f32.default_nan, fixed=f32.default_nan)
    with np.errstate(all="ignore"):
        want = np.asarray(contracts._rsqrt_rn(np, f32, a.astype(np.uint64), ops.Mode("rn"), rule)).astype(np.uint32)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name,reading", [("rsqrt.approx.ftz.f32", "either"), ("rsqrt.approx.f32", "exact"),
                                          ("sqrt.approx.f32", "correctly-rounded"), ("sqrt.approx.ftz.f32", "either"),
                                          ("rcp.approx.ftz.f32", "either")])
def test_negative_inputs_of_the_roots_take_one_class_set_equal_to_the_direct_ones(name, reading):
    """Negative normal inputs of sqrt/rsqrt get -1.0's allowed set (the special table decides them
    by class): the same sets and representatives as the contract's own, for every exponent, alone
    (one uniform row) and mixed with other inputs. rcp takes no such shortcut: its negative inputs'
    sets differ from one another (a class shortcut there would be caught by this comparison)."""
    from tilecheck.sim.choices import ScaledChoices, allowed_choices

    form = load_database().resolve(name)
    table = ScaledChoices(form, reading, "after")
    assert (table.negative is None) == name.startswith("rcp")
    rng = np.random.default_rng(11)
    exps = np.repeat(np.arange(1, 255, dtype=np.uint32), 8)
    mants = np.concatenate([[0, 0x7FFFFF, 1, 0x400000], rng.integers(0, 1 << 23, exps.size - 4)]).astype(np.uint32)
    negative = np.uint32(0x80000000) | (exps << np.uint32(23)) | mants
    mixed = np.concatenate([negative, rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32),
                            np.array([0x80000000, 0x80000001, 0x807FFFFF, 0xFF800000, 0xFFC00000, 0x3F800000],
                                     dtype=np.uint32)])
    as_sets = lambda ch: [frozenset(v[m].tolist()) for v, m in zip(ch.values, ch.valid)]  # noqa: E731
    for x in (negative, mixed):
        got = table.choices(x).per_lane(x.size)
        want = allowed_choices(form, [x], ulp_reading=reading)
        assert as_sets(got) == as_sets(want)
        assert np.array_equal(got.reference, want.reference) and np.array_equal(got.unbounded, want.unbounded)
    if name.startswith("rcp"):
        assert len(set(as_sets(allowed_choices(form, [negative], ulp_reading=reading)))) > 1
    else:
        assert table.choices(negative).uniform


def test_a_plain_run_of_a_32_bit_domain_goes_over_every_input(monkeypatch, capsys):
    """With no --exhaustive and no --cases, a reference whose operands hold 32 bits together (f32
    unary here; 16-bit binary alike) runs the exhaustive enumeration and says so; --cases samples.
    The enumeration is cut to its first two blocks (``exhaustive_total``) to keep the test short:
    the report then names them as the first inputs of the exhaustive enumeration."""
    from tilecheck.cli import main

    monkeypatch.setattr(compiled, "exhaustive_total", lambda p, limit=None: 2 * BLOCK)
    argv = ["verify", FLOAT, "--entry", "k_frsqrt_rn", "--against", "rsqrt.rn.f32"]
    assert main(argv) == 0  # (the known misrounded inputs lie in later blocks)
    out, err = capsys.readouterr()
    assert f"note: every one of the {2 * BLOCK} inputs" in err and "--cases N samples instead" in err
    assert f"the first {2 * BLOCK} inputs of the exhaustive enumeration" in out, out
    assert main(argv + ["--cases", "1000"]) in (0, 1)
    out, err = capsys.readouterr()
    assert "note: every one" not in err and "1000 sampled" in out.replace("(sampled", "sampled"), out
