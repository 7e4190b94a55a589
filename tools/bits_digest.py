"""Print a digest of the bits tilecheck computes for every PTX form, to compare environments.

Usage::

    python tools/bits_digest.py [--cases N] [--sim-cases N] [--json FILE]

For every PTX form in the spec database it computes, on the same deterministic operands
(``random.Random`` seeded per form, plus every edge value of the element format; no numpy
random stream, whose algorithms may differ between numpy releases):

* exact forms: :func:`tilecheck.evaluate` with the operands given as the container dtype, as
  uint64 and as the narrowest unsigned dtype that holds one element (a packed form's operands
  are never narrower than its container, so that variant is the container dtype there);
* approximate forms: :func:`tilecheck.model.api.reference` and :func:`tilecheck.allowed` of the
  reference, of its neighbours and of a canonical NaN;
* every arithmetic form (``--sim-cases`` of them): the emitted single-instruction kernel run by
  the CPU simulator (:class:`tilecheck.diff.backends.CpuBackend`), so the emitter and the
  simulator's register handling are covered too;
* function forms (cvt, setp, selp, mov, min/max, testp, integer and logic forms): ``evaluate``
  with each operand as its container dtype, as uint64 (predicates as uint8 0/1) and, for the first
  cases, as Python scalars, and ``allowed`` of the result; a form that raises is recorded by its
  exception class, so raising in one environment only is a difference too.

The output is one JSON object ``{form: sha256}`` plus ``_versions`` (numpy, gmpy2, ...). Two
environments agree when every form's digest is equal: ``tools/check_floors.py`` runs this
script in the floor and the newest environment and compares. The variants must also agree with
each other inside one run (a dtype-dependent result is reported as ``"dtype-dependent"``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import random
import sys

import numpy as np

UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _operands(form, fmt, rng: random.Random, n: int, edges: list[int]) -> list[list[int]]:
    """``len(form.sources)`` lists of container values: edge values and random ones."""
    from tilecheck.spec.types import PTX_TYPES

    container = PTX_TYPES[form.type].bits
    lanes = form.lanes
    width = fmt.width
    out = []
    for k, _ in enumerate(form.sources):
        values = _packed_values(rng, n, k, width, lanes, edges)
        assert all(v >> container == 0 for v in values)
        out.append(values)
    return out


def _packed_values(rng: random.Random, n: int, k: int, width: int, lanes: int, edges: list[int]) -> list[int]:
    """``n`` container values of source operand ``k``: ``lanes`` lanes of ``width`` bits each, an
    edge value (60% of the first ``2 * len(edges)``, spread over the operands) or a random one."""
    values = []
    for i in range(n):
        lane_values = []
        for lane in range(lanes):
            if i < len(edges) * 2 and rng.random() < 0.6:
                lane_values.append(edges[(i * (k + 1) + lane) % len(edges)])
            else:
                lane_values.append(rng.getrandbits(width))
        values.append(sum(v << (lane * width) for lane, v in enumerate(lane_values)))
    return values


def _hash(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        h.update(str(a.dtype).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _int_edges(width: int) -> list[int]:
    """Zero, one, two, the largest value and the sign boundary of ``width``-bit patterns."""
    top = (1 << width) - 1
    half = 1 << (width - 1)
    return sorted({0, 1, 2, 3, top, top - 1, half - 1, half, half + 1, 0x80 & top, 0xFF & top, 0x7F & top})


def _function_operands(form, rng: random.Random, n: int) -> list[list]:
    """Per source operand, ``n`` values: bools for predicates, else patterns of the operand's type
    (edge values of its format or integer width first, then random ones)."""
    from tilecheck.inputs.edges import edge_values
    from tilecheck.spec.types import PTX_TYPES

    out = []
    for k, o in enumerate(form.sources):
        t = PTX_TYPES[o.ptx_type]
        if o.ptx_type == "pred":
            out.append([rng.random() < 0.5 for _ in range(n)])
            continue
        if t.element is not None:  # a float type or packed float lanes
            fmt = form.format_of(o.ptx_type)
            width, lanes, edges = fmt.width, t.lanes, sorted(set(int(v) for v in edge_values(fmt)))
        else:
            width, lanes, edges = t.bits, 1, _int_edges(t.bits)
        values = _packed_values(rng, n, k, width, lanes, edges)
        out.append(values)
    return out


def _function_digest(form, cases: int) -> str:
    """Digest of one function form (see the module docstring), or ``"dtype-dependent"``."""
    import tilecheck

    rng = random.Random(form.name)
    ops = _function_operands(form, rng, cases)
    # two predicate destinations for the packed comparisons (one per lane), one otherwise
    destinations = 2 if form.semantics.key.startswith("cmp.setp") and form.lanes == 2 else 1

    def native(o, values):
        if o.ptx_type == "pred":
            return np.array(values, dtype=np.bool_)
        return np.array(values, dtype=UNSIGNED[max(8, o.container_bits)])

    def wide(o, values):
        if o.ptx_type == "pred":
            return np.array(values, dtype=np.uint8)
        return np.array(values, dtype=np.uint64)

    def as_arrays(out):
        out = out if isinstance(out, tuple) else (out,)
        return [np.asarray(x) for x in out]

    def run(operands):
        try:
            with np.errstate(all="ignore"):
                return as_arrays(tilecheck.evaluate(form.name, *operands, destinations=destinations))
        except Exception as exc:  # recorded: a form must raise (or not) the same way everywhere
            return type(exc).__name__

    srcs = form.sources
    first = run([native(o, v) for o, v in zip(srcs, ops)])
    if isinstance(first, str):
        return "raises " + first
    variants = [run([wide(o, v) for o, v in zip(srcs, ops)])]
    scalars = [run([v[i] for v in ops]) for i in range(min(cases, 8))]
    if isinstance(variants[0], str) or any(isinstance(s, str) for s in scalars):
        return "dtype-dependent"
    variants = [[a.astype(np.uint64) for a in v] for v in variants]
    ref = [a.astype(np.uint64) for a in first]
    if any(not np.array_equal(r, v) for r, v in zip(ref, variants[0])):
        return "dtype-dependent"
    for i, s in enumerate(scalars):
        if any(int(np.asarray(x).astype(np.uint64)) != int(r[i]) for x, r in zip(s, ref)):
            return "dtype-dependent"
    parts = list(ref)
    if destinations == 1:
        try:
            with np.errstate(all="ignore"):
                judged = np.asarray(tilecheck.allowed(form.name, first[0], *[native(o, v) for o, v in zip(srcs, ops)]))
        except Exception as exc:
            return "allowed raises " + type(exc).__name__
        parts.append(judged)
    return _hash(*parts)


def digest(cases: int, sim_cases: int) -> dict:
    """``{form name: digest}`` of every PTX form (see the module docstring)."""
    import tilecheck
    from tilecheck.diff.backends import CpuBackend
    from tilecheck.model import api
    from tilecheck.spec.database import load_database
    from tilecheck.inputs.edges import edge_values
    from tilecheck.spec.types import PTX_TYPES

    db = load_database()
    cpu = CpuBackend(db=db)
    result: dict = {}
    for form in sorted(db.ptx_forms(), key=lambda f: f.name):
        if form.kind == "function":
            result[form.name] = _function_digest(form, cases)
            continue
        if form.kind not in ("exact", "contract"):
            continue
        fmt = form.format
        container = PTX_TYPES[form.type].bits
        rng = random.Random(form.name)
        ops = _operands(form, fmt, rng, cases, sorted(set(int(v) for v in edge_values(fmt))))
        native = [np.array(o, dtype=UNSIGNED[container]) for o in ops]
        wide = [np.array(o, dtype=np.uint64) for o in ops]
        narrow_bits = max(8, 1 << (fmt.width - 1).bit_length()) if form.lanes == 1 else container
        narrow = [np.array(o, dtype=UNSIGNED[narrow_bits]) for o in ops]
        with np.errstate(all="ignore"):
            if form.kind == "exact":
                variants = [np.asarray(tilecheck.evaluate(form.name, *v)).astype(np.uint64)
                            for v in (native, wide, narrow)]
                scalars = np.array([int(tilecheck.evaluate(form.name, *[int(o[i]) for o in ops]))
                                    for i in range(min(cases, 16))], dtype=np.uint64)
                variants.append(np.concatenate([scalars, variants[0][16:]]))
                ref = variants[0]
                judged = [np.asarray(tilecheck.allowed(form.name, ref, *native))]
            else:
                variants = [np.asarray(api.reference(form.name, *v)).astype(np.uint64) for v in (native, wide, narrow)]
                ref = variants[0]
                judged = []
                for delta in (0, 1, 2):
                    for candidate in (ref + np.uint64(delta), ref - np.uint64(delta)):
                        candidate = candidate & np.uint64((1 << container) - 1)
                        judged.append(np.asarray(tilecheck.allowed(form.name, candidate.astype(UNSIGNED[container]),
                                                                   *native)))
        if any(not np.array_equal(variants[0], v) for v in variants[1:]):
            result[form.name] = "dtype-dependent"
            continue
        parts = [ref, *judged]
        if sim_cases and cpu.support(form).ok:
            sim = cpu.run(form, [o[:sim_cases] for o in native])
            parts.append(np.asarray(sim).astype(np.uint64))
        result[form.name] = _hash(*parts)
    versions = {}
    for name in ("numpy", "numba", "gmpy2", "PyYAML", "jsonschema", "z3-solver", "hypothesis", "softfloatpy"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    versions["python"] = sys.version.split()[0]
    result["_versions"] = versions
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=512, help="operand tuples per form (default 512)")
    parser.add_argument("--sim-cases", type=int, default=64, help="of those, run through the CPU simulator (0: none)")
    parser.add_argument("--json", help="write the digest here instead of stdout")
    args = parser.parse_args(argv)
    text = json.dumps(digest(args.cases, args.sim_cases), indent=1, sort_keys=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
