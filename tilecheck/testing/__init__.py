"""Test and fuzzing helpers that other projects (and tilecheck's own tests) can import.

* :mod:`tilecheck.testing.strategies` -- Hypothesis strategies (edge-biased bit patterns, hard
  divisions and square roots, FTZ boundary cases);
* :mod:`tilecheck.testing.construct` -- the exact scalar constructions behind them and behind
  the numpy generators of :mod:`tilecheck.inputs.generators`;
* :mod:`tilecheck.testing.profiles` -- Hypothesis profiles ``ci`` and ``deep``.

Production code never imports this package (its campaigns draw from :mod:`tilecheck.inputs`).
Importing this package imports none of its modules (Hypothesis is only needed by ``strategies``
and ``profiles``).
"""
