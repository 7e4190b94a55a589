"""Hypothesis strategies for whole instruction forms: operand containers of any spec form.

:func:`form_operands` draws one tuple of source containers for a :class:`~tilecheck.spec.forms.Form`
(what :func:`tilecheck.allowed` and the differential backends take), built from the element
strategies of :mod:`tilecheck.testing.strategies`: edge-biased patterns mixed with the hard cases
:mod:`tilecheck.inputs.mix` declares for the form's operation; packed forms draw each lane
independently, element 0 in the low bits; memory forms (``ld``/``st``) draw, per source of their single-instruction kernel (the memory an ``ld`` reads,
the value an ``st`` writes), a tuple of ``registers`` raw containers. Values are plain ints, so a
failing example pastes straight into ``tilecheck eval``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tilecheck.inputs.mix import HARD_CASES
from tilecheck.spec.registry import OPERATIONS
from tilecheck.testing import strategies as elem

__all__ = ["form_operands", "forms"]

def _lane_tuples(form) -> st.SearchStrategy[tuple[int, ...]]:
    """One lane's operand tuples: the hard cases of the form's operation
    (:data:`tilecheck.inputs.mix.HARD_CASES`) mixed with edge-biased patterns."""
    fmt = form.format
    op = form.semantics.operation
    arity = len(form.sources)
    if op in HARD_CASES and OPERATIONS[op] == arity:
        rounding = form.semantics.params.get("rounding")
        return elem.hard_cases(fmt, op, None if rounding is None else str(rounding))
    return elem.operands(fmt, arity)


def form_operands(form) -> st.SearchStrategy[tuple[int, ...]]:
    """Tuples of source containers of ``form`` (see the module docstring)."""
    if form.kind == "memory":
        value = next(o for o in form.operands if o.role != "addr")
        width, count = value.container_bits, value.registers
        role = "addr" if form.semantics.key == "mem.ld" else "src"
        n = sum(1 for o in form.operands if o.role == role)
        return st.tuples(*[st.lists(st.integers(0, (1 << width) - 1), min_size=count, max_size=count)
                           .map(tuple) for _ in range(n)])
    if form.lanes == 1:
        return _lane_tuples(form)
    fmt = form.format
    lanes = st.tuples(*[_lane_tuples(form)] * form.lanes)

    def pack(per_lane: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
        arity = len(per_lane[0])
        return tuple(sum(per_lane[lane][i] << (lane * fmt.width) for lane in range(form.lanes)) for i in range(arity))

    return lanes.map(pack)


def forms(db, kinds: tuple[str, ...] = ("exact", "contract")):
    """A strategy over the database's PTX forms of the given kinds."""
    return st.sampled_from([f for f in db.ptx_forms() if f.kind in kinds])
