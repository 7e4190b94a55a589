"""The spec database's legality verdicts against ptxas, the external judge.

For every candidate spelling of the arithmetic families (div rcp sqrt rsqrt ex2 add sub mul fma) over {approx, full, rn, rz, rm, rp, none}
x {ftz, none} (x {sat, none} for add/sub/mul/fma) x {f16, bf16, f32, f64, f16x2, bf16x2, f32x2}
on sm_80, sm_90 and sm_100, ``db.verdict(spelling, target).legal`` must equal ptxas's verdict,
except for the spellings the spec records as ``ptxas_accepts`` (ISA-undefined spellings ptxas
assembles anyway): for those ptxas must still accept and the spec must still say illegal. Every
expanded form must assemble at exactly ``.version max(form.target.ptx, target.min_ptx)``, and
every recorded illegal spelling must be rejected with the recorded message. Candidates are
batched (one ptxas run checks a whole grid), so the module runs in a few seconds.
"""

from __future__ import annotations

import itertools
import re

import pytest
from support.inventory import ptx_form_counts

from tilecheck import ptxas
from tilecheck.errors import ToolNotFoundError
from tilecheck.testing import ptxas_grid, surround_grid

pytestmark = pytest.mark.ptxas

TARGETS = ("sm_80", "sm_90", "sm_100")


@pytest.fixture(scope="module", autouse=True)
def _need_ptxas():
    try:
        ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")


@pytest.fixture(scope="module")
def grid(db):
    spellings = ptxas_grid.arithmetic_candidates()
    lines = [ptxas_grid.render(s) for s in spellings]
    return spellings, {t: ptxas.check_instructions(lines, t) for t in TARGETS}


def _target_gate(verdict) -> bool:
    """ptxas rejected only because the target is too old (a lenient spelling of a newer feature)."""
    return not verdict.accepted and "requires .target" in str(verdict.error)


def _lenient(db) -> dict[str, object]:
    return {i.spelling: i for fam in db.families.values() if fam.isa == "ptx" for i in fam.illegal if i.ptxas_accepts}


def _unstable(db) -> dict[str, object]:
    """Recorded spellings on which ptxas's verdict is not reproducible (accepted, or the message)."""
    return {i.spelling: i for fam in db.families.values() if fam.isa == "ptx" for i in fam.illegal if i.ptxas_unstable}


def test_grid_size(grid):
    spellings, verdicts = grid
    assert len(spellings) == 9 * 7 * 2 * 7 + 4 * 7 * 2 * 2 * 7 == 1666
    # ptxas's own counts, pinned so that a ptxas upgrade that changes them is noticed
    assert {t: sum(v.accepted for v in verdicts[t]) for t in TARGETS} == {"sm_80": 225, "sm_90": 241, "sm_100": 279}


def test_grid_verdicts_agree_with_ptxas(db, grid):
    spellings, verdicts = grid
    lenient = _lenient(db)
    disagreements = []
    for target in TARGETS:
        for spelling, judged in zip(spellings, verdicts[target]):
            ours = db.verdict(spelling, target)
            if spelling in lenient:
                if ours.legal or not judged.accepted:
                    disagreements.append(f"{target} {spelling}: recorded as ptxas_accepts, ptxas "
                                         f"{'accepts' if judged.accepted else 'rejects: ' + str(judged.error)}, spec legal={ours.legal}")
                continue
            if ours.legal != judged.accepted:
                disagreements.append(f"{target} {spelling}: spec legal={ours.legal} ({ours.reason}); "
                                     f"ptxas {'accepts' if judged.accepted else 'rejects: ' + str(judged.error)}")
    assert not disagreements, "\n".join(disagreements)


def test_grid_legal_counts(db, grid):
    spellings, verdicts = grid
    lenient = _lenient(db)
    legal = {t: sum(db.verdict(s, t).legal for s in spellings) for t in TARGETS}
    # derived, not pinned: what ptxas accepts, less the spellings recorded as ptxas-lenient
    expected = {t: sum(v.accepted and s not in lenient for s, v in zip(spellings, verdicts[t])) for t in TARGETS}
    assert legal == expected and all(legal.values())


@pytest.fixture(scope="module")
def memory(db):
    """The memory grid (ld/st in every state space of ptxas_grid.SPACES, .nc crossed with each,
    x vector widths x types), each built to a cubin on the three targets in its harness."""
    spellings = ptxas_grid.memory_candidates(ptxas_grid.memory_types(db))
    return spellings, {t: ptxas_grid.judge(spellings, t, build=True) for t in TARGETS}


def test_memory_grid_verdicts_agree_with_ptxas(db, memory):
    """ld/st of global (with and without .nc), param and generic space: the spec's verdict is
    ptxas's on every candidate and target (ptxas_accepts spellings: ptxas accepts them, the spec
    says illegal); each ld/st form of the spec is in the grid."""
    spellings, judged = memory
    lenient, unstable = _lenient(db), _unstable(db)
    disagreements = []
    for target in TARGETS:
        for spelling, verdict in zip(spellings, judged[target]):
            ours = db.verdict(spelling, target)
            if spelling in unstable:
                if ours.legal or not (verdict.accepted or verdict.error == unstable[spelling].ptxas):
                    disagreements.append(f"{target} {spelling}: recorded as ptxas_unstable, ptxas {verdict.error}")
            elif spelling in lenient:
                if ours.legal or not verdict.accepted:
                    disagreements.append(f"{target} {spelling}: recorded as ptxas_accepts, ptxas {verdict.error}")
            elif ours.legal != verdict.accepted:
                disagreements.append(f"{target} {spelling}: spec legal={ours.legal} ({ours.reason}); ptxas "
                                     f"{'accepts' if verdict.accepted else 'rejects: ' + str(verdict.error)}")
    assert not disagreements, "\n".join(disagreements)
    names = {f.name for f in db.ptx_forms() if f.family in ("ld", "st")}
    assert names and names <= set(spellings), sorted(names - set(spellings))
    # the grid holds rejected neighbours of every kind: st.nc, .nc outside .global, 256-bit .param
    rejected = {s for s, v in zip(spellings, judged["sm_100"]) if not v.accepted}
    assert {"st.global.nc.u32", "ld.param.nc.u32", "ld.nc.u32", "ld.param.v8.b32", "st.param.v4.b64"} <= rejected


def test_param_space_harness():
    """The .param harnesses are the ones nvcc's code needs: a kernel reads its parameter, a
    function reads its input and writes its return parameter; ptxas refuses the other uses."""
    kernel_store = ptxas.check_instructions([f"st.param.b32 [{ptxas.PARAM_INPUT}], r1;"], "sm_90",
                                            harness="kernel_param")[0]
    assert kernel_store.error == f"Illegal to write to function input parameter '{ptxas.PARAM_INPUT}'"
    read_return = ptxas.check_instructions([f"ld.param.b32 r1, [{ptxas.PARAM_RETURN}];"], "sm_90",
                                           harness="func_param")[0]
    assert read_return.error == f"Illegal to read function return parameter '{ptxas.PARAM_RETURN}'"
    assert ptxas_grid.render("st.param.v2.f32", "func_param") == f"st.param.v2.f32 [{ptxas.PARAM_RETURN}], {{f1, f2}};"
    assert [v.accepted for v in ptxas_grid.judge(["ld.param.u16", "st.param.f64", "st.param.u32"], "sm_13",
                                                 arch="sm_100")] == [True, False, False]


def test_qualifier_permutations_agree_with_ptxas(db):
    perms, expected = [], []
    for form in db.ptx_forms():
        for order in itertools.permutations(form.modifiers):
            if order != form.modifiers:
                perms.append(".".join((form.opcode, *order, form.type)))
    assert perms  # guard the guard: forms with several qualifiers exist
    lenient = _lenient(db)
    for target in ("sm_100",):
        judged = ptxas_grid.judge(perms, target)
        bad = [f"{p}: spec legal={db.verdict(p, target).legal}, ptxas {v.error or 'accepts'}"
               for p, v in zip(perms, judged) if p not in lenient and db.verdict(p, target).legal != v.accepted]
        assert not bad, "\n".join(bad)
        rejected = sorted(p for p, v in zip(perms, judged) if not v.accepted)
        assert rejected == sorted(["div.ftz.full.f32", "mad.sat.hi.s32",
                                   *(f"cvta.{space}.to.{t}" for space in ("global", "shared", "local", "const", "param")
                                     for t in ("u32", "u64"))])


def _judge_forms(forms, target: str, version: str) -> list:
    """ptxas's verdicts on forms, in order: memory forms (ld/st) built to a cubin -- ptxas 13.0
    parses ld.global.v8.b16 and then segfaults generating code -- in the function each needs (a
    ``.param`` access names a kernel or function parameter), the others parsed."""
    memory = [f for f in forms if f.opcode in ("ld", "st")]
    other = [f for f in forms if f.opcode not in ("ld", "st")]
    verdicts = dict(zip((f.name for f in memory),
                        ptxas_grid.judge([f.name for f in memory], target, version, build=True)))
    verdicts.update(zip((f.name for f in other),
                        ptxas.check_instructions([ptxas.form_instruction(f) for f in other], target, version)))
    return [verdicts[f.name] for f in forms]


def test_every_form_assembles_at_its_minimum_version(db):
    versions = ptxas.ptxas_version()
    assert versions.startswith("13."), f"these expectations were measured with ptxas 13.0, found {versions}"
    all_versions = [tuple(int(p) for p in v.split(".")) for v in ptxas.supported_versions()]
    failures = []
    checked = 0
    for target in TARGETS:
        tinfo = db.target(target)
        batches: dict[tuple[int, int], list] = {}
        for form in db.ptx_forms():
            if db.verdict(form.name, target).legal:
                batches.setdefault(db.min_version(form, target), []).append(form)
        for version, forms in sorted(batches.items()):
            text = f"{version[0]}.{version[1]}"
            judged = _judge_forms(forms, target, text)
            failures += [f"{target} .version {text} {f.name}: {v.error}" for f, v in zip(forms, judged) if not v.accepted]
            checked += len(forms)
            if version > tinfo.min_ptx:
                # exactly: the ISA version below must be rejected (the gate is not too high)
                below = all_versions[all_versions.index(version) - 1]
                text = f"{below[0]}.{below[1]}"
                judged = _judge_forms(forms, target, text)
                failures += [f"{target} .version {text} {f.name}: accepted below its gate"
                             for f, v in zip(forms, judged) if v.accepted]
    assert not failures, "\n".join(failures)
    # derived from the YAML, not pinned: every form is legal on the newest target of the three
    assert checked > sum(ptx_form_counts().values()) and sum(
        db.verdict(f.name, "sm_100").legal for f in db.ptx_forms()) == sum(ptx_form_counts().values())


def test_recorded_illegal_spellings_are_rejected_with_the_recorded_message(db):
    """Illegal on every target; the recorded message is sm_100's (an older target may first
    report the gate of the type, e.g. "Feature 'add.f32x2' requires .target sm_100 or higher")."""
    illegal = [i for fam in db.families.values() if fam.isa == "ptx" for i in fam.illegal]
    problems = []
    for target in TARGETS:
        # built to a cubin: "accepted" means ptxas generates code for it, and a crash is recorded
        # as its message (ld.global.v8.b16 parses but segfaults ptxas 13.0 generating code)
        for ill, judged in zip(illegal, ptxas_grid.judge([i.spelling for i in illegal], target, build=True)):
            if ill.ptxas_unstable:  # either outcome of the same module, and no other
                if not (judged.accepted or judged.error == ill.ptxas):
                    problems.append(f"{target} {ill.spelling}: recorded as unstable ({ill.ptxas!r}), ptxas says "
                                    f"{judged.error!r}")
            elif ill.ptxas_accepts:
                if not (judged.accepted or _target_gate(judged)):
                    problems.append(f"{target} {ill.spelling}: recorded as accepted, ptxas says {judged.error}")
            elif judged.accepted:
                problems.append(f"{target} {ill.spelling}: recorded as illegal, ptxas accepts it")
            elif target == "sm_100" and judged.error != ill.ptxas:
                problems.append(f"{target} {ill.spelling}: recorded {ill.ptxas!r}, ptxas says {judged.error!r}")
    assert not problems, "\n".join(problems)


# ptxas 13.0 accepts .target sm_70 from .version 5.1, below the 6.0 of the PTX ISA release notes
# that spec/targets/ptx.yaml records (the safe choice for an emitter); pinned so a change shows.
PTXAS_FLOOR_BELOW_TABLE = {"sm_70": "5.1"}


def test_target_table_floors(db):
    """spec/targets/ptx.yaml: ptxas accepts each min_ptx, and (but for the pinned exception)
    rejects the .version just below it."""
    versions = ptxas.supported_versions()
    wrong = []
    for name, tinfo in db.targets.items():
        floor = f"{tinfo.min_ptx[0]}.{tinfo.min_ptx[1]}"
        arch = name if tinfo.sm >= 75 else "sm_100"  # ptxas 13 generates nothing older than sm_75
        error = ptxas.header_error(name, floor, arch=arch)
        if error is not None:
            wrong.append(f"{name}: .version {floor} rejected: {error}")
        measured = next(v for v in versions if ptxas.header_error(name, v, arch=arch) is None)
        if measured != PTXAS_FLOOR_BELOW_TABLE.get(name, floor):
            wrong.append(f"{name}: ptxas accepts .version {measured} and up, the table says {floor}")
    assert not wrong, "\n".join(wrong)


def test_arch_and_family_specific_targets(db):
    """sm_90a, sm_100a, sm_100f, ...: every target ptxas 13.0 lists (--gpu-name) is known; each
    variant's forms (its base target's) assemble for it at the emitter's .version (memory forms
    built to a cubin), and an emitted kernel names it in .target and builds."""
    from tilecheck.emit import single_instruction_kernel

    listed = ptxas._run([ptxas.find_ptxas(), "--help"], 30).stdout
    names = set(re.findall(r"'(sm_\d+[af]?)'", listed))
    assert names and names - {"sm_87", "sm_88"} <= set(db.targets), sorted(names - set(db.targets))
    failures = []
    for tinfo in (t for t in db.targets.values() if t.variant):
        forms = [f for f in db.ptx_forms() if db.verdict(f.name, tinfo.name).legal]
        batches: dict[tuple[int, int], list] = {}
        for form in forms:
            batches.setdefault(db.min_version(form, tinfo.name), []).append(form)
        for version, group in sorted(batches.items()):
            text = f"{version[0]}.{version[1]}"
            judged = _judge_forms(group, tinfo.name, text)
            failures += [f"{tinfo.name} .version {text} {f.name}: {v.error}" for f, v in zip(group, judged) if not v.accepted]
    assert not failures, "\n".join(failures)
    kernel = single_instruction_kernel(db.form("div.rn.f32"), "sm_90a", db=db)
    assert ".target sm_90a" in kernel.ptx and ptxas.assemble(kernel.ptx, "sm_90a").ok


# ---- the instructions around the arithmetic (cvt, setp, selp, mov, abs, neg, min, max, ...) -----------

# ptxas 13.0's accepted counts per family grid (tilecheck/testing/surround_grid.py), pinned so that a
# ptxas upgrade that changes them is noticed; sm_80 / sm_90 / sm_100
SURROUND_ACCEPTED = {
    "mov": (12, 12, 12), "cvt": (729, 806, 806), "setp": (608, 720, 720), "selp": (11, 11, 11),
    "abs": (12, 12, 12), "neg": (12, 12, 12), "min": (23, 24, 24), "max": (23, 24, 24), "copysign": (2, 2, 2),
    "testp": (12, 12, 12), "and": (4, 4, 4), "or": (4, 4, 4), "xor": (4, 4, 4), "not": (4, 4, 4),
    "cnot": (3, 3, 3), "shl": (3, 3, 3), "shr": (9, 9, 9), "add": (7, 7, 7), "sub": (7, 7, 7),
    "mul": (16, 16, 16), "mad": (17, 17, 17), "div": (6, 6, 6), "rem": (6, 6, 6), "cvta": (20, 20, 20),
    "prmt": (1, 1, 1),
}


@pytest.fixture(scope="module")
def surround(db):
    """family -> (candidate spellings, {target: ptxas verdicts}), one ptxas run per target."""
    spellings = [s for fam in surround_grid.FAMILIES for s in surround_grid.candidates(fam)]
    lines = [surround_grid.render(s) for s in spellings]
    judged = {t: ptxas.check_instructions(lines, t) for t in TARGETS}
    return spellings, judged


def test_surround_grid_counts(surround):
    spellings, judged = surround
    counts = {}
    for target_index, target in enumerate(TARGETS):
        for s, v in zip(spellings, judged[target]):
            fam = s.split(".")[0]
            counts.setdefault(fam, [0, 0, 0])[target_index] += v.accepted
    assert {f: tuple(c) for f, c in counts.items()} == SURROUND_ACCEPTED


def test_surround_verdicts_agree_with_ptxas(db, surround):
    """Every candidate of every surround family: the spec's verdict is ptxas's, on three targets
    (ptxas_accepts spellings: ptxas accepts, the spec says illegal)."""
    spellings, judged = surround
    lenient = _lenient(db)
    disagreements = []
    for target in TARGETS:
        for spelling, verdict in zip(spellings, judged[target]):
            ours = db.verdict(spelling, target)
            if spelling in lenient:
                if ours.legal or not (verdict.accepted or _target_gate(verdict)):
                    disagreements.append(f"{target} {spelling}: recorded as ptxas_accepts, ptxas "
                                         f"{'accepts' if verdict.accepted else verdict.error}")
                continue
            if ours.legal != verdict.accepted:
                disagreements.append(f"{target} {spelling}: spec legal={ours.legal} ({ours.reason}); ptxas "
                                     f"{'accepts' if verdict.accepted else 'rejects: ' + str(verdict.error)}")
    assert not disagreements, "\n".join(disagreements[:50]) + f"\n({len(disagreements)} in all)"
