"""Session-wide test setup: a check that the host FPU keeps subnormals and signed zeros (the
numpy fast paths rely on IEEE behaviour), and the Hypothesis profiles (``ci`` by default,
``TILECHECK_HYPOTHESIS_PROFILE=deep`` for long runs)."""

from __future__ import annotations

import numpy as np
import pytest


def pytest_configure(config):
    min_sub32 = np.array([1], dtype=np.uint32).view(np.float32)
    min_normal64 = np.array([1 << 52], dtype=np.uint64).view(np.float64)
    problems = []
    if (min_sub32 * np.float32(1.0))[0] == 0:
        problems.append("subnormal inputs read as zero (DAZ set)")
    if (min_normal64 / 2.0)[0] == 0:
        problems.append("subnormal results flushed to zero (FTZ set)")
    if np.copysign(1.0, np.float64(-0.0) * 1.0) != -1.0:
        problems.append("-0.0 does not survive arithmetic")
    if problems:
        raise pytest.UsageError("host floating point is not IEEE: " + "; ".join(problems)
                                + " -- the reference model's fast paths would be wrong here")
    try:
        from tilecheck.testing.profiles import register_profiles
    except ImportError:
        return
    register_profiles()
