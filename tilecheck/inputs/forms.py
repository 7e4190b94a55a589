"""Operands of a whole instruction form: the one place that turns element patterns into a form's
source containers.

:func:`form_operands` draws ``n`` cases of a form: for memory forms (``ld``/``st``) uniformly random
containers per source of the single-instruction kernel (:func:`source_layout`); for forms whose
sources are integers or bits, uniformly random containers; for floating-point forms one set of
columns per lane (packed forms: lanes independent, element 0 in the low bits) from a *lane
generator*. Two lane generators are defined here:

* :func:`campaign_lane` (the default) -- edge-biased patterns, constructed hard cases of the form's
  operation and uniform patterns, shuffled (the differential campaigns' mix);
* :func:`edge_lane` -- edge-biased patterns only, each operand independent (``tilecheck verify``'s
  contract check).

Test suites pass their own lane generator for other mixes.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecheck.formats import Format
from tilecheck.inputs import boundaries, generators

__all__ = ["source_layout", "form_operands", "campaign_lane", "edge_lane", "hard_cases", "LaneGenerator"]

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

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


def _split(n: int, weights: list[float]) -> list[int]:
    """Integer counts summing to ``n`` in the given proportions (remainder to the first part)."""
    total = float(sum(weights))
    counts = [int(n * w / total) for w in weights]
    counts[0] += n - sum(counts)
    return counts


def hard_cases(op: str, fmt, rounding: str, n: int, rng: np.random.Generator, arity: int):
    """``n`` constructed hard operand tuples for one element format (a list of uint64 arrays),
    or None when the operation has no construction."""
    if n <= 0:
        return None
    u = np.uint64
    if op == "div":
        n_ftz = n // 4
        a, b = generators.hard_division_pairs(fmt, n - n_ftz, rng)
        if n_ftz:
            mode = rounding if rounding in ("rn", "rp", "rm") else "rn"
            fa, fb = generators.ftz_boundary_pairs(fmt, n_ftz, rng, "div", mode)
            a, b = np.concatenate([a, fa]), np.concatenate([b, fb])
        return [a.astype(u), b.astype(u)]
    if op in ("sqrt", "rsqrt"):
        return [generators.hard_sqrt_inputs(fmt, n, rng).astype(u)]
    if op == "rcp":
        return [boundaries.rcp_ftz_boundary(fmt, n, rng).astype(u)]
    if op in ("add", "sub"):
        a, b = boundaries.tie_sums(fmt, n, rng)
        return [a.astype(u), b.astype(u)]
    if op in ("mul", "fma") and arity in (2, 3):
        mode = rounding if rounding in ("rn", "rp", "rm") else "rn"
        return [x.astype(u) for x in generators.ftz_boundary_pairs(fmt, n, rng, op, mode)]
    return None


def campaign_lane(form, fmt: Format, n: int, rng: np.random.Generator, arity: int) -> list[np.ndarray]:
    """``n`` operand tuples of one lane: half edge-biased, about a third constructed hard cases of
    the form's operation (when it has a construction), the rest uniform patterns, shuffled."""
    n_edge, n_hard, n_uniform = _split(n, [0.5, 0.35, 0.15])
    rounding = str(form.semantics.params.get("rounding", "rn"))
    hard = hard_cases(form.semantics.operation, fmt, rounding, n_hard, rng, arity)
    if hard is None:
        n_edge += n_hard
    parts = [[generators.edge_biased(fmt, n_edge, rng).astype(np.uint64) for _ in range(arity)]]
    if hard is not None:
        parts.append(hard)
    parts.append([rng.integers(0, 1 << fmt.width, n_uniform, dtype=np.uint64, endpoint=False)
                  if fmt.width < 64 else rng.integers(0, 1 << 63, n_uniform, dtype=np.uint64)
                  | (rng.integers(0, 2, n_uniform, dtype=np.uint64) << np.uint64(63))
                  for _ in range(arity)])
    columns = [np.concatenate([p[i] for p in parts]) for i in range(arity)]
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
