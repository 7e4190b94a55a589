"""The operand mix, declared once: the proportions in which a sample draws edge-biased patterns,
constructed hard cases of the operation and uniform patterns, and which constructions of hard
cases each operation has.

Every generator of mixed operands reads these tables: the numpy one
(:func:`tilecheck.inputs.forms.mixed_operands`, behind the differential campaigns and the
compiled-PTX verifier's samples) and the Hypothesis strategies of :mod:`tilecheck.testing`. Each
implements every construction named in :data:`HARD_CASES` (the tests check both). The edge set is
:func:`tilecheck.inputs.edges.edge_values`.

Constructions (the mathematics is in :mod:`tilecheck.testing.construct` and
:mod:`tilecheck.inputs.boundaries`):

* ``hard-division`` -- quotients a tiny fraction of an ulp from a grid point or midpoint;
* ``hard-sqrt`` -- square roots likewise (also the hard inputs of ``rsqrt``);
* ``ftz-boundary`` -- div, mul, fma results below the smallest normal that round up to it;
* ``rcp-ftz-boundary`` -- reciprocals just below the smallest normal (round up under rp/rm);
* ``tie-sum`` -- sums on a rounding tie or a tiny fraction of a half-ulp past one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Mix", "MIX", "HARD_CASES", "CONSTRUCTIONS", "FTZ_ROUNDINGS", "split", "ftz_rounding"]


@dataclass(frozen=True)
class Mix:
    """Proportions of a sample; when the operation has no construction, its share goes to ``edge``."""

    edge: float     # edge-biased patterns (tilecheck.inputs.generators.edge_biased)
    hard: float     # constructed hard cases of the operation (HARD_CASES)
    uniform: float  # uniformly random bit patterns


MIX = Mix(edge=0.5, hard=0.35, uniform=0.15)
"""The mix of the differential campaigns and of ``tilecheck verify``'s sampled compiled-PTX runs."""

HARD_CASES: dict[str, tuple[tuple[str, int], ...]] = {
    "div": (("hard-division", 3), ("ftz-boundary", 1)),
    "sqrt": (("hard-sqrt", 1),),
    "rsqrt": (("hard-sqrt", 1),),
    "rcp": (("rcp-ftz-boundary", 1),),
    "add": (("tie-sum", 1),),
    "sub": (("tie-sum", 1),),
    "mul": (("ftz-boundary", 1),),
    "fma": (("ftz-boundary", 1),),
}
"""Per operation with constructed hard cases: its constructions and their relative weights."""

CONSTRUCTIONS: tuple[str, ...] = tuple(sorted({name for parts in HARD_CASES.values() for name, _ in parts}))
"""Every construction :data:`HARD_CASES` names (each generator family implements all of them)."""

FTZ_ROUNDINGS = ("rn", "rp", "rm")
"""The roundings under which a result below the smallest normal can round up to it (rz cannot)."""


def ftz_rounding(rounding: str | None) -> str:
    """The rounding an ``ftz-boundary`` case targets for a form rounding ``rounding``: itself, or
    ``rn`` for rz (and for forms without a rounding)."""
    return rounding if rounding in FTZ_ROUNDINGS else "rn"


def split(n: int, weights) -> list[int]:
    """Integer counts summing to ``n`` in the given proportions (remainder to the first part)."""
    weights = list(weights)
    total = float(sum(weights))
    counts = [int(n * w / total) for w in weights]
    counts[0] += n - sum(counts)
    return counts
