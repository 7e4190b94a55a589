"""Which of a kernel's integer parameters is the element count, and which are unused.

Every run sets each count parameter to the launch's elements, so a parameter taken for a count
while its value reaches the stored elements would be verified for one value of it, and the report
would call it a bound. Such kernels are refused, located. The fixtures are Triton 3.9's PTX for
sm_90 (BLOCK 256, 4 warps) of::

    def k_flag(X, O, flag, n, BLOCK: tl.constexpr):      # triton_flag_f16.ptx (fp16)
        ... tl.store(O + offs, tl.where(flag != 0, x * 2.0, x), mask=m)
                                                         # triton_flag_b128_f16.ptx: BLOCK 128, one per thread
    def k_addk(X, O, k, n, BLOCK: tl.constexpr):         # triton_addk_f32.ptx (fp32, k: i32)
        ... tl.store(O + offs, x + k, mask=m)
    def k_iter(X, O, n, iters, BLOCK: tl.constexpr):     # triton_iter_f32.ptx
        ... for i in range(iters): x = x * 0.5
    def k_extra(X, Scratch, Y, O, n, unused_i, unused_f, BLOCK: tl.constexpr)   # x / y
    def k_extra2(X, Y, O, flag, n, BLOCK: tl.constexpr)  # fp64 x - y; flag: fp64, never read
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilecheck.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"


@pytest.mark.parametrize("name,entry,against,param,why", [
    # before: verified over all 2^16 inputs against both a * 2 and a * 1 (flag set to the count, or 0)
    ("triton_flag_f16.ptx", "k_flag", "mul.rn.f16(a, 2.0)", "k_flag_param_2", "is no element count"),
    # before: a counterexample whose report never showed that k was the count (x + 256)
    ("triton_addk_f32.ptx", "k_addk", "add.rn.f32(a, 0.0)", "k_addk_param_2", "its value reaches the elements stored"),
    ("triton_iter_f32.ptx", "k_iter", "mul.rn.f32(a, 0.5)", "k_iter_param_3", "is no element count"),
    # one element per thread: the simpler "thread i computes element i" reading checks its counts too
    ("triton_flag_b128_f16.ptx", "k_flag", "mul.rn.f16(a, 2.0)", "k_flag_param_2", "is no element count"),
])
def test_an_integer_parameter_read_into_the_values_is_no_count(capsys, name, entry, against, param, why):
    path = FIXTURES / name
    assert main(["verify", str(path), "--entry", entry, "--against", against, "--cases", "300"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and f"{param} (line " in err and why in err, err
    assert "tl.constexpr" in err and "Traceback" not in err


def test_stating_it_the_count_does_not_make_it_one(capsys):
    path = FIXTURES / "triton_flag_f16.ptx"
    base = ["verify", str(path), "--entry", "k_flag", "--against", "mul.rn.f16(a, 2.0)", "--cases", "300"]
    assert main(base + ["--params", "in,out,n,n,-,-"]) == 2
    assert "k_flag_param_2 (line " in capsys.readouterr().err
    # nor does stating it unused (0), which the kernel reads: before, verified against a * 1.0 too
    assert main(base + ["--params", "in,out,-,n,-,-"]) == 2
    assert "states k_flag_param_2 unused, but the kernel reads it" in capsys.readouterr().err


@pytest.mark.parametrize("name,entry,against,bound,unused", [
    ("triton_extra_args_f32.ptx", "k_extra", "div.full.f32", "k_extra_param_4", ["k_extra_param_5", "k_extra_param_6"]),
    ("triton_extra2_f64_unusedf.ptx", "k_extra2", "sub.rn.f64", "k_extra2_param_4", ["k_extra2_param_3"]),
])
def test_parameters_the_kernel_never_reads_are_unused_not_bounds(capsys, name, entry, against, bound, unused):
    """Before, every non-pointer parameter was a count: an unread .u32 and .f32 were listed as
    bounds, and an unread .f64 too."""
    path = FIXTURES / name
    assert main(["verify", str(path), "--entry", entry, "--against", against, "--cases", "300",
                 "--json", "-"]) == 0
    abi = json.loads(capsys.readouterr().out)["abi"]
    bounded = abi.split("bounded by ")[1].split(";")[0]
    assert bounded == bound, abi
    listed = abi.split("unused: ")[1].split(";")[0].split(", ")
    assert set(unused) <= set(listed), abi


def test_a_count_stays_a_count(capsys):
    assert main(["verify", str(TRITON / "div_f16_v.ptx"), "--entry", "div_kernel", "--against", "div.rn.f16",
                 "--cases", "300", "--json", "-"]) == 1
    assert "bounded by div_kernel_param_3" in json.loads(capsys.readouterr().out)["abi"]


def test_a_refusal_is_written_to_the_json_too(capsys, tmp_path):
    """With --json, a run that gives no verdict says why there as well (before: nothing written)."""
    path = FIXTURES / "triton_flag_f16.ptx"
    argv = ["verify", str(path), "--entry", "k_flag", "--against", "mul.rn.f16(a, 2.0)", "--cases", "300"]
    assert main(argv + ["--json", "-"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "refused" and data["exit_code"] == 2 and "is no element count" in data["error"]
    assert data["location"]["path"] == str(path) and data["location"]["line"] > 0
    out = tmp_path / "r.json"
    assert main(argv + ["--json", str(out)]) == 2
    assert json.loads(out.read_text())["error"] == data["error"]
