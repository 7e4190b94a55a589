"""Session-wide test setup: a check that the host FPU keeps subnormals and signed zeros (the
numpy fast paths rely on IEEE behaviour), and the Hypothesis profiles (``ci`` by default,
``TILECHECK_HYPOTHESIS_PROFILE=deep`` for long runs), and each module's environment restored."""

from __future__ import annotations

import os

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


@pytest.fixture(autouse=True, scope="module")
def _environment_restored():
    """Each test module leaves ``os.environ`` as it found it. Dask's nannies write their workers'
    settings (``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED``, ...) into the parent's environment when
    they (re)start a worker; every later subprocess of the suite -- ``tilecheck verify`` runs, ptxas
    -- would inherit them and, with one OpenMP thread, run the model at a fraction of its speed."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def db():
    """The spec database, loaded once for the session (what the simulator and verifier read)."""
    from tilecheck.spec.database import load_database
    return load_database()
