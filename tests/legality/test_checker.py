"""Checker behaviour beyond the corpus: rendering, targets, ordering, codes, the import boundary."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tilecheck.errors import Location, UnknownFormError
from tilecheck.legality import CODES, Diagnostic
from tilecheck.legality.dtypes import allowed_dtypes
from tilecheck.tile import T

ROOT = Path(__file__).resolve().parents[2]


def test_rendering_matches_the_documented_format():
    diag = Diagnostic("TC204", location=Location("root_ratio.py", 9), operand=2, operand_name="b",
                      operand_doc="denominator", axis=1, axis_kind="repeat", expected="extent 4", found="3")
    assert str(diag) == ("root_ratio.py:9: illegal[TC204]: operand 2 ('b', denominator) axis 1 (repeat): "
                         "expected extent 4, found 3")
    assert diag.name == "repeat-extent" and diag.line == 9
    assert diag.to_dict()["operand_name"] == "b"
    hinted = Diagnostic("TC502", "needs pred", Location("p.py", 3), subject="preserve_dst", hint="add pred=")
    assert str(hinted) == "p.py:3: illegal[TC502]: preserve_dst: needs pred\n    note: add pred="


def test_every_code_is_documented_once_and_used_by_the_checker():
    assert all(re.fullmatch(r"TC\d{3}", code) for code in CODES)
    assert len({c.name for c in CODES.values()}) == len(CODES)
    used = set()
    for path in list((ROOT / "tilecheck" / "legality").glob("*.py")) + list((ROOT / "tilecheck" / "tile").glob("*.py")):
        if path.name != "codes.py":
            used |= set(re.findall(r'"(TC\d{3})"', path.read_text(encoding="utf-8")))
    assert used == set(CODES), f"documented but unused: {set(CODES) - used}; used but undocumented: {used - set(CODES)}"
    with pytest.raises(ValueError, match="undocumented diagnostic code"):
        Diagnostic("TC999")


def test_target_gates_follow_the_chosen_target(ptx_db):
    @T.function
    def pairs(A: T.Tensor((4, 2), "float32")):
        r = T.alloc_local((4, 2), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.v2.f32"], r, A)
        T.cuda.tile.apply(T.ptx["add.rn.f32x2"], r.view("uint64"), r.view("uint64"), r.view("uint64"))

    assert [d.code for d in pairs.check(db=ptx_db)] == ["TC003"]
    assert [d.code for d in pairs.check(target="sm_90", db=ptx_db)] == ["TC003"]
    assert pairs.check(target="sm_100", db=ptx_db) == []
    with pytest.raises(UnknownFormError, match="unknown target 'sm_999'"):
        pairs.check(target="sm_999", db=ptx_db)


def test_qualifier_order_is_free(ptx_db):
    @T.function
    def reordered(A: T.Tensor((4, 1), "float32")):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        T.cuda.tile.apply(T.ptx["div.ftz.rn.f32"], r, r, r)
        T.cuda.tile.apply("sqrt.ftz.rn.f32", r, r)

    assert reordered.check(db=ptx_db) == []


def test_all_violations_are_collected_in_line_order(ptx_db):
    @T.function
    def many(A: T.Tensor((4, 1), "float32")):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, preserve_dst=True)
        bad = r[7]
        T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, T.float64(2))
        T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, bad, scope="galaxy")

    diagnostics = many.check(db=ptx_db)
    assert [d.code for d in diagnostics] == ["TC502", "TC803", "TC401", "TC007"]
    assert [d.line for d in diagnostics] == sorted(d.line for d in diagnostics)
    assert len({d.line for d in diagnostics}) == 4


def test_preserve_dst_tracks_initialisation_per_element(ptx_db):
    @T.function
    def partial(A: T.Tensor((4, 1), "float32"), n: T.int32):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r[1:4], A[1:4])
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r[1:4], r[1:4], pred=n, preserve_dst=True)
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=n, preserve_dst=True)

    (diag,) = partial.check(db=ptx_db)
    assert diag.code == "TC503" and diag.operand == 0 and "element 0" in diag.found


def test_constant_predicates(ptx_db):
    @T.function
    def constant_pred(A: T.Tensor((4, 1), "float32")):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A, pred=1)     # a true constant initialises
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=T.uint32(1), preserve_dst=True)
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=0)       # false: results undefined
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r, r, pred=True, preserve_dst=True)

    assert [d.code for d in constant_pred.check(db=ptx_db)] == ["TC503"]


@pytest.mark.parametrize("ptx_type, bits, names", [
    ("f32", 32, {"float32", "int32", "uint32"}),
    ("f64", 64, {"float64", "int64", "uint64"}),
    ("f16", 16, {"float16", "int16", "uint16"}),
    ("bf16", 16, {"bfloat16", "int16", "uint16"}),
    ("f16x2", 32, {"int32", "uint32"}),
    ("bf16x2", 32, {"int32", "uint32"}),
    ("f32x2", 64, {"int64", "uint64"}),
    ("b16", 16, {"float16", "bfloat16", "int16", "uint16"}),
    ("b32", 32, {"float32", "int32", "uint32"}),
    ("u64", 64, {"float64", "int64", "uint64"}),
])
def test_operand_dtype_table(ptx_type, bits, names):
    assert {d.name for d in allowed_dtypes(ptx_type, bits)} == names


def test_every_register_form_accepts_its_native_dtype(ptx_db):
    """Spec-driven: for every PTX type the database uses, the table has an entry of that width."""
    types = {(o.ptx_type, o.container_bits) for f in ptx_db.kernel_forms() for o in f.operands if o.role != "addr"}
    assert len(types) >= 8
    for ptx_type, bits in types:
        assert allowed_dtypes(ptx_type, bits), ptx_type
        assert all(d.bits == bits for d in allowed_dtypes(ptx_type, bits))


def test_legality_does_not_import_the_model_or_emitter():
    code = ("import sys, tilecheck.legality.checker, tilecheck.tile\n"
            "bad = [m for m in sys.modules if m.startswith(('tilecheck.model', 'tilecheck.emit', 'tilecheck.sim', "
            "'tilecheck.smt', 'z3', 'cupy'))]\n"
            "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
