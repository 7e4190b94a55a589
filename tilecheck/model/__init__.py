"""The numpy reference model: bit-exact IEEE semantics and contracts for approximate forms.

numpy only (no z3, no cupy imports); functions take their array namespace from their inputs so
the same code runs on CuPy. Public entry points are in :mod:`tilecheck.model.api`.
"""
