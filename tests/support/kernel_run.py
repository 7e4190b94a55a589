"""Run a PTX kernel on given buffers with the simulator, one lane per thread, and read back what
it stored: the tests of shared memory and of the warp's matrix instructions drive kernels so."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import Memory, RunContext, compile_function


def run_kernel(db, path: Path, entry: str, buffers: list, n: int, approx: str = "reference", block: int = 256):
    """Run ``entry`` on ``n`` threads (CTAs of ``block``), one global buffer per pointer parameter
    in order (each parameter gets its buffer's address); returns the lanes."""
    fn = parse_module(path.read_text(), str(path)).function(entry)
    plan = compile_function(fn, db, str(path))
    memory = Memory([(f"p{k}", np.ascontiguousarray(buf).view(np.uint8).copy()) for k, buf in enumerate(buffers)])
    lanes = plan.new_lanes(n)
    for k, p in enumerate(fn.params):
        lanes.params[p.name] = np.full(n, memory.pointer(k), dtype=np.uint64)
    plan.run(lanes, RunContext(approx=approx, memory=memory, block=block, threads=n))
    return lanes


def stored_words(lanes, words: int) -> np.ndarray:
    """The output buffer as ``words`` uint32 words, from every store record of the lanes (a
    128-bit store is two 64-bit records); every lane must have stored."""
    out = np.zeros(words, dtype=np.uint32)
    for region, nbytes, offs, vals, done in lanes.stores:
        assert done.all()
        for k in range(nbytes // 4):
            out[offs // 4 + k] = (vals.astype(np.uint64) >> np.uint64(32 * k)).astype(np.uint32)
    return out
