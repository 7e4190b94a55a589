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

``form`` is a :class:`~tilecheck.spec.forms.Form` or a spelling; a spelling is resolved in ``db``
(default: the spec database under the spec root). The modules below take forms only.

:mod:`tilecheck.smt.fp` documents the FTZ, NaN and rounding building blocks,
:mod:`tilecheck.smt.amdgpu` the AMD bodies and sequences, :mod:`tilecheck.smt.prove` the queries.
"""

from tilecheck.smt.api import allowed, encode, encode_bits, encode_contract, evaluate

__all__ = ["encode", "encode_bits", "encode_contract", "evaluate", "allowed"]
