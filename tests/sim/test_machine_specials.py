"""Special registers whose values the hardware supplies (``%clock64``: CUDA's ``clock()``,
``%smid``, ``%globaltimer``) are refused with what they are, located, exit 2 -- not as an
"undeclared register"."""

from __future__ import annotations

import pytest

from tilecheck.cli import main

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 o, .param .u32 n)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [o];
  ld.param.u32 %r5, [n];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, %r5;
  @%p1 bra DONE;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.b32 %r2, [%rd4];
  mov.{width} %{dest}, {special};
  st.global.b32 [%rd5], %r2;
DONE:
  ret;
}}
"""


@pytest.mark.parametrize("special,width,dest", [("%clock64", "u64", "rd7"), ("%smid", "u32", "r3"),
                                                ("%globaltimer", "u64", "rd7")])
def test_a_machine_value_is_refused_as_such(tmp_path, capsys, special, width, dest):
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(special=special, width=width, dest=dest))
    assert main(["verify", str(path), "--entry", "k", "--against", "neg.f32", "--cases", "50"]) == 2
    err = capsys.readouterr().err
    assert "k.ptx:" in err and f"special register {special} is not modelled" in err and "Traceback" not in err
