"""The pictures of a ``verify FILE.ptx --html`` report, drawn by Matplotlib from the run's JSON data
(:func:`tilecheck.commands.verify_ptx.to_json`) and returned as ``(svg, total)`` for a template.

Every picture counts what the run counted: the misrounded map is tallied for every misrounded input
during the run (:class:`tilecheck.verify.compiled.Tally`), so the total a picture states is the
JSON's ``misrounded_count``, not the length of its capped list of inputs.
"""

from __future__ import annotations

import numpy as np

from tilecheck.report.plots import figure, svg

BINS = 256  # per operand: the high byte of the bit pattern (tilecheck.verify.compiled.MAP_BINS)

FOLDS = {
    # the exponent field from the high byte: binary16 is s eeeee ff, bfloat16 s eeeeeee(e)
    "f16": ("exponent field (either sign)", 32, lambda hb: (hb >> 2) & 0x1F),
    "bf16": ("exponent field / 2 (its top 7 bits; either sign)", 128, lambda hb: hb & 0x7F),
}


def dense(map_data: dict) -> np.ndarray:
    """The map's counts as an array of its shape (256 or 256 x 256)."""
    counts = np.zeros(int(np.prod(map_data["shape"])), dtype=np.int64)
    for k, n in map_data["nonzero"]:
        counts[k] = n
    return counts.reshape(map_data["shape"])


def _fold(fmt: str | None) -> tuple[str, int, np.ndarray]:
    """The axis label, bin count and high byte -> bin index of a format (the high byte itself for
    formats without a fold: f32, f64)."""
    hb = np.arange(BINS)
    if fmt in FOLDS:
        label, n, f = FOLDS[fmt]
        return label, n, f(hb)
    return "high byte of the bit pattern", BINS, hb


def binary_map(map_data: dict, names=("a", "b")) -> tuple[str, int]:
    """A heatmap of the misrounded pairs over the exponent fields of the two operands (log colour
    scale, empty bins blank), the total in the title."""
    import matplotlib.colors as mcolors
    import matplotlib.ticker as mticker

    counts = dense(map_data)
    label, n, index = _fold(map_data.get("format"))
    one_hot = np.zeros((BINS, n), dtype=np.int64)
    one_hot[np.arange(BINS), index] = 1
    folded = one_hot.T @ counts @ one_hot  # sums bins: the total is unchanged
    total = int(folded.sum())
    fig, ax = figure(6.4, 5.2)
    shown = np.ma.masked_equal(folded, 0)
    top = max(int(folded.max()), 2)
    # a log scale where counts span decades (an exhaustive run's diagonal holds thousands per bin)
    norm = mcolors.LogNorm(vmin=1, vmax=top) if top >= 10 else mcolors.Normalize(vmin=1, vmax=top)
    # imshow writes one embedded raster inside the SVG: a 256 x 256 map of rectangles would be huge
    im = ax.imshow(shown, origin="lower", cmap="viridis", norm=norm, interpolation="nearest", aspect="auto",
                   extent=(-0.5, n - 0.5, -0.5, n - 0.5))
    bar = fig.colorbar(im, ax=ax, label="misrounded inputs per bin", format=mticker.FormatStrFormatter("%d"))
    if top < 10:
        bar.locator = mticker.MaxNLocator(integer=True)
        bar.update_ticks()
    bar.ax.yaxis.set_minor_formatter(mticker.NullFormatter())  # (10^k labels would cost mathtext: slow)
    ax.set_xlabel(f"{names[1]}: {label}")
    ax.set_ylabel(f"{names[0]}: {label}")
    ax.set_title(f"{total} misrounded inputs by ({names[0]}, {names[1]}) ({n} x {n} bins)")
    return svg(fig), total


def unary_histogram(map_data: dict, name: str = "a") -> tuple[str, int]:
    """The misrounded inputs along the input axis: a histogram over the high byte of the bit
    pattern (256 bins; sign and exponent), the total in the title."""
    counts = dense(map_data)
    total = int(counts.sum())
    fig, ax = figure(7.0, 3.2)
    ax.bar(np.arange(BINS), counts, width=1.0, color="#a11")
    ax.set_xlim(-0.5, BINS - 0.5)
    ax.set_xticks(range(0, BINS + 1, 32), [f"0x{v:02x}" for v in range(0, BINS + 1, 32)])
    ax.set_xlabel(f"{name}: high byte of the bit pattern (sign, exponent)")
    ax.set_ylabel("misrounded inputs")
    ax.set_title(f"{total} misrounded inputs along the input ({BINS} bins)")
    return svg(fig), total


def position_bars(positions: dict) -> tuple[str, int]:
    """Which positions of the allowed range the misrounding lanes took, per approximate
    instruction (grouped bars), from the traced re-run of the first misrounded inputs."""
    rows = positions["instructions"]
    keys = sorted({k for r in rows for k in r["positions"]}, key=_position_order)
    fig, ax = figure(6.4, 3.2)
    width = 0.8 / max(len(rows), 1)
    total = 0
    for j, r in enumerate(rows):
        values = [r["positions"].get(k, 0) for k in keys]
        total += sum(values)
        ax.bar(np.arange(len(keys)) + j * width, values, width=width, label=f"line {r['line']}: {r['instruction']}")
    ax.set_xticks(np.arange(len(keys)) + width * (len(rows) - 1) / 2, keys)
    ax.set_ylabel("misrounding lanes")
    ax.set_title(f"{positions['lanes']} misrounding lanes by position in the allowed range\n"
                 f"(the first {positions['inputs']} misrounded inputs, traced)")
    if rows:  # below the axes: inside, it would cover the bars
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15))
    return svg(fig), total


def _position_order(key: str) -> int:
    """``RN-2ulp`` < ``RN`` < ``RN+1ulp``."""
    return 0 if key == "RN" else int(key[2:].removesuffix("ulp"))
