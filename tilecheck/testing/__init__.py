"""Test and fuzzing helpers that other projects (and tilecheck's own tests) can import.

* :mod:`tilecheck.testing.strategies` -- Hypothesis strategies (edge-biased bit patterns, hard
  divisions and square roots, FTZ boundary cases);
* :mod:`tilecheck.testing.generators` -- the same as fast numpy generators for campaigns;
* :mod:`tilecheck.testing.construct` -- the exact scalar constructions behind both;
* :mod:`tilecheck.testing.edges` -- the edge-class patterns of a format;
* :mod:`tilecheck.testing.profiles` -- Hypothesis profiles ``ci`` and ``deep``.

Importing this package imports none of them (Hypothesis is only needed by ``strategies`` and
``profiles``).
"""
