"""A grid-stride loop whose count is 64 bits wide (``size_t n``, ``long long n``): the count is a
``.u64`` parameter, the type of a pointer. ``layout.counts_in_64_bits`` tells it from one by use --
compared, never a base address -- so that discovery fills it with a count, not an address (before,
the loop ran "that far" and discovery refused the kernel). Checked on nvcc 13's kernels of
examples/cuda/grid_stride.cu: the same inputs misround as in the 32-bit loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilecheck.sim.frontend import parse_module
from tilecheck.verify import layout
from tilecheck.verify.compiled import verify_ptx

GRID = Path(__file__).resolve().parents[2] / "examples" / "cuda" / "grid_stride.ptx"


def test_which_64_bit_parameters_are_counts():
    module = parse_module(GRID.read_text(), str(GRID))
    assert layout.counts_in_64_bits(module.function("k_fdiv_grid_stride_size_t")) == {"k_fdiv_grid_stride_size_t_param_3"}
    assert layout.counts_in_64_bits(module.function("k_fdividef_grid_stride_i64")) == {"k_fdividef_grid_stride_i64_param_3"}
    assert layout.counts_in_64_bits(module.function("k_fdiv_grid_stride")) == set()  # pointers and an int count


def test_a_64_bit_count_loop_misrounds_what_the_32_bit_one_does(db):
    found = []
    for entry in ("k_fdividef_grid_stride", "k_fdividef_grid_stride_i64"):
        rows = []
        o = verify_ptx(str(GRID), entry, "div.rn.f32", db=db, cases=3000, misrounded=rows.append)
        found.append((o.misrounded_count, np.concatenate(rows).tolist() if rows else []))
    assert found[0] == found[1] and found[0][0] > 1000
    assert verify_ptx(str(GRID), "k_fdiv_grid_stride_size_t", "div.rn.f32", db=db, cases=3000).misrounded_count == 0
