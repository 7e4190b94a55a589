"""Reader for the Berkeley TestFloat 3 vectors in ``../shared/vectors/testfloat``.

Files are ``<fmt>_<op>.<rounding>.tv.gz``: gzip text, one case per line, hexadecimal columns
``A [B [C]] RESULT FLAGS`` (see ``vectors/README.md``). Names map to tilecheck's vocabulary:
rounding ``rnear_even`` -> ``rn``, ``rminMag`` -> ``rz``, ``rmin`` -> ``rm``, ``rmax`` -> ``rp``; op
``mulAdd`` -> ``fma`` (``add sub mul div sqrt`` keep their names).

The folder is ``$TILECHECK_VECTORS`` when that is set, else ``<checkout>/../shared/vectors/testfloat``
(:func:`vectors_dir`). Parsing is vectorised: the lines have a fixed width, so the whole file is
viewed as a 2-D byte array and each hex column is decoded with a lookup table (a file of 100,000
fma cases parses in milliseconds). A file whose lines are not fixed-width is parsed line by line
instead, with the same result. Parsed arrays are cached in memory (never on disk) and returned
read-only so that a caller cannot corrupt the cache.

NaN results in these files are SoftFloat's x86 default NaN (``Format.softfloat_nan``, negative);
compare NaN results by class. FLAGS: 0x01 inexact, 0x02 underflow (tininess after rounding),
0x04 overflow, 0x08 infinite, 0x10 invalid. No file exercises flush-to-zero.
"""

from __future__ import annotations

import gzip
import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from tilecheck.errors import UsageError
from tilecheck.formats import all_formats, get_format

__all__ = ["vectors_dir", "available", "load", "ROUNDING_NAMES", "OP_NAMES"]

#: TestFloat rounding names -> tilecheck rounding names.
ROUNDING_NAMES = {"rnear_even": "rn", "rminMag": "rz", "rmin": "rm", "rmax": "rp"}
#: TestFloat operation names -> (tilecheck op, operand count).
OP_NAMES = {"add": ("add", 2), "sub": ("sub", 2), "mul": ("mul", 2), "div": ("div", 2),
            "sqrt": ("sqrt", 1), "mulAdd": ("fma", 3)}

_NAME = re.compile(r"^(?P<fmt>[a-z0-9]+)_(?P<op>[A-Za-z]+)\.(?P<rnd>[A-Za-z_]+)\.tv\.gz$")

# ASCII byte -> hex digit value; 255 marks a byte that is not a hex digit.
_HEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEX[_c] = 10 + _i


def vectors_dir() -> Path:
    """The TestFloat vector folder (it may not exist: see :func:`available`)."""
    env = os.environ.get("TILECHECK_VECTORS")
    if env:
        return Path(env)
    # tilecheck/oracle/testfloat.py -> checkout root -> ../shared/vectors/testfloat
    return Path(__file__).resolve().parents[2].parent / "shared" / "vectors" / "testfloat"


def available() -> list[tuple[str, str, str, Path]]:
    """``(fmt, op, rounding, path)`` for every vector file present, in tilecheck names, sorted.

    Returns an empty list when the folder does not exist. Files whose format, op or rounding
    tilecheck does not know (say ``f128_*`` or ``*_rem.*``) are not listed.
    """
    folder = vectors_dir()
    if not folder.is_dir():
        return []
    formats = all_formats()
    out = []
    for path in sorted(folder.glob("*.tv.gz")):
        m = _NAME.match(path.name)
        if not m or m["fmt"] not in formats or m["op"] not in OP_NAMES or m["rnd"] not in ROUNDING_NAMES:
            continue
        out.append((m["fmt"], OP_NAMES[m["op"]][0], ROUNDING_NAMES[m["rnd"]], path))
    return out


def load(fmt: str, op: str, rounding: str) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]:
    """``(operands, results, flags)`` of one vector file, in tilecheck names
    (``load("f32", "fma", "rz")`` reads ``f32_mulAdd.rminMag.tv.gz``). ``fmt`` is a name (looked
    up in the default spec root's formats: the files are named by format and only its width is
    read) or a :class:`~tilecheck.formats.Format`.

    ``operands`` is a tuple of 1, 2 or 3 arrays and ``results`` an array, all of the format's
    unsigned dtype; ``flags`` is uint8. Arrays are read-only and cached per file. Raises
    :class:`~tilecheck.errors.UsageError` for an unknown name and ``FileNotFoundError`` when the
    file is absent.
    """
    f = get_format(fmt)
    ops = {v[0]: (k, v[1]) for k, v in OP_NAMES.items()}
    rnds = {v: k for k, v in ROUNDING_NAMES.items()}
    if op not in ops:
        raise UsageError(f"TestFloat has no {op!r} vectors; known: {', '.join(ops)}")
    if rounding not in rnds:
        raise UsageError(f"unknown rounding {rounding!r}; known: {', '.join(rnds)}")
    path = vectors_dir() / f"{f.name}_{ops[op][0]}.{rnds[rounding]}.tv.gz"
    if not path.is_file():
        raise FileNotFoundError(f"no TestFloat vectors {path} (set TILECHECK_VECTORS to the folder)")
    return _load_path(str(path), f.name, ops[op][1])


@lru_cache(maxsize=None)
def _load_path(path: str, fmt_name: str, n_operands: int):
    f = get_format(fmt_name)
    digits = (f.width + 3) // 4
    with open(path, "rb") as fh:
        data = gzip.decompress(fh.read())
    widths = [digits] * (n_operands + 1) + [2]  # operands, result, flags
    cols = _parse_fixed(data, widths)
    if cols is None:
        cols = _parse_lines(data, len(widths), path)
    for k, c in enumerate(cols[:-1]):
        if f.width < 64 and (c >> np.uint64(f.width)).any():
            raise ValueError(f"{path}: column {k + 1} holds patterns wider than {f.width}-bit {f.name}")
    operands = tuple(_readonly(c.astype(f.uint)) for c in cols[:n_operands])
    results = _readonly(cols[n_operands].astype(f.uint))
    flags = _readonly(cols[n_operands + 1].astype(np.uint8))
    return operands, results, flags


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _parse_fixed(data: bytes, widths: list[int]) -> list[np.ndarray] | None:
    """Decode fixed-width lines ``HEX HEX ... HEX\\n`` column by column; ``None`` when the file
    does not have exactly that layout (the caller then parses line by line)."""
    line = sum(widths) + len(widths)  # digits, single-space separators, newline
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size == 0 or raw.size % line:
        return None
    rows = raw.reshape(-1, line)
    if not (rows[:, -1] == ord("\n")).all():
        return None
    cols = []
    start = 0
    for w in widths:
        if start + w < line - 1 and not (rows[:, start + w] == ord(" ")).all():
            return None
        nib = _HEX[rows[:, start:start + w]]
        if (nib == 255).any():
            return None
        value = np.zeros(rows.shape[0], dtype=np.uint64)
        for j in range(w):  # w <= 16 vectorised steps, not one Python step per line
            value = (value << np.uint64(4)) | nib[:, j].astype(np.uint64)
        cols.append(value)
        start += w + 1
    return cols


def _parse_lines(data: bytes, ncols: int, path: str) -> list[np.ndarray]:
    """Slow path: whitespace-separated hex fields, one case per line."""
    rows = [ln.split() for ln in data.decode("ascii").splitlines() if ln.strip()]
    for i, r in enumerate(rows):
        if len(r) != ncols:
            raise ValueError(f"{path}:{i + 1}: expected {ncols} hex fields, found {len(r)}")
    return [np.array([int(r[k], 16) for r in rows], dtype=np.uint64) for k in range(ncols)]
