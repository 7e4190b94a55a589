"""Hypothesis strategies for floating-point bit patterns and hard cases.

Every strategy yields plain Python ints (bit patterns of the format's width) or tuples of them,
so that a failing example prints as something you can paste into ``tilecheck eval``.

* :func:`bits` -- one pattern, biased toward edge classes (see :mod:`tilecheck.inputs.edges`):
  +-0, smallest/largest subnormals, the subnormal/normal boundary, powers of two and their
  neighbours, the largest finite number, +-inf, quiet and signalling NaNs with payloads, then
  structured (interesting exponent x interesting fraction) and uniformly random patterns.
  Hypothesis shrinks toward the first (edge) branch.
* :func:`operands` -- a tuple of ``n`` such patterns; :func:`roundings` -- rn rz rm rp.
* :func:`hard_division`, :func:`hard_sqrt` -- operands whose exact quotient / square root lies a
  tiny fraction of an ulp from a rounding boundary (constructions and bounds in
  :mod:`tilecheck.testing.construct`).
* :func:`ftz_boundary` -- operands whose exact result is below the smallest normal but rounds to
  it: the cases where flushing "before rounding" and "after rounding" disagree.
* :func:`hard_cases` -- the constructions :mod:`tilecheck.inputs.mix` declares for an operation.

Nothing here registers profiles or touches global Hypothesis settings; see
:mod:`tilecheck.testing.profiles`.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tilecheck.formats import ROUNDINGS, Format, get_format
from tilecheck.inputs import forms as input_forms
from tilecheck.inputs.edges import edge_values, interesting_exponent_fields, interesting_fractions
from tilecheck.inputs.mix import FTZ_ROUNDINGS, HARD_CASES, ftz_rounding
from tilecheck.spec.registry import OPERATIONS
from tilecheck.testing import construct

__all__ = ["bits", "operands", "roundings", "hard_division", "hard_sqrt", "ftz_boundary",
           "hard_cases", "CONSTRUCTIONS"]


def bits(fmt: Format | str) -> st.SearchStrategy[int]:
    """Bit patterns of ``fmt``, about half edge-class values, a quarter structured, a quarter
    uniformly random."""
    f = get_format(fmt)
    edges = st.sampled_from(edge_values(f))
    structured = st.builds(
        lambda sign, field, frac: (f.sign_mask if sign else 0) | (field << f.mantissa_bits) | frac,
        st.booleans(),
        st.one_of(st.sampled_from(interesting_exponent_fields(f)),
                  st.integers(0, (1 << f.exponent_bits) - 1)),
        st.one_of(st.sampled_from(interesting_fractions(f)), st.integers(0, f.mantissa_mask)),
    )
    uniform = st.integers(0, (1 << f.width) - 1)
    return st.one_of(edges, edges, structured, uniform)


def operands(fmt: Format | str, n: int) -> st.SearchStrategy[tuple[int, ...]]:
    """Tuples of ``n`` independent :func:`bits` patterns."""
    return st.tuples(*[bits(fmt)] * n)


def roundings() -> st.SearchStrategy[str]:
    """One of the four IEEE roundings, ``rn rz rm rp``."""
    return st.sampled_from(ROUNDINGS)


def _small_odd(p: int) -> st.SearchStrategy[int]:
    kmax = min(7, (1 << max(p - 2, 1)) - 1)
    return st.sampled_from([k for k in range(-kmax, kmax + 1) if k % 2])


def hard_division(fmt: Format | str, midpoint: bool | None = None,
                  subnormal: bool | None = None) -> st.SearchStrategy[tuple[int, int]]:
    """``(a, b)`` whose exact quotient is within ``|k| * 2**(1-p)`` ulp (``|k| <= 7``) of a grid
    point (``midpoint=False``, hard for rz/rm/rp) or of a midpoint (``midpoint=True``, hard for
    rn), with normal results or, for ``subnormal=True``, subnormal ones (``None``: either)."""
    f = get_format(fmt)
    p, m = f.precision, f.mantissa_bits

    @st.composite
    def cases(draw):
        mid = draw(st.booleans()) if midpoint is None else midpoint
        sub = draw(st.integers(0, 3)) == 0 if subnormal is None else subnormal
        rb = draw(st.integers(1, p - 1)) if sub else p
        qlo, qhi = f.emin - m, f.emax - m
        qe = draw(st.one_of(st.sampled_from([qlo, qlo + 1, -m, qhi - 1, qhi]), st.integers(qlo, qhi)))
        return construct.hard_division_operands(
            f, draw(st.integers(0, (1 << 64) - 1)), draw(_small_odd(p)), midpoint=mid,
            result_bits=rb, quantum_exp=qe, pick=draw(st.integers(0, (1 << 32) - 1)),
            neg_a=draw(st.booleans()), neg_b=draw(st.booleans()))

    return cases()


def hard_sqrt(fmt: Format | str, midpoint: bool | None = None) -> st.SearchStrategy[int]:
    """Positive ``a`` whose square root is within ``|k| * 2**-p`` ulp (``|k| <= 63``) of a grid
    point (``midpoint=False``) or ``|k| * 2**-(p+2)`` ulp of a midpoint (``midpoint=True``)."""
    f = get_format(fmt)
    p = f.precision
    ks = [k for k in range(-63, 64) if (-k) % 8 == 1 and abs(k) < (1 << max(p - 2, 1))]

    @st.composite
    def cases(draw):
        mid = draw(st.booleans()) if midpoint is None else midpoint
        return construct.hard_sqrt_operand(f, draw(st.sampled_from(ks)), midpoint=mid,
                                           root=draw(st.integers(0, 1)),
                                           pick=draw(st.integers(0, (1 << 32) - 1)))

    return cases()


def ftz_boundary(fmt: Format | str, op: str = "div", rounding: str = "rn") -> st.SearchStrategy[tuple[int, ...]]:
    """Operands of ``op`` (div, mul, fma) with normal operands whose exact result is below
    ``2**emin`` in magnitude yet rounds to the smallest normal under ``rounding`` (rn: either
    sign; rp: positive; rm: negative results)."""
    f = get_format(fmt)
    if op not in construct.FTZ_BOUNDARY_OPS:
        raise ValueError(f"no FTZ boundary construction for {op!r}")
    if rounding not in ("rn", "rp", "rm"):
        raise ValueError(f"no result rounds up to the smallest normal under {rounding!r}")
    return st.builds(
        lambda x, pick, shift, neg: construct.ftz_boundary_operands(
            f, op, rounding=rounding, x=x, pick=pick, shift=shift, neg=neg),
        st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 32) - 1), st.integers(0, 1 << 16),
        st.booleans())


def _from_numpy(name: str, f: Format, op: str, rounding: str | None) -> st.SearchStrategy[tuple[int, ...]]:
    """One case of the numpy construction ``name`` (:data:`tilecheck.inputs.forms.CONSTRUCTIONS`),
    seeded by a drawn integer: for constructions without a scalar twin in :mod:`construct`."""
    build = input_forms.CONSTRUCTIONS[name]
    return st.integers(0, (1 << 64) - 1).map(
        lambda seed: tuple(int(c[0]) for c in build(op, f, rounding or "rn", 1, np.random.default_rng(seed))))


def _ftz_any(f: Format, op: str, rounding: str | None) -> st.SearchStrategy[tuple[int, ...]]:
    if rounding is not None:
        return ftz_boundary(f, op, ftz_rounding(rounding))
    return st.one_of(*[ftz_boundary(f, op, r) for r in FTZ_ROUNDINGS])


# the Hypothesis implementation of each construction of tilecheck.inputs.mix.HARD_CASES:
# (format, op, rounding or None) -> strategy of operand tuples
CONSTRUCTIONS = {
    "hard-division": lambda f, op, rounding: hard_division(f),
    "hard-sqrt": lambda f, op, rounding: hard_sqrt(f).map(lambda a: (a,)),
    "ftz-boundary": _ftz_any,
    "rcp-ftz-boundary": lambda f, op, rounding: _from_numpy("rcp-ftz-boundary", f, op, rounding),
    "tie-sum": lambda f, op, rounding: _from_numpy("tie-sum", f, op, rounding),
}


def hard_cases(fmt: Format | str, op: str, rounding: str | None = None) -> st.SearchStrategy[tuple[int, ...]]:
    """Hard operand tuples for ``op``, mixed with :func:`operands`: the constructions
    :data:`tilecheck.inputs.mix.HARD_CASES` declares for ``op``, repeated by weight (an operation
    without one gets :func:`operands` alone). FTZ-boundary cases target ``rounding`` (``None``: rn,
    rp and rm)."""
    f = get_format(fmt)
    plain = operands(f, OPERATIONS[op])
    parts = [CONSTRUCTIONS[name](f, op, rounding) for name, weight in HARD_CASES.get(op, ()) for _ in range(weight)]
    return st.one_of(*parts, plain)
