"""Matplotlib figures as SVG text to embed in a page (no file, no network, no hand-drawn SVG).

:func:`figure` gives a figure with the headless Agg backend; :func:`svg` closes it and returns
the ``<svg>`` element (the XML prolog dropped) for a template to embed with ``|safe``.
"""

from __future__ import annotations

import io

from tilecheck.report.render import require


def figure(width: float = 6.0, height: float = 4.0):
    """A new Matplotlib figure and axes (Agg backend: no display needed)."""
    matplotlib = require("matplotlib")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height))
    return fig, ax


def svg(fig) -> str:
    """The figure as an inline ``<svg>`` element (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
