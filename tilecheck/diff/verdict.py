"""Verdicts on a batch of results, written against an array namespace.

:func:`disagreements` takes operand and result arrays of one namespace (numpy, or CuPy on a GPU),
decides every case there and moves to the host only the cases that disagree: their indices,
results and operands. On a GPU, an exhaustive 2**32 sweep therefore copies back a few bytes per
batch instead of the batch.

The verdict is :func:`tilecheck.allowed` for every arithmetic form. For exact forms a result
bit-identical to :func:`tilecheck.evaluate` is allowed by definition, so the cheap equality
comparison runs first and ``allowed`` judges only the lanes that differ (NaNs with other bits,
real mismatches). Memory forms (``ld``/``st``) move bits: the result must equal the source.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecheck.spec.contract import ULP_READING_DEFAULT

__all__ = ["Disagreements", "disagreements", "merge", "concat", "ok_mask", "to_host"]


def to_host(array) -> np.ndarray:
    """``array`` on the host: CuPy arrays (recognised by their type's module, as the model's
    :func:`~tilecheck.model.xp.namespace` does) through ``.get()``, numpy arrays as they are."""
    if type(array).__module__.startswith("cupy"):
        return array.get()
    return np.asarray(array)


@dataclass
class Disagreements:
    """The cases of a batch whose result the verdict rejects (host arrays).

    ``index``: positions in the batch (int64, ascending); ``results``: the rejected results;
    ``operands``: one array per source operand, the cases' inputs; ``cases``: the cases judged;
    ``labels``: per rejected case, which run produced it (e.g. the GPU code path), or None.
    """

    cases: int
    index: np.ndarray
    results: np.ndarray
    operands: list[np.ndarray]
    labels: list[str] | None = None

    @property
    def count(self) -> int:
        """Number of rejected cases."""
        return int(self.index.size)


def _namespace(array):
    from tilecheck.model.xp import namespace

    return namespace(array)


def ok_mask(form, results, operands, tininess: str = "after", ulp_reading: str = ULP_READING_DEFAULT):
    """Per-case verdict (bool array in the namespace of ``results``): is each result allowed?

    ``operands`` hold one container per case (memory forms: ``registers`` containers per case,
    and ``results`` likewise). ``tininess`` is the model's ``.ftz`` convention for the verdict,
    ``ulp_reading`` how approximate forms' ulp bounds are read (:mod:`tilecheck.spec.contract`).
    """
    from tilecheck.model import api

    xp = _namespace(results)
    if form.kind == "memory":
        k = max(o.registers for o in form.operands)
        return (results.reshape(-1, k) == operands[0].reshape(-1, k)).all(axis=1)
    if form.kind == "exact":
        expected = api.evaluate(form, *operands, tininess=tininess)
        ok = results == expected
        if not bool(xp.all(ok)):
            idx = xp.nonzero(~ok)[0]
            ok[idx] = api.allowed(form, results[idx], *[o[idx] for o in operands], tininess=tininess)
        return ok
    return api.allowed(form, results, *operands, tininess=tininess, ulp_reading=ulp_reading)


def disagreements(form, results, operands, tininess: str = "after",
                  ulp_reading: str = ULP_READING_DEFAULT) -> Disagreements:
    """The rejected cases of a batch, moved to the host (see the module docstring)."""
    xp = _namespace(results)
    ok = ok_mask(form, results, operands, tininess, ulp_reading)
    n = int(ok.shape[0])
    bad = xp.nonzero(~ok)[0]
    if int(bad.size) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Disagreements(n, empty, to_host(results[:0]), [to_host(o[:0]) for o in operands])
    if form.kind == "memory":
        rows = results.reshape(n, -1)[bad].reshape(-1)
        ops = [o.reshape(n, -1)[bad].reshape(-1) for o in operands]
        return Disagreements(n, to_host(bad).astype(np.int64), to_host(rows), [to_host(o) for o in ops])
    return Disagreements(n, to_host(bad).astype(np.int64), to_host(results[bad]), [to_host(o[bad]) for o in operands])


def merge(parts: list[Disagreements], labels: tuple[str, ...]) -> Disagreements:
    """One result for several runs of the same batch (``labels[i]`` names run ``i``): cases add
    up, rejected cases are listed run by run, each labelled."""
    if len(parts) == 1:
        only = parts[0]
        return Disagreements(only.cases, only.index, only.results, only.operands,
                             [labels[0]] * only.count if only.count else [])
    index = np.concatenate([p.index for p in parts])
    results = np.concatenate([p.results for p in parts])
    operands = [np.concatenate([p.operands[i] for p in parts]) for i in range(len(parts[0].operands))]
    names = [lab for p, lab in zip(parts, labels) for _ in range(p.count)]
    return Disagreements(sum(p.cases for p in parts), index, results, operands, names)


def concat(parts: list[Disagreements], offsets: list[int]) -> Disagreements:
    """One result for consecutive slices of a batch (slice ``i`` starts at ``offsets[i]``)."""
    index = np.concatenate([p.index + off for p, off in zip(parts, offsets)])
    results = np.concatenate([p.results for p in parts])
    operands = [np.concatenate([p.operands[i] for p in parts]) for i in range(len(parts[0].operands))]
    labels = None
    if any(p.labels for p in parts):
        labels = [lab for p in parts for lab in (p.labels or [""] * p.count)]
    return Disagreements(sum(p.cases for p in parts), index, results, operands, labels)
