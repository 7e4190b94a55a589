"""Fixtures for the tile frontend tests: the PTX part of the spec database (see
:mod:`support.spec_root`)."""

from support.spec_root import ptx_db, ptx_env, ptx_spec_root  # noqa: F401  (fixtures, registered by name)
