#!/usr/bin/env python3
"""Ask ptxas for the ground truth behind spec/ptx/*.yaml and print it as tables.

Run from the repository root: ``python3 tools/probe_ptxas.py`` (``--rows all`` prints every
candidate of the grid, not only the legal ones; ``--section`` picks sections). Sections:

grid      div/rcp/sqrt/rsqrt/add/sub/mul/fma x {approx, full, rn, rz, rm, rp, none} x {ftz, none}
          (x {sat, none} for add/sub/mul/fma) x {f16, bf16, f32, f64, f16x2, bf16x2, f32x2} on
          sm_80, sm_90, sm_100 at .version 9.0; ptxas's verdict and message per target, the spec's
          verdict next to it (when the spec database loads), rejection messages counted.
order     every qualifier permutation of every spelling legal on sm_100; the ones ptxas rejects.
memory    ld/st in the global (with and without .nc), param and generic state spaces (and .nc on
          each) x {"", .v2, .v4, .v8} x the register types, on the three targets, each parsed
          (-arch=compute_XX) and built to a cubin (-arch=sm_XX): ptxas 13.0 parses
          ld.global.v8.b16 and then segfaults generating code, which only a build shows. A .param
          load is judged in a kernel and in a function, a .param store in a function writing its
          return parameter (tilecheck/testing/ptxas_grid.py: harnesses).
versions  for every legal spelling, the lowest .version ptxas accepts with .target sm_80, sm_90
          and sm_100 (each target's own floor first), and the gates ptxas enforces on old targets:
          the lowest .target (sm_10 ... sm_100, at .version 9.0) and the lowest .version on it.
lenient   what ptxas makes of the ISA-undefined spellings it accepts: cubins compared with the
          documented neighbour, and SASS when nvdisasm is available (PATH or TILECHECK_NVDISASM).
surround  the function families (cvt, setp, selp, mov, abs, neg, min, max, copysign, testp, logic,
          shifts, integer add/sub/mul/mad, cvta) over tilecheck/testing/surround_grid.py's candidates
          on the three targets: accepted counts, disagreements with the spec, and for every spelling
          legal on sm_100 the lowest .target and .version ptxas accepts (--rows all prints them).

Everything runs through tilecheck.ptxas (batched: one ptxas process judges a whole grid).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tilecheck import ptxas  # noqa: E402  (after the path fix so a checkout works uninstalled)
from tilecheck.errors import SpecError  # noqa: E402
from tilecheck.spec.types import PTX_TYPES  # noqa: E402
from tilecheck.testing import ptxas_grid  # noqa: E402
from tilecheck.testing.ptxas_grid import ARITY, arithmetic_candidates, memory_candidates  # noqa: E402

TARGETS = ("sm_80", "sm_90", "sm_100")
OLD_TARGETS = ("sm_10", "sm_13", "sm_20", "sm_30", "sm_50", "sm_53", "sm_60", "sm_70", "sm_75",
               "sm_80", "sm_86", "sm_89", "sm_90", "sm_100")


# ---- candidates ---------------------------------------------------------------------------


def judge(spellings: list[str], target: str, version: str = "9.0", arch: str | None = None,
          build: bool = False) -> dict:
    """spelling -> InstructionVerdict for one module configuration (``build``: generate a cubin,
    not only parse; a spelling ptxas crashes on is then not accepted and marked ``crashed``)."""
    verdicts = ptxas_grid.judge(spellings, target, version, arch=arch, build=build)
    return dict(zip(spellings, verdicts))


def load_spec():
    """The spec database, or None (with a note) when it does not load."""
    from tilecheck.spec.database import load_database

    try:
        return load_database()
    except SpecError as exc:
        print(f"(spec database does not load, spec columns omitted: {exc.problems[0]})")
        return None


def table(rows: list[list[str]], header: list[str]) -> None:
    """Print a plain fixed-width table."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


# ---- sections -------------------------------------------------------------------------------


def section_grid(db, rows_mode: str) -> dict:
    spellings = arithmetic_candidates()
    results = {t: judge(spellings, t) for t in TARGETS}
    print(f"\n== grid: {len(spellings)} candidates x {len(TARGETS)} targets at .version 9.0 ==")
    rows, disagreements = [], []
    lenient = _lenient(db)
    for s in spellings:
        marks = ["yes" if results[t][s].accepted else "-" for t in TARGETS]
        spec = ""
        if db is not None:
            verdicts = [db.verdict(s, t).legal for t in TARGETS]
            spec = " ".join("yes" if v else "-" for v in verdicts)
            for t, v in zip(TARGETS, verdicts):
                if v != results[t][s].accepted:
                    disagreements.append((t, s, "spec records ptxas_accepts" if s in lenient else ""))
        message = results["sm_100"][s].error or ""
        if rows_mode == "all" or (rows_mode == "legal" and any(m == "yes" for m in marks)):
            rows.append([s, *marks, spec, message])
    if rows:
        table(rows, ["spelling", *TARGETS, "spec (80 90 100)", "ptxas message on sm_100"])
    print("\nlegal per target: " + ", ".join(f"{t} {sum(v.accepted for v in results[t].values())}" for t in TARGETS))
    counts = collections.Counter(v.error for t in TARGETS for v in results[t].values() if not v.accepted)
    print("rejections by message (all targets):")
    for message, n in counts.most_common():
        print(f"  {n:5d}  {message}")
    if db is not None:
        print(f"spec vs ptxas disagreements: {len(disagreements)}")
        for t, s, why in disagreements:
            print(f"  {t} {s}: spec {'legal' if db.verdict(s, t).legal else 'illegal'}, "
                  f"ptxas {'accepts' if results[t][s].accepted else 'rejects'} {why}")
    return results


def _lenient(db) -> set[str]:
    if db is None:
        return set()
    return {i.spelling for fam in db.families.values() for i in fam.illegal if i.ptxas_accepts}


def section_order(results: dict) -> None:
    legal = [s for s, v in results["sm_100"].items() if v.accepted]
    perms = []
    for s in legal:
        tokens = s.split(".")
        for order in itertools.permutations(tokens[1:-1]):
            if list(order) != tokens[1:-1]:
                perms.append(".".join((tokens[0], *order, tokens[-1])))
    verdicts = judge(perms, "sm_100")
    rejected = [(s, v.error) for s, v in verdicts.items() if not v.accepted]
    print(f"\n== qualifier order: {len(perms)} permutations of the {len(legal)} spellings legal on sm_100; "
          f"{len(perms) - len(rejected)} accepted ==")
    for s, message in rejected:
        print(f"  rejected: {s}: {message}")
    extra = ["div.rn.f32.ftz", "add.f32.rn", "div.rn.rn.f32", "div.rn.rz.f32", "add.ftz.ftz.f32", "div.RN.f32"]
    print("  non-canonical spellings outside the grid (type token not last, repeats, case):")
    for s, v in zip(extra, ptxas.check_instructions(
            [ptxas.candidate_instruction(s, "f32", ARITY[s.split(".")[0]]) for s in extra], "sm_100")):
        print(f"    {s}: {'accepted' if v.accepted else v.error}")


def section_memory(db) -> list[str]:
    """Memory forms judged by parsing AND by building a cubin: ptxas 13.0 parses some spellings
    (ld.global.v8.b16) that it then crashes on when generating code."""
    spellings = memory_candidates(ptxas_grid.memory_types(db))
    parsed = {t: judge(spellings, t) for t in TARGETS}
    built = {t: judge(spellings, t, build=True) for t in TARGETS}
    print(f"\n== ld/st (global, global.nc, param, generic): {len(spellings)} candidates (parse / build) ==")
    rows = []

    def mark(t, s):
        p, b = parsed[t][s], built[t][s]
        return f"{'yes' if p.accepted else '-'}/{'CRASH' if b.crashed else 'yes' if b.accepted else '-'}"

    for s in spellings:
        marks = [mark(t, s) for t in TARGETS]
        spec = " ".join("yes" if db.verdict(s, t).legal else "-" for t in TARGETS) if db is not None else ""
        rows.append([s, *marks, spec, built["sm_100"][s].error or parsed["sm_100"][s].error or ""])
    table(rows, ["spelling", *TARGETS, "spec (80 90 100)", "ptxas message on sm_100"])
    crashed = [f"{s} ({t})" for t in TARGETS for s in spellings if built[t][s].crashed]
    if crashed:
        print("ptxas parses but crashes generating code for: " + ", ".join(crashed))
    if db is not None:
        # a crash that depends on the run: each spelling recorded ptxas_unstable built alone, 3 times a target
        unstable = [i.spelling for fam in db.families.values() if fam.isa == "ptx" for i in fam.illegal
                    if i.ptxas_unstable and i.spelling in spellings]
        print(f"\n== built alone, {UNSTABLE_RUNS} times on each target: builds that crashed, of all ==")
        for s in unstable:
            runs = [judge([s], t, build=True)[s] for t in TARGETS for _ in range(UNSTABLE_RUNS)]
            print(f"  {s}: {sum(r.crashed for r in runs)} of {len(runs)}")
    return [s for s in spellings if built["sm_100"][s].accepted]


UNSTABLE_RUNS = 3


_FLOORS: dict[str, str] = {}


def _target_floor(target: str, versions: list[str]) -> str:
    """The lowest .version ptxas accepts for .target (memoised: it is asked once per row)."""
    if target not in _FLOORS:
        _FLOORS[target] = next(v for v in versions if ptxas.header_error(target, v, arch="sm_100") is None)
    return _FLOORS[target]


def _lowest_version(spellings: list[str], target: str, versions: list[str]) -> dict[str, str | None]:
    """spelling -> lowest .version accepted with .target target (None: never)."""
    floor = _target_floor(target, versions)
    pending = list(spellings)
    found: dict[str, str | None] = {s: None for s in spellings}
    for v in versions[versions.index(floor):]:
        usable = [s for s in pending if not (s.split(".")[0] in ("ld", "st") and ptxas.version_tuple(v) < (2, 3))]
        if not usable:
            continue
        for s, verdict in judge(usable, target, v, arch="sm_100").items():
            if verdict.accepted:
                found[s] = v
        pending = [s for s in pending if found[s] is None]
        if not pending:
            break
    return found


def section_versions(db, legal: list[str]) -> None:
    versions = ptxas.supported_versions()
    print(f"\n== versions: {len(legal)} legal spellings; ptxas accepts .version {versions[0]} .. {versions[-1]} ==")
    per_target = {}
    for t in TARGETS:
        per_target[t] = _lowest_version(legal, t, versions)
        print(f"  .target {t}: floor .version {_target_floor(t, versions)}")
    # gates on old targets: lowest target at .version 9.0, then the lowest version there
    accepted_on = {t: judge(legal, t, "9.0", arch="sm_100") for t in OLD_TARGETS}
    lowest_target = {}
    for s in legal:
        candidates = [t for t in OLD_TARGETS if accepted_on[t][s].accepted]
        if s.split(".")[-1] == "f64" and candidates and candidates[0] == "sm_10":
            # ptxas applies the implicit .target map_f64_to_f32 on sm_10 (ISA: "requires sm_13 or
            # higher, or .target map_f64_to_f32"), so sm_10 says nothing about the f64 gate
            candidates = candidates[1:]
        lowest_target[s] = candidates[0] if candidates else None
    by_target = collections.defaultdict(list)
    for s, t in lowest_target.items():
        if t is not None:
            by_target[t].append(s)
    lowest_version = {}
    for t, group in by_target.items():
        lowest_version.update(_lowest_version(group, t, versions))
    rows = []
    mismatches = 0
    for s in legal:
        t = lowest_target[s]
        floor = _target_floor(t, versions) if t else ""
        row = [s, *(per_target[x][s] or "never" for x in TARGETS), t or "none", lowest_version.get(s) or "never",
               "(target floor)" if lowest_version.get(s) == floor else ""]
        form = db.resolve(s) if db is not None else None
        if form is not None:
            verdict = _gate_agreement(form, t, lowest_version.get(s), floor)
            row += [f"sm_{form.target.sm} ISA {form.target.ptx_text}", verdict]
            mismatches += verdict != "ok"
        else:
            row += ["", "not a spec form" if db is not None else ""]
        rows.append(row)
    table(rows, ["spelling", *[f"min .version {t}" for t in TARGETS], "lowest .target", "its min .version", "",
                 "spec gate", "agree"])
    if db is not None:
        print(f"gate disagreements between the spec and ptxas: {mismatches}")


def _gate_agreement(form, lowest_target, lowest_version, floor) -> str:
    """Compare the spec's gate with ptxas's measurements for one form."""
    notes = []
    sm = int(lowest_target[3:]) if lowest_target else None
    # the spec's sm must be the lowest accepting target, modulo targets tilecheck does not list
    listed = [int(t[3:]) for t in OLD_TARGETS]
    expected_target = min(x for x in listed if x >= form.target.sm)
    if sm != expected_target:
        notes.append(f"ptxas lowest target sm_{sm}")
    isa = form.target.ptx
    floor_t = tuple(int(p) for p in floor.split(".")) if floor else (0, 0)
    if lowest_version is not None:
        measured = tuple(int(p) for p in lowest_version.split("."))
        if measured != max(isa, floor_t) and not (measured == (2, 3) and form.family in ("ld", "st")):
            notes.append(f"ptxas min .version {lowest_version} vs max(ISA {form.target.ptx_text}, floor {floor})")
    return "ok" if not notes else "; ".join(notes)


def _kernel(instruction: str, register: str, count: int, target: str) -> str:
    """A kernel that loads ``count`` operands, runs the instruction and stores the result."""
    step = {"b16": 2, "b32": 4, "b64": 8, "f32": 4, "f64": 8}[register]
    loads = "\n".join(f"ld.global.{register if register.startswith('b') else register} "
                      f"{ptxas.operand_text(register, i)}, [rd14+{(i - 1) * step}];" for i in range(2, count + 2))
    return "\n".join([
        ".version 9.0", f".target {target}", ".address_size 64", ".visible .entry k(.param .u64 p)", "{",
        *ptxas.DECLARATIONS, "ld.param.u64 rd14, [p];", loads, instruction,
        f"st.global.{register} [rd14], {ptxas.operand_text(register, 1)};", "ret;", "}", ""])


def section_lenient() -> None:
    print("\n== lenient: ISA-undefined spellings ptxas accepts, compiled (sm_80, sm_90, sm_100) ==")
    pairs = [(f"rcp.{r}.ftz.f64", f"rcp.{r}.f64", "f64", 1) for r in ("rn", "rz", "rm", "rp")]
    pairs += [(f"fma.{r}.{t}", f"fma.rn.{t}", PTX_TYPES[t].register, 3) for t in ("bf16", "bf16x2") for r in ("rz", "rm", "rp")]
    pairs += [("st.global.v8.b16", "st.global.v4.b32", None, 0)]  # ld.global.v8.b16 crashes ptxas: see memory
    disasm = os.environ.get("TILECHECK_NVDISASM") or shutil.which("nvdisasm")
    rows = []
    for odd, documented, register, count in pairs:
        if register is None:
            rows.append([odd, documented, "(memory: not compiled here)"])
            continue
        same = []
        for target in TARGETS:
            a = ptxas.assemble(_kernel(ptxas.candidate_instruction(odd, register, count), register, count, target), target)
            b = ptxas.assemble(_kernel(ptxas.candidate_instruction(documented, register, count), register, count, target), target)
            if not (a.ok and b.ok):
                same.append(f"{target}: assembly failed ({(a.errors or b.errors)[0].text})")
                continue
            text = "identical cubin" if a.cubin == b.cubin else "different cubin"
            if disasm:
                sass = _sass(disasm, a.cubin)
                # long software sequences (f64 rcp) say nothing at a glance: count them
                text += ": " + ("; ".join(sass) if len(sass) <= 8 else f"{len(sass)}-instruction sequence")
            same.append(f"{target}: {text}")
        rows.append([odd, documented, " | ".join(same)])
    table(rows, ["spelling", "compared with", "result"])
    if not disasm:
        print("(nvdisasm not found: set TILECHECK_NVDISASM or pip install nvidia-cuda-nvdisasm for SASS)")


def section_surround(db, rows_mode: str) -> None:
    from tilecheck.testing import surround_grid

    versions = ptxas.supported_versions()
    for family in surround_grid.FAMILIES:
        spellings = surround_grid.candidates(family)
        lines = {s: surround_grid.render(s) for s in spellings}

        def run(group, target, version="9.0", arch=None):
            verdicts = ptxas.check_instructions([lines[s] for s in group], target, version, arch=arch)
            return dict(zip(group, verdicts))

        results = {t: run(spellings, t) for t in TARGETS}
        counts = [sum(v.accepted for v in results[t].values()) for t in TARGETS]
        print(f"\n== surround {family}: {len(spellings)} candidates; ptxas accepts "
              + ", ".join(f"{n} on {t}" for n, t in zip(counts, TARGETS)) + " ==")
        lenient = _lenient(db) if db is not None else set()
        bad = []
        for t in TARGETS:
            for s, v in results[t].items():
                if db is not None and s not in lenient and db.verdict(s, t).legal != v.accepted:
                    bad.append(f"  {t} {s}: spec legal={db.verdict(s, t).legal}, ptxas {v.error or 'accepts'}")
        print("\n".join(bad) if bad else "  spec agrees with ptxas on every candidate")
        if rows_mode != "all":
            continue
        legal = [s for s in spellings if results["sm_100"][s].accepted]
        accepted_on = {t: run(legal, t, "9.0", arch="sm_100") for t in OLD_TARGETS}
        rows = []
        for s in legal:
            cands = [t for t in OLD_TARGETS if accepted_on[t][s].accepted]
            if "f64" in s.split(".") and cands and cands[0] == "sm_10":
                cands = cands[1:]  # implicit map_f64_to_f32 on sm_10 (see section_versions)
            lowest = cands[0] if cands else None
            floor = _target_floor(lowest, versions) if lowest else None
            found = None
            if lowest:
                for v in versions[versions.index(floor):]:
                    if run([s], lowest, v, arch="sm_100")[s].accepted:
                        found = v
                        break
            rows.append([s, lowest or "none", found or "never"])
        table(rows, ["spelling", "lowest .target", "its min .version"])


def _sass(disasm: str, cubin: bytes) -> list[str]:
    """The arithmetic SASS of a cubin (loads, stores and control flow left out)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "k.cubin")
        path.write_bytes(cubin)
        out = subprocess.run([disasm, "-c", str(path)], capture_output=True, text=True, check=True).stdout
    keep = []
    for line in out.splitlines():
        if "/*0" not in line:
            continue
        ins = line.split("*/", 1)[1].strip().rstrip(";").strip()
        if not ins.startswith(("LD", "ST", "EXIT", "BRA", "NOP", "MOV", "ULDC", "IMAD.MOV")):
            keep.append(ins)
    return keep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", choices=("legal", "all", "none"), default="legal",
                        help="grid rows to print (default: the spellings legal on some target)")
    parser.add_argument("--section", action="append",
                        choices=("grid", "order", "memory", "versions", "lenient", "surround"),
                        help="run only these sections (repeatable; default: all)")
    args = parser.parse_args(argv)
    sections = args.section or ["grid", "order", "memory", "versions", "lenient", "surround"]
    start = time.time()
    print(f"ptxas {ptxas.find_ptxas()} (CUDA {ptxas.ptxas_version()})")
    db = load_spec()
    results = section_grid(db, args.rows) if {"grid", "order", "versions"} & set(sections) else None
    if "order" in sections:
        section_order(results)
    legal_memory = section_memory(db) if {"memory", "versions"} & set(sections) else []
    if "versions" in sections:
        legal = [s for s in arithmetic_candidates() if any(results[t][s].accepted for t in TARGETS)]
        section_versions(db, legal + legal_memory)
    if "lenient" in sections:
        section_lenient()
    if "surround" in sections:
        section_surround(db, args.rows)
    print(f"\n({time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
