"""Evaluate a stored element's expression over many inputs, for every result the contracts allow.

:func:`evaluate_parts` runs the nodes an element depends on (:mod:`tilecheck.amdgpu.symbolic`) in
order, each through its :class:`~tilecheck.amdgpu.machine.Step`'s own semantics, over arrays of
lanes. An approximate step forks every lane into one lane per allowed result
(:meth:`tilecheck.amdgpu.floatops.FloatOp.choices`): ``origin`` says which input each lane
computes, ``complete`` whether every allowed result was tried on its way (a contract too wide to
enumerate gives a sample), and ``trail`` which result each fork took. A step whose sources take few
distinct values over the lanes (a divisor's reciprocal in a block of one divisor) is computed once
per distinct value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilecheck.amdgpu.symbolic import LOAD, UNDEF, Graph, arg_nodes, order

M32 = np.uint64(0xFFFFFFFF)
M16 = np.uint64(0xFFFF)


@dataclass
class Evaluation:
    """Per lane: ``value`` of the element, ``origin`` (the input it computes), ``complete``;
    ``forks``: per approximate node, the lane-parallel array of the result it returned."""

    value: np.ndarray
    origin: np.ndarray
    complete: np.ndarray
    forks: dict = field(default_factory=dict)
    judged: np.ndarray | None = None  # False where a lane took a provisional contract's result
    values: dict = field(default_factory=dict)


def _arg(a, vals: dict, lanes: int):
    kind = a[0]
    if kind == "c":
        v = a[1]
        if isinstance(v, (bool, np.bool_)):
            return np.full(lanes, bool(v))
        return np.full(lanes, np.uint64(v & 0xFFFFFFFFFFFFFFFF))
    if kind == "r":
        x = vals[a[1]]
        if x.dtype == bool:
            return x.astype(np.uint64)
        return (x >> np.uint64(32 * a[2])) & M32 if a[2] else x & M32
    if kind == "b":
        return vals[a[1]].astype(bool)
    return _arg(a[1], vals, lanes) | (_arg(a[2], vals, lanes) << np.uint64(32))


def _few(sources: list, lanes: int):
    """``(unique sources, inverse)`` when the sources take at most a quarter as many distinct
    tuples as there are lanes (each at most 32 bits, at most two of them), else None."""
    if lanes < 1024 or len(sources) > 2 or any(s.dtype == bool for s in sources):
        return None
    if any(int(s.max(initial=0)) > 0xFFFFFFFF for s in sources):
        if len(sources) != 1:
            return None
        key = sources[0]
    else:
        key = sources[0] if len(sources) == 1 else sources[0] | (sources[1] << np.uint64(32))
    # a cheap test first, on a strided sample: most nodes take a new value in every lane
    if np.unique(key[:: max(1, lanes // 256)]).size > 64:
        return None
    uniq, inv = np.unique(key, return_inverse=True)
    if uniq.size * 4 > lanes:
        return None
    if len(sources) == 1:
        return [uniq], inv
    return [uniq & M32, uniq >> np.uint64(32)], inv


def evaluate_parts(graph: Graph, parts: list, leaf, n: int, *, variant: str, keep_values: bool = False,
                   provisional: bool = False, reading: str = "either") -> Evaluation:
    """The element built from ``parts`` (each ``(arg, source bit offset, bits, element bit
    position)``) for ``n`` inputs; ``leaf(load node) -> uint64 array of n`` gives the loads.
    A contract the spec marks provisional (no document states its bound) leaves the lanes that
    take its results unjudged (``judged`` False) unless ``provisional``. ``reading`` is the ulp
    reading under which the contracts' allowed results are enumerated (``either``, ``exact``,
    ``correctly-rounded``; :meth:`~tilecheck.amdgpu.floatops.FloatOp.choices`)."""
    roots = []
    for a, *_ in parts:
        roots += arg_nodes(a)
    vals: dict = {}
    origin = np.arange(n)
    complete = np.ones(n, bool)
    judged = np.ones(n, bool)
    forks: dict = {}
    outs_memo: dict = {}
    for node_id in order(graph, roots):
        node = graph.nodes[node_id]
        lanes = origin.shape[0]
        if node.kind == LOAD:
            vals[node_id] = leaf(node_id)[origin]
            continue
        if node.kind == UNDEF:
            vals[node_id] = np.zeros(lanes, np.uint64)
            continue
        step, mode, args = node.key
        if isinstance(step, str):  # the simulator's own merges of register halves
            lo, hi = (_arg(a, vals, lanes) for a in args)
            vals[node_id] = (lo & M16) | (hi & ~M16 & M32) if step == "merge16" else lo
            continue
        if step.kind == "vload":  # a d16 load: the loaded half into the kept register
            new, old = (_arg(a, vals, lanes) for a in args)
            hi = "_hi" in step.instr.mnemonic  # ..._d16_hi, ..._d16_hi_b16
            vals[node_id] = ((new & M16) << np.uint64(16)) | (old & M16) if hi else (new & M16) | (old & ~M16 & M32)
            continue
        if step.kind == "salu":  # a lane mask of data combined by SALU
            a, b = (_arg(x, vals, lanes).astype(bool) for x in args)
            op = step.instr.mnemonic[2:].rsplit("_b", 1)[0]
            vals[node_id] = {"and": a & b, "or": a | b, "xor": a ^ b, "andn2": a & ~b, "and_not1": a & ~b,
                             "orn2": a | ~b, "or_not1": a | ~b}[op]
            continue
        nsrc = len(step.widths)
        srcs = [_arg(a, vals, lanes) for a in args[:nsrc]]
        old = _arg(args[nsrc], vals, lanes) if step.takes_old and len(args) > nsrc else None
        if step.approximate:
            x = step._select(0, srcs[0])
            few = _few([x], lanes)
            if few is not None:
                (ux,), inv = few
                values, valid, comp = step.float_op.choices([ux], mode, variant, reading)
                values, valid, comp = values[inv], valid[inv], comp[inv]
            else:
                values, valid, comp = step.float_op.choices([x], mode, variant, reading)
            counts = valid.sum(axis=1)
            rep = np.repeat(np.arange(lanes), counts)
            chosen = values[valid].astype(np.uint64)
            for k in list(vals):
                vals[k] = vals[k][rep]
            for k in list(forks):
                forks[k] = forks[k][rep]
            origin, complete, judged = origin[rep], complete[rep] & comp[rep], judged[rep]
            if step.float_op.form.variant(variant).contract.provisional and not provisional:
                judged[:] = False
            if old is not None:
                old = old[rep]
            forks[node_id] = chosen
            outs_memo.clear()  # results memoised for the lanes before the fork
            vals[node_id] = step._place(0, chosen, old)
            continue
        key = node.key
        outs = outs_memo.get(key)
        if outs is None:
            few = _few(srcs + ([old] if old is not None else []), lanes) if old is None else None
            if few is not None:
                usrcs, inv = few
                outs = [np.asarray(o)[inv] for o in step.apply(usrcs, None, mode, variant)]
            else:
                outs = step.apply(srcs, old, mode, variant)
            outs_memo[key] = outs
        vals[node_id] = np.asarray(outs[node.slot])
    lanes = origin.shape[0]
    value = np.zeros(lanes, np.uint64)
    for a, off, bits, pos in parts:
        v = _arg(a, vals, lanes)
        value |= ((v >> np.uint64(off)) & np.uint64((1 << bits) - 1)) << np.uint64(pos)
    return Evaluation(value, origin, complete, forks, judged=judged, values=vals if keep_values else {})
