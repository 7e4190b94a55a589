"""Slow, independent scalar oracles that the reference model is checked against.

* :mod:`tilecheck.oracle.mpfr` -- every op, every IEEE-like format, every rounding, FTZ with
  both tininess conventions, built on gmpy2/MPFR (``mpfr_op``);
* :mod:`tilecheck.oracle.rational` -- a second, MPFR-free scalar reference for the same ops
  without FTZ, from exact rationals and ``Format.from_fraction`` (``rational_op``);
* :mod:`tilecheck.oracle.softfloat` -- Berkeley SoftFloat 3 through ``softfloatpy``
  (f16/f32/f64, no FTZ; ``softfloat_op``);
* :mod:`tilecheck.oracle.testfloat` -- the TestFloat 3 vectors in ``../shared/vectors``
  (``available``, ``load``).
* :mod:`tilecheck.oracle.surround` -- the PTX forms of kind ``function`` (cvt, setp, selp, mov,
  abs, neg, min, max, copysign, testp, integer and logic ops) judged from the ISA text
  (``supports``, ``judge``, ``expected_text``, ``oracle_name``).

None of them imports :mod:`tilecheck.model`: an oracle that shared code with the model could share
its bugs. Import the submodule you need; this package imports nothing on its own (gmpy2 and
softfloatpy are optional test dependencies).
"""
