"""Cache operators, eviction priorities, prefetch sizes, ``.L2::cache_hint`` and ``ld.volatile``
(spec/ptx/ld.yaml and st.yaml, ``hints``): qualifiers that leave the bits an elementwise kernel's
access moves unchanged. A spelling with them denotes the form without them (``SpecDatabase.hinted``), under
each one's own gate (``tilecheck check``); the simulator runs the plain form and reads the
cache-policy operand of ``.L2::cache_hint`` as the hint it is, and refuses a kernel that uses a
``createpolicy`` result as data.

Triton writes them for ``eviction_policy`` and ``cache_modifier``: the hinted kernel of
examples/triton must misround exactly the inputs the plain kernel of the same source does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support.elementwise_ptx import elementwise_kernel
from tilecheck.cli import main
from tilecheck.verify.compiled import verify_ptx

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"


@pytest.mark.parametrize("spelling,base,kinds", [
    ("ld.global.cg.b32", "ld.global.b32", 1),
    ("ld.global.L1::evict_last.L2::cache_hint.v4.b32", "ld.global.v4.b32", 2),
    ("ld.global.nc.cs.L2::128B.b16", "ld.global.nc.b16", 2),
    ("ld.L1::no_allocate.b64", "ld.b64", 1),
    ("st.global.cs.v2.b32", "st.global.v2.b32", 1),
    ("st.global.L1::evict_first.L2::cache_hint.b16", "st.global.b16", 2),
    ("ld.volatile.global.v4.b32", "ld.global.v4.b32", 1),
    ("ld.volatile.global.L2::64B.b16", "ld.global.b16", 2),
    ("ld.volatile.global.cg.b32", None, 0),   # ptxas: '.volatile' cannot be combined with '.cg'
    ("ld.volatile.global.nc.b32", None, 0),
    ("ld.global.b32", None, 0),            # no hint: the form itself, not a hinted one
    ("ld.global.ca.cg.b32", None, 0),      # two cache operators
    ("ld.global.nc.lu.b32", None, 0),      # .lu is no operator of ld.global.nc
    ("ld.param.cg.b32", None, 0),          # no hint on .param
    ("st.global.ca.b32", None, 0),         # .ca is a load operator
    ("ld.global.cg.b12", None, 0),         # nothing left to denote
])
def test_which_spellings_denote_a_form_with_hints(db, spelling, base, kinds):
    got = db.hinted(spelling)
    if base is None:
        assert got is None
    else:
        assert got is not None and got[0] == base and len(got[1]) == kinds
        assert db.resolve(base) is not None


def test_hinted_kernels_misround_what_the_plain_kernel_does(db):
    for plain, hinted in (("div_f32", "div_hinted_f32"), ("div_f32_v", "div_hinted_f32_v")):
        runs = []
        for stem in (plain, hinted):
            rows = []
            o = verify_ptx(str(TRITON / f"{stem}.ptx"), "div_kernel" if stem.startswith("div_f") else "div_hinted_kernel",
                           "div.rn.f32", db=db, cases=3000, misrounded=rows.append)
            runs.append((o.misrounded_count, np.concatenate(rows) if rows else np.zeros((0, 2), np.uint64)))
        assert runs[0][0] == runs[1][0] > 0 and np.array_equal(runs[0][1], runs[1][1])


def _kernel(tmp_path, body: str, target: str = "sm_90", version: str = "8.0") -> str:
    return elementwise_kernel(tmp_path, body, target, version, policy=True)


def test_a_cache_hinted_copy_verifies_and_a_policy_used_as_data_is_refused(tmp_path, capsys):
    ok = _kernel(tmp_path, "  ld.global.L1::evict_last.L2::cache_hint.b32 %r2, [%rd4], %rd6;\n"
                           "  neg.f32 %r3, %r2;\n  st.global.cs.b32 [%rd5], %r3;")
    assert main(["verify", ok, "--entry", "k", "--against", "neg.f32", "--cases", "300"]) == 0
    capsys.readouterr()
    data = _kernel(tmp_path, "  ld.global.cg.b32 %r2, [%rd4];\n  cvt.u32.u64 %r4, %rd6;\n  add.s32 %r3, %r2, %r4;\n"
                             "  st.global.b32 [%rd5], %r3;")
    assert main(["verify", data, "--entry", "k", "--against", "neg.f32", "--cases", "300"]) == 2
    err = capsys.readouterr().err
    assert "k.ptx:" in err and "cache policy %rd6" in err and "Traceback" not in err
    bare = _kernel(tmp_path, "  ld.global.L2::cache_hint.b32 %r2, [%rd4];\n  st.global.b32 [%rd5], %r2;")
    assert main(["verify", bare, "--entry", "k", "--against", "neg.f32", "--cases", "300"]) == 2
    assert "cache-policy register" in capsys.readouterr().err


def test_check_judges_the_hints_gates(tmp_path, capsys):
    body = "  ld.global.L1::evict_last.L2::cache_hint.b32 %r2, [%rd4], %rd6;\n  st.global.cs.b32 [%rd5], %r2;"
    assert main(["check", _kernel(tmp_path, body)]) == 0
    out = capsys.readouterr()
    assert "not-modeled" not in out.out + out.err
    assert main(["check", _kernel(tmp_path, body, version="7.3")]) == 1
    text = "".join(capsys.readouterr())
    assert "PX004" in text and ".L1::evict_last requires PTX ISA 7.4" in text
    assert main(["check", _kernel(tmp_path, body, target="sm_75")]) == 1
    text = "".join(capsys.readouterr())
    assert "PX003" in text and "createpolicy requires sm_80" in text and ".L2::cache_hint requires sm_80" in text


def test_nvcc_cache_intrinsics_and_a_prefetch_run_as_the_plain_accesses(db, capsys):
    """examples/cuda/cache_hints.ptx: nvcc 13's __ldcs/__ldlu/__ldcg/__ldcv/__ldca and __stcs/__stwt/
    __stcg, an inline-asm prefetch.global.L2 and ld.global.nc.L1::no_allocate. Each kernel divides;
    on the same sampled inputs its verdict and misrounded inputs are those of the plain kernel of the
    same division (examples/cuda/float.ptx and half.ptx)."""
    cuda = TRITON.parent / "cuda"
    pairs = [("cache_hints.ptx", "k_fdiv_ldcs", "float.ptx", "k_fdiv_rn", "div.rn.f32"),
             ("cache_hints.ptx", "k_fdiv_prefetch_no_allocate", "float.ptx", "k_fdiv_rn", "div.rn.f32"),
             ("cache_hints.ptx", "k_h2div_ldca_stcg", "half.ptx", "k_h2div_f16", "div.rn.f16")]
    for file, entry, plain_file, plain_entry, ref in pairs:
        outs = []
        for f, e in ((file, entry), (plain_file, plain_entry)):
            rows = []
            o = verify_ptx(str(cuda / f), e, ref, db=db, cases=2000, misrounded=rows.append)
            outs.append((o.verdict_word, o.misrounded_count, [r.tolist() for r in rows]))
        assert outs[0] == outs[1], (entry, outs[0][:2], outs[1][:2])
    assert main(["check", str(cuda / "cache_hints.ptx")]) == 0
    assert "error[" not in capsys.readouterr().out

