"""Random (mostly illegal) programs: the checker never raises and every diagnostic is located at a
line of the program; the rare accepted program expands into in-bounds slots with the instance
count of the seed's code-generation rule. Legal-by-construction programs are the subject of
tests/tile/test_tile_expand_property.py."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilecheck.legality import Diagnostic
from tilecheck.program import T
from tilecheck.tile.coords import group_axes, split_shape
from tilecheck.tile.expand import ScalarBinding, expand
from tilecheck.tile.views import View

SPELLINGS = ["div.rn.f32", "sqrt.rn.f32", "rcp.approx.ftz.f32", "add.rn.f16x2", "fma.rn.f32", "div.rn.f64",
             "ld.global.f32", "ld.global.v2.f32", "ld.global.v4.b32", "st.global.f32", "st.global.v2.f64",
             "add.rn.f32x2", "mul.rn.bf16", "div.f32", "nope.f32"]
SCOPES = ["thread", "warp", "warpgroup", "cta", "cluster"]


def _view(data, base: View) -> View:
    view = base
    for _ in range(data.draw(st.integers(0, 2), label="ops")):
        op = data.draw(st.sampled_from(["slice", "index", "dtype", "broadcast", "permute", "none"]), label="op")
        if op == "slice" and view.ndim:
            axis = data.draw(st.integers(0, view.ndim - 1))
            key = [slice(None)] * view.ndim
            key[axis] = slice(data.draw(st.integers(0, 2)), None, data.draw(st.sampled_from([1, 2, -1])))
            view = view[tuple(key)]
        elif op == "index" and view.ndim > 1:
            view = view[data.draw(st.integers(0, 1))]
        elif op == "dtype":
            view = view.view(data.draw(st.sampled_from(["uint32", "float16", "uint64", "int32"])))
        elif op == "broadcast":
            view = view[None].broadcast_to((data.draw(st.sampled_from([1, 2, 32])),) + view.shape)
        elif op == "permute" and view.ndim > 1:
            view = view.permute(*reversed(range(view.ndim)))
        elif op == "none":
            view = view[..., None]
    return view


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_programs_never_crash_the_checker(ptx_db, data):
    @T.function
    def random_program(A: T.Tensor((32, 4), "float32"), B: T.Tensor((4, 2), "float64"), n: T.int32):
        if data.draw(st.booleans(), label="launch"):
            T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=data.draw(st.sampled_from([1, 32, 64, 128]))))
        layout = data.draw(st.sampled_from(["default", T.TileLayout("laneid", "m", "m")]), label="layout")
        pool = [T.alloc_local((32, 4, 1), data.draw(st.sampled_from(["float32", "float16", "uint32"])), layout=layout),
                T.alloc_local((4, 2), "float64"), A, B]
        for _ in range(data.draw(st.integers(1, 3), label="calls")):
            spelling = data.draw(st.sampled_from(SPELLINGS), label="spelling")
            operands = []
            for _ in range(data.draw(st.integers(1, 4), label="arity")):
                if data.draw(st.integers(0, 4)) == 0:
                    operands.append(data.draw(st.sampled_from([1.0, 2, T.float32(4), T.uint32(7), n]), label="scalar"))
                else:
                    operands.append(_view(data, data.draw(st.sampled_from(pool), label="base")))
            pred = data.draw(st.sampled_from([None, None, n, T.lane_id() < n, 1.5]), label="pred")
            T.cuda.tile.apply(T.ptx[spelling], *operands, scope=data.draw(st.sampled_from(SCOPES), label="scope"),
                              pred=pred, preserve_dst=data.draw(st.booleans(), label="preserve"))

    lines = {c.location.line for c in random_program.calls} | {d.line for d in random_program.frontend_diagnostics}
    diagnostics = random_program.check(db=ptx_db)
    assert all(isinstance(d, Diagnostic) and d.line in lines and str(d) for d in diagnostics)
    if any(d.severity == "error" for d in diagnostics):
        return
    for call in random_program.calls:
        axes, _ = group_axes(call.scope, random_program.launch)
        tensors = [op for op in call.operands if isinstance(op, View)]
        _, repeat, _ = split_shape(tensors[0].shape, len(axes))
        instances = list(expand(call, random_program.launch))
        assert len(instances) == math.prod(a.extent for a in axes) * math.prod(repeat)
        for instance in instances:
            for op, binding in zip(call.operands, instance.operands):
                if isinstance(binding, ScalarBinding):
                    continue
                for slot in binding.slots:
                    assert 0 <= slot.byte_offset and slot.byte_offset + slot.nbytes <= op.buffer.nbytes
