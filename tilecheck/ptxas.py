"""Driver for NVIDIA's ``ptxas``: the external judge of PTX legality.

Used by the ptxas agreement tests, the legality checker and the emitter. Three things live here:

* :func:`find_ptxas` locates the assembler (``TILECHECK_PTXAS``, then the ``nvidia-cuda-nvcc``
  wheel that ``tilecheck[ptxas]`` pins, then ``PATH``), :func:`ptxas_version` reports its release
  and :func:`ptxas_info` what every ptxas-dependent result records (version, path, where it was
  found, and whether it is the release the spec's facts were measured with, :data:`SPEC_PTXAS`);
* :func:`assemble` runs it on one PTX module and parses its diagnostics into
  ``(line, severity, text)`` messages;
* :func:`check_instructions` judges many single-instruction candidates in one ptxas run (one
  instruction per line of one kernel; error lines are mapped back to candidates), so a grid of
  thousands of spellings takes seconds instead of one process per spelling; :data:`HARNESSES`
  names the function they sit in (a parameterless kernel, or for ``.param`` accesses a kernel with
  a parameter or a ``.func`` with an input and a return parameter).

``parse_only=True`` passes ``-arch=compute_XX``: ptxas then checks the module and writes no code,
which is all a legality question needs. ptxas 13.0 accepts ``-arch`` sm_75/compute_75 and newer
only, but a module with an older ``.target`` (``sm_20``) still assembles for a newer arch.

Nothing here runs at import time; the module imports only the standard library.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Sequence

from tilecheck.errors import Location, TilecheckError, ToolNotFoundError
from tilecheck.spec.types import PTX_TYPES

ENV_VAR = "TILECHECK_PTXAS"

SPEC_PTXAS = "13.0.88"
"""The ptxas release whose behaviour spec/ records (``tilecheck[ptxas]`` pins its wheel)."""

# Wheel layouts that ship ptxas, newest first: nvidia-cuda-nvcc 13.x installs
# nvidia/cu13/bin/ptxas, the 12.x wheel (nvidia-cuda-nvcc-cu12) nvidia/cuda_nvcc/bin/ptxas.
_WHEEL_PATHS = (("cu13", "bin", "ptxas"), ("cuda_nvcc", "bin", "ptxas"))

# ptxas diagnostics look like
#   ptxas /tmp/x/input.ptx, line 8; error   : Rounding modifier ... required for instruction 'div'
#   ptxas fatal   : Ptx assembly aborted due to errors
#   ptxas warning : ...
_MESSAGE = re.compile(
    r"^ptxas\s+(?:(?P<file>.+?), line (?P<line>\d+); )?(?P<severity>error|warning|fatal|info)\s*:\s?(?P<text>.*)$")
_INPUT_NAME = "input.ptx"  # the file name assemble() gives the module (messages name it)
_VERSION = re.compile(r"release (\d+\.\d+), V([0-9.]+)")
_ARCH = re.compile(r"^(sm|compute)_(\d+[a-z]?)$")

# Registers every batched candidate may use: the kernel declares sixteen of each kind and a
# candidate picks the kind its type needs (REGISTER_PREFIX). The names carry no '%': PTX ISA 1.x
# parsers (which ptxas still runs for `.version 1.x`) do not accept '%'-prefixed user registers,
# and the same module text must work from .version 1.4 to 9.0 for the ISA-version scans.
REGISTER_PREFIX = {name: PTX_TYPES[name].prefix for name in
                   ("pred", "b16", "b32", "b64", "f32", "f64", "u32", "u64", "s32", "s64")}
"""PTX register type -> the register name prefix declared in batch modules."""

ADDRESS_REGISTER = "rd15"
"""The b64 register batch instructions use as a memory address (``[rd15]``)."""

DECLARATIONS = tuple(f".reg .{kind} {prefix}<16>;" for kind, prefix in REGISTER_PREFIX.items())
"""The register declarations of every batch module (sixteen registers of each kind)."""

PARAM_INPUT = "param_in"
"""The parameter a batched ``ld.param`` candidate reads (``[param_in]``): the kernel's parameter in
the ``kernel_param`` harness, the function's input parameter in ``func_param``."""
PARAM_RETURN = "param_out"
"""The return parameter a batched ``st.param`` candidate writes (``[param_out]``, ``func_param``)."""

_PARAM = ".param .align 16 .b8 {}[32]"  # room for the widest access (.v4 of 64 bits, .v8 of 32)
HARNESSES = {
    "kernel": ".visible .entry k()",
    "kernel_param": f".visible .entry k({_PARAM.format(PARAM_INPUT)})",
    "func_param": f".visible .func ({_PARAM.format(PARAM_RETURN)}) f({_PARAM.format(PARAM_INPUT)})",
}
"""The function a batch module's candidates sit in (one header line each, so line numbers agree).
``kernel``: an entry without parameters (arithmetic, global and generic memory); ``kernel_param``:
an entry with one parameter (``ld.param`` of a kernel parameter); ``func_param``: a visible
function with an input and a return parameter (``ld.param`` of a function parameter, ``st.param``
of its return value: ptxas rejects a store to an input parameter, "Illegal to write to function
input parameter", and a load from the return parameter). Visible, so code is generated for it."""


class Message(NamedTuple):
    """One ptxas diagnostic: source line (None when not tied to a line), severity, text, and the
    file ptxas names (the input, ``<macro util>`` for ptxas's internal macros, or None)."""

    line: int | None
    severity: str
    text: str
    file: str | None = None


@dataclass(frozen=True)
class AssembleResult:
    """The outcome of one ptxas run.

    ``ok`` is True iff ptxas exited 0. ``messages`` holds every diagnostic ptxas printed, parsed;
    ``output`` is ptxas's raw combined output (kept for reports); ``cubin`` is the assembled
    object when code generation was requested and succeeded.
    """

    ok: bool
    returncode: int
    messages: tuple[Message, ...]
    command: tuple[str, ...]
    output: str
    cubin: bytes | None = None

    @property
    def errors(self) -> tuple[Message, ...]:
        """The ``error`` and ``fatal`` messages (a crash counts as one fatal message)."""
        found = tuple(m for m in self.messages if m.severity in ("error", "fatal"))
        if self.crashed:
            found += (Message(None, "fatal", f"ptxas crashed (killed by signal {-self.returncode})"),)
        return found

    @property
    def crashed(self) -> bool:
        """ptxas died from a signal (a segmentation fault is -11) instead of exiting."""
        return self.returncode < 0


@dataclass(frozen=True)
class InstructionVerdict:
    """ptxas's verdict on one batched candidate instruction.

    ``accepted`` is True when the module assembled with this line in it and no error was tied to
    the line. ``messages`` are the diagnostics ptxas tied to the candidate's line (errors and
    warnings).
    """

    instruction: str
    accepted: bool
    messages: tuple[Message, ...]
    crashed: bool = False
    """ptxas crashed on this candidate (found when building a cubin): not accepted."""

    @property
    def error(self) -> str | None:
        """The text of the first error message, or None for an accepted candidate."""
        for m in self.messages:
            if m.severity in ("error", "fatal"):
                return m.text
        return None


def _wheel_ptxas() -> str | None:
    """ptxas inside an installed ``nvidia-cuda-nvcc`` wheel, found without importing it."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except ValueError:
        # raised when an already imported ``nvidia`` module has no __spec__ (not a wheel layout)
        return None
    if spec is None:
        return None
    # ``nvidia`` is a namespace package: several site-packages may each contribute a part.
    for base in spec.submodule_search_locations or ():
        for parts in _WHEEL_PATHS:
            candidate = Path(base, *parts)
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def _locate() -> tuple[str, str]:
    """(path, source) of the ptxas to use; see :func:`find_ptxas`."""
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override)
        if path.is_file() and os.access(path, os.X_OK):
            return str(path), ENV_VAR
        found = shutil.which(override)
        if found:
            return found, ENV_VAR
        raise ToolNotFoundError(f"{ENV_VAR}={override!r} does not name an executable ptxas")
    wheel = _wheel_ptxas()
    if wheel:
        return wheel, "nvidia-cuda-nvcc wheel"
    found = shutil.which("ptxas")
    if found:
        return found, "PATH"
    raise ToolNotFoundError(
        "ptxas not found: set TILECHECK_PTXAS, `pip install 'tilecheck[ptxas]'` (the pinned "
        f"nvidia-cuda-nvcc {SPEC_PTXAS}), or put a CUDA toolkit's bin/ on PATH")


def find_ptxas() -> str:
    """The path of the ptxas to use.

    Order: the ``TILECHECK_PTXAS`` environment variable (an explicit choice; it must then name
    an executable), the ``nvidia-cuda-nvcc`` wheel's ``nvidia/cu13/bin/ptxas`` (what
    ``tilecheck[ptxas]`` installs: pinned to :data:`SPEC_PTXAS`, the release the spec's
    facts were measured with, so installing the extra is what decides), then ``ptxas`` on
    ``PATH`` (whatever toolkit the machine has). Raises
    :class:`~tilecheck.errors.ToolNotFoundError` when none is found.
    """
    return _locate()[0]


def ptxas_info() -> dict:
    """What a ptxas-dependent result records: ``version``, ``path``, ``source`` (``TILECHECK_PTXAS``,
    ``nvidia-cuda-nvcc wheel`` or ``PATH``) and ``spec_release`` (whether it is :data:`SPEC_PTXAS`)."""
    path, source = _locate()
    version = _version_of(path)
    return {"version": version, "path": path, "source": source, "spec_release": version == SPEC_PTXAS}


def describe(info: dict) -> str:
    """One line for reports: ``ptxas 13.0.88 (/usr/local/bin/ptxas, from PATH)``, with a note when
    it is not the release the spec records."""
    text = f"ptxas {info['version']} ({info['path']}, from {info['source']})"
    if not info.get("spec_release", True):
        text += f"; the spec records ptxas {SPEC_PTXAS}"
    return text


def _run(command: Sequence[str], timeout: float, cwd: str | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False)
    except FileNotFoundError as exc:
        raise ToolNotFoundError(f"cannot run {command[0]}: {exc.strerror}") from exc
    except PermissionError as exc:
        raise ToolNotFoundError(f"cannot run {command[0]}: {exc.strerror}") from exc
    except subprocess.TimeoutExpired as exc:
        raise TilecheckError(f"{command[0]} did not finish within {timeout} s ({' '.join(command[1:])})") from exc


@lru_cache(maxsize=8)
def _version_of(path: str) -> str:
    proc = _run([path, "--version"], timeout=30)
    match = _VERSION.search(proc.stdout)
    if proc.returncode != 0 or match is None:
        raise ToolNotFoundError(f"{path} --version did not report a CUDA release: {proc.stdout or proc.stderr!r}")
    return match.group(2)


def ptxas_version() -> str:
    """The full version of the ptxas :func:`find_ptxas` picks, e.g. ``13.0.88``."""
    return _version_of(find_ptxas())


def parse_messages(output: str) -> tuple[Message, ...]:
    """Parse ptxas's diagnostic lines; lines that are not diagnostics are ignored."""
    messages = []
    for raw in output.splitlines():
        match = _MESSAGE.match(raw.strip())
        if match:
            line = int(match.group("line")) if match.group("line") else None
            messages.append(Message(line, match.group("severity"), match.group("text").strip(), match.group("file")))
    return tuple(messages)


def _arch_option(arch: str, parse_only: bool) -> str:
    match = _ARCH.match(arch)
    if match is None:
        raise TilecheckError(f"bad ptxas architecture {arch!r}: expected sm_XX or compute_XX")
    kind, number = match.groups()
    if parse_only:
        return f"compute_{number}"
    if kind == "compute":
        raise TilecheckError(f"code generation needs an sm_XX architecture, got {arch!r}")
    return f"sm_{number}"


def assemble(ptx_text: str, arch: str, parse_only: bool = False, timeout: float = 60) -> AssembleResult:
    """Assemble ``ptx_text`` with ``ptxas -arch=<arch>``.

    ``arch`` is ``sm_XX`` (or ``compute_XX`` with ``parse_only``). With ``parse_only`` the run
    uses ``-arch=compute_XX``: ptxas checks the module and generates no code. Otherwise the cubin
    is returned in ``AssembleResult.cubin``. A rejected module is a normal result (``ok``
    False); only a missing or hanging ptxas raises.
    """
    exe = find_ptxas()
    option = _arch_option(arch, parse_only)
    with tempfile.TemporaryDirectory(prefix="tilecheck-ptxas-") as tmp:
        source = Path(tmp, _INPUT_NAME)
        source.write_text(ptx_text, encoding="utf-8")
        command = [exe, f"-arch={option}", str(source)]
        cubin_path = Path(tmp, "output.cubin")
        if not parse_only:
            command += ["-o", str(cubin_path)]
        proc = _run(command, timeout, cwd=tmp)
        output = (proc.stdout or "") + (proc.stderr or "")
        cubin = cubin_path.read_bytes() if proc.returncode == 0 and not parse_only else None
    return AssembleResult(ok=proc.returncode == 0, returncode=proc.returncode, messages=parse_messages(output),
                          command=tuple(command), output=output, cubin=cubin)


def sm_number(target: str) -> str:
    """``sm_90`` -> ``90``, ``sm_100a`` -> ``100a`` (the part ``compute_`` takes)."""
    match = _ARCH.match(target)
    if match is None:
        raise TilecheckError(f"bad target {target!r}: expected sm_XX")
    return match.group(2)


def version_tuple(version: str) -> tuple[int, int]:
    """``"8.6"`` -> ``(8, 6)``."""
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def module_text(body: Sequence[str], target: str, version: str, declarations: Sequence[str] = DECLARATIONS,
                harness: str = "kernel") -> str:
    """A PTX module with one function of :data:`HARNESSES` (``harness``; by default the kernel
    ``k`` without parameters) whose body is ``body`` (one statement per line).

    ``.address_size 64`` is written for ``.version`` 2.3 and later only: ptxas rejects the
    directive below 2.3 (measured), and arithmetic candidates need no addresses. Body line ``i``
    is module line ``body_first_line(version) + i``, so ptxas's line numbers map back to it.
    """
    head = [f".version {version}", f".target {target}"]
    if version_tuple(version) >= (2, 3):
        head.append(".address_size 64")
    head += [HARNESSES[harness], "{", *declarations]
    return "\n".join(head + [line.strip() for line in body] + ["ret;", "}", ""])


def body_first_line(version: str, declarations: Sequence[str] = DECLARATIONS) -> int:
    """The module line number of the first body line in :func:`module_text`'s output."""
    header = 3 if version_tuple(version) >= (2, 3) else 2
    return header + 2 + len(declarations) + 1


def check_instructions(instructions: Sequence[str], target: str, version: str = "9.0", *,
                       arch: str | None = None, timeout: float = 120, build: bool = False,
                       harness: str = "kernel") -> list[InstructionVerdict]:
    """ptxas's verdict on each instruction, judged in as few ptxas runs as possible.

    Every instruction (one PTX statement ending in ``;``, on one line, using the registers of
    :data:`REGISTER_PREFIX`, e.g. ``div.rn.f32 f1, f2, f3;``) goes on its own line of one
    kernel in a module with ``.version version`` and ``.target target``; the module is checked
    with ``-arch=compute_XX`` where XX comes from ``arch`` (default: the target; give a newer
    arch to check an old ``.target`` such as ``sm_20``, which ptxas 13 cannot generate code for).
    ptxas reports errors by line, so each error is mapped back to its candidate. The remaining
    candidates are re-run until a run succeeds, because an error can stop ptxas before it
    judges later lines; a failed run that names no candidate line is split in halves until the
    culprit is isolated. Raises :class:`TilecheckError` when ptxas rejects the module for a
    reason outside the candidate lines (the header: e.g. a ``.version`` that does not support
    the ``.target``), since then no candidate can be judged; :func:`header_error` tells first.

    ``build=True`` also generates code (``-arch=sm_XX``, a cubin), because ptxas accepts some
    spellings when parsing and then fails or crashes generating code (13.0 segfaults building
    ``ld.global.v8.b16``). A crash names no line: the batch is bisected down to the candidate,
    whose verdict has ``crashed`` set.

    ``harness`` names the function of :data:`HARNESSES` the candidates sit in (``func_param`` for
    ``st.param``, whose operand is the function's return parameter :data:`PARAM_RETURN`).
    """
    if harness not in HARNESSES:
        raise TilecheckError(f"unknown batch harness {harness!r}; known: {', '.join(HARNESSES)}")
    items = list(instructions)
    for text in items:
        if "\n" in text:
            raise TilecheckError(f"a batched instruction must be one line: {text!r}")
    verdicts: dict[int, InstructionVerdict] = {}
    run_arch = f"{'sm' if build else 'compute'}_{sm_number(arch or target)}"
    first = body_first_line(version)

    def judge(indices: list[int]) -> None:
        pending = list(indices)
        while pending:
            result = assemble(module_text([items[i] for i in pending], target, version, harness=harness), run_arch,
                              parse_only=not build, timeout=timeout)
            by_index: dict[int, list[Message]] = {}
            outside, foreign = [], []
            for m in result.messages:
                if m.severity not in ("error", "fatal", "warning"):
                    continue
                from_input = m.file is not None and m.file.endswith(_INPUT_NAME)
                if from_input and m.line is not None and first <= m.line < first + len(pending):
                    by_index.setdefault(pending[m.line - first], []).append(m)
                elif m.severity != "warning":
                    (outside if from_input and m.line is not None else foreign).append(m)
            rejected = {i for i, ms in by_index.items() if any(m.severity in ("error", "fatal") for m in ms)}
            if result.ok:
                for i in pending:
                    verdicts[i] = InstructionVerdict(items[i], True, tuple(by_index.get(i, ())))
                return
            if outside:
                shown = "; ".join(f"line {m.line}: {m.text}" for m in outside)
                raise TilecheckError(f"ptxas rejected the batch module outside the candidate lines "
                                     f"(.version {version}, .target {target}): {shown}",
                                     Location("<ptxas batch>", outside[0].line))
            if rejected:
                # errors ptxas reports from its internal macros after a candidate's error (a
                # parse error derails it) are consequences: drop the candidates and re-run
                for i in rejected:
                    verdicts[i] = InstructionVerdict(items[i], False, tuple(by_index[i]))
                pending = [i for i in pending if i not in rejected]
                continue
            header = header_error(target, version, arch=arch, timeout=timeout)
            if header is not None:
                raise TilecheckError(f"ptxas rejects .version {version} with .target {target}: {header}")
            # Failed without naming a candidate line (an internal-macro error caused by some
            # candidate): isolate it by bisection.
            if len(pending) == 1:
                i = pending[0]
                verdicts[i] = InstructionVerdict(items[i], False, result.errors, result.crashed)
                return
            half = len(pending) // 2
            judge(pending[:half])
            judge(pending[half:])
            return

    if items:
        judge(list(range(len(items))))
    return [verdicts[i] for i in range(len(items))]


def header_error(target: str, version: str, *, arch: str | None = None, timeout: float = 60) -> str | None:
    """ptxas's first error for an empty batch module, or None when ``.version``/``.target`` work."""
    result = assemble(module_text([], target, version), f"compute_{sm_number(arch or target)}",
                      parse_only=True, timeout=timeout)
    return None if result.ok else (result.errors[0].text if result.errors else result.output.strip())


def harness_error(harness: str, target: str, version: str, *, arch: str | None = None,
                  timeout: float = 60) -> str | None:
    """ptxas's first error for an empty batch module of ``harness`` (:data:`HARNESSES`), or None
    when the module assembles (``.param`` function parameters need ``.target sm_20``)."""
    result = assemble(module_text([], target, version, harness=harness), f"compute_{sm_number(arch or target)}",
                      parse_only=True, timeout=timeout)
    return None if result.ok else (result.errors[0].text if result.errors else result.output.strip())


def operand_text(register_type: str, index: int) -> str:
    """The name of batch register number ``index`` of a register type (``f32``, 1 -> ``f1``)."""
    return f"{REGISTER_PREFIX[register_type]}{index}"


def instruction_text(spelling: str, operands: Sequence[str]) -> str:
    """``spelling op0, op1, ...;`` -- one PTX statement."""
    return f"{spelling} {', '.join(operands)};"


def form_instruction(form, spelling: str | None = None) -> str:
    """A one-line PTX statement exercising ``form`` with batch registers.

    ``form`` is a :class:`tilecheck.spec.forms.Form` (read through its ``name`` and
    ``operands``; this module does not import the spec package). Register operands take the
    register type each operand declares, vectors become ``{r1, r2, ...}`` and address operands
    ``[rd15]``. ``spelling`` replaces the form's name (to try another qualifier order).
    """
    counters: dict[str, int] = {}
    parts = []
    for operand in form.operands:
        if operand.role == "addr":
            parts.append(f"[{ADDRESS_REGISTER}]")
            continue
        names = []
        for _ in range(operand.registers):
            counters[operand.register_type] = counters.get(operand.register_type, 0) + 1
            names.append(operand_text(operand.register_type, counters[operand.register_type]))
        parts.append(names[0] if operand.registers == 1 else "{" + ", ".join(names) + "}")
    return instruction_text(spelling or form.name, parts)


def candidate_instruction(spelling: str, register_type: str, sources: int = 0, *, vector: int = 1,
                          memory: str | None = None, address: str = ADDRESS_REGISTER) -> str:
    """A statement for a spelling that may be illegal (so there is no Form to render).

    Arithmetic (``memory`` None): a destination and ``sources`` source registers of
    ``register_type``. ``memory="load"``: ``{d...}, [rd15]``; ``memory="store"``:
    ``[rd15], {b...}``, with ``vector`` registers in the braces (none for 1). ``address`` replaces
    ``rd15`` (a parameter name for ``ld.param``/``st.param``: :data:`PARAM_INPUT`, :data:`PARAM_RETURN`).
    """
    if memory is None:
        return instruction_text(spelling, [operand_text(register_type, i) for i in range(1, sources + 2)])
    names = [operand_text(register_type, i) for i in range(1, vector + 1)]
    value = names[0] if vector == 1 else "{" + ", ".join(names) + "}"
    address = f"[{address}]"
    if memory == "load":
        return instruction_text(spelling, [value, address])
    if memory == "store":
        return instruction_text(spelling, [address, value])
    raise TilecheckError(f"memory must be None, 'load' or 'store', got {memory!r}")


def supported_versions(timeout: float = 30) -> list[str]:
    """The ``.version`` values the ptxas in use accepts, ascending (``ptxas --list-version``)."""
    proc = _run([find_ptxas(), "--list-version"], timeout)
    if proc.returncode != 0:
        raise ToolNotFoundError(f"ptxas --list-version failed: {proc.stderr.strip() or proc.stdout.strip()}")
    versions = [v for v in proc.stdout.split() if re.fullmatch(r"\d+\.\d+", v)]
    return sorted(versions, key=version_tuple)
