"""AMD GPU instruction semantics and the division-macro verification campaign.

* :mod:`tilecheck.amdgpu.instructions` -- evaluate one ``spec/amdgpu`` form (numpy, vectorised);
* :mod:`tilecheck.amdgpu.contract` -- precision contracts (is a reciprocal allowed? pick one anywhere
  inside the contract);
* :mod:`tilecheck.spec.sequence` (spec layer) -- run a ``spec/sequences`` sequence with any semantics backend;
* :mod:`tilecheck.amdgpu.campaign` -- ``verify_sequence``: the sequence against correctly rounded
  division over a generated campaign (uses the reference model).

Nothing here imports Z3; ``tilecheck.smt.amdgpu`` builds the symbolic counterparts.
"""
