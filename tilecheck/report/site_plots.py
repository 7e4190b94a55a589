"""The one plot of the family pages: an approximate form's allowed error band, computed by the
model (:func:`tilecheck.model.api.allowed_results`) and drawn by Matplotlib as inline SVG."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tilecheck.model import api
from tilecheck.report.plots import figure, svg

POINTS = 256
_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def _sweep(form) -> tuple[np.ndarray, list, str]:
    """x in [1, 4) (two binades) as the form's operands: unary forms take x, division 1 / x."""
    fmt = form.format
    xs = np.linspace(1.0, 4.0, POINTS, endpoint=False)
    bits = np.array([fmt.from_fraction(Fraction(x)) for x in xs], dtype=_UINT[form.container_bits])
    if len(form.sources) == 1:
        return xs, [bits], f"{form.sources[0].name} = x"
    one = np.full_like(bits, fmt.power_bits(0))
    return xs, [one, bits] + [np.zeros_like(bits)] * (len(form.sources) - 2), \
        f"{form.sources[0].name} = 1, {form.sources[1].name} = x"


def error_band(form) -> str | None:
    """SVG of the allowed results' distance from the model's representative (round-to-nearest)
    value, in representable steps, for x in [1, 4); None for forms without a scalar contract."""
    if form.kind != "contract" or form.lanes != 1 or form.format is None:
        return None
    xs, operands, what = _sweep(form)
    got = api.allowed_results(form, *operands)
    ref = np.asarray(api.reference(form, *operands)).astype(np.int64)
    # results here are positive and finite: bit patterns order like their values
    lo = got.lo.astype(np.int64) - ref
    hi = got.hi.astype(np.int64) - ref
    fig, ax = figure(5.5, 2.2)
    ax.fill_between(xs, lo, hi, step="mid", alpha=0.35, label="allowed (ulp reading: either)")
    ax.plot(xs, lo, lw=0.8)
    ax.plot(xs, hi, lw=0.8)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xlabel(f"x ({what})")
    ax.set_ylabel("steps from RN")
    ax.set_title(f"{form.name}: allowed results around round-to-nearest", fontsize=9)
    ax.set_ylim(min(lo.min(), 0) - 1, max(hi.max(), 0) + 2)  # room for the legend above the band
    ax.legend(fontsize=7, loc="upper right")
    return svg(fig)
