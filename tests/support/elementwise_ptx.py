"""A one-element-per-thread ``.entry k(a, o, n)`` around a given body: the tests of single
instructions inside a real kernel (cache hints, special registers) write only the body. In the
body, ``%rd4`` addresses element i of ``a``, ``%rd5`` element i of ``o``, ``%rd6`` holds a cache
policy made by ``createpolicy`` (when ``policy``), ``%r2..%r4`` and ``%rd7`` are free."""

from __future__ import annotations

from pathlib import Path

_TEMPLATE = """.version {version}
.target {target}
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
  mul.wide.u32 %rd3, %r1, {element_bytes};
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
{policy}{body}
DONE:
  ret;
}}
"""


def elementwise_kernel(tmp_path: Path, body: str, target: str = "sm_90", version: str = "8.0",
                       policy: bool = False, element_bytes: int = 4) -> str:
    """Write the kernel with ``body`` to ``tmp_path/k.ptx`` and return its path (``element_bytes``:
    the size of the elements ``%rd4`` and ``%rd5`` address)."""
    path = tmp_path / "k.ptx"
    path.write_text(_TEMPLATE.format(version=version, target=target, body=body, element_bytes=element_bytes,
                                     policy="  createpolicy.fractional.L2::evict_last.b64 %rd6, 1.0;\n" if policy else ""))
    return str(path)
