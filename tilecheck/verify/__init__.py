"""``tilecheck verify``: run every check that applies to forms, programs and sequences.

:mod:`.targets` turns command-line targets into work items, :mod:`.checks` holds the per-form
checks (schema, legality against ptxas, examples, contract, emission, ptxas, differential: the
``FORM_CHECKS`` table), :mod:`.programs` and :mod:`.sequences` the handlers of example
programs and instruction sequences, :mod:`.vectors` the check of recorded vector files,
:mod:`.runner` runs them and :mod:`.report` prints the table and the JSON report.
"""
