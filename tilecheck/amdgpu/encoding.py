"""Assemble ``spec/amdgpu`` encodings with LLVM's ``llvm-mc`` and compare with the recorded bytes.

Only LLVM 19 or newer is accepted: ``llvm-mc-14`` prints "not a recognized processor" for gfx1100
and then silently encodes for SI (reference/amd-division.md §4). ``TILECHECK_LLVM_MC`` may name
the binary; else ``llvm-mc-22`` ... ``llvm-mc-19``, else a plain ``llvm-mc`` whose version is 19+.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache

MIN_VERSION = 19


def _version(path: str) -> int | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"LLVM version (\d+)", out)
    return int(m.group(1)) if m else None


@lru_cache(maxsize=None)
def _find(env: str | None, path_env: str | None) -> tuple[str | None, str]:
    if env:
        return env, f"{env} (TILECHECK_LLVM_MC)"
    for v in range(22, MIN_VERSION - 1, -1):
        found = shutil.which(f"llvm-mc-{v}")
        if found:
            return found, found
    plain = shutil.which("llvm-mc")
    if plain:
        v = _version(plain)
        if v is not None and v >= MIN_VERSION:
            return plain, f"{plain} (LLVM {v})"
        known = v if v is not None else "(unknown version)"
        return None, (f"{plain} is LLVM {known}; llvm-mc {MIN_VERSION}+ is needed "
                      "(older releases silently encode gfx1100 input for SI)")
    return None, (f"llvm-mc-{MIN_VERSION} not installed (Debian: apt-get install --no-install-recommends "
                  f"llvm-{MIN_VERSION})")


def llvm_mc() -> tuple[str | None, str]:
    """``(path, description)`` of a usable llvm-mc, or ``(None, why none is usable)``."""
    return _find(os.environ.get("TILECHECK_LLVM_MC"), os.environ.get("PATH"))


def _run(mc: str, mcpu: str, mattr: str, text: str) -> subprocess.CompletedProcess:
    cmd = [mc, "-arch=amdgcn", f"-mcpu={mcpu}", "-show-encoding"]
    if mattr:
        cmd.append(f"-mattr={mattr}")
    return subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=60)


def _encodings(stdout: str) -> list[tuple[int, ...]]:
    return [tuple(int(b, 16) for b in m.group(1).split(",")) for m in re.finditer(r"encoding: \[([^\]]*)\]", stdout)]


def assemble(mc: str, enc) -> tuple[tuple[int, ...] | None, str]:
    """The bytes ``mc`` encodes ``enc.asm`` to (``enc.mcpu``, ``enc.mattr``), and the error text
    (``None`` bytes when it failed or ignored the processor)."""
    done = _run(mc, enc.mcpu, enc.mattr, enc.asm + "\n")
    if done.returncode != 0 or "not a recognized processor" in done.stderr:
        return None, done.stderr.strip() or f"exit {done.returncode}"
    found = _encodings(done.stdout)
    if not found:
        return None, "no encoding in the output: " + done.stdout.strip()
    return found[0], ""


def assemble_all(mc: str, encs: list) -> list[tuple[tuple[int, ...] | None, str]]:
    """:func:`assemble` for each encoding, one llvm-mc run per processor/attribute set when every
    line assembles (the common case); any error falls back to one run per line, so each result
    belongs to its own line."""
    results: dict[int, tuple] = {}
    groups: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(encs):
        groups.setdefault((e.mcpu, e.mattr), []).append(i)
    for (mcpu, mattr), idx in groups.items():
        done = _run(mc, mcpu, mattr, "".join(encs[i].asm + "\n" for i in idx))
        found = _encodings(done.stdout)
        if done.returncode == 0 and not done.stderr.strip() and len(found) == len(idx):
            results.update((i, (b, "")) for i, b in zip(idx, found))
        else:
            results.update((i, assemble(mc, encs[i])) for i in idx)
    return [results[i] for i in range(len(encs))]
