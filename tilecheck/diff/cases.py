"""Input cases for differential runs: deterministic batches per form, and exhaustive chunks.

A campaign's case stream is a pure function of ``(seed, form, batch index)``:
:func:`batch` seeds ``numpy.random.default_rng([seed, form_key(form), k])`` for batch ``k``, so any
batch can be regenerated on its own (resuming a killed campaign, replaying a finding) and adding a
form to a campaign does not change the cases of the others.

A batch mixes, per the form's operation (element formats, packed lanes independently):

* edge-biased bit patterns (:func:`tilecheck.inputs.generators.edge_biased`): +-0, subnormal
  min/max, min normal, max finite, +-inf, NaNs with payloads, powers of two and neighbours;
* constructed hard cases: divisions and square roots whose exact result lies a tiny fraction of an
  ulp from a rounding boundary, results just below the smallest normal that round up to it
  (where FTZ before/after rounding differ; division, reciprocal, multiplication, fma), sums on
  or next to rounding ties;
* uniformly random patterns.

Memory forms (``ld``/``st``) get uniformly random containers.
"""

from __future__ import annotations

import zlib

import numpy as np

from tilecheck.formats import get_format
from tilecheck.inputs import boundaries, generators
from tilecheck.inputs.exhaustive import chunk, domain_size

__all__ = ["form_key", "operation", "source_layout", "batch", "operands_for", "exhaustive_size", "exhaustive_batch"]

_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def form_key(form) -> int:
    """A stable 32-bit number for a form name (CRC-32), part of every batch seed."""
    return zlib.crc32(form.name.encode("utf-8"))


def operation(form) -> str:
    """The arithmetic operation behind a form: ``div``, ``sqrt``, ``rcp``, ``rsqrt``, ``add``,
    ``sub``, ``mul``, ``fma``, ``ld`` or ``st`` (the upper-word f64 forms give rcp/rsqrt)."""
    return form.semantics.operation


def _rounding(form) -> str:
    return str(form.semantics.params.get("rounding", "rn"))


def _split(n: int, weights: list[float]) -> list[int]:
    """Integer counts summing to ``n`` in the given proportions (remainder to the first part)."""
    total = float(sum(weights))
    counts = [int(n * w / total) for w in weights]
    counts[0] += n - sum(counts)
    return counts


def _hard_element_cases(op: str, fmt, rounding: str, n: int, rng: np.random.Generator, arity: int):
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


def _element_cases(form, op: str, fmt, n: int, rng: np.random.Generator, arity: int) -> list[np.ndarray]:
    """``n`` operand tuples of one lane: edge-biased, hard and uniform cases, shuffled."""
    n_edge, n_hard, n_uniform = _split(n, [0.5, 0.35, 0.15])
    hard = _hard_element_cases(op, fmt, _rounding(form), n_hard, rng, arity)
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


def operands_for(form, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` cases of ``form``: one container array per source (see :func:`source_layout`)."""
    op = operation(form)
    if form.kind == "memory":
        out = []
        for _, dtype, per_case in source_layout(form):
            width = np.dtype(dtype).itemsize * 8
            k = n * per_case
            hi = rng.integers(0, 1 << 32, k, dtype=np.uint64)
            lo = rng.integers(0, 1 << 32, k, dtype=np.uint64)
            out.append((((hi << np.uint64(32)) | lo) & np.uint64((1 << width) - 1)).astype(dtype))
        return out
    fmt = get_format(form.element_format)
    lanes = form.lanes
    arity = len(form.sources)
    containers = [np.zeros(n, dtype=np.uint64) for _ in range(arity)]
    for lane in range(lanes):
        cols = _element_cases(form, op, fmt, n, rng, arity)
        for i in range(arity):
            containers[i] |= cols[i].astype(np.uint64) << np.uint64(lane * fmt.width)  # widened: numpy 1.x promotion
    return [c.astype(dtype) for c, (_, dtype, _) in zip(containers, source_layout(form))]


def batch(form, seed: int, index: int, n: int) -> list[np.ndarray]:
    """Batch ``index`` (``n`` cases) of the campaign stream of ``form`` under ``seed``."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFFFFFFFFFF, form_key(form), int(index)])
    return operands_for(form, n, rng)


def exhaustive_size(form) -> int | None:
    """Number of inputs of an exhaustive sweep of ``form`` (None when above 2**32)."""
    return domain_size(form)


def exhaustive_batch(form, index: int, size: int) -> list[np.ndarray]:
    """Points ``[index * size, (index + 1) * size)`` of the form's exhaustive domain (clipped)."""
    total = domain_size(form)
    if total is None:
        raise ValueError(f"{form.name} has no enumerable domain")
    start = index * size
    return chunk(form, min(start, total), min(start + size, total))
