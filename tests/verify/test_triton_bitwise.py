"""Kernels that compute on floating-point elements with integer instructions.

Triton's ``-x`` on 16-bit vectors (examples/triton/neg_*_v.ptx) flips both sign bits of a 32-bit
word with one ``xor.b32`` by ``0x80008000``: the two elements are never unpacked and nothing
reads the word as a number. Such bits fit a 16-bit reference (only what the code states refuses:
tilecheck.verify.compiled.check_element_types), and each element of the word is judged.

The mutant below flips only the upper element's sign (``xor`` by ``0x80000000``). Its misrounded
inputs are predicted here without the model: the verifier places every input in a lower half (the
element the mutant leaves alone), where ``-x`` differs from ``x`` for every non-NaN input (NaNs are
compared by class), by the sign of a zero for the two zeros.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecheck.verify import compiled

TRITON = Path(__file__).resolve().parents[2] / "examples" / "triton"
NANS = {"f16": 2 * ((1 << 10) - 1), "bf16": 2 * ((1 << 7) - 1)}


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_negation_by_xor_on_packed_words_verifies(db, fmt):
    o = compiled.verify_ptx(str(TRITON / f"neg_{fmt}_v.ptx"), "neg_kernel", f"neg.{fmt}", db=db, exhaustive=True)
    assert o.verdict_word == "verified" and o.exhaustive and o.inputs_checked == 1 << 16


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_a_mutant_that_negates_one_element_of_the_word_is_caught(db, fmt, tmp_path):
    text = (TRITON / f"neg_{fmt}_v.ptx").read_text()
    assert "-2147450880" in text  # 0x80008000: both sign bits
    mutant = tmp_path / "neg_mutant.ptx"
    mutant.write_text(text.replace("-2147450880", "-2147483648"))  # 0x80000000: the upper one only
    o = compiled.verify_ptx(str(mutant), "neg_kernel", f"neg.{fmt}", db=db, exhaustive=True)
    assert o.verdict_word == "counterexample"
    assert o.misrounded_count == (1 << 16) - NANS[fmt]
    assert o.misrounded_count - o.misrounded_by_value == 2  # +0 and -0: only by the sign of a zero


def test_maximum_is_checked_against_a_bare_value_function_name(db):
    o = compiled.verify_ptx(str(TRITON / "maximum_bf16_v.ptx"), "maximum_kernel", "max.bf16", db=db, cases=4096)
    assert o.verdict_word == "no-counterexample"
    ref = compiled.parse_reference("max.bf16", db)
    assert ref.text == "max.bf16" and ref.arity == 2
