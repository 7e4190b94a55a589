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

Memory forms (``ld``/``st``) get uniformly random containers. The generation itself is
:func:`tilecheck.inputs.forms.form_operands`; this module fixes the seeding.
"""

from __future__ import annotations

import zlib

import numpy as np

from tilecheck.inputs.exhaustive import chunk, domain_size
from tilecheck.inputs.forms import campaign_lane, form_operands, source_layout

__all__ = ["form_key", "operation", "source_layout", "batch", "operands_for", "exhaustive_size", "exhaustive_batch"]


def form_key(form) -> int:
    """A stable 32-bit number for a form name (CRC-32), part of every batch seed."""
    return zlib.crc32(form.name.encode("utf-8"))


def operation(form) -> str:
    """The arithmetic operation behind a form: ``div``, ``sqrt``, ``rcp``, ``rsqrt``, ``add``,
    ``sub``, ``mul``, ``fma``, ``ld`` or ``st`` (the upper-word f64 forms give rcp/rsqrt)."""
    return form.semantics.operation


def operands_for(form, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` cases of ``form`` in the campaign mix (:func:`tilecheck.inputs.forms.form_operands`)."""
    return form_operands(form, n, rng, campaign_lane)


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
