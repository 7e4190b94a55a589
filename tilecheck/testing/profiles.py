"""Hypothesis profiles for tilecheck's property tests and fuzzing runs.

* ``ci`` -- the default for ``pytest``: 100 examples per test, no deadline (the oracles are slow
  on purpose), derandomized and without an example database, so that every run of the same code
  tests the same examples and a failure reproduces anywhere.
* ``deep`` -- for fuzzing sessions: 5,000 examples per test, random seeds, with the example
  database so that found failures are replayed first.

Nothing happens at import time. :func:`register_profiles` (idempotent; call it from a
``conftest.py`` hook such as ``pytest_configure``) registers both profiles and loads the one
``$TILECHECK_HYPOTHESIS_PROFILE`` names (``ci`` when unset); :func:`load_profile` switches
explicitly.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tilecheck.errors import UsageError

__all__ = ["PROFILES", "ENV_VAR", "register_profiles", "load_profile", "selected_profile"]

#: Names of the profiles :func:`register_profiles` defines.
PROFILES = ("ci", "deep")
#: Environment variable that selects a profile.
ENV_VAR = "TILECHECK_HYPOTHESIS_PROFILE"


def register_profiles() -> None:
    """Register the ``ci`` and ``deep`` profiles with Hypothesis and load the selected one
    (:func:`selected_profile`). Safe to call repeatedly."""
    _register()
    settings.load_profile(selected_profile())


def _register() -> None:
    # too_slow / data_too_large: the hard-case strategies do exact big-integer work per example
    # and the MPFR oracle runs per example; that is their purpose, not a generation problem.
    relaxed = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True,
                              database=None, suppress_health_check=relaxed, print_blob=True)
    settings.register_profile("deep", max_examples=5000, deadline=None, derandomize=False,
                              suppress_health_check=relaxed, print_blob=True)


def selected_profile() -> str:
    """The profile name ``$TILECHECK_HYPOTHESIS_PROFILE`` asks for (``ci`` when unset)."""
    name = os.environ.get(ENV_VAR, "ci") or "ci"
    if name not in PROFILES:
        raise UsageError(f"{ENV_VAR}={name!r} is not a tilecheck Hypothesis profile; use one of "
                         f"{', '.join(PROFILES)}")
    return name


def load_profile(name: str | None = None) -> str:
    """Register the profiles, load ``name`` (default: :func:`selected_profile`) and return it."""
    _register()
    chosen = selected_profile() if name is None else name
    if chosen not in PROFILES:
        raise UsageError(f"unknown Hypothesis profile {chosen!r}; use one of {', '.join(PROFILES)}")
    settings.load_profile(chosen)
    return chosen
