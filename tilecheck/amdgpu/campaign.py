"""Verify an AMD division sequence against correctly rounded division over a generated campaign.

:func:`verify_sequence` runs ``spec/sequences/<name>.yaml`` with the numpy backend on chunks of
generated operand pairs and compares every result with the reference model's
``ieee_op("div", fmt, "rn", n, d)`` (``.ftz`` when the sequence says so). The reciprocal step is
an input constrained by its contract: per case it is the correctly rounded reciprocal, the lowest
or highest value the contract allows, or a random allowed value (:mod:`tilecheck.amdgpu.contract`).

Cases come in categories (:data:`CATEGORIES`): random patterns, random values over the whole
exponent range, values near one, special values, subnormal operands, quotients near overflow and
underflow, exact quotients, and quotients constructed next to rounding midpoints (normal, subnormal
and near-overflow results; Kahan/Tang construction: odd Y, Q = -k/Y mod 2^(p'+1),
X = (QY + k)/2^(p'+1) puts X/Y within k/(Y 2^(p'+1)) of a midpoint). Chunk ``i`` draws from
``numpy.random.default_rng([seed, i])`` with a fixed chunk size, so the counts are reproducible
from the seed and the case count alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tilecheck.amdgpu import contract
from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.inputs.edges import edge_values
from tilecheck.model import wide
from tilecheck.model.api import ieee_op
from tilecheck.model.ieee import round_pack
from tilecheck.model.semantics import NumpyBackend
from tilecheck.model.xp import bit_length
from tilecheck.spec.amdgpu import Sequence, amdgpu_forms
from tilecheck.spec.sequence import lookup_sequence, run_sequence

CHUNK = 65536
DEFAULT_CASES = 1_000_000

# category -> share of the cases
CATEGORIES: dict[str, float] = {
    "random-bits": 0.06,
    "random-values": 0.14,
    "near-one": 0.08,
    "special": 0.05,
    "subnormal": 0.10,
    "huge-quotient": 0.08,
    "tiny-quotient": 0.10,
    "exact": 0.06,
    "midpoint": 0.18,
    "midpoint-subnormal": 0.09,
    "midpoint-overflow": 0.06,
}
# reciprocal choice inside its contract -> share (codes as in tilecheck.amdgpu.contract.choose)
RCP_CHOICES = {"nearest": 0.10, "low": 0.30, "high": 0.30, "random": 0.30}


@dataclass
class CaseReport:
    """One counterexample: inputs, every intermediate, expected vs got."""

    index: int
    category: str
    rcp_choice: str
    inputs: dict
    steps: list  # (instruction text, [(name, bits)])
    expected: int
    got: int


@dataclass
class VerifyResult:
    """Outcome of a campaign."""

    sequence: str
    semantics: str
    seed: int
    cases: int
    mismatches: int
    reference: str
    seconds: float
    by_category: dict = field(default_factory=dict)  # category -> [cases, mismatches]
    by_rcp_choice: dict = field(default_factory=dict)
    reports: list = field(default_factory=list)
    rcp: str = "contract"
    # mismatching cases that also fail when the reciprocal is the correctly rounded 1/x
    mismatches_with_nearest_rcp: int = 0

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


# ---------------------------------------------------------------------------------------------
# operand generation


def _compose(fmt: Format, neg, sig, exp) -> np.ndarray:
    """Patterns of (-1)**neg * sig * 2**exp (exact by construction; sig > 0)."""
    exact = np.zeros(sig.shape, dtype=bool)  # no sticky bit: the value is sig * 2**exp exactly
    return round_pack(np, fmt, neg.astype(np.uint64), sig.astype(np.uint64), exp.astype(np.int64), exact, "rn")


def _random_sig(fmt: Format, rng, n) -> np.ndarray:
    return (rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(fmt.mantissa_mask)) | np.uint64(fmt.min_normal)


def _from_fields(fmt: Format, neg, field_, frac) -> np.ndarray:
    return (neg.astype(np.uint64) << np.uint64(fmt.width - 1)) | (field_.astype(np.uint64) << np.uint64(fmt.mantissa_bits)) \
        | (frac & np.uint64(fmt.mantissa_mask))


def _inverse_mod_2_64(y: np.ndarray) -> np.ndarray:
    """Inverse of odd uint64 values modulo 2**64 (Newton: each step doubles the correct bits)."""
    inv = y.copy()  # correct to 3 bits for odd y
    two = np.uint64(2)
    for _ in range(6):
        inv = inv * (two - y * inv)
    return inv


def _midpoint_pairs(fmt: Format, rng, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Operand pairs whose quotient lies next to a rounding midpoint (see the module docstring)."""
    p, m = fmt.precision, fmt.mantissa_bits
    y = (rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64((1 << (p - 1)) - 1)) | np.uint64(1 << (p - 1)) | np.uint64(1)
    if kind == "midpoint-subnormal":
        pp = rng.integers(1, m + 1, n)  # significant bits left in the subnormal result
    else:
        pp = np.full(n, p)
    modulus_bits = (pp + 1).astype(np.uint64)
    mask = (np.uint64(1) << modulus_bits) - np.uint64(1)
    inv = _inverse_mod_2_64(y)

    def q_of(k):
        kk = np.abs(k).astype(np.uint64)
        q = (kk * inv) & mask
        return np.where(k > 0, (np.uint64(0) - q) & mask, q)  # Q = -k * Y^-1 mod 2^(p'+1)

    # X/Y = Q/2^(p'+1) + k/(Y 2^(p'+1)) is next to a midpoint when k is odd and, for a normal
    # result, Q has exactly p'+1 bits (else Q/2^(p'+1) is a representable value); try small odd k
    # until that holds. A quarter of the cases keep an even k: next to a representable value.
    k = np.ones(n, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    for cand in (1, -1, 3, -3, 5, -5, 7, -7):
        kc = np.full(n, cand, dtype=np.int64)
        ok = ~found & (((q_of(kc) >> (modulus_bits - np.uint64(1))) & np.uint64(1)) == 1)
        k = np.where(ok, cand, k)
        found |= ok
    if kind == "midpoint-subnormal":
        k = rng.choice(np.array([-3, -1, 1, 3]), n)  # the subnormal grid is uniform: any odd k
    k = np.where(rng.random(n) < 0.25, rng.choice(np.array([-2, 2]), n), k)
    q = q_of(k)
    kk = np.abs(k).astype(np.uint64)
    hi, lo = wide.mul_64x64(np, q, y)
    k_u = kk
    lo_add = lo + k_u
    hi_add = hi + (lo_add < lo).astype(np.uint64)
    lo_sub = lo - k_u
    hi_sub = hi - (lo < k_u).astype(np.uint64)
    hi2 = np.where(k > 0, hi_add, hi_sub)
    lo2 = np.where(k > 0, lo_add, lo_sub)
    s = modulus_bits
    x = (lo2 >> s) | np.where(s == 0, np.uint64(0), hi2 << (np.uint64(64) - s))
    good = x != 0
    x = np.where(good, x, np.uint64(1))
    # quotient exponent: n/d = (x/y) * 2**(a - b), and x/y ~ Q / 2**(p'+1)
    if kind == "midpoint":
        eq = rng.integers(fmt.emin + 2, fmt.emax, n)
    elif kind == "midpoint-overflow":
        eq = rng.choice(np.array([fmt.emax, fmt.emax + 1]), n)
    else:
        eq = fmt.emin - m + pp
    blx = bit_length(np, x)
    lo_b = np.maximum(fmt.emin - p + 1, fmt.emin - m - eq)
    hi_b = np.minimum(fmt.emax - p + 1, fmt.emax - (blx - 1) - eq)
    hi_b = np.maximum(hi_b, lo_b)
    b = lo_b + (rng.random(n) * (hi_b - lo_b + 1)).astype(np.int64)
    b = np.minimum(b, hi_b)
    a = eq + b
    neg_n = rng.random(n) < 0.5
    neg_d = rng.random(n) < 0.5
    num = _compose(fmt, neg_n, x, a)
    den = _compose(fmt, neg_d, y, b)
    return num, den


def _pairs(fmt: Format, rng, category: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` operand pairs (numerator, denominator) of one category."""
    if n == 0:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty
    top = (1 << fmt.exponent_bits) - 1
    neg = lambda: rng.random(n) < 0.5  # noqa: E731

    def frac():
        return rng.integers(0, 1 << 62, n, dtype=np.uint64)

    if category == "random-bits":
        def bits():
            v = rng.integers(0, 1 << 62, n, dtype=np.uint64) * np.uint64(4) + rng.integers(0, 4, n, dtype=np.uint64)
            return v >> np.uint64(64 - fmt.width) if fmt.width < 64 else v
        return bits(), bits()
    if category == "random-values":
        return (_from_fields(fmt, neg(), rng.integers(1, top, n), frac()),
                _from_fields(fmt, neg(), rng.integers(1, top, n), frac()))
    if category == "near-one":
        return (_from_fields(fmt, neg(), rng.integers(fmt.bias - 4, fmt.bias + 5, n), frac()),
                _from_fields(fmt, neg(), rng.integers(fmt.bias - 4, fmt.bias + 5, n), frac()))
    if category == "special":
        edges = np.array(edge_values(fmt), dtype=np.uint64)
        a = edges[rng.integers(0, edges.size, n)]
        b = edges[rng.integers(0, edges.size, n)]
        other = _from_fields(fmt, neg(), rng.integers(1, top, n), frac())
        pick = rng.integers(0, 3, n)
        return np.where(pick == 2, other, a), np.where(pick == 1, other, b)
    if category == "subnormal":
        sub = lambda: _from_fields(fmt, neg(), np.zeros(n, np.int64), frac() | np.uint64(1))  # noqa: E731
        other = _from_fields(fmt, neg(), rng.integers(1, top, n), frac())
        near = _from_fields(fmt, neg(), rng.integers(1, 2 * fmt.precision + 4, n), frac())
        pick = rng.integers(0, 4, n)
        num = np.where(pick == 0, sub(), np.where(pick == 1, other, np.where(pick == 2, sub(), near)))
        den = np.where(pick == 0, other, np.where(pick == 1, sub(), np.where(pick == 2, sub(), sub())))
        return num, den
    if category == "huge-quotient":
        en = rng.integers(top - fmt.precision - 2, top, n)
        ed = en - fmt.bias - rng.integers(-3, fmt.precision + 4, n)  # E(n) - E(d) around emax
        ed = np.clip(ed, 0, top - 1)
        return _from_fields(fmt, neg(), en, frac()), _from_fields(fmt, neg(), ed, frac())
    if category == "tiny-quotient":
        ed = rng.integers(fmt.bias, top, n)
        en = ed - fmt.bias - rng.integers(-fmt.precision - 3, fmt.precision + 4, n) + 1
        en = np.clip(en, 0, top - 1)
        # also denominators whose reciprocal is subnormal
        big_d = rng.random(n) < 0.3
        ed = np.where(big_d, rng.integers(top - 3, top, n), ed)
        en = np.where(big_d, rng.integers(1, top, n), en)
        return _from_fields(fmt, neg(), en, frac()), _from_fields(fmt, neg(), ed, frac())
    if category == "exact":
        # n = qs*ds exactly (both significands at most p//2 bits), so n/d = qs * 2**(a - b)
        half = fmt.precision // 2
        qs = rng.integers(1, 1 << half, n).astype(np.uint64)
        ds = rng.integers(1, 1 << half, n).astype(np.uint64)
        b = rng.integers(fmt.emin - fmt.mantissa_bits, fmt.emax - half, n)
        a = np.clip(b + rng.integers(-fmt.emax // 2, fmt.emax // 2, n), fmt.emin - fmt.mantissa_bits,
                    fmt.emax - 2 * half)
        return _compose(fmt, neg(), qs * ds, a), _compose(fmt, neg(), ds, b)
    if category.startswith("midpoint"):
        return _midpoint_pairs(fmt, rng, n, category)
    raise ValueError(f"unknown category {category!r}")


def generate(fmt: Format, seed: int, chunk_index: int, n: int):
    """Operands of one chunk: (numerators, denominators, category codes, rcp choice codes, rng)."""
    rng = np.random.default_rng([seed, chunk_index])
    names = list(CATEGORIES)
    shares = np.array([CATEGORIES[c] for c in names])
    cat = rng.choice(len(names), n, p=shares / shares.sum())
    num = np.zeros(n, dtype=np.uint64)
    den = np.zeros(n, dtype=np.uint64)
    for i, c in enumerate(names):
        idx = np.nonzero(cat == i)[0]
        a, b = _pairs(fmt, rng, c, idx.size)
        num[idx] = a
        den[idx] = b
    rshares = np.array(list(RCP_CHOICES.values()))
    choice = rng.choice(len(RCP_CHOICES), n, p=rshares / rshares.sum())
    return num, den, cat, choice, rng


# ---------------------------------------------------------------------------------------------
# the campaign


def _default_reference(seq: Sequence) -> Callable:
    def reference(num, den):
        return np.asarray(ieee_op(seq.operation, seq.fmt, seq.rounding, num, den, ftz=seq.ftz), dtype=np.uint64)
    return reference


def _same(seq: Sequence, got, want) -> np.ndarray:
    same = got == want
    if seq.nan == "class":
        same |= seq.fmt.is_nan(got) & seq.fmt.is_nan(want)
    return same


def run_chunk(seq: Sequence, semantics: str, num, den, choice, rng, *, db, fixed_rcp=None):
    """Run the sequence on one chunk; returns (trace, reciprocal values chosen)."""
    chosen = {}

    def choose(step, form, args):
        if fixed_rcp is not None:
            value = fixed_rcp[step.dst[0]]
        else:
            value = contract.choose(form, semantics, args[0], choice, rng)
        chosen[step.dst[0]] = value
        return value

    trace = run_sequence(seq, semantics, NumpyBackend(num.shape), {seq.inputs[0]: num, seq.inputs[1]: den}, choose,
                         db=db)
    return trace, chosen


def verify_sequence(name: str, semantics: str = "observed", cases: int = DEFAULT_CASES, seed: int = 0, *,
                    rcp: str = "contract", max_reports: int = 5, reference: Callable | None = None, db,
                    progress: Callable | None = None) -> VerifyResult:
    """Verify sequence ``name`` (``amdgpu.fdiv64``) with semantics ``semantics`` on ``cases``
    generated cases from ``seed``; see the module docstring.

    ``rcp="contract"`` takes each contract instruction's result anywhere inside its contract (the
    :data:`RCP_CHOICES` mix); ``rcp="nearest"`` always takes the correctly rounded value (the best
    seed any hardware could give). ``reference(num, den)`` overrides the model's correctly rounded
    division (tests cross-check with MPFR); ``progress(done, total, mismatches)`` is called after
    each chunk. Mismatching cases are re-run with the correctly rounded reciprocal to tell
    seed-dependent failures from failures of the sequence itself."""
    seq = lookup_sequence(name, db=db)
    if len(seq.inputs) != 2 or seq.operation != "div":
        raise UsageError(f"{name}: only two-input division sequences can be verified")
    if semantics not in ("documented", "observed"):
        raise UsageError(f"semantics must be documented or observed, got {semantics!r}")
    if cases < 1:
        raise UsageError("cases must be at least 1")
    if rcp not in ("contract", "nearest"):
        raise UsageError(f"rcp must be contract or nearest, got {rcp!r}")
    reference = reference or _default_reference(seq)
    fmt = seq.fmt
    names = list(CATEGORIES)
    rnames = list(RCP_CHOICES)
    by_cat = {c: [0, 0] for c in names}
    by_rcp = {c: [0, 0] for c in rnames}
    candidates = []
    mismatches = 0
    with_nearest = 0
    started = time.perf_counter()
    done = 0
    chunk_index = 0
    while done < cases:
        n = min(CHUNK, cases - done)
        num, den, cat, choice, rng = generate(fmt, seed, chunk_index, n)
        if rcp == "nearest":
            choice = np.zeros(n, dtype=choice.dtype)
        trace, chosen = run_chunk(seq, semantics, num, den, choice, rng, db=db)
        want = reference(num, den)
        got = np.asarray(trace.result, dtype=np.uint64)
        bad = ~_same(seq, got, want)
        mismatches += int(bad.sum())
        if bad.any():
            idx = np.nonzero(bad)[0]
            again, _ = run_chunk(seq, semantics, num[idx], den[idx], np.zeros(idx.size, dtype=np.int64), rng, db=db)
            still = ~_same(seq, np.asarray(again.result, dtype=np.uint64), want[idx])
            with_nearest += int(still.sum())
        for i, c in enumerate(names):
            sel = cat == i
            by_cat[c][0] += int(sel.sum())
            by_cat[c][1] += int((bad & sel).sum())
        for i, c in enumerate(rnames):
            sel = choice == i
            by_rcp[c][0] += int(sel.sum())
            by_rcp[c][1] += int((bad & sel).sum())
        for j in np.nonzero(bad)[0][:64]:
            candidates.append((done + int(j), names[cat[j]], rnames[choice[j]], int(num[j]), int(den[j]),
                               {k: int(v[j]) for k, v in chosen.items()}, int(want[j]), int(got[j])))
        done += n
        chunk_index += 1
        if progress is not None:
            progress(done, cases, mismatches)
    reports = _reports(seq, semantics, candidates, max_reports, db)
    return VerifyResult(name, semantics, seed, cases, mismatches,
                        f"{seq.operation}.{seq.rounding}{'.ftz' if seq.ftz else ''}.{seq.type} (reference model)",
                        time.perf_counter() - started, by_cat, by_rcp, reports, rcp, with_nearest)


def _simplicity(fmt: Format, candidate) -> tuple:
    """Sort key preferring counterexamples that are easy to read: the correctly rounded
    reciprocal first, then operands close to 1."""
    _, category, rcp_choice, num, den, _, _, _ = candidate
    distance = sum(abs(int(fmt.fields(np.uint64(v))[1]) - fmt.bias) for v in (num, den))
    return (rcp_choice != "nearest", distance, category)


def _reports(seq: Sequence, semantics: str, candidates: list, max_reports: int, db) -> list[CaseReport]:
    """Minimal reports: at most one per category (the simplest case of each), up to max_reports,
    re-run one by one to collect every intermediate."""
    picked = {}
    for cand in sorted(candidates, key=lambda c: _simplicity(seq.fmt, c)):
        picked.setdefault(cand[1], cand)
    out = []
    forms = amdgpu_forms(db)
    for cand in list(picked.values())[:max_reports]:
        index, category, rcp_choice, num, den, rcp, want, got = cand
        arrays = {k: np.array([v], dtype=np.uint64) for k, v in rcp.items()}
        trace, _ = run_chunk(seq, semantics, np.array([num], dtype=np.uint64), np.array([den], dtype=np.uint64),
                             np.zeros(1, dtype=np.int64), None, db=db, fixed_rcp=arrays)
        steps = []
        for step, dsts in trace.order:
            if step.op is None:
                steps.append((f"MODE {dict(step.mode)}", []))
                continue
            form = forms[step.op]
            srcs = ", ".join(str(s) for s in step.src)
            vals = [(d, int(np.asarray(trace.values[d]).reshape(-1)[0]) if form.destinations[k].kind == "float"
                     else bool(np.asarray(trace.values[d]).reshape(-1)[0]))
                    for k, d in enumerate(step.dst) if d is not None]
            text = f"{step.op}({srcs})" + (" [contract input]" if form.variant(semantics).program is None else "")
            steps.append((text, vals))
        got_again = int(np.asarray(trace.result).reshape(-1)[0])
        if got_again != got:
            raise AssertionError(f"re-running case {index} gave {got_again:#x}, the campaign saw {got:#x}")
        out.append(CaseReport(index, category, rcp_choice, {seq.inputs[0]: num, seq.inputs[1]: den}, steps, want, got))
    return out


def format_report(seq: Sequence, result: VerifyResult, report: CaseReport) -> list[str]:
    """Lines of one counterexample report (hex, value and class of every value)."""
    fmt = seq.fmt

    def show(bits: int) -> str:
        value, cls = fmt.describe(bits)
        return f"{fmt.hex(bits)} ({value}, {cls})"

    lines = [f"counterexample: case #{report.index} ({report.category}, reciprocal at its contract's "
             f"{report.rcp_choice} choice), semantics {result.semantics}"]
    for name, bits in report.inputs.items():
        lines.append(f"  {name:<5} = {show(bits)}")
    for text, vals in report.steps:
        if not vals:
            lines.append(f"  {text}")
            continue
        for name, v in vals:
            shown = show(v) if not isinstance(v, bool) else str(int(v))
            lines.append(f"  {name:<5} = {shown:<60}  <- {text}")
    lines.append(f"  expected {result.reference}: {show(report.expected)}")
    lines.append(f"  got                                : {show(report.got)}")
    return lines
