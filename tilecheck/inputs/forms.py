"""Operands of a whole instruction form: the one place that turns element patterns into a form's
source containers.

:func:`form_operands` draws ``n`` cases of a form: for memory forms (``ld``/``st``) uniformly random
containers per source of the single-instruction kernel (:func:`source_layout`); for forms whose
sources are integers or bits, uniformly random containers; for floating-point forms one set of
columns per lane (packed forms: lanes independent, element 0 in the low bits) from a *lane
generator*. Two lane generators are defined here:

* :func:`campaign_lane` (the default) -- :func:`mixed_operands` shuffled: edge-biased patterns,
  constructed hard cases of the form's operation and uniform patterns in the proportions of
  :mod:`tilecheck.inputs.mix` (the differential campaigns' mix);
* :func:`edge_lane` -- edge-biased patterns only, each operand independent (``tilecheck verify``'s
  contract check).

Test suites pass their own lane generator for other mixes.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecheck.formats import Format, UINT_DTYPES
from tilecheck.inputs import boundaries, generators, mix
from tilecheck.spec.registry import OPERATIONS

__all__ = ["source_layout", "form_operands", "campaign_lane", "edge_lane", "hard_cases", "mixed_operands",
           "CONSTRUCTIONS", "LaneGenerator"]

_UINT = UINT_DTYPES

LaneGenerator = Callable[[object, Format, int, np.random.Generator, int], list]
"""``(form, element format, n, rng, arity) -> arity uint64 arrays``: one lane's operand columns."""


def source_layout(form) -> list[tuple[str, type, int]]:
    """``(operand name, container dtype, containers per case)`` of each array a case holds, in
    the order of the single-instruction kernel's source parameters: the form's source operands,
    or for ``ld`` the memory it loads from and for ``st`` the value it stores."""
    key = form.semantics.key
    if key in ("mem.ld", "mem.st"):
        value = next(o for o in form.operands if o.role != "addr")
        role = "addr" if key == "mem.ld" else "src"
        return [(o.name, _UINT[value.container_bits], value.registers) for o in form.operands if o.role == role]
    return [(o.name, _UINT[o.container_bits], 1) for o in form.sources]


def _hard_division(op, fmt, rounding, n, rng):
    return list(generators.hard_division_pairs(fmt, n, rng))


def _hard_sqrt(op, fmt, rounding, n, rng):
    return [generators.hard_sqrt_inputs(fmt, n, rng)]


def _ftz_boundary(op, fmt, rounding, n, rng):
    return list(generators.ftz_boundary_pairs(fmt, n, rng, op, mix.ftz_rounding(rounding)))


def _rcp_ftz_boundary(op, fmt, rounding, n, rng):
    return [boundaries.rcp_ftz_boundary(fmt, n, rng)]


def _tie_sum(op, fmt, rounding, n, rng):
    return list(boundaries.tie_sums(fmt, n, rng))


CONSTRUCTIONS: dict[str, Callable] = {
    "hard-division": _hard_division,
    "hard-sqrt": _hard_sqrt,
    "ftz-boundary": _ftz_boundary,
    "rcp-ftz-boundary": _rcp_ftz_boundary,
    "tie-sum": _tie_sum,
}
"""The numpy implementation of each construction of :data:`tilecheck.inputs.mix.HARD_CASES`:
``(op, fmt, rounding, n, rng) -> operand arrays``."""


def hard_cases(op: str, fmt, rounding: str, n: int, rng: np.random.Generator, arity: int):
    """``n`` constructed hard operand tuples for one element format (a list of uint64 arrays),
    or None when the operation has no construction (:data:`tilecheck.inputs.mix.HARD_CASES`) or
    ``arity`` is not the operation's."""
    parts = mix.HARD_CASES.get(op)
    if n <= 0 or parts is None or OPERATIONS.get(op) != arity:
        return None
    counts = mix.split(n, [w for _, w in parts])
    built = [CONSTRUCTIONS[name](op, fmt, rounding, k, rng) for (name, _), k in zip(parts, counts) if k]
    return [np.concatenate([b[i] for b in built]).astype(np.uint64) for i in range(arity)]


def mixed_operands(op: str, fmt: Format, rounding: str, n: int, rng: np.random.Generator,
                   arity: int) -> tuple[list[np.ndarray], dict[str, int]]:
    """``n`` operand tuples of one element format in the proportions of
    :data:`tilecheck.inputs.mix.MIX` (edge-biased, constructed hard cases of ``op``, uniform), in
    that order (not shuffled), and how many of each: ``{"edge": .., "hard": .., "uniform": ..}``."""
    n_edge, n_hard, n_uniform = mix.split(n, [mix.MIX.edge, mix.MIX.hard, mix.MIX.uniform])
    hard = hard_cases(op, fmt, rounding, n_hard, rng, arity)
    if hard is None:
        n_edge, n_hard = n_edge + n_hard, 0
    edge = generators.integer_edge_biased if fmt.integer else generators.edge_biased
    parts = [[edge(fmt, n_edge, rng).astype(np.uint64) for _ in range(arity)]]
    if hard is not None:
        parts.append(hard)
    parts.append(uniform_operands(fmt, n_uniform, rng, arity))
    columns = [np.concatenate([p[i] for p in parts]) for i in range(arity)]
    return columns, {"edge": n_edge, "hard": n_hard, "uniform": n_uniform}


def uniform_operands(fmt: Format, n: int, rng: np.random.Generator, arity: int) -> list[np.ndarray]:
    """``n`` operand tuples of uniformly random bit patterns of ``fmt`` (uint64 columns)."""
    return [rng.integers(0, 1 << fmt.width, n, dtype=np.uint64, endpoint=False)
            if fmt.width < 64 else rng.integers(0, 1 << 63, n, dtype=np.uint64)
            | (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
            for _ in range(arity)]


def campaign_lane(form, fmt: Format, n: int, rng: np.random.Generator, arity: int) -> list[np.ndarray]:
    """``n`` operand tuples of one lane in the mix of :func:`mixed_operands` for the form's
    operation and rounding, shuffled."""
    rounding = str(form.semantics.params.get("rounding", "rn"))
    columns, _ = mixed_operands(form.semantics.operation, fmt, rounding, n, rng, arity)
    order = rng.permutation(n)
    return [c[order] for c in columns]


def edge_lane(form, fmt: Format, n: int, rng: np.random.Generator, arity: int) -> list[np.ndarray]:
    """``n`` edge-biased patterns per operand (:func:`tilecheck.inputs.generators.edge_biased`)."""
    return [np.asarray(generators.edge_biased(fmt, n, rng), dtype=np.uint64) for _ in range(arity)]


def _random_containers(bits: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` uniformly random ``bits``-bit containers (uint64; all 64 bits drawn for b64)."""
    hi = rng.integers(0, 1 << 32, k, dtype=np.uint64)
    lo = rng.integers(0, 1 << 32, k, dtype=np.uint64)
    return ((hi << np.uint64(32)) | lo) & np.uint64((1 << bits) - 1)


def form_operands(form, n: int, rng: np.random.Generator, lane: LaneGenerator = campaign_lane) -> list[np.ndarray]:
    """``n`` cases of ``form``: one container array per source (see :func:`source_layout`; a
    memory source holds ``registers`` containers per case), in the containers' dtypes."""
    layout = source_layout(form)
    if form.kind == "memory":
        return [_random_containers(np.dtype(dtype).itemsize * 8, n * per_case, rng).astype(dtype)
                for _, dtype, per_case in layout]
    if form.element_format is None or any(o.element_format is None for o in form.sources):
        return [_random_containers(o.container_bits, n, rng).astype(dtype)
                for o, (_, dtype, _) in zip(form.sources, layout)]
    fmt = form.format
    arity = len(form.sources)
    containers = [np.zeros(n, dtype=np.uint64) for _ in range(arity)]
    for k in range(form.lanes):
        columns = lane(form, fmt, n, rng, arity)
        for i in range(arity):
            containers[i] |= columns[i].astype(np.uint64) << np.uint64(k * fmt.width)  # widened: numpy 1.x promotion
    return [c.astype(dtype) for c, (_, dtype, _) in zip(containers, layout)]
