"""MPFR references divide in the active context, never through a context method.

gmpy2 2.2.0 (the declared floor; fixed upstream by gmpy2 pull request 541) computes ``context.div``,
``context.floor_div`` and ``context.divmod`` in the *current* context instead of the one they are
called on: a 200-bit ``ctx.div`` of ``2**63 - 1`` by 1 returns a 53-bit, round-to-nearest quotient.
A reference built that way rounds twice and disagrees with the model by one ulp (cvt from 64-bit
integers was the case found). Every other context method tried (add, sub, mul, fma, sqrt,
rec_sqrt, ...) honours its context, and the module functions (``gmpy2.div`` inside ``with ctx:``)
do in every release.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

gmpy2 = pytest.importorskip("gmpy2")

ROOT = Path(__file__).resolve().parents[2]
_CONTEXT_DIVISION = re.compile(r"\b(?!gmpy2\b)[A-Za-z_][A-Za-z0-9_]*\.(div|floor_div|divmod)\(")


def test_no_context_method_division_in_the_sources():
    hits = []
    for folder in ("tilecheck", "tests", "tools", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if _CONTEXT_DIVISION.search(line.split("#")[0]):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, ("divide with gmpy2.div inside `with ctx:` (a context method ignores its context in "
                      "gmpy2 2.2):\n" + "\n".join(hits))


def test_module_division_rounds_in_the_active_context():
    wide = gmpy2.context(precision=200, emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())
    with wide:
        q = gmpy2.div(gmpy2.mpfr(2**63 - 1, 200), gmpy2.mpfr(1, 200))
    assert q.precision == 200 and int(q) == 2**63 - 1
    narrow = gmpy2.context(precision=24, round=gmpy2.RoundToZero)
    with narrow:
        r = gmpy2.div(gmpy2.mpfr(2**63 - 1, 200), gmpy2.mpfr(1, 200))
    assert r.precision == 24 and int(r) == 2**63 - 2**39  # rounded once, toward zero
    assert gmpy2.get_context().precision == 53  # the with block restored the default context
