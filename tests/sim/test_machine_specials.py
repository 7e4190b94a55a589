"""Special registers whose values the hardware supplies (``%clock64``: CUDA's ``clock()``,
``%smid``, ``%globaltimer``) are refused with what they are, located, exit 2 -- not as an
"undeclared register"."""

from __future__ import annotations

import pytest

from support.elementwise_ptx import elementwise_kernel
from tilecheck.cli import main


@pytest.mark.parametrize("special,width,dest", [("%clock64", "u64", "rd7"), ("%smid", "u32", "r3"),
                                                ("%globaltimer", "u64", "rd7")])
def test_a_machine_value_is_refused_as_such(tmp_path, capsys, special, width, dest):
    path = elementwise_kernel(tmp_path, f"  ld.global.b32 %r2, [%rd4];\n  mov.{width} %{dest}, {special};\n"
                                        "  st.global.b32 [%rd5], %r2;")
    assert main(["verify", path, "--entry", "k", "--against", "neg.f32", "--cases", "50"]) == 2
    err = capsys.readouterr().err
    assert "k.ptx:" in err and f"special register {special} is not modelled" in err and "Traceback" not in err
