"""Input generators: the bit patterns every campaign, sweep and check draws its operands from.

* :mod:`tilecheck.inputs.edges` -- the edge-class patterns of a format;
* :mod:`tilecheck.inputs.generators` -- fast numpy generators (edge-biased, hard divisions and
  square roots, FTZ boundaries);
* :mod:`tilecheck.inputs.boundaries` -- operands whose results sit on rounding and range boundaries;
* :mod:`tilecheck.inputs.exhaustive` -- the chunks of an exhaustive sweep;
* :mod:`tilecheck.inputs.mix` -- the operand mix (proportions, hard-case constructions per
  operation), declared once for the numpy generators and the Hypothesis strategies;
* :mod:`tilecheck.inputs.forms` -- a whole form's source containers in that mix.
* :mod:`tilecheck.inputs.surround` -- operands of the ``function`` forms (cvt, setp, min/max,
  integer and logic ops): special pairs and edge sets, then random (``function_operands``).

numpy, :mod:`tilecheck.formats` and the spec registry only: the model, the Z3 encoding and the
oracles are judged on these inputs, so none of them is imported here. The Hypothesis strategies for test suites are in
:mod:`tilecheck.testing`.
"""
