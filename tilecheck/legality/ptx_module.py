"""Judge PTX that others wrote against the spec: every instruction for the module's ``.target`` and
``.version``, as ptxas would and stricter.

Each instruction's spelling gets one verdict (:func:`judge_spelling`):

* legal for the target and version -- nothing to report;
* **PX001 unknown-spelling** -- a qualifier or type no PTX form and no modifier of the ISA's
  vocabulary (:data:`UNMODELED_QUALIFIERS`) uses: a typo (ptxas rejects it too);
* **PX002 illegal-spelling** -- every token belongs to the family, but no form has this combination
  (a rounding modifier where none is allowed, a type the operation lacks), or the spec records the
  spelling as illegal with ptxas's message;
* **PX003 target-gate** / **PX004 version-gate** -- a form of the spec, but the module's ``.target``
  is older than its gate, or its ``.version`` older than the form needs;
* **PX005 ptxas-accepts** -- not in the ISA, though ptxas accepts it (the spec says what ptxas makes
  of it: ``fma.rz.bf16`` is miscompiled): stricter than ptxas, with the reason;
* **PX006 module-version** -- the module's ``.version`` is older than its ``.target`` accepts (one
  finding per module: ptxas refuses the whole module);
* **PX007 directive-version** -- a directive's form needs a newer ``.version`` than the module's
  (:data:`DIRECTIVE_GATES`: ``.loc`` with ``function_name``/``inlined_at``, which Triton writes for
  inlined library code; one finding per form and module).

What the spec does not judge is a note, never an error, so a user sees what was and was not
checked: **PX101 not-covered** (an opcode no spec family defines: ``bra``, ``bar``, ``call``, ...;
listed once per opcode) and **PX102 not-modeled** (a family the spec has, but a qualifier its
forms do not model: ``ld.shared``, cache hints), and **PX103
unknown-target** (a ``.target`` the spec does not know: spellings judged, gates not), and
**PX104 asm-not-read** (an inline ``asm`` statement of CUDA C++ not read whole), and **PX105
newer-isa**: in a module whose ``.version`` is newer than the newest PTX ISA the spec records
(Triton writes 9.4; the spec is PTX ISA 9.0), a spelling that would be PX001 or PX002 is not
judged, since a later ISA may define it (Triton's ``cvt.rn.bf16x2.e4m3x2`` on sm_100a: PTX ISA 9.2,
which ptxas 13.4 accepts and 13.0 cannot read).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from tilecheck.errors import Location, UnknownFormError
from tilecheck.spec.database import spelling_key, split_spelling

CODES = {
    "PX001": ("unknown-spelling", "a qualifier or type no PTX form of the spec and no ISA modifier uses"),
    "PX002": ("illegal-spelling", "no form of the family has this combination, or the spec records it as illegal"),
    "PX003": ("target-gate", "the form needs a newer target than the module's .target"),
    "PX004": ("version-gate", "the form needs a newer PTX ISA version than the module's .version"),
    "PX005": ("ptxas-accepts", "not in the ISA, though ptxas accepts it (what ptxas makes of it: the reason)"),
    "PX006": ("module-version", "the module's .version is older than its .target accepts"),
    "PX007": ("directive-version", "a directive's form needs a newer PTX ISA version than the module's .version"),
    "PX101": ("not-covered", "an opcode no family of the spec defines (not judged)"),
    "PX102": ("not-modeled", "a qualifier the family's forms do not model (not judged)"),
    "PX103": ("unknown-target", "a .target the spec does not know (spellings judged, gates not)"),
    "PX104": ("asm-not-read", "an inline asm statement not read whole (a macro in its template, say): not judged"),
    "PX105": ("newer-isa", "no form of the spec's newest PTX ISA, in a module of a newer .version, which may define "
                           "it (not judged)"),
}
"""Stable codes: tests and users' suppressions refer to them. Add codes; never renumber one."""

DIRECTIVE_GATES = {
    "loc-inlined": ((7, 0), ".loc with function_name/inlined_at (line information of inlined functions)",
                    "ptxas 13.0: \"Feature 'Line information of inline functions' requires PTX ISA .version 7.0 "
                    "or later\""),
}
"""Directive forms and the PTX ISA version they need: (version, what, source). The version is the
one ptxas enforces."""

OPCODE_GATES = {
    "ldmatrix": ((6, 5), 75, "PTX ISA 9.0 ldmatrix: \"Introduced in PTX ISA version 6.5\", \"Requires sm_75 or "
                             "higher\"; ptxas 13.0: \"Feature '.m8n8' requires PTX ISA .version 6.5 or later\""),
    "prefetch": ((2, 0), 20, "PTX ISA 9.1 prefetch: introduced in PTX ISA 2.0, sm_20 (the .L2::evict_* forms PTX ISA "
                             "7.4, sm_80, as CCCL's ptx wrappers annotate them; those finer gates are not checked)"),
    "createpolicy": ((7, 4), 80, "PTX ISA 9.1 createpolicy: PTX ISA 7.4, sm_80; ptxas 13.0: \"Feature "
                                 "'createpolicy.fractional' requires .target sm_80 or higher\" (measured)"),
}
"""Opcodes no family of the spec defines (their spellings are not judged: PX101) whose gates are
still known: (PTX ISA version, sm, source). A module older than the gate is an error (PX004,
PX003), as ptxas refuses it, once per opcode and module. Triton's layout conversions at large
BLOCKs read shared memory with ``ldmatrix``, which the simulator runs; an ``eviction_policy`` on
sm_80 and later makes the cache policy of ``.L2::cache_hint`` with ``createpolicy``."""

UNMODELED_QUALIFIERS = frozenset({
    # state spaces and their sub-spaces (PTX ISA 9.0 §5.1)
    "shared", "shared::cta", "shared::cluster", "const", "tex", "global::cta",
    # cache operators (§9.7.9.8 ld, §9.7.9.9 st) and eviction priorities / cache hints: judged as the
    # hints of spec/ptx/ld.yaml and st.yaml where they apply (global, generic), not modelled elsewhere
    "ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first",
    "L1::evict_last", "L1::no_allocate", "L2::evict_first", "L2::evict_last", "L2::evict_normal",
    "L2::cache_hint", "L2::64B", "L2::128B", "L2::256B", "level::eviction_priority",
    # memory consistency (§8): semantics and scopes
    "volatile", "relaxed", "acquire", "release", "weak", "mmio", "cta", "cluster", "gpu", "sys",
    # carries and extended precision (§9.7.2), packed and wide types the spec does not model
    "cc", "b8", "b128", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "ue8m0x2",
    "tf32", "s16x2", "u16x2", "s8", "u8", "v8", "xorsign", "abs", "oob", "uni",
})
"""Modifiers the PTX ISA defines that the spec's forms do not model: a spelling using one is a
note (PX102), not a typo (PX001)."""


@dataclass(frozen=True)
class PtxFinding:
    """One finding on one instruction (or module): code, severity (``error`` | ``note``), where,
    the spelling, the spec's reason, its ISA section, ptxas's message where the spec records it,
    and the nearest legal spellings."""

    code: str
    severity: str
    location: Location
    spelling: str
    message: str
    section: str | None = None
    ptxas: str | None = None
    nearest: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The code's short name (``target-gate``)."""
        return CODES[self.code][0]

    def __str__(self) -> str:
        text = f"{self.location}: {self.severity}[{self.code}] {self.name}: {self.message}"
        if self.section:
            text += f" [{self.section}]"
        if self.ptxas:
            text += f" (ptxas: {self.ptxas})"
        if self.nearest:
            text += f"; nearest legal: {', '.join(self.nearest)}"
        return text

    def to_json(self) -> dict:
        """The finding as JSON (location as path, line, col)."""
        return {"code": self.code, "name": self.name, "severity": self.severity, "path": self.location.path,
                "line": self.location.line, "col": self.location.column, "spelling": self.spelling,
                "message": self.message, "section": self.section, "ptxas": self.ptxas, "nearest": list(self.nearest)}


@dataclass
class ModuleReport:
    """What :func:`check_module` found: the findings, how many instructions it saw and judged,
    and the opcodes it could not judge (PX101) with their counts."""

    path: str
    target: str | None
    version: str | None
    findings: list[PtxFinding] = field(default_factory=list)
    instructions: int = 0
    judged: int = 0
    not_covered: dict = field(default_factory=dict)

    @property
    def errors(self) -> list[PtxFinding]:
        """The findings that make the module illegal."""
        return [f for f in self.findings if f.severity == "error"]


def _version(text: str | None) -> tuple[int, int] | None:
    try:
        major, minor = (text or "").split(".")
        return int(major), int(minor)
    except ValueError:
        return None


def _family_tokens(db) -> dict:
    """Per family: every modifier and type its forms and recorded illegal spellings use (cached)."""
    tokens = getattr(db, "_family_tokens", None)
    if tokens is None:
        tokens = {}
        for name, family in db.families.items():
            seen = set()
            for spelling in [f.name for f in family.forms] + [i.spelling for i in family.illegal]:
                _, mods, type_ = split_spelling(spelling)
                seen.update(mods)
                seen.add(type_)
            tokens[name] = seen
        db._family_tokens = tokens
    return tokens


def _nearest(db, spelling: str, target) -> tuple[str, ...]:
    """Up to three legal spellings of the same family closest to ``spelling``: fewest tokens added
    or dropped (``cvt.rn.f32.f16`` -> ``cvt.f32.f16``), then the most similar text."""
    opcode, mods, type_ = split_spelling(spelling)
    family = db.families.get(opcode)
    if family is None:
        return ()
    want = set(mods) | {type_}
    scored = []
    for f in family.forms:
        if target is not None and f.target.sm > target.sm:
            continue
        _, fmods, ftype = split_spelling(f.name)
        distance = len(want ^ (set(fmods) | {ftype})) + (0 if ftype == type_ else 1)
        scored.append((distance, -difflib.SequenceMatcher(None, spelling, f.name).ratio(), f.name))
    return tuple(name for _, _, name in sorted(scored)[:3])


def judge_spelling(db, spelling: str, where: Location, target=None, version=None) -> PtxFinding | None:
    """The finding on one instruction spelling (None: legal, or judged by nothing the module
    lacks). ``target`` is a :class:`~tilecheck.spec.database.TargetInfo` or None (no gate
    checked), ``version`` a ``(major, minor)`` tuple or None. In a module newer than the spec's
    newest PTX ISA, what the spec does not define is not judged (PX105), never called illegal."""
    finding = _judge_spelling(db, spelling, where, target, version)
    if finding is not None and finding.code in ("PX001", "PX002") and version is not None and version > db.newest_ptx:
        newest = db.newest_ptx
        return PtxFinding("PX105", "note", where, spelling,
                          f"{spelling}: no form of PTX ISA {newest[0]}.{newest[1]}, the newest the spec records "
                          f"({finding.message.removeprefix(spelling + ': ')}); the module's .version "
                          f"{version[0]}.{version[1]} is newer and may define it: not judged", finding.section,
                          nearest=finding.nearest)
    return finding


def _judge_spelling(db, spelling: str, where: Location, target, version) -> PtxFinding | None:
    opcode, mods, type_ = split_spelling(spelling)
    family = db.families.get(opcode)
    if family is None:
        return PtxFinding("PX101", "note", where, spelling, f"{opcode}: no family of the spec defines it; not judged")
    section = str(family.reference)
    hinted = db.hinted(spelling)
    if hinted is not None:  # performance qualifiers (ld.global.cg): their gates, then the form without them
        base, hints = hinted
        for h in hints:
            names = "".join("." + t for t in split_spelling(spelling)[1] if t in h.tokens)
            if target is not None and target.sm < h.target.sm:
                return PtxFinding("PX003", "error", where, spelling, f"{spelling}: {names} requires sm_{h.target.sm} "
                                                                     f"or newer (target {target.name})", section)
            if version is not None and version < h.target.ptx:
                return PtxFinding("PX004", "error", where, spelling, f"{spelling}: {names} requires PTX ISA "
                                  f"{h.target.ptx_text} or newer (module .version {version[0]}.{version[1]})", section)
        return _judge_spelling(db, base, where, target, version)
    tokens = _family_tokens(db)[opcode]
    foreign = [t for t in (*mods, type_) if t not in tokens]
    if foreign:
        known = db._known_tokens()
        typos = [t for t in foreign if t not in known and t not in UNMODELED_QUALIFIERS]
        if typos:
            text = ", ".join("." + t for t in typos)
            return PtxFinding("PX001", "error", where, spelling,
                              f"{spelling}: no PTX form and no ISA modifier uses {text}", section,
                              nearest=_nearest(db, spelling, target))
        text = ", ".join("." + t for t in foreign)
        return PtxFinding("PX102", "note", where, spelling,
                          f"{spelling}: the spec's {opcode} forms do not model {text}; not judged", section)
    try:
        verdict = db.verdict(spelling, target.name if target is not None else None)
    except UnknownFormError as exc:  # a token of the database's vocabulary the family never combines
        return PtxFinding("PX002", "error", where, spelling, exc.message, section,
                          nearest=_nearest(db, spelling, target))
    if verdict.form is not None and not verdict.legal:
        form = verdict.form
        return PtxFinding("PX003", "error", where, spelling, verdict.reason, str(form.reference),
                          nearest=_nearest(db, spelling, target))
    if verdict.legal:
        form = verdict.form
        lowest = form.target.ptx_for(target.sm if target is not None else None)
        if version is not None and version < lowest:
            need = f"{lowest[0]}.{lowest[1]}"
            return PtxFinding("PX004", "error", where, spelling,
                              f"{form.name} requires PTX ISA {need} or newer (module .version "
                              f"{version[0]}.{version[1]})", str(form.reference))
        return None
    recorded = db._illegal.get(spelling_key(spelling))
    if recorded is not None and recorded.ptxas_accepts:
        return PtxFinding("PX005", "error", where, spelling, f"{spelling}: {recorded.reason}", section,
                          nearest=_nearest(db, spelling, target))
    return PtxFinding("PX002", "error", where, spelling, f"{spelling}: {verdict.reason}", section,
                      ptxas=verdict.ptxas, nearest=_nearest(db, spelling, target))


def _opcode_gate(opcode: str, where: Location, target, version) -> PtxFinding | None:
    """The gate error of an opcode the spec does not define but whose gates are known
    (:data:`OPCODE_GATES`), for a module whose target or version is older; else None."""
    if opcode not in OPCODE_GATES:
        return None
    need, sm, source = OPCODE_GATES[opcode]
    if target is not None and target.sm < sm:
        return PtxFinding("PX003", "error", where, opcode, f"{opcode} requires sm_{sm} or newer (target "
                                                           f"{target.name})", source)
    if version is not None and version < need:
        return PtxFinding("PX004", "error", where, opcode, f"{opcode} requires PTX ISA {need[0]}.{need[1]} or "
                                                           f"newer (module .version {version[0]}.{version[1]})", source)
    return None


def module_target(db, target_text: str | None):
    """The spec's :class:`TargetInfo` of a ``.target`` directive (``sm_90a, debug`` -> sm_90a), or
    None when the directive names none the spec knows."""
    for part in (target_text or "").split(","):
        name = part.strip()
        if name in db.targets:
            return db.targets[name]
    return None


def check_module(instructions, path: str, db, *, target: str | None = None, version: str | None = None,
                 directives=()) -> ModuleReport:
    """Judge a module's instructions: ``(opcode, line, col)`` triples in source order (the command
    layer parses the module). ``target``/``version`` are the module's ``.target``/``.version`` text
    (or the user's overrides); ``directives``: ``(form, line, col)`` of the directive forms
    :data:`DIRECTIVE_GATES` gates, in source order."""
    tinfo = module_target(db, target)
    report = ModuleReport(path, target, version)
    vt = _version(version)
    if tinfo is None and target:
        report.findings.append(PtxFinding("PX103", "note", Location(path), target,
                                          f".target {target}: not a target of the spec; gates not judged"))
    if tinfo is not None and vt is not None and vt < tinfo.min_ptx:
        need = f"{tinfo.min_ptx[0]}.{tinfo.min_ptx[1]}"
        report.findings.append(PtxFinding("PX006", "error", Location(path), version,
                                          f".version {version} is older than {tinfo.name} accepts "
                                          f"(PTX ISA {need} or newer)"))
    gated: set = set()
    for name, line, col in directives:
        need, what, source = DIRECTIVE_GATES[name]
        if vt is not None and vt < need and name not in gated:
            gated.add(name)
            report.findings.append(PtxFinding("PX007", "error", Location(path, line, col), ".loc",
                                              f"{what} requires PTX ISA {need[0]}.{need[1]} or newer (module "
                                              f".version {version})", source))
    seen_not_covered: set = set()
    for opcode_text, line, col in instructions:
        report.instructions += 1
        finding = judge_spelling(db, opcode_text, Location(path, line, col), tinfo, vt)
        if finding is not None and finding.code == "PX101":
            opcode = opcode_text.split(".", 1)[0]
            report.not_covered[opcode] = report.not_covered.get(opcode, 0) + 1
            gate = _opcode_gate(opcode, Location(path, line, col), tinfo, vt)
            if gate is not None and opcode not in gated:
                gated.add(opcode)
                report.findings.append(gate)
            if opcode in seen_not_covered:
                continue
            seen_not_covered.add(opcode)
        if finding is None or finding.severity == "error":
            report.judged += 1
        if finding is not None:
            report.findings.append(finding)
    return report
