"""Options shared by the subcommands: numbers that must make sense, and where batches run on Dask.

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


def add_dask_options(parser, workers_help: str) -> None:
    """``--workers N`` and ``--scheduler ADDRESS`` (exclusive): run the batches on a local Dask
    cluster of N worker processes or on an existing one. ``workers_help`` says what N counts."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, default=None, metavar="N", help=workers_help)
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the batches on the Dask cluster at ADDRESS (tcp://host:8786); needs tilecheck[dist]")


def on_dask(args) -> bool:
    """True when ``--workers`` or ``--scheduler`` is given."""
    return args.workers is not None or args.scheduler is not None


def dask_banner(args, address: str, alive, dashboard: str | None) -> str:
    """The line saying which Dask cluster runs the batches: where, how many workers, its dashboard."""
    where = (f"local Dask cluster of {args.workers} worker(s)" if args.workers is not None
             else f"Dask scheduler {args.scheduler}")
    return (f"dask: {where} at {address}, {alive} worker(s) connected; dashboard: "
            f"{dashboard or 'not served by this scheduler'}\n")
