"""``--misrounded FILE``: every misrounded input of a run, in input order, past the list's cap.

``--json`` lists the first ``MISROUNDED_CAP`` (2^18) misrounded inputs; Triton's float16 ``a / b``
misrounds 527,336 of all 2^32 pairs, so the set itself needs the file. These runs shrink the cap
to 4 and check that the file still holds every one, the same whether the blocks run in this
process or in worker processes, and that each line is an input ``--input`` takes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecheck.cli import main
from tilecheck.verify import compiled

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "examples" / "triton"


def test_the_file_holds_every_misrounded_input_past_the_cap(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(compiled, "MISROUNDED_CAP", 4)
    out = tmp_path / "misrounded.txt"
    args = ["verify", str(TRITON / "rcp_f16.ptx"), "--entry", "rcp_kernel", "--against", "rcp.rn.f16"]
    assert main([*args, "--misrounded", str(out), "--json", "-"]) == 1
    data = json.loads(capsys.readouterr().out)
    lines = out.read_text().splitlines()
    assert data["exhaustive"] and data["misrounded_count"] == len(lines) == 56
    assert data["misrounded_capped"] and len(data["misrounded_inputs"]) == 4
    assert [[int(x, 16) for x in line.split(",")] for line in lines[:4]] == \
        [[int(x, 16) for x in row] for row in data["misrounded_inputs"]]
    assert all(line.startswith("0x") and len(line) == 6 for line in lines)  # 16 bits: four hex digits
    values = [int(line, 16) for line in lines]
    assert values == sorted(values)  # input order
    # each line is a repro: that one input misrounds
    assert main([*args, "--input", lines[-1]]) == 1


def test_worker_processes_send_every_misrounded_input_in_order(db, monkeypatch):
    # the first 2^21 pairs of Triton's a.to(tl.float32) / b.to(tl.float32) (div.full.f32 against the
    # correctly rounded quotient: most pairs misround), in two worker processes and in this one
    monkeypatch.setattr(compiled, "MISROUNDED_CAP", 4)
    got = {}
    for processes in (True, False):
        rows = []
        o = compiled.verify_ptx(str(TRITON / "div_up_f16_f32.ptx"), "div_up_kernel",
                                "div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))", db=db, exhaustive=True,
                                limit=1 << 21, processes=processes, threads=2, misrounded=rows.append)
        got[processes] = np.concatenate(rows) if rows else np.zeros((0, 2), dtype=np.uint64)
        assert got[processes].shape[0] == o.misrounded_count > 4 and len(o.misrounded) == 4
        assert got[processes][:4].tolist() == o.misrounded
    assert np.array_equal(got[True], got[False])
    index = got[True][:, 0] + (got[True][:, 1] << np.uint64(16))  # operand 0 varies fastest
    assert (np.diff(index.astype(np.int64)) > 0).all()


def test_a_sampled_run_writes_its_misrounded_inputs_too(tmp_path, capsys):
    out = tmp_path / "m.txt"
    code = main(["verify", str(TRITON / "div_f16.ptx"), "--entry", "div_kernel", "--against", "div.rn.f16",
                 "--cases", "5000", "--misrounded", str(out), "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and len(out.read_text().splitlines()) == data["misrounded_count"] > 0


@pytest.mark.parametrize("extra,what", [
    (["--input", "0x0111,0x0667"], "not with --input"),
    (["--exhaustive", "--out", "RUN"], "not with --input, --workers"),
    ([], "does not exist"),
])
def test_misrounded_refuses_what_it_cannot_write(tmp_path, capsys, extra, what):
    target = tmp_path / "nowhere" / "m.txt" if not extra else tmp_path / "m.txt"
    extra = [str(tmp_path / "run") if x == "RUN" else x for x in extra]
    code = main(["verify", str(TRITON / "div_f16.ptx"), "--entry", "div_kernel", "--against", "div.rn.f16",
                 "--misrounded", str(target), *extra])
    err = capsys.readouterr().err
    assert code == 2 and what in err and "Traceback" not in err


def test_misrounded_belongs_to_compiled_code(capsys):
    assert main(["verify", "div.rn.f32", "--misrounded", "m.txt"]) == 2
    assert "--misrounded lists the misrounded inputs of verify FILE.ptx" in capsys.readouterr().err
