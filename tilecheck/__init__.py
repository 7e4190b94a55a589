"""tilecheck: executable semantics of GPU division, reciprocal and square root instructions.

The reference semantics are importable directly::

    import numpy as np, tilecheck
    tilecheck.ieee_op("div", "f16", "rz", a_bits, b_bits)        # any format, op and rounding
    tilecheck.evaluate("div.rn.ftz.f32", a_bits, b_bits)          # a correctly rounded PTX form
    tilecheck.reference("rcp.approx.f32", a_bits)                 # the model's representative value
    tilecheck.allowed("rcp.approx.f32", result_bits, a_bits)      # is a (GPU) result acceptable?
    tilecheck.load_database()                                     # the spec database
    tilecheck.allowed_results("rcp.approx.f32", a_bits)           # every acceptable result, per lane
    tilecheck.reading_used("rcp.approx.f32")                      # "either": how the ulp bound is read

Values are bit patterns: unsigned numpy arrays (or Python ints) in, unsigned numpy arrays out.
Every error tilecheck raises is a :class:`TilecheckError`; its subclasses say which kind.
Tile programs: :mod:`tilecheck.program` (``from tilecheck.program import T``).

The names below load on first use (PEP 562), so that importing one submodule -- the legality
checker, say -- does not load the numpy model; ``dir(tilecheck)`` lists them all. ``import
tilecheck`` needs only numpy, PyYAML and jsonschema; Z3 and CuPy load when first used.
"""

import importlib

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "ieee_op": "tilecheck.model.api",
    "evaluate": "tilecheck.model.api",
    "reference": "tilecheck.model.api",
    "allowed": "tilecheck.model.api",
    "allowed_results": "tilecheck.model.api",
    "reading_used": "tilecheck.model.api",
    "load_database": "tilecheck.spec.database",
    **{name: "tilecheck.errors" for name in (
        "TilecheckError", "SpecError", "UnknownFormError", "IllegalFormError", "OperandError",
        "ApproximateFormError", "UsageError", "SemanticsError", "ToolNotFoundError", "DeviceUnavailableError",
        "ProgramError", "IllegalTileOpError", "EmitError")},
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tilecheck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
