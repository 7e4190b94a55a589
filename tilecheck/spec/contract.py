"""How an approximate form's error bound is read: the two ulp readings and the reading applied.

The PTX ISA bounds several approximate instructions in "ulp" without defining the term. Two
readings exist, and they allow different values:

* ``exact`` -- ``|r - x| <= k * ulp(x)``, measured from the exact real result ``x`` (``ulp(x)`` is
  the spacing of the result format in ``x``'s binade, never below the subnormal spacing).
  ``rcp.approx.f32(3)`` may then return only 0x3eaaaaaa or 0x3eaaaaab.
* ``correctly-rounded`` -- the CUDA C++ Programming Guide's: ``r`` is at most ``k`` representable
  values away from ``RN(x)``, the correctly rounded (nearest-even) result, counting the values of
  the format in real-number order (the two zeros are one value, infinity is one step past the
  largest finite number). ``rcp.approx.f32(3) = 0x3eaaaaac`` and ``div.full.f32(1, 3) =
  0x3eaaaaad`` are allowed under it, and so is the largest finite number for a result that
  overflows.

``either`` (the default) allows what either reading allows: where the documents do not say which
is meant, a verifier must not reject what one of them permits. Relative-error bounds
(``sqrt.approx``, ``rsqrt.approx``: ``|r - x| <= 2^t * |x|``) have one reading only -- relative
error is defined against the exact value -- so the option does not change them and the reading
reported is ``relative``. Exact (correctly rounded) forms report ``none``.
"""

from __future__ import annotations

from tilecheck.errors import UsageError

ULP_READINGS = ("either", "exact", "correctly-rounded")
"""The values of every ``ulp_reading`` option (API keyword, CLI ``--ulp-reading``)."""

ULP_READING_DEFAULT = "either"
"""Allow what either reading allows unless a stricter reading is asked for."""

APPLIED_READINGS = ULP_READINGS + ("relative", "none")
"""What :func:`applied_reading` may report."""


def check_ulp_reading(value) -> str:
    """``value`` if it names a reading, else :class:`~tilecheck.errors.UsageError`."""
    if value not in ULP_READINGS:
        raise UsageError(f"ulp_reading must be one of {', '.join(ULP_READINGS)}, got {value!r}")
    return value


def applied_reading(contract, requested: str = ULP_READING_DEFAULT) -> str:
    """The reading a contract check uses for ``requested``: ``none`` without a contract (exact
    forms), ``relative`` for relative-error bounds (one reading only), else the ulp reading --
    ``either`` narrowed to the readings the contract's source admits."""
    check_ulp_reading(requested)
    if contract is None:
        return "none"
    if contract.ulp is None:
        return "relative"
    if requested != "either":
        return requested
    readings = tuple(contract.readings)
    return "either" if len(readings) != 1 else readings[0]
