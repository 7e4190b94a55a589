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
        return None, (f"{plain} is LLVM {v if v is not None else '(unknown version)'}; llvm-mc {MIN_VERSION}+ is needed "
                      "(older releases silently encode gfx1100 input for SI)")
    return None, (f"llvm-mc-{MIN_VERSION} not installed (Debian: apt-get install --no-install-recommends "
                  f"llvm-{MIN_VERSION})")


def llvm_mc() -> tuple[str | None, str]:
    """``(path, description)`` of a usable llvm-mc, or ``(None, why none is usable)``."""
    return _find(os.environ.get("TILECHECK_LLVM_MC"), os.environ.get("PATH"))


def assemble(mc: str, enc) -> tuple[tuple[int, ...] | None, str]:
    """The bytes ``mc`` encodes ``enc.asm`` to (``enc.mcpu``, ``enc.mattr``), and the error text
    (``None`` bytes when it failed or ignored the processor)."""
    cmd = [mc, "-arch=amdgcn", f"-mcpu={enc.mcpu}", "-show-encoding"]
    if enc.mattr:
        cmd.append(f"-mattr={enc.mattr}")
    done = subprocess.run(cmd, input=enc.asm + "\n", capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or "not a recognized processor" in done.stderr:
        return None, done.stderr.strip() or f"exit {done.returncode}"
    m = re.search(r"encoding: \[([^\]]*)\]", done.stdout)
    if not m:
        return None, "no encoding in the output: " + done.stdout.strip()
    return tuple(int(b, 16) for b in m.group(1).split(",")), ""
