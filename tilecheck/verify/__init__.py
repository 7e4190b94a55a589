"""``tilecheck verify``: run every check that applies to forms, programs and sequences.

:mod:`.targets` turns command-line targets into work items, :mod:`.checks` holds the per-form
checks (a registry later components add to), :mod:`.runner` runs them and :mod:`.report` prints
the table and the JSON report.
"""
