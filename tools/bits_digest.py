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
  simulator's register handling are covered too.

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
        values = []
        for i in range(n):
            lane_values = []
            for lane in range(lanes):
                if i < len(edges) * 2 and rng.random() < 0.6:
                    lane_values.append(edges[(i * (k + 1) + lane) % len(edges)])
                else:
                    lane_values.append(rng.getrandbits(width))
            values.append(sum(v << (lane * width) for lane, v in enumerate(lane_values)))
        assert all(v >> container == 0 for v in values)
        out.append(values)
    return out


def _hash(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        h.update(str(a.dtype).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


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
    for name in ("numpy", "gmpy2", "PyYAML", "jsonschema", "z3-solver", "hypothesis", "softfloatpy"):
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
