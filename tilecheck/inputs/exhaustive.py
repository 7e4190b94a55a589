"""Exhaustive iteration over small input domains (at most 2**32 points).

Where a form's inputs can be enumerated -- unary binary32 (2**32 patterns), unary and binary
f16/bf16 (2**16 and 2**32), the upper-word ``.approx.ftz.f64`` forms (only the 2**32 high words are
read) -- a sweep of every input beats any sampling. Points are numbered ``0 .. size - 1`` and
:func:`chunk` turns a range of point numbers into operand containers, so a sweep is a loop over
ranges that can stop and resume anywhere:

* one operand of ``w`` <= 32 bits: point ``i`` is the pattern ``i``;
* two operands of 16 bits: point ``i`` is ``(i >> 16, i & 0xffff)`` (first operand outermost);
* the upper-word f64 forms: point ``i`` is the container ``i << 32`` (low word zero).

Nothing here depends on the model; it only reads a form's operand layout.
"""

from __future__ import annotations

import numpy as np

from tilecheck.formats import UINT_DTYPES

__all__ = ["domain_size", "chunk", "MAX_POINTS"]

MAX_POINTS = 1 << 32
"""The largest domain :func:`domain_size` enumerates."""

def _layout(form) -> tuple[str, int, int] | None:
    """(kind, operand count, bits per operand) of an enumerable form, else None."""
    sources = form.sources
    if form.kind not in ("exact", "contract") or not sources:
        return None
    if form.semantics.high_word:
        return ("hi", 1, 32)
    bits = sources[0].container_bits
    if any(o.registers != 1 for o in sources):
        return None
    if len(sources) * bits > 32:
        return None
    return ("plain", len(sources), bits)


def domain_size(form) -> int | None:
    """Number of distinct inputs of ``form`` when at most 2**32 (``None``: too many to enumerate).

    ``form`` is a :class:`~tilecheck.spec.forms.Form`. Memory forms and forms whose operands
    together have more than 32 significant bits return ``None``.
    """
    layout = _layout(form)
    if layout is None:
        return None
    _, count, bits = layout
    return 1 << (count * bits)


def chunk(form, start: int, stop: int) -> list[np.ndarray]:
    """Operand containers (one array per source operand) of points ``start .. stop - 1``.

    Arrays have the operand's container dtype (uint16/uint32/uint64). Raises ``ValueError`` for
    a form without an enumerable domain or a range outside it.
    """
    layout = _layout(form)
    if layout is None:
        raise ValueError(f"{form.name} has no enumerable input domain (more than 2**32 points)")
    kind, count, bits = layout
    size = 1 << (count * bits)
    if not 0 <= start <= stop <= size:
        raise ValueError(f"range [{start}, {stop}) is outside the {size}-point domain of {form.name}")
    index = np.arange(start, stop, dtype=np.uint64)
    if kind == "hi":
        return [index << np.uint64(32)]
    dtype = UINT_DTYPES[form.sources[0].container_bits]
    if count == 1:
        return [index.astype(dtype)]
    mask = np.uint64((1 << bits) - 1)
    return [((index >> np.uint64(bits * (count - 1 - k))) & mask).astype(dtype) for k in range(count)]
