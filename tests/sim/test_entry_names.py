"""``--entry`` by the name a user knows: the mangled PTX name, the demangled C++ name (with or without
parameters and return type) or the unqualified name, each accepted when exactly one function answers
to it; an ambiguous or unknown name is a located usage error (exit 2) listing the candidates.
The fixture tests/sim/ptx/cxx_names.ptx is nvcc 13.0's ``-arch=sm_90 -ptx`` output of cxx_names.cu."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tilecheck.cli import main
from tilecheck.sim import names
from tilecheck.sim.errors import UnsupportedPtxError
from tilecheck.sim.frontend import parse_module

PTX = Path(__file__).resolve().parent / "ptx" / "cxx_names.ptx"
MANGLED = ["_Z4tdivIfEvPKT_S2_PS0_i", "_Z4tdivIdEvPKT_S2_PS0_i", "_Z6div_gsPKfS0_Pfi", "_Z4overPKfPf",
           "_Z4overPKdPd", "_ZN2ns3rcpEPKfPf"]

needs_demangler = pytest.mark.skipif(names.demangler() is None,
                                     reason="no demangler here (libstdc++'s __cxa_demangle, binutils' c++filt)")


@pytest.fixture(scope="module")
def module():
    return parse_module(PTX.read_text(), str(PTX))


def test_the_fixture_defines_the_mangled_kernels(module):
    assert [f.name for f in module.functions.values() if f.defined] == MANGLED


@needs_demangler
@pytest.mark.parametrize("name,want", [
    ("_Z4tdivIfEvPKT_S2_PS0_i", "_Z4tdivIfEvPKT_S2_PS0_i"),
    ("tdiv<float>", "_Z4tdivIfEvPKT_S2_PS0_i"),
    ("tdiv< double >", "_Z4tdivIdEvPKT_S2_PS0_i"),
    ("tdiv<float>(float const*, float const*, float*, int)", "_Z4tdivIfEvPKT_S2_PS0_i"),
    ("void tdiv<double>(double const*, double const*, double*, int)", "_Z4tdivIdEvPKT_S2_PS0_i"),
    ("div_gs", "_Z6div_gsPKfS0_Pfi"),
    ("div_gs(float const*, float const*, float*, int)", "_Z6div_gsPKfS0_Pfi"),
    ("ns::rcp", "_ZN2ns3rcpEPKfPf"),
    ("rcp", "_ZN2ns3rcpEPKfPf"),
    ("over(double const*, double*)", "_Z4overPKdPd"),
])
def test_a_name_resolves_to_its_one_function(module, name, want):
    assert module.function(name).name == want


@needs_demangler
@pytest.mark.parametrize("name,listed", [("tdiv", ["_Z4tdivIfEvPKT_S2_PS0_i", "_Z4tdivIdEvPKT_S2_PS0_i"]),
                                         ("over", ["_Z4overPKfPf", "_Z4overPKdPd"])])
def test_an_ambiguous_name_lists_the_candidates(module, name, listed):
    with pytest.raises(UnsupportedPtxError) as err:
        module.function(name)
    msg = str(err.value)
    assert "ambiguous" in msg and all(c in msg for c in listed) and str(PTX) in msg
    assert err.value.exit_code == 2


def _cli(capsys, entry: str, against: str = "div.rn.f32") -> tuple[int, str]:
    code = main(["verify", str(PTX), "--entry", entry, "--against", against, "--cases", "100", "--json", "-"])
    captured = capsys.readouterr()
    return code, captured.out if code == 0 else captured.out + captured.err


@needs_demangler
def test_the_cli_verifies_a_kernel_named_by_its_demangled_name(capsys):
    code, out = _cli(capsys, "tdiv<float>")
    data = json.loads(out)
    # tdiv<float> divides with `/`: div.rn.f32 under nvcc's defaults
    assert code == 0 and data["verdict"] == "no-counterexample"
    assert data["entry"] == "_Z4tdivIfEvPKT_S2_PS0_i"  # reports and repro lines name the PTX function exactly
    code, out = _cli(capsys, "div_gs")
    assert code == 0


@needs_demangler
def test_the_cli_refuses_an_ambiguous_name_located(capsys):
    code, out = _cli(capsys, "tdiv")
    assert code == 2 and f"{PTX}: error: function name 'tdiv' is ambiguous" in out and "Traceback" not in out


def test_an_unknown_name_lists_the_defined_functions(capsys):
    code, out = _cli(capsys, "nothere")
    assert code == 2 and "no function 'nothere'" in out and "_Z6div_gsPKfS0_Pfi" in out


def test_without_a_demangler_only_ptx_names_match(module, monkeypatch):
    monkeypatch.setattr(names, "_cxa_demangle", lambda: None)
    monkeypatch.setattr(names.shutil, "which", lambda _: None)
    assert module.function("_Z6div_gsPKfS0_Pfi").name == "_Z6div_gsPKfS0_Pfi"
    with pytest.raises(UnsupportedPtxError, match="no demangler is available"):
        module.function("div_gs")


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="binutils' c++filt is not installed")
def test_cxxfilt_is_the_fallback_demangler(module, monkeypatch):
    monkeypatch.setattr(names, "_cxa_demangle", lambda: None)
    assert names.demangler() == "c++filt"
    assert names.demangle_all(["_Z6div_gsPKfS0_Pfi", "k"]) == {
        "_Z6div_gsPKfS0_Pfi": "div_gs(float const*, float const*, float*, int)", "k": None}
    assert module.function("tdiv<double>").name == "_Z4tdivIdEvPKT_S2_PS0_i"


@pytest.mark.skipif(names._cxa_demangle() is None, reason="libstdc++'s __cxa_demangle is not loadable")
def test_cxa_demangle_reads_itanium_names():
    got = names.demangle_all(["_Z4tdivIfEvPKT_S2_PS0_i", "_ZN2ns3rcpEPKfPf", "_Zgarbage", "plain"])
    assert got == {"_Z4tdivIfEvPKT_S2_PS0_i": "void tdiv<float>(float const*, float const*, float*, int)",
                   "_ZN2ns3rcpEPKfPf": "ns::rcp(float const*, float*)", "_Zgarbage": None, "plain": None}


def test_spellings_of_a_signature():
    assert names.spellings("void ns::tdiv<unsigned int>(unsigned int const*, int)") == [
        "void ns::tdiv<unsigned int>(unsigned int const*,int)", "ns::tdiv<unsigned int>(unsigned int const*,int)",
        "ns::tdiv<unsigned int>", "tdiv<unsigned int>", "tdiv"]


def test_without_entry_the_only_kernel_is_taken_and_several_are_listed(capsys):
    triton = Path(__file__).resolve().parents[2] / "examples" / "triton" / "div_f32.ptx"
    assert main(["verify", str(triton), "--against", "div.full.f32", "--cases", "50"]) == 0
    assert "note: --entry div_kernel (the module's only kernel)" in capsys.readouterr().err
    assert main(["verify", str(PTX), "--against", "div.rn.f32", "--cases", "50"]) == 2
    err = capsys.readouterr().err
    assert "--entry NAME is needed: the module defines" in err and "Traceback" not in err
