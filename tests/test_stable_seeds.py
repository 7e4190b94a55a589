"""Random inputs are seeded from values that are the same in every process.

``hash()`` of a str (and of a tuple holding one) is randomised per process (PYTHONHASHSEED), so a
test seeded from it draws new inputs on every run and a failure may not reproduce. Seeds come from
a stable digest instead (``zlib.crc32(repr(key).encode())``, hashlib, or a constant).
"""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BUILTIN_HASH = re.compile(r"(?<![\w.])hash\(")
_SEEDING = re.compile(r"default_rng|Random\(|seed|RandomState|& 0x|% \(1 <<")


def test_no_seed_comes_from_builtin_hash():
    hits = []
    for folder in ("tests", "tilecheck", "tools", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                code = line.split("#")[0]
                if _BUILTIN_HASH.search(code) and _SEEDING.search(code):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "seed from a stable digest (zlib.crc32), not the builtin hash:\n" + "\n".join(hits)


def test_the_stable_seed_is_the_same_in_another_process():
    key = ("div.approx.f32", "exact", False)
    here = zlib.crc32(repr(key).encode())
    code = f"import zlib; print(zlib.crc32(repr({key!r}).encode()))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "12345"}).stdout
    assert int(other) == here
