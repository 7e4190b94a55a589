"""Whether a backend (or a reference) can run a form: a yes, or a no with its reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Support:
    """``ok`` when the form can be run (``reason`` is None); otherwise ``reason`` says why not.

    Not usable as a bool on purpose (test ``.ok``): these answers were once reason strings, empty
    for "yes", and a truth test would silently read them backwards."""

    reason: str | None = None

    def __post_init__(self):
        if self.reason is not None and not self.reason:
            raise ValueError("a Support that says no needs a reason (None says yes)")

    @property
    def ok(self) -> bool:
        """True when the form can be run."""
        return self.reason is None

    def __bool__(self):
        raise TypeError("Support has no truth value: test .ok (or read .reason)")


SUPPORTED = Support()
"""The yes answer."""
