"""The golden files under ``emit/``: fresh emission equals them (a unified diff otherwise), ptxas
assembles every ``.ptx`` for its target, nvcc compiles every ``.cu``, the inventory is complete and
small. Regenerate with ``python -m tilecheck.emit.golden``."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from tilecheck import ptxas
from tilecheck.emit import golden
from tilecheck.errors import ToolNotFoundError
from tilecheck.spec.database import load_database

ROOT = Path(__file__).resolve().parents[2]
EMIT = ROOT / "emit"
NVCC_CANDIDATES = ("/usr/local/bin/nvcc", "/usr/local/cuda/bin/nvcc")


@pytest.fixture(scope="module")
def expected():
    return golden.golden_outputs(ROOT, db=load_database())


def test_goldens_match_fresh_emission(expected):
    problems = golden.compare_goldens(ROOT, expected=expected, db=load_database())
    if problems:
        shown = "\n".join(problem if problem.startswith("---") else f"{rel}: {problem}" for rel, problem in problems[:20])
        pytest.fail(f"{len(problems)} golden file(s) differ from fresh emission; if the change is intended, run "
                    f"`python -m tilecheck.emit.golden` and review the diff:\n{shown}")


def test_golden_inventory(expected):
    db = load_database()
    examples = golden.example_files(ROOT)
    assert len(examples) >= 8
    for target in golden.GOLDEN_TARGETS:
        legal = [f for f in db.kernel_forms() if db.verdict(f.name, target).legal]
        files = sorted((EMIT / "forms" / target).glob("*.ptx"))
        # one kernel per family and type legal on the target (the rest are checked by property:
        # tests/emit/test_single_kernels.py and tests/sim/test_execute.py)
        assert {p.stem for p in files} == {f.name for f in golden.representative_forms(db, target)}
        assert {(f.family, f.type) for f in legal} == {(db.forms[p.stem].family, db.forms[p.stem].type) for p in files}
    programs = sorted(p.name for p in (EMIT / "programs").iterdir())
    # root_ratio is legal everywhere: both renderings for every target
    for target in golden.GOLDEN_TARGETS:
        assert f"root_ratio.{target}.ptx" in programs and f"root_ratio.{target}.cu" in programs
    assert len(programs) == sum(1 for rel in expected if rel.startswith("emit/programs/"))


def test_goldens_stay_small():
    total = sum(p.stat().st_size for p in EMIT.rglob("*") if p.is_file())
    assert total < 2_000_000, f"emit/ holds {total} bytes of goldens; keep it well under a few MB"


def _batches(paths):
    """Group PTX files by their header (.version, .target): one module per group, entry bodies appended,
    with the line offset of each file so ptxas's line numbers map back to files."""
    groups = defaultdict(list)
    for path in paths:
        text = path.read_text(encoding="utf-8")
        version = re.search(r"^\.version (\S+)$", text, re.M).group(1)
        target = re.search(r"^\.target (\S+)$", text, re.M).group(1)
        groups[(version, target)].append((path, text.split(".address_size 64\n", 1)[1]))
    for (version, target), items in sorted(groups.items()):
        lines = [f".version {version}", f".target {target}", ".address_size 64"]
        spans = []
        for path, body in items:
            start = len(lines) + 1
            lines.extend(body.splitlines())
            spans.append((start, len(lines), path))
        yield version, target, "\n".join(lines) + "\n", spans


def _need_ptxas():
    try:
        ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")


@pytest.mark.parametrize("kind, parse_only", [("programs", False), ("forms", True)])
def test_ptxas_accepts_every_golden(kind, parse_only):
    """Program goldens are assembled to SASS (``-arch=sm_XX``); the many single-instruction kernels
    are checked with ``-arch=compute_XX`` (parse and legality only), batched per header."""
    _need_ptxas()
    paths = sorted((EMIT / "programs").glob("*.ptx")) if kind == "programs" else sorted(EMIT.glob("forms/*/*.ptx"))
    assert paths
    failures = []
    for version, target, module, spans in _batches(paths):
        arch = f"compute_{target[3:]}" if parse_only else target
        result = ptxas.assemble(module, arch, parse_only=parse_only)
        if result.ok:
            continue
        for message in result.errors:
            where = next((p.relative_to(ROOT) for s, e, p in spans if message.line and s <= message.line <= e),
                         f".version {version} .target {target}")
            failures.append(f"{where}: {message.text}")
        if not result.errors:
            failures.append(f".version {version} .target {target}: {result.output.strip()}")
    assert not failures, "ptxas rejected golden PTX:\n" + "\n".join(failures[:30])


def _nvcc() -> str:
    found = shutil.which("nvcc") or next((c for c in NVCC_CANDIDATES if Path(c).is_file()), None)
    if not found:
        pytest.skip("nvcc not available (looked on PATH and in /usr/local/bin, /usr/local/cuda/bin)")
    return found


@pytest.mark.parametrize("target", golden.GOLDEN_TARGETS)
def test_nvcc_compiles_every_golden_cuda_file(target, tmp_path):
    """All golden ``.cu`` files of a target in one nvcc run: each is included inside its own namespace
    (its helpers are identical definitions; its kernel names are distinct and extern "C")."""
    nvcc = _nvcc()
    files = sorted((EMIT / "programs").glob(f"*.{target}.cu"))
    assert files
    unit = ["#include <cstdint>"]
    for i, path in enumerate(files):
        unit += [f"namespace golden_{i} {{", f'#include "{path}"', "}"]
    source = tmp_path / f"goldens_{target}.cu"
    source.write_text("\n".join(unit) + "\n", encoding="utf-8")
    proc = subprocess.run([nvcc, f"-arch={target}", "-cubin", "-o", str(tmp_path / "out.cubin"), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"nvcc failed on the {target} goldens:\n{proc.stdout}\n{proc.stderr}"
    assert "warning" not in proc.stderr.lower(), proc.stderr


def test_regeneration_command(tmp_path, capsys):
    """``python -m tilecheck.emit.golden`` writes the files, ``--check`` reports drift with a diff."""
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "root_ratio.py", tmp_path / "examples" / "root_ratio.py")
    assert golden.main(["--root", str(tmp_path)]) == 0
    assert (tmp_path / "emit" / "programs" / "root_ratio.sm_90.ptx").is_file()
    assert (tmp_path / "emit" / "forms" / "sm_80" / "div.approx.f32.ptx").is_file()
    capsys.readouterr()
    assert golden.main(["--root", str(tmp_path), "--check"]) == 0
    target = tmp_path / "emit" / "programs" / "root_ratio.sm_90.ptx"
    target.write_text(target.read_text().replace("div.rn.f32 %f2", "div.rn.f32 %f3"))
    (tmp_path / "emit" / "forms" / "sm_90" / "stale.form.ptx").write_text("x\n")
    assert golden.main(["--root", str(tmp_path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "-    div.rn.f32 %f3" in out and "+    div.rn.f32 %f2" in out and "stale" in out
    assert golden.main(["--root", str(tmp_path)]) == 0
    assert "removed emit/forms/sm_90/stale.form.ptx" in capsys.readouterr().out
    assert golden.compare_goldens(tmp_path, db=load_database()) == []
