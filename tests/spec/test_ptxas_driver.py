"""tilecheck.ptxas: finding the assembler, parsing its messages, batching candidates."""

from __future__ import annotations

import stat

import pytest

from tilecheck import ptxas
from tilecheck.errors import TilecheckError, ToolNotFoundError

SAMPLE = """ptxas /tmp/x/input.ptx, line 8; error   : Rounding modifier or '.approx' modifier required for instruction 'div'
ptxas /tmp/x/input.ptx, line 10; warning : Feature 'x' is deprecated
ptxas <macro util>, line 2; error   : PTX .version 8.0 does not support .target sm_100
ptxas fatal   : Ptx assembly aborted due to errors
not a diagnostic line
"""


def test_parse_messages():
    got = ptxas.parse_messages(SAMPLE)
    assert [(m.line, m.severity, m.text) for m in got] == [
        (8, "error", "Rounding modifier or '.approx' modifier required for instruction 'div'"),
        (10, "warning", "Feature 'x' is deprecated"),
        (2, "error", "PTX .version 8.0 does not support .target sm_100"),
        (None, "fatal", "Ptx assembly aborted due to errors"),
    ]
    assert [m.file for m in got] == ["/tmp/x/input.ptx", "/tmp/x/input.ptx", "<macro util>", None]


def _fake_tool(path):
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_env_override_wins(tmp_path, monkeypatch):
    tool = _fake_tool(tmp_path / "my-ptxas")
    monkeypatch.setenv("TILECHECK_PTXAS", str(tool))
    assert ptxas.find_ptxas() == str(tool)


def test_env_override_must_be_executable(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECHECK_PTXAS", str(tmp_path / "missing"))
    with pytest.raises(ToolNotFoundError, match="TILECHECK_PTXAS"):
        ptxas.find_ptxas()


def test_wheel_layout_is_found_without_path(tmp_path, monkeypatch):
    bindir = tmp_path / "site" / "nvidia" / "cu13" / "bin"
    bindir.mkdir(parents=True)
    tool = _fake_tool(bindir / "ptxas")
    monkeypatch.delenv("TILECHECK_PTXAS", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert ptxas.find_ptxas() == str(tool)


def test_pinned_wheel_wins_over_path_and_loses_to_the_override(tmp_path, monkeypatch):
    bindir = tmp_path / "site" / "nvidia" / "cu13" / "bin"
    bindir.mkdir(parents=True)
    wheel = _fake_tool(bindir / "ptxas")
    on_path = tmp_path / "path"
    on_path.mkdir()
    _fake_tool(on_path / "ptxas")
    monkeypatch.delenv("TILECHECK_PTXAS", raising=False)
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert ptxas.find_ptxas() == str(wheel)
    override = _fake_tool(tmp_path / "chosen-ptxas")
    monkeypatch.setenv("TILECHECK_PTXAS", str(override))
    assert ptxas.find_ptxas() == str(override)


def test_ptxas_info_names_version_path_and_source(tmp_path, monkeypatch):
    tool = tmp_path / "ptxas"
    tool.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.5, V13.5.37'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TILECHECK_PTXAS", str(tool))
    info = ptxas.ptxas_info()
    assert info == {"version": "13.5.37", "path": str(tool), "source": "TILECHECK_PTXAS", "spec_release": False}
    assert ptxas.describe(info).endswith(f"the spec records ptxas {ptxas.SPEC_PTXAS}")


def test_missing_ptxas_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("TILECHECK_PTXAS", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(ptxas, "_wheel_ptxas", lambda: None)
    with pytest.raises(ToolNotFoundError, match="nvidia-cuda-nvcc"):
        ptxas.find_ptxas()


def test_module_text_line_numbers():
    for version in ("1.4", "9.0"):
        text = ptxas.module_text(["add.rn.f32 f1, f2, f3;"], "sm_90", version)
        lines = text.splitlines()
        assert lines[ptxas.body_first_line(version) - 1] == "add.rn.f32 f1, f2, f3;"
        assert (".address_size 64" in lines) == (version == "9.0")


def test_candidate_rendering():
    assert ptxas.candidate_instruction("fma.rn.f32", "f32", 3) == "fma.rn.f32 f1, f2, f3, f4;"
    assert ptxas.candidate_instruction("ld.global.v2.f64", "f64", vector=2, memory="load") == \
        "ld.global.v2.f64 {fd1, fd2}, [rd15];"
    assert ptxas.candidate_instruction("st.global.b16", "b16", memory="store") == "st.global.b16 [rd15], h1;"
    with pytest.raises(TilecheckError):
        ptxas.candidate_instruction("x.f32", "f32", memory="copy")


@pytest.fixture
def real_ptxas():
    try:
        return ptxas.find_ptxas()
    except ToolNotFoundError as exc:
        pytest.skip(f"ptxas not available: {exc}")


@pytest.mark.ptxas
def test_assemble_generates_code_or_only_parses(real_ptxas):
    text = ptxas.module_text(["div.rn.f32 f1, f2, f3;"], "sm_80", "7.0")
    built = ptxas.assemble(text, "sm_80")
    assert built.ok and built.returncode == 0 and built.cubin and built.cubin[:4] == b"\x7fELF"
    parsed = ptxas.assemble(text, "sm_80", parse_only=True)
    assert parsed.ok and parsed.cubin is None and "-arch=compute_80" in parsed.command
    bad = ptxas.assemble(ptxas.module_text(["div.f32 f1, f2, f3;"], "sm_80", "7.0"), "sm_80", parse_only=True)
    assert not bad.ok and bad.returncode != 0
    assert bad.errors[0].line == ptxas.body_first_line("7.0")
    assert bad.errors[0].text == "Rounding modifier or '.approx' modifier required for instruction 'div'"
    assert ptxas.ptxas_version().count(".") == 2


@pytest.mark.ptxas
def test_batch_maps_errors_back_and_survives_parse_errors(real_ptxas):
    lines = ["div.rn.f32 f1, f2, f3;", "div.rn.f32 f1, f2,;", "add.rn.f32 f1, f2, f3;",
             "bogus.op f1;", "div.f32 f1, f2, f3;", "mul.rn.f32 f1, f2, f3;"]
    verdicts = ptxas.check_instructions(lines, "sm_90")
    assert [v.accepted for v in verdicts] == [True, False, True, False, False, True]
    assert verdicts[1].error == "Parsing error near ';': syntax error"
    assert verdicts[4].error == "Rounding modifier or '.approx' modifier required for instruction 'div'"
    assert ptxas.check_instructions([], "sm_90") == []


@pytest.mark.ptxas
def test_batch_refuses_a_bad_header(real_ptxas):
    assert ptxas.header_error("sm_100", "8.0") == "PTX .version 8.0 does not support .target sm_100"
    assert ptxas.header_error("sm_100", "8.6") is None
    with pytest.raises(TilecheckError, match="does not support .target sm_100"):
        ptxas.check_instructions(["add.rn.f32 f1, f2, f3;"], "sm_100", "8.0")


@pytest.mark.ptxas
def test_old_targets_and_versions(real_ptxas):
    # .target sm_13 with .version 1.4 still parses (plain register names, no .address_size)
    verdicts = ptxas.check_instructions(["div.rn.f64 fd1, fd2, fd3;", "div.rz.f64 fd1, fd2, fd3;"],
                                        "sm_13", "1.4", arch="sm_100")
    assert [v.accepted for v in verdicts] == [True, False]
    assert "requires .target sm_20" in verdicts[1].error
    assert "9.0" in ptxas.supported_versions() and ptxas.supported_versions()[0] == "1.0"
