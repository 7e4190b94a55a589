#!/usr/bin/env python3
"""Test tilecheck at its declared dependency floors and at the newest releases, and compare bits.

Usage (from the repository root; needs the package index)::

    python3 tools/check_floors.py [--dir .floors] [--only floor|newest] [--tests PATH ...]
    python3 tools/check_floors.py --fast [--cache DIR] [--rebuild]

Full mode (a few minutes): two virtual environments are built under ``--dir`` with the running
Python:

* ``floor``: every runtime and ``[test]`` dependency pinned to the lowest version
  ``pyproject.toml`` allows (:data:`FLOOR_PINS`; the script first checks that each pin is the
  floor ``pyproject.toml`` declares, so the two cannot drift apart);
* ``newest``: ``pip install --upgrade`` of the same requirements (the newest releases).

tilecheck itself is installed into both with ``--no-deps`` (editable), then in each:

1. the model, spec-example and oracle tests run (:data:`TESTS`: ``tests/model``,
   ``tests/spec/test_examples.py``, ``tests/oracle``: the MPFR, SoftFloat and TestFloat
   comparisons, and the numpy semantics backend against MPFR);
2. ``tools/bits_digest.py`` hashes the bits of every PTX form (model, contracts, function forms,
   the emitted kernel through the CPU simulator) on fixed operands.

The digests of the two environments must be identical form by form. Exit status 0 when both
test runs pass and the digests agree, 1 otherwise, 2 when an environment cannot be built.

Fast mode (``--fast``, what ``.ci/run`` runs; about a minute and a half when the floor environment
is cached): only the floor environment is built, in a cache folder shared by every checkout
(``--cache``, default ``$TILECHECK_CACHE_DIR/floors``, else ``$XDG_CACHE_HOME/tilecheck/floors``, else
``~/.cache/tilecheck/floors``), named by a key of :data:`FLOOR_PINS`, the Python release and the
interpreter's path, and reused while it is complete; ``--rebuild`` builds it afresh. tilecheck is
not installed into it: the checkout runs from ``PYTHONPATH``, so checkouts sharing the cache
never disturb each other. The floor environment runs the oracle tests (:data:`FAST_TESTS`) and
the bits digest, and the digest must equal the one the *running* interpreter's environment
computes (in ``.ci/run``, the freshly installed newest releases). Exit statuses as in full mode.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
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
    "pytest-xdist": "3.8.0",
    "gmpy2": "2.2.0",
    "softfloatpy": "1.2.0",
    "dask[distributed]": "2024.8.0",
    "selenium": "4.51.0",
}
"""The exact releases the floor environment installs (each the ``>=`` floor of pyproject.toml)."""

TESTS = ["tests/model", "tests/spec/test_examples.py", "tests/oracle", "tests/semantics/test_numpy_backend.py"]
"""What full mode runs in each environment."""

FAST_TESTS = [  # in the main suite's order (test_f64_eft counts Numba specialisations made so far)
    "tests/model/test_f64_eft.py",  # the binary64 fast paths (Numba kernels) against MPFR
    "tests/model/test_model_vs_oracles.py",  # the arithmetic against MPFR, SoftFloat and TestFloat
    "tests/model/test_scale_convert_flush.py",
    "tests/model/test_surround_oracles.py",  # cvt, setp, min/max, integer and logic forms
    "tests/oracle",  # MPFR, SoftFloat and TestFloat oracles against each other and the model
    "tests/semantics/test_numpy_backend.py",
    "tests/spec/test_examples.py",  # every spec example against MPFR
]
"""What fast mode runs in the floor environment: the tests that compare the model with
independent oracles (about a minute on 2 cores)."""


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


def _run(command: list[str], log, env: dict | None = None) -> int:
    log.write("$ " + " ".join(command) + "\n")
    log.flush()
    return subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False,
                          env=env).returncode


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


def compare_digests(a: dict, b: dict, names: tuple[str, str]) -> bool:
    """Print how the digests ``a`` and ``b`` (of the environments ``names``) agree; True when
    every form agrees and none is dtype-dependent."""
    forms = sorted(k for k in set(a) | set(b) if not k.startswith("_"))
    differ = [k for k in forms if a.get(k) != b.get(k)]
    dtype = [k for k in forms if "dtype-dependent" in (a.get(k), b.get(k))]
    sys.stdout.write(f"bits: {len(forms) - len(differ)} of {len(forms)} forms agree between {names[0]} "
                     f"and {names[1]}\n")
    def short(v):
        return v[:12] if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) else v

    shown = 20
    for k in differ[:shown]:
        sys.stdout.write(f"  differs: {k} ({names[0]} {short(a.get(k))}, {names[1]} {short(b.get(k))})\n")
    for k in dtype[:shown]:
        sys.stdout.write(f"  result depends on the operand dtype: {k}\n")
    for what, many in (("differ", differ), ("depend on the operand dtype", dtype)):
        if len(many) > shown:
            sys.stdout.write(f"  ... and {len(many) - shown} more forms {what}\n")
    return not differ and not dtype


def default_cache() -> Path:
    """Where ``--fast`` keeps the floor environment (see the module docstring)."""
    if os.environ.get("TILECHECK_CACHE_DIR"):
        return Path(os.environ["TILECHECK_CACHE_DIR"]) / "floors"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tilecheck" / "floors"


def cache_key() -> dict:
    """What the cached floor environment depends on: the pins, the Python release and the
    interpreter the virtual environment points at (a venv breaks when its base Python goes)."""
    base = getattr(sys, "_base_executable", sys.executable)
    return {"pins": FLOOR_PINS, "python": sys.version.split()[0], "implementation": sys.implementation.name,
            "base_executable": os.path.realpath(base), "platform": sys.platform, "recipe": 1}


def _locked(path: Path):
    """An exclusive lock on ``path`` (held until the returned file is closed), where fcntl exists."""
    fh = open(path, "a+", encoding="utf-8")
    try:
        import fcntl

        fcntl.flock(fh, fcntl.LOCK_EX)
    except ImportError:  # not POSIX: no lock (concurrent builds of one cache are then the caller's care)
        pass
    return fh


def cached_floor(cache: Path, rebuild: bool, log) -> tuple[Path, str]:
    """The floor environment's python in ``cache`` (built when missing, incomplete or ``rebuild``),
    and ``"reused"`` or ``"built"``."""
    key = cache_key()
    name = "floor-" + hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    env = cache / name
    stamp = env / "tilecheck-floor.json"
    python = env / "bin" / "python"
    cache.mkdir(parents=True, exist_ok=True)
    with _locked(cache / f"{name}.lock"):
        if not rebuild and stamp.exists() and python.exists():
            try:
                if json.loads(stamp.read_text(encoding="utf-8")).get("key") == key:
                    return python, "reused"
            except ValueError:
                pass
        if stamp.exists():
            stamp.unlink()  # incomplete from here until the stamp is written again
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
        reqs = [f"{n}=={v}" for n, v in FLOOR_PINS.items()]
        if _run([str(python), "-m", "pip", "install", "-q", *reqs], log) != 0:
            raise RuntimeError("pip could not build the floor environment (see the log)")
        freeze = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True,
                                check=False).stdout
        stamp.write_text(json.dumps({"key": key, "freeze": freeze.splitlines()}, indent=1) + "\n",
                         encoding="utf-8")
    return python, "built"


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def fast(cache: Path, tests: list[str], rebuild: bool) -> int:
    """``--fast`` (see the module docstring)."""
    cache.mkdir(parents=True, exist_ok=True)
    tag = os.getpid()
    log_path, here_log_path = cache / f"floor-{tag}.log", cache / f"here-{tag}.log"
    digests = {"floor": cache / f"floor-{tag}.digest.json", "here": cache / f"here-{tag}.digest.json"}
    digest_script = str(ROOT / "tools" / "bits_digest.py")
    start = time.monotonic()
    # the checkout under test runs from PYTHONPATH (whatever tilecheck an environment holds is
    # shadowed); the floor environment's Numba kernels are cached beside it, apart from this one's
    pythonpath = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            python, how = cached_floor(cache, rebuild, log)
        except (RuntimeError, OSError) as exc:
            sys.stderr.write(f"floors: error: {exc} ({log_path})\n")
            return 2
        env_dir = python.parent.parent
        freeze = json.loads((env_dir / "tilecheck-floor.json").read_text(encoding="utf-8"))["freeze"]
        pinned = {n.split("[")[0].lower() for n in FLOOR_PINS}
        shown = ", ".join(line for line in freeze if line.split("==")[0].lower() in pinned)
        _say(f"floors: environment {how} in {time.monotonic() - start:.0f} s: {env_dir} ({shown})")
        floor_env = dict(os.environ, PYTHONPATH=pythonpath, NUMBA_CACHE_DIR=str(env_dir / "numba"))
        here_env = dict(os.environ, PYTHONPATH=pythonpath)
        # this environment's digest runs beside the floor tests (2 cores: one each)
        with open(here_log_path, "w", encoding="utf-8") as here_log:
            here = subprocess.Popen([sys.executable, digest_script, "--json", str(digests["here"])], cwd=ROOT,
                                    stdout=here_log, stderr=subprocess.STDOUT, env=here_env)
            try:
                rc_tests = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], log, floor_env)
                _say(f"floors: oracle tests {'passed' if rc_tests == 0 else 'FAILED (log ' + str(log_path) + ')'} "
                     f"at the floors ({' '.join(tests)})")
                rc_floor = _run([str(python), digest_script, "--json", str(digests["floor"])], log, floor_env)
            finally:
                rc_here = here.wait()
    ok = rc_tests == 0
    if rc_floor != 0 or rc_here != 0:
        which = ", ".join(f"{n} (log {p})" for n, rc, p in (("floor", rc_floor, log_path),
                                                             ("this environment", rc_here, here_log_path)) if rc)
        _say(f"floors: bits: the digest failed in {which}")
        ok = False
    else:
        a = json.loads(digests["floor"].read_text(encoding="utf-8"))
        b = json.loads(digests["here"].read_text(encoding="utf-8"))
        versions = ", ".join(f"{k} {v}" for k, v in b.get("_versions", {}).items() if v)
        sys.stdout.write("floors: ")
        ok &= compare_digests(a, b, ("floor", "this environment"))
        _say(f"floors: this environment: {versions}")
        for path in (*digests.values(), here_log_path):
            path.unlink()
        if ok:
            log_path.unlink()
    _say(f"floors: {'passed' if ok else 'FAILED'} in {time.monotonic() - start:.0f} s")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=str(ROOT / ".floors"), help="where the environments live (default .floors)")
    parser.add_argument("--only", choices=("floor", "newest"), help="build and test one environment only")
    parser.add_argument("--tests", nargs="*", help="test paths to run in each environment "
                        "(default: TESTS, with --fast FAST_TESTS)")
    parser.add_argument("--fast", action="store_true",
                        help="floor environment only, cached and reused; digest compared with this interpreter's")
    parser.add_argument("--cache", default=None, help="--fast: where the cached floor environment lives")
    parser.add_argument("--rebuild", action="store_true", help="--fast: build the cached floor environment afresh")
    args = parser.parse_args(argv)

    problems = check_pins()
    if problems:
        for p in problems:
            sys.stderr.write(f"pyproject.toml: error: {p}\n")
        return 2
    if args.fast:
        return fast(Path(args.cache) if args.cache else default_cache(), args.tests or FAST_TESTS, args.rebuild)
    args.tests = args.tests or TESTS
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
            # each environment's compiled Numba kernels apart (one cache would be rebuilt by each in turn)
            env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / f"{kind}.numba"))
            rc = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.tests], log, env)
            digest_path = folder / f"{kind}.digest.json"
            rc_digest = _run([str(python), str(ROOT / "tools" / "bits_digest.py"), "--json", str(digest_path)],
                             log, env)
        pinned = {n.split("[")[0].lower() for n in FLOOR_PINS}
        shown = ", ".join(line for line in versions.splitlines() if line.split("==")[0].lower() in pinned)
        sys.stdout.write(f"{kind}: tests {'passed' if rc == 0 else 'FAILED'} ({shown}); log {log_path}\n")
        failed |= rc != 0 or rc_digest != 0
        if rc_digest == 0:
            digests[kind] = json.loads(digest_path.read_text(encoding="utf-8"))
    if len(digests) == 2:
        failed |= not compare_digests(digests["floor"], digests["newest"], ("floor", "newest"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
