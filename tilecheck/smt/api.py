"""The public Z3 entry points on PTX forms (re-exported by :mod:`tilecheck.smt`).

Each takes a :class:`~tilecheck.spec.forms.Form` or a spelling, resolved in ``db`` (default: the
spec database under the spec root: these are entry points). ``z3`` loads when one is called, so
``import tilecheck.smt`` works without it.
"""

from __future__ import annotations

from tilecheck.spec.contract import ULP_READING_DEFAULT
from tilecheck.spec.database import load_database
from tilecheck.spec.forms import Form
from tilecheck.spec.registry import TININESS_DEFAULT


def _resolve(form, db):
    """``form`` as a :class:`~tilecheck.spec.forms.Form`: a spelling is looked up in ``db``."""
    return form if isinstance(form, Form) else (db or load_database()).form(str(form))


def encode(form, *terms, tininess: str = TININESS_DEFAULT, memory=None, ulp_reading: str = ULP_READING_DEFAULT, db=None):
    """See :func:`tilecheck.smt.forms.encode`."""
    from tilecheck.smt import forms

    return forms.encode(_resolve(form, db), *terms, tininess=tininess, memory=memory, ulp_reading=ulp_reading)


def encode_bits(form, *terms, tininess: str = TININESS_DEFAULT, db=None):
    """See :func:`tilecheck.smt.forms.encode_bits`."""
    from tilecheck.smt import forms

    return forms.encode_bits(_resolve(form, db), *terms, tininess=tininess)


def encode_contract(form, result, *operands, tininess: str = TININESS_DEFAULT, ulp_reading: str = ULP_READING_DEFAULT, db=None):
    """See :func:`tilecheck.smt.forms.encode_contract`."""
    from tilecheck.smt import forms

    return forms.encode_contract(_resolve(form, db), result, *operands, tininess=tininess, ulp_reading=ulp_reading)


def evaluate(form, *operand_bits, tininess: str = TININESS_DEFAULT, db=None):
    """See :func:`tilecheck.smt.forms.evaluate`."""
    from tilecheck.smt import forms

    return forms.evaluate(_resolve(form, db), *operand_bits, tininess=tininess)


def allowed(form, result_bits, *operand_bits, tininess: str = TININESS_DEFAULT, ulp_reading: str = ULP_READING_DEFAULT, db=None):
    """See :func:`tilecheck.smt.forms.allowed`."""
    from tilecheck.smt import forms

    return forms.allowed(_resolve(form, db), result_bits, *operand_bits, tininess=tininess, ulp_reading=ulp_reading)
