"""Mismatch reports: what a finding holds, its one-line repro commands, and the JSONL stream.

A finding is one JSON object per line of ``findings.jsonl``, written and flushed as soon as the
mismatch is found (a killed campaign keeps every finding written before the kill) and fsynced
before the checkpoint that covers it. Fields:

``form``, ``case`` (index in the campaign's stream of the form), ``batch``, ``seed``, ``backend``
(+ ``run``, the GPU code path when there are several), ``operands`` and ``result`` (hex),
``expected`` (the model's result: exact forms; the representative value of approximate ones),
``allowed`` (what the model accepts, in words), ``inputs`` (each operand as hex, value and class),
``settings`` (rounding, ftz, tininess, ulp_reading, and the backend's ``target``, ``gpu_code`` and ``vectors``
file when the run set them: everything ``--replay`` needs to judge the case again as the run did),
``reading`` (the reading of the form's bound the verdict applied: ``either``, ``exact``,
``correctly-rounded``, ``relative`` or ``none``), ``device`` (gpu backend: the device that ran the case), ``shrunk`` (the simplest operands that still disagree,
with their result and expected value, when shrinking ran), ``repro`` (``tilecheck eval ...`` on
the shrunk operands) and ``replay`` (``tilecheck fuzz FORM --replay FILE ...``).
"""

from __future__ import annotations

import json
import os
import shlex

from tilecheck.errors import Location, UsageError
from tilecheck.model import api
from tilecheck.spec.contract import ULP_READING_DEFAULT
from tilecheck.spec.registry import TININESS_DEFAULT

__all__ = ["finding", "FindingsWriter", "read_findings", "describe_operand", "hexs", "replay_command"]


def hexs(form, values) -> list[str]:
    """Hex texts of container values, zero-padded to the container width."""
    digits = int(form.operands[0].container_bits if form.kind != "memory" else 16) // 4
    return [f"0x{int(v):0{digits}x}" for v in values]


def describe_operand(form, bits: int) -> str:
    """``0x... value class`` of one container of ``form`` (lanes joined by ' | ')."""
    text = hexs(form, [bits])[0]
    if form.element_format is None:
        return text
    fmt = form.format
    parts = []
    for lane in range(form.lanes):
        value, cls = fmt.describe((int(bits) >> (lane * fmt.width)) & ((1 << fmt.width) - 1))
        parts.append(f"{value} ({cls})")
    return f"{text} " + " | ".join(parts)


def _expected(form, operands, tininess: str = TININESS_DEFAULT) -> int:
    if form.kind == "memory":
        return int(operands[0])
    return int(api.reference(form, *[int(v) for v in operands], tininess=tininess))


def _allowed_text(form) -> str:
    if form.kind == "exact":
        return f"exactly the model's result (NaNs: {form.nan.policy})"
    if form.kind == "contract":
        return f"the contract: {api._contract_text(form)}"
    return "the source bits unchanged"


def finding(form, operands, result: int, *, case: int, batch: int, seed: int, backend: str, run: str = "",
            shrunk=None, findings_path: str = "findings.jsonl", tininess: str = TININESS_DEFAULT,
            target: str | None = None, gpu_code: str | None = None, vectors: str | None = None,
            device: str = "", ulp_reading: str = ULP_READING_DEFAULT) -> dict:
    """The JSON record of one mismatch (see the module docstring)."""
    params = form.semantics.params
    settings = {"rounding": params.get("rounding"), "ftz": bool(params.get("ftz", False)), "tininess": tininess,
                "ulp_reading": ulp_reading}
    for key, value in (("target", target), ("gpu_code", gpu_code), ("vectors", vectors)):
        if value is not None:
            settings[key] = value
    record = {
        "form": form.name, "case": int(case), "batch": int(batch), "seed": int(seed), "backend": backend,
        "operands": hexs(form, operands), "result": hexs(form, [result])[0],
        "expected": hexs(form, [_expected(form, operands, tininess)])[0], "allowed": _allowed_text(form),
        "inputs": [describe_operand(form, v) for v in operands], "observed": describe_operand(form, result),
        "settings": settings,
    }
    if run:
        record["run"] = run
    if device:
        record["device"] = device
    final_ops = operands
    if shrunk is not None:
        final_ops = shrunk.operands
        record["shrunk"] = {"operands": hexs(form, shrunk.operands), "result": hexs(form, [shrunk.result])[0],
                            "expected": hexs(form, [_expected(form, shrunk.operands, tininess)])[0],
                            "inputs": [describe_operand(form, v) for v in shrunk.operands],
                            "steps": shrunk.steps}
    if form.kind != "memory":
        record["repro"] = (f"tilecheck eval {form.name} " + " ".join(hexs(form, final_ops))
                           + (f" --tininess {tininess}" if tininess != TININESS_DEFAULT else ""))
    record["reading"] = api.reading_used(form, ulp_reading)
    record["replay"] = replay_command(findings_path, backend, tininess, target, gpu_code, vectors, ulp_reading)
    return record


def replay_command(findings_path: str, backend: str, tininess: str = TININESS_DEFAULT, target: str | None = None,
                   gpu_code: str | None = None, vectors: str | None = None,
                   ulp_reading: str = ULP_READING_DEFAULT) -> str:
    """``tilecheck fuzz --replay FILE`` with every setting of the run spelled out (a replay
    takes them from each finding anyway; the command shows what it will use)."""
    parts = ["tilecheck", "fuzz", "--replay", findings_path, "--backend", backend]
    for option, value in (("--target", target), ("--gpu-code", gpu_code), ("--vectors", vectors)):
        if value is not None:
            parts += [option, value]
    parts += ["--tininess", tininess, "--ulp-reading", ulp_reading]
    return " ".join(shlex.quote(p) for p in parts)


class FindingsWriter:
    """Append findings to a JSONL file, one flushed line each; :meth:`sync` makes them durable.

    ``truncate_to`` cuts the file to that many bytes first: a resumed campaign drops findings a
    killed run wrote after its last checkpoint, so they are not reported twice.
    """

    def __init__(self, path: str, truncate_to: int | None = None):
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        mode = "r+b" if truncate_to is not None and os.path.exists(path) else "ab"
        if truncate_to is None:
            mode = "wb"
        self._fh = open(path, mode)
        if truncate_to is not None:
            self._fh.truncate(truncate_to)
            self._fh.seek(truncate_to)
        self.count = 0

    @property
    def offset(self) -> int:
        """Bytes written so far (the file size)."""
        return self._fh.tell()

    def write(self, record: dict) -> None:
        """Append one record and hand it to the OS (a killed process keeps it)."""
        self._fh.write((json.dumps(record, sort_keys=False) + "\n").encode("utf-8"))
        self._fh.flush()
        self.count += 1

    def sync(self) -> None:
        """Make every record written so far durable (a campaign calls this before each
        checkpoint: what a checkpoint covers survives a power loss too)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


def read_findings(path: str) -> list[tuple[int, dict]]:
    """``(line number, record)`` for each line of a findings JSONL file; a malformed line is a
    :class:`~tilecheck.errors.UsageError` located ``FILE:LINE``."""
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read findings: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"not a JSON object: {exc.msg}", Location(path, number)) from exc
        if not isinstance(record, dict) or "form" not in record or "operands" not in record:
            raise UsageError("a finding needs 'form' and 'operands'", Location(path, number))
        out.append((number, record))
    return out
