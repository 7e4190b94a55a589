"""Helpers shared by the differential-engine tests (a module name no other test folder uses)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from tilecheck.diff import backends


class Faulty(backends.ModelBackend):
    """The model's exact path, wrong in the last result bit where operand a's low byte is 0x5b."""

    def __init__(self, delay: float = 0.0):
        super().__init__()
        self.name = "faulty"
        self.delay = delay  # seconds per run: slow batches keep several in flight on a cluster

    def run(self, form, operands, mask=None, old=None):
        if self.delay:
            time.sleep(self.delay)
        out = super().run(form, operands, mask, old)
        hit = (np.asarray(operands[0]).astype(np.uint64) & np.uint64(0xFF)) == 0x5B
        return np.where(hit, out ^ out.dtype.type(1), out)


def have_ptxas() -> bool:
    """Whether tilecheck finds a ptxas."""
    from tilecheck import ptxas
    from tilecheck.errors import TilecheckError

    try:
        ptxas.find_ptxas()
    except TilecheckError:
        return False
    return True


requires_ptxas = pytest.mark.skipif(not have_ptxas(),
                                    reason="ptxas not found (TILECHECK_PTXAS, PATH or the nvidia-cuda-nvcc wheel)")


def sleepy(index: int, delay: float) -> int:
    """``index``, after ``delay`` seconds (jobs that finish out of order)."""
    time.sleep(delay)
    return index


def done_batches(out: Path) -> int:
    """Batches a campaign in ``out`` has checkpointed so far (0 before its first checkpoint, or
    while the file is being replaced)."""
    try:
        data = json.loads((out / "checkpoint.json").read_text())
    except (OSError, json.JSONDecodeError):
        return 0
    return sum(s["done_batches"] for s in data["states"].values())
