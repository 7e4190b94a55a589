"""Z3 encodings of tilecheck's semantics: PTX forms, AMD instruction bodies, sequences, queries.

This package never imports :mod:`tilecheck.model` (the two implementations check each other) and
imports ``z3`` only when one of these functions is called, so ``import tilecheck`` and
``import tilecheck.smt`` work without Z3.

* ``encode(form, *terms)`` -- result term(s) of a PTX form (FP terms; :class:`~tilecheck.smt.forms.Approx`
  for approximate forms: a fresh result plus its contract constraint);
* ``encode_bits(form, *bit_vectors)`` -- result pattern with the NaN policy applied on bit-vectors;
* ``encode_contract(form, result, *operands)`` -- an approximate form's contract as a Bool;
* ``evaluate(form, *operand_bits)`` -- concrete result bits through Z3;
* ``allowed(form, result_bits, *operand_bits)`` -- concrete acceptance through Z3.

:mod:`tilecheck.smt.fp` documents the FTZ, NaN and rounding building blocks,
:mod:`tilecheck.smt.amdgpu` the AMD bodies and sequences, :mod:`tilecheck.smt.prove` the queries.
"""

from __future__ import annotations

from tilecheck.spec.contract import ULP_READING_DEFAULT

__all__ = ["encode", "encode_bits", "encode_contract", "evaluate", "allowed"]


def encode(form, *terms, tininess: str = "after", memory=None, ulp_reading: str = ULP_READING_DEFAULT):
    """See :func:`tilecheck.smt.forms.encode`."""
    from tilecheck.smt import forms

    return forms.encode(form, *terms, tininess=tininess, memory=memory, ulp_reading=ulp_reading)


def encode_bits(form, *terms, tininess: str = "after"):
    """See :func:`tilecheck.smt.forms.encode_bits`."""
    from tilecheck.smt import forms

    return forms.encode_bits(form, *terms, tininess=tininess)


def encode_contract(form, result, *operands, tininess: str = "after", ulp_reading: str = ULP_READING_DEFAULT):
    """See :func:`tilecheck.smt.forms.encode_contract`."""
    from tilecheck.smt import forms

    return forms.encode_contract(form, result, *operands, tininess=tininess, ulp_reading=ulp_reading)


def evaluate(form, *operand_bits, tininess: str = "after"):
    """See :func:`tilecheck.smt.forms.evaluate`."""
    from tilecheck.smt import forms

    return forms.evaluate(form, *operand_bits, tininess=tininess)


def allowed(form, result_bits, *operand_bits, tininess: str = "after", ulp_reading: str = ULP_READING_DEFAULT):
    """See :func:`tilecheck.smt.forms.allowed`."""
    from tilecheck.smt import forms

    return forms.allowed(form, result_bits, *operand_bits, tininess=tininess, ulp_reading=ulp_reading)
