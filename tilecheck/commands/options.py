"""Argument types shared by the subcommands: numbers that must make sense.

argparse reports a value these reject as a usage error (exit 2) naming the option, so ``--cases 0``
or ``--timeout -1`` stop before any work instead of running a campaign of nothing.
"""

from __future__ import annotations

import argparse
import math

from tilecheck.errors import echo


def _number(text: str, kind):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{echo(text)} is not {'an integer' if kind is int else 'a number'}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{echo(text)} is not a finite number")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (seeds, counts that may be zero)."""
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (time limits)."""
    value = _number(text, float)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value:g}")
    return value
