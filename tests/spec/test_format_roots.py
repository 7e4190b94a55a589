"""A database loaded from another spec root computes with that root's formats.

The fixture is a copy of the spec tree whose ``formats/f32.yaml`` declares other (valid) NaN
patterns: ``nan.default`` and ``nan.canonical``. The forms, AMD forms and sequences of that
database carry its ``Format`` objects, and the model, the AMD semantics, the simulator's compiled
path, the compiled-PTX verifier's reference and the Z3 encoding all produce the fixture's NaNs,
while the default database, used before and after in the same process, keeps its own (no cache
shared between the two roots).
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
import yaml
import z3

from tilecheck.amdgpu import instructions as amd
from tilecheck.errors import SpecError
from tilecheck.inputs.edges import edge_values, nan_values
from tilecheck.model import api
from tilecheck.sim.frontend import parse_module
from tilecheck.sim.plan import RunContext, compile_function
from tilecheck.smt.amdgpu import encode_instruction
from tilecheck.spec.amdgpu import amdgpu_forms, sequences
from tilecheck.spec.database import load_database
from tilecheck.specio.files import spec_root
from tilecheck.verify.compiled import parse_reference

OTHER_DEFAULT = 0x7FE00000  # quiet, one payload bit
OTHER_CANONICAL = 0x7FD00000  # neither is among the default root's edge values
F32_INF = 0x7F800000
NEG_F32 = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) negate(.param .b32 a)
{
  .reg .f32 %f<3>;
  ld.param.f32 %f1, [a];
  neg.f32 %f2, %f1;
  st.param.f32 [r], %f2;
  ret;
}
"""


@pytest.fixture(scope="module")
def base():
    return load_database()


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    root = tmp_path_factory.mktemp("roots") / "spec"
    shutil.copytree(spec_root(), root)
    path = root / "formats" / "f32.yaml"
    data = yaml.safe_load(path.read_text())
    data["nan"]["default"] = f"0x{OTHER_DEFAULT:08x}"
    data["nan"]["canonical"] = f"0x{OTHER_CANONICAL:08x}"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_database(root)


def test_the_fixture_differs_from_the_default_root(base, other):
    assert (other.formats["f32"].default_nan, other.formats["f32"].canonical_nan) == (OTHER_DEFAULT, OTHER_CANONICAL)
    assert (base.formats["f32"].default_nan, base.formats["f32"].canonical_nan) != (OTHER_DEFAULT, OTHER_CANONICAL)


def test_forms_carry_their_own_databases_formats(base, other):
    for db in (base, other):
        form = db.form("div.rn.f32")
        assert form.format is db.formats["f32"]
        assert all(o.format is db.formats["f32"] for o in form.operands)
        assert db.form("cvt.rn.f16.f32").format_of("f32") is db.formats["f32"]
        assert db.form("add.rn.f16x2").format is db.formats["f16"]
        assert amdgpu_forms(db)["v_div_fmas_f32"].fmt is db.formats["f32"]
        assert all(s.fmt is db.formats[s.type] for s in sequences(db).values())


def test_the_model_uses_the_forms_formats(base, other):
    for db in (base, other):
        f32 = db.formats["f32"]
        fmt = db.form("div.rn.f32").format
        assert int(api.ieee_op("div", fmt, "rn", 0, 0)) == f32.default_nan  # 0/0: the default NaN
        assert fmt.parse_operand("nan") == f32.default_nan
        assert f32.default_nan in nan_values(fmt) and f32.canonical_nan in nan_values(fmt)
        # a PTX form's unspecified NaN is its format's canonical NaN (the YAML names no bits)
        form = db.form("div.rn.f32")
        assert form.nan.bits == f32.canonical_nan
        assert int(api.evaluate(form, np.uint32(0), np.uint32(0))) == f32.canonical_nan
    # the edge-value caches are keyed by the Format itself, not its name
    assert OTHER_CANONICAL in edge_values(other.formats["f32"])
    assert OTHER_CANONICAL not in edge_values(base.formats["f32"])


def test_amd_semantics_use_the_databases_default_nan(base, other):
    """``v_div_fmas``: Inf * 0 gives the negative default NaN (``-QNAN`` in its body)."""
    for db in (base, other):
        out = amd.evaluate("v_div_fmas_f32", db=db, S0=np.uint64(F32_INF), S1=np.uint64(0),
                           S2=np.uint64(0x3F800000), VCC=False)
        assert int(out["D"]) == db.formats["f32"].default_nan | 0x80000000


def test_the_simulator_and_the_verifier_use_the_databases_nans(base, other):
    for db in (other, base, other):  # interleaved: nothing cached under the format's name
        fn = parse_module(NEG_F32, "neg.ptx").function("negate")
        plan = compile_function(fn, db, "neg.ptx")
        lanes = plan.new_lanes(1)
        lanes.params["a"] = np.array([0x7FC00000], dtype=np.uint64)
        plan.run(lanes, RunContext())
        assert int(lanes.params["r"][0]) == db.formats["f32"].canonical_nan  # neg.f32 of a NaN
        ref = parse_reference("div.rn.f32", db)
        zero = np.zeros(1, dtype=np.uint32)
        assert int(ref.expected([zero, zero])[0]) == db.formats["f32"].default_nan


def test_the_z3_encoding_uses_the_databases_formats(base, other):
    for db in (other, base):
        form = amdgpu_forms(db)["v_div_fmas_f32"]
        out = encode_instruction(form, "observed", {"S0": F32_INF, "S1": 0, "S2": 0x3F800000, "VCC": False})
        assert z3.simplify(out["D"]).as_long() == db.formats["f32"].default_nan | 0x80000000


def test_a_root_without_a_format_its_forms_use_is_a_located_spec_error(tmp_path):
    """Without ``formats/f64.yaml`` the PTX types, the AMD forms and the sequences of type f64 are
    each reported (located, in one SpecError) instead of failing on a lookup later."""
    root = tmp_path / "spec"
    shutil.copytree(spec_root(), root)
    (root / "formats" / "f64.yaml").unlink()
    with pytest.raises(SpecError) as info:
        load_database(root)
    texts = [str(p) for p in info.value.problems]
    assert any("PTX type .f64 needs the format 'f64'" in t for t in texts)
    located = re.compile(r"/(amdgpu|sequences)/[\w.]+\.yaml:\d+:\d+: error: ")
    assert any(located.search(t) and "form v_div_fmas_f64: type f64 needs the format 'f64'" in t for t in texts)
    assert any(located.search(t) and "format 'f64' is not in spec/formats" in t for t in texts)  # a sequence
    # a body naming f64 (v_div_scale_f32 widens to it) is located at the name
    assert any(located.search(t) and "format 'f64' is not in the spec database's formats" in t for t in texts)
