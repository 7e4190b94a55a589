"""One correctly rounded operation on arrays of bit patterns, by the fastest path that applies.

:func:`compute` picks, per call, the compiled kernels of :mod:`tilecheck.model.jit`, the float
fast paths of :mod:`tilecheck.model.fast`, the error-free transformations of
:mod:`tilecheck.model.eft`, or the exact integer path of :func:`tilecheck.model.ops.apply`; all
give the same bits (each fast path is tested against the exact one). Large inputs go block by
block, so temporaries stay in cache, and over threads. Both the PTX model (:mod:`tilecheck.model.api`)
and the spec bodies' numpy backend (:mod:`tilecheck.model.semantics`) round through here.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tilecheck import cpus
from tilecheck.formats import Format
from tilecheck.model import eft, fast, jit, ops


CHUNK = 1 << 16
"""Elements per block on one thread: every temporary of a block stays in cache."""

THREAD_CHUNK_BYTES = 1 << 20
"""Bytes of each operand per block when blocks run on several threads: fewer, larger blocks
keep the time spent holding the GIL between numpy calls small next to the time inside them
(measured best: 256K binary32 / 128K binary64 elements)."""

_POOL = None


def _pool(workers: int):
    """A lazily created thread pool (numpy releases the GIL inside its loops)."""
    global _POOL
    if _POOL is None or _POOL._max_workers != workers:
        _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tilecheck-model")
    return _POOL


def _exact_block(xp, op: str, fmt: Format, arrays, mode: ops.Mode, rule: ops.NanRule):
    return ops.apply(xp, op, fmt, [a.astype(xp.uint64, copy=False) for a in arrays], mode, rule)


def compute(xp, op: str, fmt: Format, arrays, mode: ops.Mode, rule: ops.NanRule):
    """Evaluate ``op`` on equally shaped unsigned arrays; returns ``fmt.uint`` result patterns.

    Works block by block (fast path when one applies, else the exact path) so temporaries stay
    in cache, spreading large inputs over threads (numpy releases the GIL inside its loops;
    ``TILECHECK_THREADS=1`` turns that off).
    """
    if jit.applicable(xp, op, fmt, mode):
        block = jit.block
    elif fast.applicable(op, fmt, mode):
        block = fast.block
    elif eft.applicable(op, fmt, mode):
        block = eft.block
    else:
        block = _exact_block
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    n = flat[0].size
    chunk, thread_chunk = CHUNK, THREAD_CHUNK_BYTES // np.dtype(fmt.uint).itemsize
    if block is jit.block:
        chunk = thread_chunk = jit.CHUNK
    with np.errstate(all="ignore"):  # special lanes compute garbage that `where` discards
        if xp is not np or n <= chunk:
            return block(xp, op, fmt, flat, mode, rule).astype(fmt.uint, copy=False).reshape(shape)
        out = np.empty(n, dtype=fmt.uint)

        into = block is not _exact_block  # fast blocks write straight into the output slice

        def work(start: int, size: int) -> None:
            stop = min(start + size, n)
            part = [a[start:stop] for a in flat]
            if into:
                block(xp, op, fmt, part, mode, rule, out[start:stop])
            else:
                out[start:stop] = block(xp, op, fmt, part, mode, rule)

        threads = cpus.threads()
        if threads <= 1 or n < 2 * thread_chunk:
            for s in range(0, n, chunk):
                work(s, chunk)
        else:
            pool = _pool(threads)
            for f in [pool.submit(work, s, thread_chunk) for s in range(0, n, thread_chunk)]:
                f.result()  # re-raises a worker's exception here
    return out.reshape(shape)
