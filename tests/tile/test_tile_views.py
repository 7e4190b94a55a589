"""Views: slicing, dtype views, explicit strides, broadcast, reshape, permute -- against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilecheck.errors import ProgramError
from tilecheck.program import T
from tilecheck.tile.dtypes import DTYPES
from tilecheck.tile.views import Buffer, View, contiguous_strides


def make_view(shape, dtype="float32", space="local") -> View:
    """A whole-buffer view built directly (no tracing: only legal operations may be used)."""
    return View.of(Buffer("buf", tuple(shape), DTYPES[dtype], space, ("m",) * len(shape)))


def reference(shape) -> np.ndarray:
    return np.arange(int(np.prod(shape))).reshape(shape)


_index = st.one_of(
    st.integers(-3, 2),
    st.builds(slice, st.one_of(st.none(), st.integers(-4, 4)), st.one_of(st.none(), st.integers(-4, 4)),
              st.one_of(st.none(), st.sampled_from([1, 2, -1, -2, 3]))),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_index, min_size=1, max_size=3))
def test_slicing_matches_numpy(key):
    shape = (3, 4, 5)
    expected = reference(shape)[tuple(key)]
    if expected.size == 0:
        return  # empty selections are diagnosed (see test_empty_slice_is_a_diagnostic)
    view = make_view(shape)[tuple(key)]
    assert not view.poisoned
    assert view.shape == expected.shape
    assert np.array_equal(view.element_offsets(), expected)


def test_none_adds_a_zero_stride_axis_and_ellipsis_fills():
    view = make_view((4, 2))[None, ..., 1]
    assert view.shape == (1, 4)
    assert view.strides == (0, 2)
    assert view.offset == 1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_reshape_matches_numpy_nocopy(a, b, c, data):
    base = reference((a * 2, b * 2, c))
    step = data.draw(st.tuples(st.sampled_from([1, 2]), st.sampled_from([1, 2])))
    sliced = base[::step[0], ::step[1], :]
    order = data.draw(st.permutations(range(3)))
    numpy_view = sliced.transpose(order)
    view = make_view((a * 2, b * 2, c))[::step[0], ::step[1], :].permute(*order)
    assert np.array_equal(view.element_offsets(), numpy_view)
    n = numpy_view.size
    first = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    new_shape = (first, n // first)
    try:
        probe = numpy_view.view()
        probe.shape = new_shape  # numpy raises when the reshape would need a copy
        possible = True
    except AttributeError:
        possible = False
    if possible:
        reshaped = view.reshape(new_shape)
        assert np.array_equal(reshaped.element_offsets(), numpy_view.reshape(new_shape))
    else:
        with pytest.raises(ProgramError, match="without moving elements"):
            view.reshape(new_shape)  # outside tracing a bad view raises instead of recording


def test_dtype_view_widens_and_narrows_like_numpy():
    halves = np.arange(16, dtype=np.uint16).reshape(4, 4)
    words = halves.view(np.uint32)  # low half of each word = index of its first float16
    view = make_view((4, 4), "float16").view("uint32")
    assert view.dtype is DTYPES["uint32"] and view.shape == (4, 2) and view.strides == (2, 1)
    assert np.array_equal(view.element_offsets() * 2, words & 0xFFFF)
    back = view.view(T.float16)
    assert back.shape == (4, 4) and np.array_equal(back.element_offsets(), halves)
    same = make_view((4,), "float32").view("int32")
    assert same.shape == (4,) and same.dtype is DTYPES["int32"]


def test_dtype_view_of_a_strided_column_keeps_word_alignment():
    # rows 4 halves apart, two halves per row -> one word per row, rows 2 words apart
    view = make_view((4, 4), "float16")[:, 2:4].view("uint32")
    assert view.shape == (4, 1) and view.strides == (2, 1) and view.offset == 1
    assert view.byte_offsets().ravel().tolist() == [4, 12, 20, 28]


def test_as_strided_counts_container_elements_from_the_view_start():
    view = make_view((8, 1))[1:].as_strided((2, 2, 1), (4, 2, 1), offset=0)
    assert view.element_offsets().ravel().tolist() == [1, 3, 5, 7]
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)


def test_broadcast_to_uses_zero_strides():
    view = make_view((1, 1)).broadcast_to((3, 4, 1))
    assert view.strides[:2] == (0, 0) and view.shape == (3, 4, 1)
    assert view.element_offsets().max() == 0


def test_iteration_walks_the_first_axis():
    rows = list(make_view((3, 2)))
    assert [r.offset for r in rows] == [0, 2, 4]
    assert len(make_view((3, 2))) == 3


def _trace(body):
    """Trace a one-line program body; return the program's frontend diagnostics."""
    @T.function
    def program(A: T.Tensor((4, 1), "float32")):
        body(T.alloc_local((4, 1), "float32"))

    return program, list(program.frontend_diagnostics)


@pytest.mark.parametrize("body, fragment", [
    (lambda r: r[4], "index 4 is out of range"),
    (lambda r: r[2:2], "selects nothing"),
    (lambda r: r[0, 0, 0], "too many indices"),
    (lambda r: r[::0], "step cannot be zero"),
    (lambda r: r[T.lane_id()], "runtime index"),
    (lambda r: r.view("uint64"), "packs 2 float32 elements"),
    (lambda r: r.view("float99"), "unknown dtype"),
    (lambda r: r.as_strided((4, 1), (2, 1)), "selects elements 0..6"),
    (lambda r: r.as_strided((4, 1), (1,)), "one per axis"),
    (lambda r: r.broadcast_to((2, 3, 1)), "cannot broadcast"),
    (lambda r: r.reshape(3, 1), "cannot reshape 4 elements"),
    (lambda r: r.permute(0, 0), "permutation"),
])
def test_bad_views_are_diagnosed_where_they_are_made(body, fragment):
    program, diagnostics = _trace(body)
    assert len(diagnostics) == 1, diagnostics
    diag = diagnostics[0]
    assert diag.code in ("TC803", "TC801")
    assert fragment in diag.message
    assert diag.location.path == __file__
    # the line of the lambda that made the view, inside this test file
    assert diag.line > 0


def test_poisoned_views_propagate_without_more_diagnostics():
    def body(r):
        bad = r[9]
        bad[0].view("uint32").reshape(2).permute(0)
    _, diagnostics = _trace(body)
    assert [d.code for d in diagnostics] == ["TC803"]


def test_empty_slice_is_a_diagnostic():
    _, diagnostics = _trace(lambda r: r[3:1])
    assert [d.code for d in diagnostics] == ["TC803"]
