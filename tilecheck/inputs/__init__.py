"""Input generators: the bit patterns every campaign, sweep and check draws its operands from.

* :mod:`tilecheck.inputs.edges` -- the edge-class patterns of a format;
* :mod:`tilecheck.inputs.generators` -- fast numpy generators (edge-biased, hard divisions and
  square roots, FTZ boundaries);
* :mod:`tilecheck.inputs.boundaries` -- operands whose results sit on rounding and range boundaries;
* :mod:`tilecheck.inputs.exhaustive` -- the chunks of an exhaustive sweep.

numpy and :mod:`tilecheck.formats` only: the model, the Z3 encoding and the oracles are judged on
these inputs, so none of them is imported here. The Hypothesis strategies for test suites are in
:mod:`tilecheck.testing`.
"""
