"""The PTX emitter on the example and corpus programs: the seed's code-generation rules, versions,
guards, preserved destinations, determinism and errors."""

from __future__ import annotations

from collections import Counter

import pytest

from emit_helpers import CORPUS, EXAMPLES, ROOT, TARGETS, declared_targets, entry_bodies, expected_counts, \
    legal_on, opcode_of
from tilecheck import ptxas
from tilecheck.spec.database import load_database
from tilecheck.emit import emit_program, emit_programs, plan_program
from tilecheck.errors import IllegalTileOpError, ToolNotFoundError, UsageError
from tilecheck.tile.loader import load_programs


def _cases(files):
    """(file, target) pairs on which the file's programs are legal: a file using a gated form (bf16x2
    needs sm_90) is tested on the targets that have it, never skipped."""
    from tilecheck.spec.database import load_database

    db = load_database()
    cases = []
    for path in files:
        programs = load_programs(path)
        cases.extend(pytest.param(path, target, id=f"{path.stem}-{target}") for target in declared_targets(path)
                     if legal_on(programs, target, db))
    return cases


CASES = _cases(EXAMPLES + CORPUS)


def test_program_files_found():
    # guard the guards: a silently empty glob would make the parametrised tests vacuous
    assert len(EXAMPLES) >= 8
    assert len(CORPUS) >= 16


def test_root_ratio_seed_counts(programs_of):
    (program,) = programs_of(ROOT / "examples" / "root_ratio.py")
    ptx = program.emit(target="sm_90")
    # the plain text holds each spelling exactly as often as the instruction (comments never repeat it)
    assert ptx.count("div.rn.f32") == 4 and ptx.count("sqrt.rn.f32") == 4
    (body,) = entry_bodies(ptx).values()
    ops = Counter(opcode_of(line)[1] for line in body)
    assert ops["div.rn.f32"] == 4
    assert ops["sqrt.rn.f32"] == 4
    assert ops["ld.global.f32"] == 4 and ops["st.global.f32"] == 4
    divs = [opcode_of(line)[2] for line in body if opcode_of(line)[1] == "div.rn.f32"]
    # numerator register, then the constant 4.0 as a PTX float literal (never swapped)
    assert all(ops_[2] == "0f40800000" and ops_[0] == ops_[1] for ops_ in divs)
    # registers bound in increasing order, repeats row-major: loads at byte offsets 0, 4, 8, 12
    loads = [opcode_of(line)[2][1] for line in body if opcode_of(line)[1] == "ld.global.f32"]
    assert [a.split("+")[1].rstrip("]") if "+" in a else "0" for a in loads] == ["0", "4", "8", "12"]


def test_cases_cover_every_file_and_target():
    assert len(CASES) >= 3 * len(EXAMPLES) + 2 * len(CORPUS)


@pytest.mark.parametrize("path, target", CASES)
def test_instruction_counts_and_guards(path, target, db, programs_of):
    programs = programs_of(path)
    bodies = entry_bodies(emit_programs(programs, target, db=db))
    for program in programs:
        counts, guarded = expected_counts(program, target, db)
        body = bodies[program.name]
        seen = Counter(opcode_of(line)[1] for line in body)
        for form, n in counts.items():
            assert seen[form] == n, f"{program.name}: {form} emitted {seen[form]} times, the seed's rule gives {n}"
        guarded_seen = sum(1 for line in body if opcode_of(line)[0] and opcode_of(line)[1] in counts)
        assert guarded_seen == guarded


def test_warp_scope_counts_are_per_thread(db, programs_of):
    # scope="warp": one instruction per repeat coordinate, not one per lane
    (program,) = programs_of(ROOT / "examples" / "warp_strided.py")
    (body,) = entry_bodies(program.emit(target="sm_90")).values()
    ops = Counter(opcode_of(line)[1] for line in body)
    assert ops["div.rn.f32"] == 2 and ops["ld.global.v4.f32"] == 1 and ops["st.global.v4.f32"] == 1
    div = [opcode_of(line)[2] for line in body if opcode_of(line)[1] == "div.rn.f32"]
    # constant numerator stays first; gapped registers r[0], r[2] <- 1 / r[1], 1 / r[3]
    assert [d[1] for d in div] == ["0f3F800000", "0f3F800000"]
    vector = [opcode_of(line)[2][0] for line in body if opcode_of(line)[1] == "ld.global.v4.f32"][0]
    regs = vector.strip("{}").split(", ")
    assert [d[0] for d in div] == [regs[0], regs[2]] and [d[2] for d in div] == [regs[1], regs[3]]


def _written(opcode: str, ops: list[str]) -> list[str]:
    """The registers an instruction writes (its first operand, unless it is a store)."""
    if opcode.startswith("st."):
        return []
    first = ops[0] if ops else ""
    return first.strip("{}").split(", ") if first.startswith(("%", "{")) else []


@pytest.mark.parametrize("path", [p for p in EXAMPLES + CORPUS if "preserve_dst=True" in p.read_text()],
                         ids=lambda p: p.stem)
def test_preserved_destinations_are_initialised_first(path, db, programs_of):
    programs = programs_of(path)
    target = declared_targets(path)[-1]
    text = emit_programs(programs, target, db=db)
    checked = 0
    for program in programs:
        lines = text.split(f".entry {program.name}(")[1].split("\n}")[0].splitlines()
        written, preserving = set(), False
        for raw in lines:
            line = raw.strip()
            if line.startswith("//"):
                preserving = "preserve_dst" in line
                continue
            if not line or line.startswith(".") or line.endswith(":") or line in ("{", ")"):
                continue
            guard, opcode, ops = opcode_of(line)
            if guard and preserving and not opcode.startswith("bra"):
                for reg in _written(opcode, ops):
                    assert reg in written, f"{program.name}: {line!r} preserves {reg}, which nothing wrote before"
                    checked += 1
            # an earlier guarded write counts too: the checker accepts it only with a constant-true pred
            # (tests/emit/programs/constant_pred.py), and the sim comparison checks the kept values
            written.update(_written(opcode, ops))
    assert checked > 0


@pytest.mark.parametrize("name, target, version", [
    ("root_ratio", "sm_80", "7.0"), ("root_ratio", "sm_90", "7.8"), ("root_ratio", "sm_100", "8.6"),
    ("packed_f16x2", "sm_80", "7.0"), ("f64_div", "sm_100", "8.6")])
def test_version_is_the_lowest_for_the_target(name, target, version, db, programs_of):
    programs = programs_of(ROOT / "examples" / f"{name}.py")
    text = emit_programs(programs, target, db=db)
    assert f"\n.version {version}\n.target {target}\n.address_size 64\n" in text
    want = max(db.min_version(db.form(c.spelling, target), target) for p in programs for c in p.calls)
    assert version == f"{want[0]}.{want[1]}"


def test_version_raised_by_a_form_gate(db, programs_of):
    # ld/st.global.v4.f64 (256-bit) need PTX ISA 8.8 even on sm_100 (whose own floor is 8.6)
    programs = programs_of(ROOT / "tests" / "emit" / "programs" / "f64_vectors.py")
    assert "\n.version 8.8\n.target sm_100\n" in emit_programs(programs, "sm_100", db=db)


def test_lower_version_is_rejected_by_ptxas(db, programs_of):
    try:
        versions = ptxas.supported_versions()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")
    (program,) = programs_of(ROOT / "examples" / "root_ratio.py")
    for target in TARGETS:
        text = program.emit(target=target)
        version = text.split(".version ")[1].split("\n")[0]
        lower = versions[versions.index(version) - 1]
        assert ptxas.assemble(text, f"compute_{target[3:]}", parse_only=True).ok
        result = ptxas.assemble(text.replace(f".version {version}", f".version {lower}"), f"compute_{target[3:]}",
                                parse_only=True)
        assert not result.ok, f".version {lower} should be too low for {target}"


def test_emission_is_deterministic():
    path = ROOT / "examples" / "predicated_sqrt.py"
    first = emit_programs(load_programs(path), "sm_90", db=load_database())
    second = emit_programs(load_programs(path), "sm_90", db=load_database())
    assert first == second
    assert str(ROOT) not in first and "examples/" not in first  # file names only, never paths


def test_scalar_is_reused(programs_of):
    (program,) = programs_of(ROOT / "examples" / "packed_f16x2.py")
    (body,) = entry_bodies(program.emit(target="sm_90")).values()
    movs = [line for line in body if line.startswith("mov.b32") and "0x3C003C00" in line]
    assert len(movs) == 1  # one register for the packed constant, used by all four add.rn.f16x2
    reg = opcode_of(movs[0])[2][0]
    adds = [opcode_of(line)[2] for line in body if opcode_of(line)[1] == "add.rn.f16x2"]
    assert len(adds) == 4 and all(a[2] == reg for a in adds)


def test_mixed_width_registers_are_packed(programs_of):
    (program,) = programs_of(ROOT / "tests" / "emit" / "programs" / "mixed_widths.py")
    (body,) = entry_bodies(program.emit(target="sm_90")).values()
    fma = [i for i, line in enumerate(body) if "fma.rn.f16x2" in line]
    assert len(fma) == 4
    for i in fma:
        assert body[i - 1].startswith("mov.b32 %r") and ", {%h" in body[i - 1]  # the old value packed first
        assert body[i].startswith("@%p")
        assert body[i + 1].startswith("mov.b32 {%h")  # unpacked unconditionally afterwards


def test_group_scope_addresses_use_lane_and_warp(programs_of):
    (program,) = programs_of(ROOT / "examples" / "cta_vector.py")
    text = program.emit(target="sm_90")
    assert "mul.wide.s32" in text and "mad.wide.s32" in text and ".reqntid 64, 1, 1" in text


def test_several_programs_share_one_module(db, programs_of):
    programs = programs_of(ROOT / "tests" / "programs" / "legal" / "two_programs.py")
    text = emit_programs(programs, "sm_90", db=db)
    assert text.count(".version") == 1 and set(entry_bodies(text)) == {"first", "second"}


def test_illegal_program_raises_with_diagnostics():
    (program,) = load_programs(ROOT / "tests" / "programs" / "illegal" / "tc204_repeat_extent.py")
    with pytest.raises(IllegalTileOpError) as info:
        emit_program(program, "sm_90", db=load_database())
    assert info.value.diagnostics and all(d.code == "TC204" for d in info.value.diagnostics)


def test_gated_form_is_illegal_on_an_older_target(programs_of):
    (program,) = programs_of(ROOT / "tests" / "programs" / "legal" / "f32x2_sm100.py")
    with pytest.raises(IllegalTileOpError) as info:
        program.emit(target="sm_90")
    assert "TC003" in {d.code for d in info.value.diagnostics}


def test_unknown_format_is_a_usage_error(programs_of):
    (program,) = programs_of(ROOT / "examples" / "root_ratio.py")
    with pytest.raises(UsageError, match="format"):
        emit_program(program, "sm_90", format="sass", db=load_database())


def test_plan_binds_the_same_registers_for_every_group(db, programs_of):
    (program,) = programs_of(ROOT / "examples" / "warpgroup_fma.py")
    plan = plan_program(program, "sm_90", db=db)
    fma = [c for c in plan.calls if c.form.name == "fma.rn.f32"][0]
    assert [axis.name for axis in fma.axes] == ["warp_in_group", "lane"]
    assert len(fma.steps) == 2  # per thread: the product of the repeat extents
    # the addend c is one register broadcast over both repeats
    assert fma.steps[0].operands[3].accesses == fma.steps[1].operands[3].accesses


def test_launch_without_device_entry(db, programs_of):
    # scope="warp" without T.device_entry: one warp; the kernel fixes it with .reqntid and says so
    from tilecheck.emit import program_kernel

    (program,) = programs_of(ROOT / "tests" / "emit" / "programs" / "warp_reversed.py")
    assert program.launch is None
    kernel = program_kernel(program, "sm_90", db=db)
    assert (kernel.grid, kernel.block) == ((1,), (32,)) and ".reqntid 32, 1, 1" in kernel.ptx
    (cta,) = programs_of(ROOT / "examples" / "cta_vector.py")
    assert program_kernel(cta, "sm_90", db=db).block == (64,)
