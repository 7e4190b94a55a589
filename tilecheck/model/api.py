"""Public entry points of the reference model: ``ieee_op``, ``evaluate``, ``allowed``,
``allowed_results``, ``reference``, ``reading_used``.

Values are bit patterns: Python ints or unsigned integer arrays in, arrays of the format's
container dtype out (a numpy scalar when every operand was a scalar). Packed forms (f16x2,
bf16x2, f32x2) take and return whole containers and work lane by lane, element 0 in the low half.

Approximate forms have a set of allowed results per input. :func:`allowed` judges one result;
:func:`allowed_results` lists them all, for a verifier that tries every value an approximate
instruction may return::

    r = allowed_results("rcp.approx.f32", x_bits)          # ulp_reading="either" by default
    r.lo, r.hi        # inclusive ends, in real-number order (-0 just below +0), of a range of
                      # patterns: every pattern between them whose magnitude is a multiple of
                      # r.stride is allowed (stride 2**32 for the upper-word .ftz.f64 forms,
                      # whose low result word is zero; else 1). r.empty: the range is empty.
    r.extra, r.extra_used   # (..., 2) further allowed non-NaN patterns (a flushed zero of .ftz
                      # forms outside the range); slots with extra_used False are unused
    r.nan, r.nan_bits # a NaN may be returned; nan_bits (..., 1): the one pattern required, or 0
                      # for any NaN (for the upper-word forms: any NaN with a zero low word)
    r.unbounded       # the contract bounds nothing here (div.approx, subnormal divisor, no .ftz):
                      # any pattern is allowed (lo/hi then span -inf..+inf and nan is True)
    r.reading         # the reading applied: either | exact | correctly-rounded | relative | absolute | none
    r.contains(bits)  # membership, for checks

No other pattern is allowed: ``allowed(form, v, *ops, ulp_reading=...)`` is true exactly for the
members (the tests check this around every range). Exact forms give ``lo == hi ==`` the
correctly rounded result, or a NaN entry per the form's NaN policy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tilecheck.errors import ApproximateFormError, OperandError, ShapeMismatchError, UsageError
from tilecheck.formats import Format, get_format
from tilecheck.model import contracts, instructions, ops
from tilecheck.model.dispatch import CHUNK, compute  # noqa: F401  (CHUNK: the block size callers size runs by)
from tilecheck.model.xp import broadcast_all, namespace, u64
from tilecheck.spec.contract import ULP_READING_DEFAULT, applied_reading, check_ulp_reading
from tilecheck.spec.database import load_database
from tilecheck.spec.forms import Form
from tilecheck.spec.registry import ROUNDINGS, TININESS, TININESS_DEFAULT
from tilecheck.spec.types import PTX_TYPES

"""Where ``.ftz`` judges a result subnormal when a form does not say: on the rounded result.

NVIDIA does not document it; "after rounding" matches how the hardware's FTZ multiply-add units are
described and is the model's best evidence until a GPU run settles it (see the FTZ boundary cases
the differential engine generates)."""


def check_tininess(tininess) -> str:
    """``tininess`` if it is one of :data:`TININESS`, else a UsageError listing the valid values."""
    if not isinstance(tininess, str) or tininess not in TININESS:
        raise UsageError(f"tininess must be one of {', '.join(repr(t) for t in TININESS)}, got {tininess!r}")
    return tininess


def broadcast(xp, arrays, names):
    """``arrays`` broadcast to one shape; ShapeMismatchError naming each operand and its shape."""
    try:
        return broadcast_all(xp, *arrays)
    except ValueError:
        shapes = ", ".join(f"{n} {tuple(getattr(a, 'shape', ()))}" for n, a in zip(names, arrays))
        raise ShapeMismatchError(f"operand shapes do not broadcast together: {shapes}") from None


def _as_bits(xp, value, width: int, where: str):
    """Validate and widen one operand (int or unsigned/non-negative integer array) to uint64."""
    if isinstance(value, (bool, np.bool_)):
        raise OperandError(f"{where}: expected bit patterns, got a boolean")
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if v < 0 or v >> width:
            raise OperandError(f"{where}: {v:#x} is not a {width}-bit pattern")
        return xp.asarray(v, dtype=xp.uint64)
    arr = xp.asarray(value)
    if arr.dtype.kind == "u" and arr.dtype.itemsize * 8 <= width:
        return arr  # already a container of at most this width: nothing to check or convert
    if arr.dtype.kind not in "iu":
        raise OperandError(f"{where}: bit patterns must be integers, got dtype {arr.dtype} "
                           "(use .view() on float arrays to get their bits)")
    if arr.dtype.kind == "i" and arr.size and bool((arr < 0).any()):
        raise OperandError(f"{where}: negative values are not bit patterns")
    wide = arr.astype(xp.uint64)
    if width < 64 and wide.size and bool((wide >> u64(xp, width)).any()):
        raise OperandError(f"{where}: values do not fit in {width} bits")
    return wide


def _finish(xp, out, dtype, scalar: bool):
    out = out.astype(dtype, copy=False)
    return out[()] if scalar else out


def _is_scalar(values) -> bool:
    return all(isinstance(v, (int, np.integer)) or (hasattr(v, "ndim") and v.ndim == 0) for v in values)


def ieee_op(op: str, fmt: str | Format, rounding: str, *operand_bits, ftz: bool = False,
            tininess: str = TININESS_DEFAULT, nan: int | None = None):
    """Correctly rounded IEEE ``op`` on bit patterns of format ``fmt``.

    ``op`` is one of add, sub, mul, fma, div, sqrt, rcp; ``rounding`` one of rn, rz, rm, rp;
    ``ftz`` flushes subnormal inputs and results to sign-preserving zero (``tininess`` "after" or
    "before" rounding decides which results count as subnormal). NaN results: a NaN operand is
    returned quieted (the first in operand order); invalid operations give the format's default
    NaN, or ``nan`` when given (``nan`` then also replaces propagated NaNs).

    Example: ``ieee_op("div", "f16", "rz", 0x3c00, 0x4200)`` -> ``0x3555`` (1/3 rounded toward 0).
    ``fmt`` is a :class:`Format` (``form.format``, ``db.formats[...]``) or a name, looked up in the
    default spec root's formats.
    """
    fmt = get_format(fmt)
    if op not in ops.OPS:
        raise UsageError(f"unknown operation {op!r}; known: {', '.join(ops.OPS)}")
    if rounding not in ROUNDINGS:
        raise UsageError(f"unknown rounding {rounding!r}; known: rn, rz, rm, rp")
    check_tininess(tininess)
    if fmt.specials != "ieee":
        raise UsageError(f"{fmt.name} is not an IEEE-style format; the model does arithmetic on IEEE formats only")
    arity = ops.ARITY[op]
    if len(operand_bits) != arity:
        raise UsageError(f"{op} takes {arity} operand(s), got {len(operand_bits)}")
    xp = namespace(*operand_bits)
    arrays = [_as_bits(xp, v, fmt.width, f"{op} operand {i + 1}") for i, v in enumerate(operand_bits)]
    arrays = broadcast(xp, arrays, [f"{op} operand {i + 1}" for i in range(len(arrays))])
    rule = ops.NanRule.ieee(fmt) if nan is None else ops.NanRule(False, nan, fixed=nan)
    out = compute(xp, op, fmt, arrays, ops.Mode(rounding, ftz, tininess), rule)
    return _finish(xp, out, fmt.uint, _is_scalar(operand_bits))


# ---------------------------------------------------------------------------------------------
# PTX forms


def _form(form) -> Form:
    """A form, or the form a spelling names in the default spec database: the functions of this
    module are tilecheck's public API root (``tilecheck.evaluate(...)``), the one place that
    resolves spellings without a database argument."""
    if isinstance(form, Form):
        return form
    return load_database().form(str(form))


def nan_rule(form: Form, fmt: Format) -> ops.NanRule:
    """The model's NaN choice for a form: its policy's bits (propagating payloads for ``propagate``)."""
    policy = form.nan.policy
    bits = form.nan.bits if form.nan.bits is not None else fmt.canonical_nan
    if policy == "propagate":
        return ops.NanRule(True, bits)
    return ops.NanRule(False, bits, fixed=bits)


def split_lanes(xp, container, fmt: Format, lanes: int):
    """Unpack a packed container array into ``lanes`` arrays of element bits (element 0 = low)."""
    if lanes == 1:
        return [container]
    # widen first: numpy 1.x keeps a narrow array's dtype when it meets a uint64 scalar
    wide = container.astype(xp.uint64, copy=False)
    mask = u64(xp, (1 << fmt.width) - 1)
    return [(wide >> u64(xp, i * fmt.width)) & mask for i in range(lanes)]


def join_lanes(xp, parts, fmt: Format):
    """Inverse of :func:`split_lanes`."""
    # Lane results come back in the element's dtype (uint16 for f16x2); under numpy 1.x
    # ``uint16 << np.uint64(16)`` stays uint16 and drops the high lane, so widen explicitly.
    out = parts[0].astype(xp.uint64, copy=False)
    for i, p in enumerate(parts[1:], start=1):
        out = out | (p.astype(xp.uint64, copy=False) << u64(xp, i * fmt.width))
    return out


def _operands(form: Form, operand_bits, xp):
    sources = form.sources
    if len(operand_bits) != len(sources):
        raise UsageError(f"{form.name} takes {len(sources)} source operand(s) "
                         f"({', '.join(o.name for o in sources)}), got {len(operand_bits)}")
    bits = form.container_bits
    arrays = [_as_bits(xp, v, bits, f"{form.name} operand {o.name}") for v, o in zip(operand_bits, sources)]
    return broadcast(xp, arrays, [f"{form.name} operand {o.name}" for o in sources]) if arrays else arrays


def _exact_lanes(form: Form, arrays, xp, tininess: str):
    """Evaluate an exact form on uint64 container arrays; returns uint64 containers."""
    fmt = form.format
    params = form.semantics.params
    op = form.semantics.function
    mode = ops.Mode(params.get("rounding", "rn"), bool(params.get("ftz", False)), tininess)
    rule = nan_rule(form, fmt)
    lanes = form.lanes
    per_operand = [split_lanes(xp, a, fmt, lanes) for a in arrays]
    results = []
    with np.errstate(all="ignore"):
        for lane in range(lanes):
            out = compute(xp, op, fmt, [p[lane] for p in per_operand], mode, rule)
            if params.get("sat"):
                out = ops._saturate(xp, fmt, out)
            results.append(out)
    return join_lanes(xp, results, fmt)


def evaluate(form, *operand_bits, tininess: str = TININESS_DEFAULT, destinations: int = 1):
    """The result of a PTX form on operand bits, e.g. ``evaluate("div.rn.ftz.f32", a, b)``.

    NaN results take the form's NaN policy (``unspecified``: the spec's representative bits,
    0x7fffffff for f32; ``propagate``: the first NaN operand quieted). Approximate forms have no
    single result: they raise :class:`~tilecheck.errors.ApproximateFormError` pointing to
    :func:`allowed`. Unknown or illegal spellings raise ``UnknownFormError``/``IllegalFormError``.

    The instructions around the arithmetic (kind ``function``: ``cvt setp selp mov abs neg min max
    copysign testp``, integer and logic ops) take their operands in PTX order, each the pattern of
    its own type (``evaluate("cvt.rn.f16.f32", x)`` takes f32 bits and returns f16 bits;
    predicate operands and results are bool arrays: ``evaluate("selp.b32", a, b, p)``,
    ``evaluate("setp.lt.f32", a, b)``). ``destinations=2`` asks for both destinations of
    ``setp ... p|q`` (a tuple; for f16x2/bf16x2 the low and the high lane) and unpacks a ``mov``
    into that many parts (``evaluate("mov.b32", r, destinations=2)`` -> (low 16 bits, high 16
    bits)); a tuple operand of a ``mov`` packs (``evaluate("mov.b32", (lo, hi))``: the first
    element is the least significant).
    """
    form = _form(form)
    check_tininess(tininess)
    if form.kind == "function":
        return _evaluate_function(form, operand_bits, tininess, destinations)
    if destinations != 1:
        raise UsageError(f"{form.name} has one destination, not {destinations}")
    if form.kind == "contract":
        raise ApproximateFormError(
            f"{form.name} is approximate: its results are a contract ({_contract_text(form)}), not one value; "
            f"use tilecheck.allowed({form.name!r}, result_bits, *operand_bits) to judge a result, or "
            f"tilecheck.model.api.reference({form.name!r}, ...) for the model's representative value")
    if form.kind != "exact":
        raise UsageError(f"{form.name} moves bits ({form.semantics.key}); there is no arithmetic result to evaluate")
    xp = namespace(*operand_bits)
    arrays = _operands(form, operand_bits, xp)
    out = _exact_lanes(form, arrays, xp, tininess)
    dtype = {16: xp.uint16, 32: xp.uint32, 64: xp.uint64}[form.container_bits]
    return _finish(xp, out, dtype, _is_scalar(operand_bits))


_UINT = {1: "bool_", 8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}
"""dtype attribute names by width (``bool_``: numpy before 2.0 has no ``numpy.bool``; CuPy has both)."""


def _function_operands(form: Form, operand_bits, xp):
    """Operand arrays of a ``function`` form: uint64 patterns of each operand's type, bool for
    predicates (broadcast together)."""
    sources = form.sources
    if len(operand_bits) != len(sources):
        raise UsageError(f"{form.name} takes {len(sources)} source operand(s) "
                         f"({', '.join(o.name for o in sources)}), got {len(operand_bits)}")
    arrays = []
    for value, o in zip(operand_bits, sources):
        where = f"{form.name} operand {o.name}"
        if o.ptx_type == "pred":
            arr = xp.asarray(value)
            if arr.dtype != bool and not (arr.dtype.kind in "iu" and bool(((arr == 0) | (arr == 1)).all())):
                raise OperandError(f"{where}: a predicate must be a boolean (or 0/1), got {value!r}")
            arrays.append(arr.astype(bool))
        else:
            arrays.append(_as_bits(xp, value, o.container_bits, where).astype(xp.uint64))
    return broadcast_all(xp, *arrays) if arrays else arrays


def _finish_function(xp, form: Form, out, ptx_type: str, scalar: bool):
    dtype = getattr(xp, _UINT[PTX_TYPES[ptx_type].bits])
    return _finish(xp, xp.asarray(out), dtype, scalar)


def _evaluate_function(form: Form, operand_bits, tininess: str, destinations: int):
    if tininess not in TININESS:
        raise UsageError(f"tininess must be 'after' or 'before', got {tininess!r}")
    if not isinstance(destinations, int) or isinstance(destinations, bool) or destinations < 1:
        raise UsageError(f"destinations must be a positive int, got {destinations!r}")
    if form.semantics.key == "bits.mov" and (destinations > 1 or any(isinstance(v, tuple) for v in operand_bits)):
        return _mov_vector(form, operand_bits, destinations)
    xp = namespace(*operand_bits)
    arrays = _function_operands(form, operand_bits, xp)
    out = instructions.apply(xp, form, arrays, tininess, destinations)
    scalar = _is_scalar(operand_bits)
    d_type = form.destinations[0].ptx_type
    if isinstance(out, tuple):
        return tuple(_finish_function(xp, form, o, d_type, scalar) for o in out)
    return _finish_function(xp, form, out, d_type, scalar)


def _mov_vector(form: Form, operand_bits, destinations: int):
    """``mov`` pack ``d, {a, b, ...}`` (a tuple operand) and unpack ``{a, b, ...}, s``."""
    width = form.destinations[0].container_bits
    if len(operand_bits) != 1:
        raise UsageError(f"{form.name} takes one source operand (a tuple to pack), got {len(operand_bits)}")
    (value,) = operand_bits
    if isinstance(value, tuple):
        if destinations != 1:
            raise UsageError(f"{form.name}: pack or unpack, not both")
        parts = len(value)
        if parts < 2 or width % parts or width // parts < 8:
            raise UsageError(f"{form.name} packs 2 or more parts of at least 8 bits into {width} bits, got {parts}")
        part = width // parts
        xp = namespace(*value)
        arrays = [_as_bits(xp, v, part, f"{form.name} part {i}").astype(xp.uint64) for i, v in enumerate(value)]
        arrays = broadcast_all(xp, *arrays)
        out = arrays[0]
        for i, a in enumerate(arrays[1:], start=1):
            out = out | (a << u64(xp, i * part))  # the first element is the least significant
        dtype = getattr(xp, _UINT[width])
        return _finish(xp, out, dtype, _is_scalar(value))
    parts = destinations
    if width % parts or width // parts < 8:
        raise UsageError(f"{form.name} cannot unpack {width} bits into {parts} parts")
    part = width // parts
    xp = namespace(value)
    bits = _as_bits(xp, value, width, f"{form.name} operand").astype(xp.uint64)
    mask = u64(xp, (1 << part) - 1)
    dtype = getattr(xp, _UINT[part])
    return tuple(_finish(xp, (bits >> u64(xp, i * part)) & mask, dtype, _is_scalar([value])) for i in range(parts))


def _contract_text(form: Form) -> str:
    c = form.contract
    if c is None:
        return "no contract"
    return c.describe() + (f", {c.notes}" if c.notes else "")


def reference(form, *operand_bits, tininess: str = TININESS_DEFAULT):
    """The model's representative result: the exact result for exact forms; for approximate
    forms the correctly rounded (round-to-nearest) value of the exact function under the form's
    flush-to-zero setting, which its contract always allows."""
    form = _form(form)
    check_tininess(tininess)
    if form.kind in ("exact", "function"):
        return evaluate(form, *operand_bits, tininess=tininess)
    xp = namespace(*operand_bits)
    arrays = _operands(form, operand_bits, xp)
    if form.lanes != 1:  # packed (ex2.approx.f16x2): each element by the same contract
        fmt = form.format
        per = [split_lanes(xp, a, fmt, form.lanes) for a in arrays]
        out = join_lanes(xp, [contracts.reference_value(xp, form, [p[i] for p in per], tininess)
                              for i in range(form.lanes)], fmt)
    else:
        out = contracts.reference_value(xp, form, arrays, tininess)
    dtype = {16: xp.uint16, 32: xp.uint32, 64: xp.uint64}[form.container_bits]
    return _finish(xp, out, dtype, _is_scalar(operand_bits))


def bound_decides(form, *operand_bits):
    """Per lane (bool array): does the error bound of approximate ``form`` alone decide its allowed
    results for these operands -- no special-value row, no domain rule? (Those lanes' results
    scale with the operands where every value involved stays normal.)"""
    form = _form(form)
    if form.kind != "contract":
        raise UsageError(f"{form.name} is not approximate: it has no error bound")
    xp = namespace(*operand_bits)
    return contracts.bound_decides(xp, form, _operands(form, operand_bits, xp))


def special_lane_key(form, *operand_bits):
    """(special, key) per lane for approximate ``form``, or None: the lanes its special-value
    table decides and, for those, a key such that lanes with equal keys have equal allowed
    results and representative values (:func:`tilecheck.model.contracts.special_lane_key`)."""
    form = _form(form)
    if form.kind != "contract":
        raise UsageError(f"{form.name} is not approximate: it has no special-value table")
    xp = namespace(*operand_bits)
    return contracts.special_lane_key(xp, form, _operands(form, operand_bits, xp))


def reading_used(form, ulp_reading: str = ULP_READING_DEFAULT) -> str:
    """The reading :func:`allowed` applies to ``form`` for ``ulp_reading``: ``either``, ``exact`` or
    ``correctly-rounded`` for ulp bounds, ``relative`` for relative-error bounds (one reading only),
    ``none`` for exact forms (see :mod:`tilecheck.spec.contract`)."""
    form = _form(form)
    return applied_reading(form.contract if form.kind == "contract" else None, ulp_reading)


def allowed(form, result_bits, *operand_bits, tininess: str = TININESS_DEFAULT,
            ulp_reading: str = ULP_READING_DEFAULT):
    """Is ``result_bits`` an acceptable result of ``form`` for these operands? (bool array)

    Exact forms: bit-equality with :func:`evaluate`, NaNs judged by the form's NaN policy
    (``unspecified``: any NaN where a NaN is due; ``propagate``: a NaN operand's payload quieted,
    any NaN for invalid operations; ``canonical``: exactly the canonical bits). Approximate forms:
    the contract -- exact special cases plus the documented error bound over its domain, an ulp
    bound read per ``ulp_reading`` (``either`` -- the default -- accepts what the ``exact`` or the
    ``correctly-rounded`` reading accepts; :func:`reading_used` names the reading applied).
    """
    check_ulp_reading(ulp_reading)
    form = _form(form)
    check_tininess(tininess)
    if form.kind == "function":
        return _allowed_function(form, result_bits, operand_bits, tininess)
    xp = namespace(result_bits, *operand_bits)
    arrays = _operands(form, operand_bits, xp)
    bits = form.container_bits
    result = _as_bits(xp, result_bits, bits, f"{form.name} result")
    if arrays:
        result, *arrays = broadcast(xp, [result, *arrays],
                                    [f"{form.name} result", *(f"{form.name} operand {o.name}" for o in form.sources)])
    if form.kind == "contract" and form.lanes != 1:
        # packed (ex2.approx.f16x2): every element within the contract, each on its own
        fmt = form.format
        per = [split_lanes(xp, a, fmt, form.lanes) for a in arrays]
        ok = None
        for i, r in enumerate(split_lanes(xp, result, fmt, form.lanes)):
            lane = contracts.allowed(xp, form, r, [p[i] for p in per], tininess, ulp_reading)
            ok = lane if ok is None else ok & lane
    elif form.kind == "contract":
        ok = contracts.allowed(xp, form, result, arrays, tininess, ulp_reading)
    elif form.kind == "exact":
        ok = _allowed_exact(xp, form, result, arrays, tininess)
    else:
        raise UsageError(f"{form.name} moves bits ({form.semantics.key}); compare the memory contents instead")
    return ok[()] if (_is_scalar(operand_bits) and _is_scalar([result_bits])) else ok


def _allowed_function(form: Form, result_bits, operand_bits, tininess: str):
    """Bit equality with :func:`evaluate`; where the form's NaN policy is ``unspecified`` any NaN
    of the destination format is accepted where a NaN is due (per lane for packed types)."""
    expected = _evaluate_function(form, operand_bits, tininess, 1)
    xp = namespace(result_bits, *operand_bits)
    d = form.destinations[0]
    if d.ptx_type == "pred":
        got = xp.asarray(result_bits).astype(bool)
        ok = got == xp.asarray(expected)
    else:
        got = _as_bits(xp, result_bits, d.container_bits, f"{form.name} result").astype(xp.uint64)
        exp = xp.asarray(expected).astype(xp.uint64)
        ok = got == exp
        if form.nan.policy == "unspecified" and d.element_format is not None:
            fmt = d.format
            got_l = split_lanes(xp, got, fmt, d.lanes)
            exp_l = split_lanes(xp, exp, fmt, d.lanes)
            lanes_ok = None
            for g, e in zip(got_l, exp_l):
                lane = (g == e) | (_is_nan(xp, fmt, g) & _is_nan(xp, fmt, e))
                lanes_ok = lane if lanes_ok is None else lanes_ok & lane
            ok = lanes_ok
    left_open = instructions.unspecified(xp, form, _function_operands(form, operand_bits, xp))
    if left_open is not None:  # a result the ISA leaves open (integer division by zero): any stands
        ok = ok | left_open
    scalar = _is_scalar(operand_bits) and _is_scalar([result_bits])
    return ok[()] if scalar and hasattr(ok, "shape") else ok


def leaves_results_open(form) -> bool:
    """Whether some results of ``form`` are left open by the ISA (:func:`unspecified` can be True)."""
    form = _form(form)
    return form.kind == "function" and form.semantics.key in instructions.OPEN_KEYS


def unspecified_why(form, *operand_bits) -> str | None:
    """Why the ISA leaves ``form``'s result on these operand patterns (ints) open, or None where it
    does not (:func:`unspecified`)."""
    form = _form(form)
    if not leaves_results_open(form):
        return None
    return instructions.unspecified_why(form, *[int(v) for v in operand_bits])


def unspecified(form, *operand_bits):
    """Per input, True where the ISA leaves ``form``'s result open, so that any result stands
    (``div.s32`` and ``rem.u16`` by zero, the most negative ``s32`` over -1, a ``rem.s32`` of
    operands of different signs: :func:`tilecheck.model.instructions.integer_quotient`); False
    everywhere for a form whose every result is specified. :func:`evaluate` gives a representative
    there, and :func:`allowed` accepts any result."""
    form = _form(form)
    xp = namespace(*operand_bits)
    if form.kind != "function":
        arrays = broadcast_all(xp, *[xp.asarray(v) for v in operand_bits]) if operand_bits else []
        return xp.zeros(arrays[0].shape if arrays else (), dtype=bool)
    arrays = _function_operands(form, operand_bits, xp)
    out = instructions.unspecified(xp, form, arrays)
    if out is None:
        out = xp.zeros(arrays[0].shape if arrays else (), dtype=bool)
    return out[()] if _is_scalar(operand_bits) else out


@dataclass(frozen=True, eq=False)
class AllowedResults:
    """Every result a form may return, per lane (see the module docstring for the fields).

    Arrays have the broadcast shape of the operands (``extra``/``extra_used``/``nan_bits`` one
    more axis); patterns are of the form's container dtype.
    """

    form: str
    reading: str
    lo: object
    hi: object
    empty: object
    extra: object
    extra_used: object
    nan: object
    nan_bits: object
    unbounded: object
    stride: int
    sign_bit: int
    magnitude_mask: int
    exponent_mask: int

    def _key(self, xp, bits):
        b = bits.astype(xp.uint64)
        m = ((b & u64(xp, self.magnitude_mask)) // u64(xp, self.stride)).astype(xp.int64)
        return xp.where((b & u64(xp, self.sign_bit)) != 0, -m - 1, m)

    def take(self, index):
        """The allowed results of the lanes ``index`` picks (an integer array over the first axis):
        lane k of the result is lane ``index[k]`` of this one."""
        return replace(self, lo=self.lo[index], hi=self.hi[index], empty=self.empty[index],
                       extra=self.extra[index], extra_used=self.extra_used[index], nan=self.nan[index],
                       nan_bits=self.nan_bits[index], unbounded=self.unbounded[index])

    def contains(self, bits):
        """Is each pattern of ``bits`` (broadcast against the lanes) an allowed result?"""
        xp = namespace(self.lo)
        b = xp.broadcast_to(xp.asarray(bits).astype(xp.uint64), self.lo.shape)
        mag = b & u64(xp, self.magnitude_mask)
        is_nan = mag > u64(xp, self.exponent_mask)
        on_grid = (mag % u64(xp, self.stride)) == 0
        k = self._key(xp, b)
        in_range = ~self.empty & (k >= self._key(xp, self.lo)) & (k <= self._key(xp, self.hi)) & on_grid
        in_extra = xp.any(self.extra_used & (self.extra == b[..., None]), axis=-1)
        pinned = xp.any(self.nan_bits != 0, axis=-1)
        nan_ok = self.nan & xp.where(pinned, xp.any(self.nan_bits == b[..., None], axis=-1), on_grid)
        return self.unbounded | xp.where(is_nan, nan_ok, in_range | in_extra)


def results_within(inner: AllowedResults, outer: AllowedResults):
    """Per lane: is every result ``inner`` allows also one ``outer`` allows? Both of one format
    (the same grid). Certain where True; False also where it cannot tell: where either bounds
    nothing (no claim either way). ``outer``'s run counts with its extra values where they extend
    it (a flushed zero next to it) or are ``inner``'s one value."""
    if (inner.stride, inner.sign_bit, inner.magnitude_mask) != (outer.stride, outer.sign_bit, outer.magnitude_mask):
        raise UsageError(f"results_within: {inner.form} and {outer.form} have different result formats")
    xp = namespace(inner.lo)
    lo, hi = outer._key(xp, outer.lo), outer._key(xp, outer.hi)
    slots = outer.extra.shape[-1]
    for _ in range(slots):  # each pass joins at most one adjacent extra value to each end
        for j in range(slots):
            e = outer.extra[..., j]
            k = outer._key(xp, e)
            usable = outer.extra_used[..., j] & ~outer.empty & \
                ((e.astype(xp.uint64) & u64(xp, outer.magnitude_mask)) % u64(xp, outer.stride) == 0)
            lo = xp.where(usable & (k == lo - 1), k, lo)
            hi = xp.where(usable & (k == hi + 1), k, hi)
    k_lo, k_hi = inner._key(xp, inner.lo), inner._key(xp, inner.hi)
    single = (k_lo == k_hi) & outer.contains(inner.lo)
    run = inner.empty | single | (~outer.empty & (k_lo >= lo) & (k_hi <= hi))
    extra = xp.ones(run.shape, dtype=bool)
    for j in range(inner.extra.shape[-1]):
        extra = extra & (~inner.extra_used[..., j] | outer.contains(inner.extra[..., j]))
    pinned_in = xp.any(inner.nan_bits != 0, axis=-1)
    pinned_out = xp.any(outer.nan_bits != 0, axis=-1)
    # any NaN inner may return must be one outer allows: its pinned pattern, or (unpinned) any NaN
    nan = ~inner.nan | xp.where(pinned_in, outer.contains(inner.nan_bits[..., 0]), outer.nan & ~pinned_out)
    return ~inner.unbounded & ~outer.unbounded & run & extra & nan


def results_disjoint(inner: AllowedResults, outer: AllowedResults):
    """Per lane: is no result ``inner`` allows one ``outer`` allows? Both of one format (the same
    grid). Certain where True; False also where it cannot tell: where either bounds nothing. (Then
    whatever ``inner``'s instruction returns, ``outer`` refuses it.)"""
    if (inner.stride, inner.sign_bit, inner.magnitude_mask) != (outer.stride, outer.sign_bit, outer.magnitude_mask):
        raise UsageError(f"results_disjoint: {inner.form} and {outer.form} have different result formats")
    xp = namespace(inner.lo)
    k_lo, k_hi = inner._key(xp, inner.lo), inner._key(xp, inner.hi)
    o_lo, o_hi = outer._key(xp, outer.lo), outer._key(xp, outer.hi)
    meet = ~inner.empty & ~outer.empty & (k_lo <= o_hi) & (o_lo <= k_hi)  # the runs overlap (a common grid)
    for j in range(outer.extra.shape[-1]):  # an extra value of outer inside inner's run
        e = outer._key(xp, outer.extra[..., j])
        meet = meet | (outer.extra_used[..., j] & ~inner.empty & (k_lo <= e) & (e <= k_hi))
    for j in range(inner.extra.shape[-1]):  # an extra value of inner that outer allows
        meet = meet | (inner.extra_used[..., j] & outer.contains(inner.extra[..., j]))
    meet = meet | (inner.nan & outer.nan)  # (any NaN of both: counted as shared, whatever the payloads)
    return ~inner.unbounded & ~outer.unbounded & ~meet


def allowed_results(form, *operand_bits, ulp_reading: str = ULP_READING_DEFAULT,
                    tininess: str = TININESS_DEFAULT) -> AllowedResults:
    """Every result ``form`` may return for these operands, per lane, as :class:`AllowedResults`.

    Approximate forms: the ranges of their contract under ``ulp_reading`` (exactly the values
    :func:`allowed` accepts with the same reading). Exact forms: ``lo == hi ==`` the correctly
    rounded result (``tininess`` as in :func:`evaluate`), or the NaN the form's policy allows
    (``propagate``: each NaN operand quieted). Packed forms are refused: give their elements to
    the scalar form.
    """
    check_ulp_reading(ulp_reading)
    form = _form(form)
    check_tininess(tininess)
    if form.kind not in ("contract", "exact"):
        raise UsageError(f"{form.name} moves bits ({form.semantics.key}); it has no arithmetic results")
    if form.lanes != 1:
        raise UsageError(f"{form.name} is packed: call allowed_results on the scalar form for each element")
    xp = namespace(*operand_bits)
    arrays = _operands(form, operand_bits, xp)
    fmt = form.format
    dtype = {16: xp.uint16, 32: xp.uint32, 64: xp.uint64}[form.container_bits]
    if form.kind == "contract":
        parts = contracts.results(xp, form, [a.astype(xp.uint64) for a in arrays], ulp_reading)
    else:
        parts = _exact_results(xp, form, fmt, arrays, tininess)
    return AllowedResults(
        form=form.name, reading=reading_used(form, ulp_reading),
        lo=parts["lo"].astype(dtype), hi=parts["hi"].astype(dtype), empty=parts["empty"],
        extra=parts["extra"].astype(dtype), extra_used=parts["extra_used"], nan=parts["nan"],
        nan_bits=parts["nan_bits"].astype(dtype), unbounded=parts["unbounded"], stride=parts["stride"],
        sign_bit=fmt.sign_mask, magnitude_mask=fmt.magnitude_mask, exponent_mask=fmt.exponent_mask)


def _exact_results(xp, form: Form, fmt: Format, arrays, tininess: str) -> dict:
    """The :class:`AllowedResults` arrays of a scalar exact form."""
    expected = _exact_lanes(form, arrays, xp, tininess).astype(xp.uint64)
    shape = expected.shape
    exp_nan = _is_nan(xp, fmt, expected)
    sources = [a.astype(xp.uint64) for a in arrays]
    policy = form.nan.policy
    if policy == "propagate":
        # a NaN operand comes back quieted (any of them); an invalid operation gives any NaN
        cols = [xp.where(exp_nan & _is_nan(xp, fmt, s), s | u64(xp, fmt.quiet_bit), u64(xp, 0)) for s in sources]
        nan_bits = xp.stack(cols, axis=-1) if cols else xp.zeros(shape + (0,), dtype=xp.uint64)
    elif policy == "canonical":
        nan_bits = xp.where(exp_nan, expected, u64(xp, 0)).reshape(shape + (1,))
    else:
        nan_bits = xp.zeros(shape + (1,), dtype=xp.uint64)
    return {"lo": xp.where(exp_nan, u64(xp, 0), expected), "hi": xp.where(exp_nan, u64(xp, 0), expected),
            "empty": exp_nan, "extra": xp.zeros(shape + (0,), dtype=xp.uint64),
            "extra_used": xp.zeros(shape + (0,), dtype=bool), "nan": exp_nan, "nan_bits": nan_bits,
            "unbounded": xp.zeros(shape, dtype=bool), "stride": 1}


def _allowed_exact(xp, form: Form, result, arrays, tininess: str):
    fmt = form.format
    expected = _exact_lanes(form, arrays, xp, tininess)
    lanes = form.lanes
    got_l = split_lanes(xp, result, fmt, lanes)
    exp_l = split_lanes(xp, expected, fmt, lanes)
    src_l = [split_lanes(xp, a, fmt, lanes) for a in arrays]
    ok = xp.ones(result.shape, dtype=bool)
    policy = form.nan.policy
    for lane in range(lanes):
        got, exp = got_l[lane], exp_l[lane]
        lane_ok = got == exp
        if policy in ("unspecified", "propagate"):
            got_nan = _is_nan(xp, fmt, got)
            exp_nan = _is_nan(xp, fmt, exp)
            if policy == "unspecified":
                lane_ok = lane_ok | (got_nan & exp_nan)
            else:
                # a NaN operand must come back quieted (any of them); invalid operations: any NaN
                nan_in = xp.zeros(got.shape, dtype=bool)
                payload_ok = xp.zeros(got.shape, dtype=bool)
                for s in src_l:
                    s_lane = s[lane]
                    s_nan = _is_nan(xp, fmt, s_lane)
                    nan_in = nan_in | s_nan
                    payload_ok = payload_ok | (s_nan & (got == (s_lane | u64(xp, fmt.quiet_bit))))
                lane_ok = lane_ok | (exp_nan & got_nan & ~nan_in) | (exp_nan & nan_in & payload_ok)
        ok = ok & lane_ok
    return ok


def _is_nan(xp, fmt: Format, bits):
    return (bits & u64(xp, fmt.magnitude_mask)) > u64(xp, fmt.exponent_mask)
