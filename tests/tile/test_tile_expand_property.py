"""Property: random legal-by-construction programs (strided, reversed, permuted views; scalars;
thread and warp scope) check clean, and their expansion binds exactly the elements numpy selects
with the same slicing, in row-major (group, repeat) order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilecheck.program import T
from tilecheck.tile.expand import ScalarBinding

FORMS = {"div.rn.f32": 3, "sqrt.rn.f32": 2, "fma.rn.f32": 4, "add.rz.f32": 3, "rcp.approx.ftz.f32": 2,
         "mul.rn.ftz.f32": 3}


@st.composite
def operand_plans(draw, repeat):
    """How to carve one tensor operand of repeat shape ``repeat`` out of a larger buffer."""
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in repeat]
    starts = [draw(st.integers(0, 1)) for _ in repeat]
    order = draw(st.permutations(range(len(repeat))))
    return steps, starts, order


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_legal_programs_expand_like_numpy(ptx_db, data):
    spelling = data.draw(st.sampled_from(sorted(FORMS)), label="form")
    warp = data.draw(st.booleans(), label="warp")
    repeat = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2), label="repeat"))
    plans = [data.draw(operand_plans(repeat), label=f"plan{i}") for i in range(FORMS[spelling])]
    scalar_at = {i for i in range(1, FORMS[spelling]) if data.draw(st.integers(0, 3), label=f"scalar{i}") == 0}
    lead = (32,) if warp else ()
    references = {}

    @T.function
    def program(A: T.Tensor((4,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        operands = []
        for i, (steps, starts, order) in enumerate(plans):
            if i in scalar_at:
                operands.append(T.float32(i))
                continue
            # the buffer axis for a repeat of extent e with step s and start b holds b + |s|*(e-1) + 1 elements
            extents = [starts[k] + abs(steps[k]) * (repeat[order.index(k)] - 1) + 1 for k in range(len(repeat))]
            shape = lead + tuple(extents) + (1,)
            layout = T.TileLayout("laneid", *["m"] * (len(shape) - 1)) if warp else "default"
            buffer = T.alloc_local(shape, "float32", layout=layout)
            # a positive step starts at b, a negative one b elements before the axis end
            key = tuple(slice(b, None, s) if s > 0 else slice(extents[k] - 1 - b, None, s)
                        for k, (s, b) in enumerate(zip(steps, starts)))
            key = tuple(slice(None, None) for _ in lead) + key + (slice(None),)
            reference = np.arange(int(np.prod(shape))).reshape(shape)[key]
            view = buffer[key]
            # keep `repeat` extents: trim each axis to its planned extent, then permute the repeats
            trim = tuple(slice(None) for _ in lead) + tuple(slice(0, repeat[order.index(k)]) for k in range(len(repeat))) \
                + (slice(None),)
            reference, view = reference[trim], view[trim]
            perm = tuple(range(len(lead))) + tuple(len(lead) + k for k in order) + (len(shape) - 1,)
            references[i] = reference.transpose(perm)
            operands.append(view.permute(*perm))
        T.cuda.tile.apply(T.ptx[spelling], *operands, scope="warp" if warp else "thread")

    assert program.check(db=ptx_db) == []
    (expanded,) = program.expand(db=ptx_db)
    coords = list(itertools.product(*(range(e) for e in lead + repeat)))
    assert [inst.group + inst.repeat for inst in expanded.instances] == coords
    for inst, coord in zip(expanded.instances, coords):
        for i, binding in enumerate(inst.operands):
            if i in scalar_at:
                assert isinstance(binding, ScalarBinding) and binding.value.value == i
            else:
                assert [s.index for s in binding.slots] == [int(references[i][coord + (0,)])]
