"""NVIDIA's tools accept what the emitter produces for every corpus program (the examples are covered
by the goldens): ptxas assembles the PTX to SASS, nvcc compiles the CUDA C++. Batched: one ptxas run
per (.version, .target) and one nvcc run per target."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from emit_helpers import CORPUS, TARGETS, declared_targets, legal_on
from tilecheck import ptxas
from tilecheck.emit import emit_programs
from tilecheck.errors import ToolNotFoundError


def _emitted(fmt: str, db, programs_of):
    out = []
    for path in CORPUS:
        programs = programs_of(path)
        for target in declared_targets(path):
            if legal_on(programs, target, db):
                out.append((path, target, emit_programs(programs, target, fmt, db=db)))
    return out


def test_ptxas_assembles_every_corpus_program(db, programs_of):
    try:
        ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")
    groups = defaultdict(list)
    for path, target, text in _emitted("ptx", db, programs_of):
        version = re.search(r"^\.version (\S+)$", text, re.M).group(1)
        groups[(version, target)].append((path, text.split(".address_size 64\n", 1)[1]))
    assert sum(len(v) for v in groups.values()) >= 2 * len(CORPUS)
    failures = []
    for (version, target), items in sorted(groups.items()):
        module = f".version {version}\n.target {target}\n.address_size 64\n" + "".join(body for _, body in items)
        result = ptxas.assemble(module, target)
        if not result.ok:
            failures.append(f"{target} .version {version} ({', '.join(p.stem for p, _ in items)}):\n{result.output}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("target", TARGETS)
def test_nvcc_compiles_every_corpus_program(target, db, programs_of, tmp_path):
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").is_file() else None)
    if nvcc is None:
        pytest.skip("nvcc not available")
    unit = ["#include <cstdint>"]
    for i, (path, t, text) in enumerate(_emitted("cuda", db, programs_of)):
        if t == target:
            source = tmp_path / f"{path.stem}.cu"
            source.write_text(text, encoding="utf-8")
            unit += [f"namespace corpus_{i} {{", f'#include "{source}"', "}"]
    assert len(unit) > 10
    main = tmp_path / "all.cu"
    main.write_text("\n".join(unit) + "\n", encoding="utf-8")
    proc = subprocess.run([nvcc, f"-arch={target}", "-cubin", "-o", str(tmp_path / "all.cubin"), str(main)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0 and "warning" not in proc.stderr.lower(), proc.stdout + proc.stderr
