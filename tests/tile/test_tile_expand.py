"""Expansion: code-generation order, register binding, scalars, strided and dtype views, scopes."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tilecheck.errors import IllegalTileOpError
from tilecheck.program import T
from tilecheck.tile.coords import group_axes, group_coordinate
from tilecheck.tile.expand import ScalarBinding, TensorBinding, expand
from tilecheck.tile.loader import load_programs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def slots(binding: TensorBinding) -> list[int]:
    return [s.index for s in binding.slots]


def test_seed_root_ratio_expands_to_four_instructions_per_call(ptx_db):
    (program,) = load_programs(EXAMPLES / "root_ratio.py")
    expanded = program.expand(db=ptx_db)
    assert [e.form.name for e in expanded] == ["ld.global.f32", "div.rn.f32", "sqrt.rn.f32", "st.global.f32"]
    assert [len(e.instances) for e in expanded] == [4, 4, 4, 4]
    div = expanded[1]
    assert [i.repeat for i in div.instances] == [(0,), (1,), (2,), (3,)]
    assert [slots(i.operands[0]) for i in div.instances] == [[0], [1], [2], [3]]
    scalars = {id(i.operands[2].value) for i in div.instances}
    assert len(scalars) == 1, "a scalar input is one expression reused by every instance"
    assert div.instances[0].operands[2].value.bits() == 0x40800000  # T.float32(4)
    store = expanded[3]
    assert store.instances[2].operands[0].slots[0].buffer.name == "Out"
    assert store.instances[2].operands[0].slots[0].byte_offset == 8


def test_repeats_expand_row_major(ptx_db):
    @T.function
    def grid(A: T.Tensor((2, 3, 1), "float32")):
        r = T.alloc_local((2, 3, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        T.cuda.tile.apply(T.ptx["sqrt.rn.f32"], r.permute(1, 0, 2), r.permute(1, 0, 2))

    load, sqrt = grid.expand(db=ptx_db)
    assert [i.repeat for i in load.instances] == list(itertools.product(range(2), range(3)))
    assert [slots(i.operands[0])[0] for i in load.instances] == [0, 1, 2, 3, 4, 5]
    # the permuted view walks its own row-major order: (0,0) (0,1) (1,0) ... = elements 0 3 1 4 2 5
    assert [slots(i.operands[0])[0] for i in sqrt.instances] == [0, 3, 1, 4, 2, 5]


def test_strided_and_reversed_views_bind_gapped_registers(ptx_db):
    @T.function
    def gapped(A: T.Tensor((8, 1), "float32")):
        r = T.alloc_local((8, 1), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        T.cuda.tile.apply(T.ptx["div.rn.f32"], r[0:8:2], 1.0, r[::-2])
        T.cuda.tile.apply(T.ptx["rcp.rn.f32"], r.as_strided((2, 1), (5, 1), offset=1), r[0:2])

    _, div, rcp = gapped.expand(db=ptx_db)
    assert [slots(i.operands[0]) for i in div.instances] == [[0], [2], [4], [6]]
    assert [slots(i.operands[2]) for i in div.instances] == [[7], [5], [3], [1]]
    assert all(isinstance(i.operands[1], ScalarBinding) and i.operands[1].value.value == 1.0 for i in div.instances)
    assert [slots(i.operands[0]) for i in rcp.instances] == [[1], [6]]


def test_vector_atoms_bind_in_increasing_order(ptx_db):
    @T.function
    def vec(A: T.Tensor((2, 4), "float32")):
        r = T.alloc_local((4, 2), "float32")
        T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r.permute(1, 0), A)

    (load,) = vec.expand(db=ptx_db)
    assert len(load.instances) == 2
    first, second = load.instances
    assert slots(first.operands[0]) == [0, 2, 4, 6]    # the register view is gapped...
    assert slots(first.operands[1]) == [0, 1, 2, 3]    # ...the memory atom is consecutive
    assert slots(second.operands[0]) == [1, 3, 5, 7]
    assert slots(second.operands[1]) == [4, 5, 6, 7]


def test_packed_dtype_view_binds_words(ptx_db):
    (program,) = load_programs(EXAMPLES / "packed_f16x2.py")
    expanded = program.expand(db=ptx_db)
    add = expanded[1]
    assert add.form.name == "add.rn.f16x2"
    slot = add.instances[3].operands[1].slots[0]
    assert (slot.buffer.name, slot.dtype.name, slot.index, slot.byte_offset, slot.nbytes) == ("h", "uint32", 3, 12, 4)
    assert add.instances[0].operands[2].value.bits() == 0x3C003C00
    fma = expanded[2]
    assert [slots(i.operands[3]) for i in fma.instances] == [[0], [0], [0], [0]]  # zero-stride read


def test_warp_scope_is_group_major_and_lanes_own_their_slots(ptx_db):
    (program,) = load_programs(EXAMPLES / "warp_strided.py")
    load, div, store = program.expand(db=ptx_db)
    assert len(div.instances) == 32 * 2
    assert [(i.group, i.repeat) for i in div.instances[:3]] == [((0,), (0,)), ((0,), (1,)), ((1,), (0,))]
    for inst in div.instances:
        lane = inst.group[0]
        for binding in (inst.operands[0], inst.operands[2]):
            owner, private = binding.slots[0].thread_storage()
            assert owner == {"laneid": lane}
        assert binding.slots[0].thread_storage()[1] == (2 * inst.repeat[0] + 1) * 4  # register 1 or 3
    assert [s.thread_storage()[1] for s in load.instances[5].operands[0].slots] == [0, 4, 8, 12]


def test_cta_scope_groups_follow_thread_coordinates(ptx_db):
    (program,) = load_programs(EXAMPLES / "cta_vector.py")
    load = program.expand(db=ptx_db)[0]
    axes, problem = group_axes("cta", program.launch)
    assert problem is None and [a.extent for a in axes] == [2, 32]
    assert len(load.instances) == 2 * 32 * 3
    for thread in (0, 31, 32, 63):
        mine = [i for i in load.instances if i.group == group_coordinate("cta", thread)]
        assert len(mine) == 3, "product of repeat extents per issuing thread"
        owner, _ = mine[0].operands[0].slots[0].thread_storage()
        assert owner == {"warpid": thread // 32, "laneid": thread % 32}


def test_group_coordinates_of_each_scope():
    assert group_coordinate("thread", 77) == ()
    assert group_coordinate("warp", 77) == (13,)
    assert group_coordinate("warpgroup", 200) == (2, 8)
    assert group_coordinate("cta", 200) == (6, 8)


def test_expand_program_validates_first(ptx_db):
    @T.function
    def bad(A: T.Tensor((4, 1), "float32")):
        r = T.alloc_local((4, 1), "float32")
        T.cuda.tile.apply(T.ptx["div.rn.f32"], r, r, r[0:3])

    with pytest.raises(IllegalTileOpError) as info:
        bad.expand(db=ptx_db)
    assert isinstance(info.value, ValueError)
    assert [d.code for d in info.value.diagnostics] == ["TC204"]
    with pytest.raises(ValueError, match="disagree"):
        list(expand(bad.calls[0], bad.launch))
