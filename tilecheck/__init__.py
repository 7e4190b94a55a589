"""tilecheck: executable semantics of GPU division, reciprocal and square root instructions.

The reference semantics are importable directly::

    import numpy as np, tilecheck
    tilecheck.ieee_op("div", "f16", "rz", a_bits, b_bits)        # any format, op and rounding
    tilecheck.evaluate("div.rn.ftz.f32", a_bits, b_bits)          # a correctly rounded PTX form
    tilecheck.allowed("rcp.approx.f32", result_bits, a_bits)      # is a (GPU) result acceptable?
    tilecheck.allowed_results("rcp.approx.f32", a_bits)           # every acceptable result, per lane
    tilecheck.reading_used("rcp.approx.f32")                      # "either": how the ulp bound is read

Values are bit patterns: unsigned numpy arrays (or Python ints) in, unsigned numpy arrays out.
``import tilecheck`` needs only numpy, PyYAML and jsonschema; Z3 and CuPy load lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["ieee_op", "evaluate", "allowed", "allowed_results", "reading_used", "__version__"]


def __getattr__(name):
    # Lazy so that `import tilecheck` stays cheap and import-time side effects stay out.
    if name in ("ieee_op", "evaluate", "allowed", "allowed_results", "reading_used"):
        from tilecheck.model import api

        return getattr(api, name)
    raise AttributeError(f"module 'tilecheck' has no attribute {name!r}")
