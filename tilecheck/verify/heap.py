"""Keep freed memory in the process for reuse during long verification runs (glibc only).

A block of a sweep allocates and frees a few dozen arrays of one to three megabytes. glibc serves
allocations above its mmap threshold (128 KiB at first, raised as it goes) with fresh mappings and
returns them to the kernel on free, so the next block touches new pages again: a page fault per
4 KiB, about a third of a block's time in the bfloat16 ``__hdiv`` sweep. Raising the mmap
threshold and the trim threshold keeps those pages in the heap, where the next block reuses them.
The process then holds its peak heap instead of giving it back between blocks (a few hundred MB
for a sweep's worker). Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest on 64-bit hosts: every array of a block stays in the heap
_TRIM_THRESHOLD = 1 << 30
_TOP_PAD = 64 << 20
_done = False


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed blocks for reuse (once per process); True where it took effect."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = all(mallopt(param, value) == 1 for param, value in ((_M_MMAP_THRESHOLD, _MMAP_THRESHOLD),
                                                             (_M_TRIM_THRESHOLD, _TRIM_THRESHOLD),
                                                             (_M_TOP_PAD, _TOP_PAD)))
    _done = ok
    return ok
