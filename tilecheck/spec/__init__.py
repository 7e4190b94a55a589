"""The spec database: the vocabulary registry, the loaded forms, types, targets, AMD forms and
sequences.

* :mod:`tilecheck.spec.registry` -- semantics keys, operations and arities, roundings, tininess;
* :mod:`tilecheck.spec.types` -- the PTX type table (types, registers, carriers, constraints);
* :mod:`tilecheck.spec.forms` -- the frozen dataclasses (forms, families, operands, contracts);
* :mod:`tilecheck.spec.database` -- ``load_database(root=None)``: validate, expand, check;
* :mod:`tilecheck.spec.amdgpu`, :mod:`tilecheck.spec.sequence` -- AMD forms and sequences, and
  running a sequence with any semantics backend;
* :mod:`tilecheck.spec.amdgpu_integer` -- ``spec/amdgpu-int``: the AMD instructions the AMDGCN
  simulator executes without a float form (``load_integer_instructions(root)``).

Import the submodule you need; this package imports nothing on its own (``tilecheck.load_database``
is the public entry point).
"""
