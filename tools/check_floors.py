#!/usr/bin/env python3
"""Test tilecheck at its declared dependency floors and at the newest releases, and compare bits.

Usage (from the repository root; needs the package index, takes a few minutes)::

    python3 tools/check_floors.py [--dir .floors] [--only floor|newest] [--tests PATH ...]

Two virtual environments are built under ``--dir`` with the running Python:

* ``floor``: every runtime and ``[test]`` dependency pinned to the lowest version
  ``pyproject.toml`` allows (:data:`FLOOR_PINS`; the script first checks that each pin is the
  floor ``pyproject.toml`` declares, so the two cannot drift apart);
* ``newest``: ``pip install --upgrade`` of the same requirements (the newest releases).

tilecheck itself is installed into both with ``--no-deps`` (editable), then in each:

1. the model, spec-example and oracle tests run (``tests/model``, ``tests/spec/test_examples.py``,
   ``tests/oracle``: the MPFR, SoftFloat and TestFloat comparisons);
2. ``tools/bits_digest.py`` hashes the bits of every PTX form (model, contracts, the emitted
   kernel through the CPU simulator) on fixed operands.

The digests of the two environments must be identical form by form. Exit status 0 when both
test runs pass and the digests agree, 1 otherwise, 2 when an environment cannot be built.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOOR_PINS = {
    "numpy": "1.26.0",
    "numba": "0.60.0",
    "PyYAML": "6.0",
    "jsonschema": "4.18.0",
    "z3-solver": "4.13.0.0",
    "hypothesis": "6.129.0",
    "pytest": "8.0.0",
    "gmpy2": "2.2.0",
    "softfloatpy": "1.2.0",
    "dask[distributed]": "2024.8.0",
}
"""The exact releases the floor environment installs (each the ``>=`` floor of pyproject.toml)."""

TESTS = ["tests/model", "tests/spec/test_examples.py", "tests/oracle"]


def declared_floors() -> dict[str, str]:
    """``{distribution: floor}`` of every ``name>=version`` requirement in pyproject.toml's
    dependencies and ``[test]`` extra."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: read the requirement strings with a regex
        tomllib = None
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    if tomllib is not None:
        data = tomllib.loads(text)
        reqs = list(data["project"]["dependencies"]) + list(data["project"]["optional-dependencies"]["test"])
    else:
        reqs = re.findall(r'^\s*"([A-Za-z0-9_.\[\]-]+>=[^"]+)"', text, flags=re.M)
    floors = {}
    for req in reqs:
        match = re.match(r"\s*([A-Za-z0-9_.-]+(?:\[[A-Za-z0-9_,.-]+\])?)\s*>=\s*([0-9][0-9.]*)", req)
        if match:
            floors[match.group(1)] = match.group(2)
    return floors


def _same_release(pin: str, floor: str) -> bool:
    """``4.13.0.0`` pins the floor ``4.13``; ``1.26.0`` pins ``1.26``."""
    a = [int(x) for x in pin.split(".")]
    b = [int(x) for x in floor.split(".")]
    width = max(len(a), len(b))
    return a + [0] * (width - len(a)) == b + [0] * (width - len(b))


def check_pins() -> list[str]:
    """Problems between :data:`FLOOR_PINS` and the floors pyproject.toml declares."""
    floors = declared_floors()
    problems = []
    for name, floor in floors.items():
        pin = FLOOR_PINS.get(name)
        if pin is None:
            problems.append(f"{name}>={floor} is declared but not pinned in FLOOR_PINS")
        elif not _same_release(pin, floor):
            problems.append(f"{name}: pyproject declares >={floor}, FLOOR_PINS installs {pin}")
    for name in FLOOR_PINS:
        if name not in floors:
            problems.append(f"{name} is pinned in FLOOR_PINS but pyproject.toml declares no floor for it")
    return problems


def _run(command: list[str], log) -> int:
    log.write("$ " + " ".join(command) + "\n")
    log.flush()
    return subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False).returncode


def build(folder: Path, kind: str, log) -> Path:
    """Create (or reuse) the ``kind`` environment in ``folder``; returns its python."""
    env = folder / kind
    python = env / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
    if kind == "floor":
        reqs = [f"{name}=={version}" for name, version in FLOOR_PINS.items()]
        extra = []
    else:
        reqs = list(FLOOR_PINS)
        extra = ["--upgrade"]
    if _run([str(python), "-m", "pip", "install", "-q", *extra, *reqs], log) != 0:
        raise RuntimeError(f"pip could not build the {kind} environment (see the log)")
    if _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(ROOT)], log) != 0:
        raise RuntimeError(f"pip could not install tilecheck into the {kind} environment")
    return python


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=str(ROOT / ".floors"), help="where the environments live (default .floors)")
    parser.add_argument("--only", choices=("floor", "newest"), help="build and test one environment only")
    parser.add_argument("--tests", nargs="*", default=TESTS, help="test paths to run in each environment")
    args = parser.parse_args(argv)

    problems = check_pins()
    if problems:
        for p in problems:
            sys.stderr.write(f"pyproject.toml: error: {p}\n")
        return 2
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    kinds = [args.only] if args.only else ["floor", "newest"]
    digests, failed = {}, False
    for kind in kinds:
        log_path = folder / f"{kind}.log"
        with open(log_path, "w", encoding="utf-8") as log:
            try:
                python = build(folder, kind, log)
            except RuntimeError as exc:
                sys.stderr.write(f"{kind}: error: {exc} ({log_path})\n")
                return 2
            versions = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True,
                                      check=False).stdout
            log.write(versions)
            rc = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.tests], log)
            digest_path = folder / f"{kind}.digest.json"
            rc_digest = _run([str(python), str(ROOT / "tools" / "bits_digest.py"), "--json", str(digest_path)], log)
        pinned = {n.split("[")[0].lower() for n in FLOOR_PINS}
        shown = ", ".join(line for line in versions.splitlines() if line.split("==")[0].lower() in pinned)
        sys.stdout.write(f"{kind}: tests {'passed' if rc == 0 else 'FAILED'} ({shown}); log {log_path}\n")
        failed |= rc != 0 or rc_digest != 0
        if rc_digest == 0:
            digests[kind] = json.loads(digest_path.read_text(encoding="utf-8"))
    if len(digests) == 2:
        a, b = digests["floor"], digests["newest"]
        forms = sorted(k for k in set(a) | set(b) if not k.startswith("_"))
        differ = [k for k in forms if a.get(k) != b.get(k)]
        dtype = [k for k in forms if "dtype-dependent" in (a.get(k), b.get(k))]
        sys.stdout.write(f"bits: {len(forms) - len(differ)} of {len(forms)} forms agree between floor and newest\n")
        for k in differ[:50]:
            sys.stdout.write(f"  differs: {k}\n")
        for k in dtype[:50]:
            sys.stdout.write(f"  result depends on the operand dtype: {k}\n")
        failed |= bool(differ or dtype)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
