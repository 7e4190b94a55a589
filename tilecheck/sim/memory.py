"""Byte-level access to numpy arrays for the simulator and the IR interpreter.

:class:`GlobalMemory` gives every pointer argument its own 4 GiB region of a fake global address
space (``BASE + k * 2**32``), so an address says which array it points into and where, and loads
and stores are vectorised gathers/scatters over the array's bytes (little-endian, like the GPU).
Stores with several threads writing one address keep the value of the last thread in thread
order (:func:`scatter_words`), deterministically -- a GPU picks one of them.
"""

from __future__ import annotations

import sys

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.sim.errors import ExecutionError

BASE = 0x7F00_0000_0000
REGION_BITS = 32
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def byte_view(array: np.ndarray, name: str) -> np.ndarray:
    """A writeable flat uint8 view of a C-contiguous array (writes go to the array)."""
    if not isinstance(array, np.ndarray):
        raise UsageError(f"{name}: expected a numpy array, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise UsageError(f"{name}: the array must be C-contiguous (use np.ascontiguousarray and copy back)")
    if not array.flags.writeable:
        raise UsageError(f"{name}: the array is read-only; kernels write their outputs in place")
    return array.reshape(-1).view(np.uint8)


def _word_view(data: np.ndarray, offsets: np.ndarray, width: int):
    """``data`` seen as ``width``-byte words when every offset is a multiple of ``width`` (a fast
    path: one gather/scatter of words instead of bytes), else None."""
    if sys.byteorder != "little" or data.size % width or (offsets % width).any():
        return None
    return data.view(UINT[width])


def gather_words(data: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """Little-endian ``width``-byte words of the flat uint8 ``data`` at byte ``offsets``."""
    offsets = np.asarray(offsets, dtype=np.int64)
    words = _word_view(data, offsets, width)
    if words is not None:
        return words[offsets // width]
    idx = offsets[:, None] + np.arange(width, dtype=np.int64)
    return np.ascontiguousarray(data[idx]).view(np.dtype(UINT[width]).newbyteorder("<")).reshape(-1).astype(
        UINT[width], copy=False)


def scatter_words(data: np.ndarray, offsets: np.ndarray, width: int, values) -> None:
    """Store ``width``-byte words at byte ``offsets``; for repeated offsets the last one wins."""
    offsets = np.asarray(offsets, dtype=np.int64)
    values = np.broadcast_to(np.asarray(values, dtype=UINT[width]), offsets.shape)
    if offsets.size > 1 and not (np.diff(offsets) > 0).all():
        # keep the last write to each offset (thread order), whatever numpy's scatter order is
        _, first_in_reversed = np.unique(offsets[::-1], return_index=True)
        keep = np.sort(offsets.size - 1 - first_in_reversed)
        offsets, values = offsets[keep], values[keep]
    words = _word_view(data, offsets, width)
    if words is not None:
        words[offsets // width] = values
        return
    raw = np.ascontiguousarray(values.astype(np.dtype(UINT[width]).newbyteorder("<"))).view(np.uint8)
    data[offsets[:, None] + np.arange(width, dtype=np.int64)] = raw.reshape(-1, width)


def _regions(region: np.ndarray):
    """(region, selector) pairs; one cheap pass when every access hits the same array (the usual case)."""
    if region.size and (region == region[0]).all():
        return [(int(region[0]), slice(None))]
    return [(int(r), region == r) for r in np.unique(region)]


class GlobalMemory:
    """The arrays a kernel launch can address, each at its own fake base address."""

    def __init__(self):
        self.arrays: list[np.ndarray] = []
        self.names: list[str] = []

    def add(self, array: np.ndarray, name: str) -> int:
        """Register ``array`` (its bytes are read and written in place); returns its address."""
        self.arrays.append(byte_view(array, name))
        self.names.append(name)
        return BASE + ((len(self.arrays) - 1) << REGION_BITS)

    def _locate(self, addresses: np.ndarray, width: int, line: int, what: str):
        addresses = np.asarray(addresses, dtype=np.uint64)
        region = (addresses - np.uint64(BASE)) >> np.uint64(REGION_BITS)
        offset = (addresses & np.uint64((1 << REGION_BITS) - 1)).astype(np.int64)
        bad = (addresses < np.uint64(BASE)) | (region >= np.uint64(len(self.arrays)))
        if bad.any():
            raise ExecutionError(f"{what} at address {int(addresses[bad][0]):#x} points into no argument array",
                                 line)
        region = region.astype(np.int64)
        return region, offset

    def check(self, addresses: np.ndarray, width: int, align: int, line: int, what: str):
        """(region, offset) arrays of ``width``-byte accesses, after bounds and alignment checks."""
        region, offset = self._locate(addresses, width, line, what)
        if (offset % align).any():
            k = int(np.flatnonzero(offset % align)[0])
            raise ExecutionError(f"misaligned {what}: byte {int(offset[k])} of {self.names[region[k]]} is not a "
                                 f"multiple of {align}", line)
        for r, sel in _regions(region):
            size = self.arrays[r].size
            if (offset[sel] + width > size).any():
                k = int(offset[sel][offset[sel] + width > size][0])
                raise ExecutionError(f"out-of-bounds {what}: bytes {k}..{k + width - 1} of {self.names[r]} "
                                     f"({size} bytes)", line)
        return region, offset

    def load(self, region: np.ndarray, offset: np.ndarray, width: int) -> np.ndarray:
        """Words at checked (region, offset) pairs."""
        out = np.empty(offset.shape, dtype=UINT[width])
        for r, sel in _regions(region):
            out[sel] = gather_words(self.arrays[r], offset[sel], width)
        return out

    def store(self, region: np.ndarray, offset: np.ndarray, width: int, values: np.ndarray) -> None:
        """Write words at checked (region, offset) pairs (last thread wins on a shared address)."""
        values = np.broadcast_to(np.asarray(values, dtype=UINT[width]), offset.shape)
        for r, sel in _regions(region):
            scatter_words(self.arrays[r], offset[sel], width, values[sel])
