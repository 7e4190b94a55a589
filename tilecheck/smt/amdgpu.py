"""Z3 encodings of AMD instruction forms (``spec/amdgpu``) and sequences (``spec/sequences``).

Bodies are interpreted by :class:`tilecheck.smt.semantics.Z3Backend` (floats as bit-vectors, so
the bodies' NaN bits survive). Contract forms (``v_rcp_*``) are encoded as the contract over a
fresh result variable, with the same exact test as :mod:`tilecheck.amdgpu.contract`: the bound
``|r - 1/x| <= B`` is checked as ``RU(r*x - 1) <= B|x|`` and ``RD(r*x - 1) >= -B|x|`` with FMAs in
binary64 (a representable threshold makes the directed roundings exact), so the whole encoding
stays in the FP and bit-vector theories.
"""

from __future__ import annotations

import itertools

import z3

from tilecheck.errors import UsageError
from tilecheck.formats import Format
from tilecheck.semantics import run
from tilecheck.smt import fp
from tilecheck.smt.semantics import Z3Backend
from tilecheck.spec.amdgpu import AmdForm
from tilecheck.spec.contract import Contract
from tilecheck.spec.sequence import Trace, lookup_sequence, mode_params, run_sequence

_fresh = itertools.count()


def encode_instruction(form: AmdForm, variant: str, operands: dict, mode: dict | None = None) -> dict:
    """Destination terms (bit-vectors for floats, Bools for lane bits) of one body-defined form."""
    v = form.variant(variant)
    if v.program is None:
        raise UsageError(f"{form.name} ({variant}) is a contract: use encode_rcp_contract")
    terms = {}
    for o in form.sources:
        t = operands[o.name]
        if o.kind == "float" and isinstance(t, int):
            t = z3.BitVecVal(t, form.operand_format(o.name).width)
        elif o.kind == "int" and isinstance(t, int):
            bits = form.int_bits(o.name)  # the low bits of the register, sign-extended to 32
            low = t & ((1 << bits) - 1)
            t = z3.BitVecVal((low ^ (1 << (bits - 1))) - (1 << (bits - 1)), 32)
        elif o.kind == "lane-bit" and isinstance(t, bool):
            t = z3.BoolVal(t)
        terms[o.name] = t
    return run(v.program, Z3Backend(), terms, mode_params(form, mode))


def _f64(fmt: Format, b, f64: Format) -> z3.FPRef:
    x = fp.to_fp(fmt, b)
    return x if fmt.name == "f64" else z3.fpToFP(z3.RNE(), x, fp.sort(f64))


def _const64(value: float, f64: Format) -> z3.FPRef:
    return z3.FPVal(value, fp.sort(f64))


def encode_rcp_contract(form: AmdForm, variant: str, result, x) -> z3.BoolRef:
    """Is pattern ``result`` an allowed ``v_rcp`` result for pattern ``x``? (mirrors the numpy
    :func:`tilecheck.amdgpu.contract.allowed` under the ``exact`` reading)."""
    c: Contract = form.variant(variant).contract
    if c is None or c.operation != "rcp":
        raise UsageError(f"{form.name} ({variant}) has no rcp contract")
    fmt = form.fmt
    f64 = form.formats["f64"]  # the binary64 of the form's own database
    r = fp.bv(fmt, result)
    x = fp.bv(fmt, x)
    if c.flush_inputs:
        x = fp.flush_bits(fmt, x)
    mag = lambda v: v & fmt.magnitude_mask  # noqa: E731
    neg = lambda v: (v & fmt.sign_mask) != 0  # noqa: E731
    classes = {"+0": lambda v: v == 0, "-0": lambda v: v == fmt.sign_mask, "+inf": lambda v: v == fmt.inf,
               "-inf": lambda v: v == (fmt.inf | fmt.sign_mask), "nan": lambda v: z3.UGT(mag(v), fmt.exponent_mask)}
    r_nan = classes["nan"](r)
    r_inf = mag(r) == fmt.exponent_mask
    r_zero = mag(r) == 0
    # exact thresholds T = B*|x| in binary64
    xw = _f64(fmt, x, f64)
    ax = z3.fpAbs(xw)
    rw = _f64(fmt, z3.If(z3.Or(r_nan, r_inf), z3.BitVecVal(0, fmt.width), r), f64)
    # floor(log2 |1/x|) from the binary64 exponent of |x| (as the numpy contract computes it)
    e64 = z3.ZeroExt(21, z3.Extract(62, 52, z3.fpToIEEEBV(ax))) - f64.bias
    e_floor = -e64 - z3.If(z3.Extract(51, 0, z3.fpToIEEEBV(ax)) == 0, z3.BitVecVal(0, 32), z3.BitVecVal(1, 32))
    if c.relative_log2 is not None:
        t = _const64(2.0 ** c.relative_log2, f64)
        if c.bound.subnormal_ulps:
            alt = fp.ldexp(f64, "rn", z3.fpMul(z3.RNE(), _const64(float(c.bound.subnormal_ulps), f64), ax),
                           fmt.emin - fmt.mantissa_bits)
            t = z3.If(z3.And(e_floor < fmt.emin, z3.fpGT(alt, t)), alt, t)
    else:
        ulp_exp = z3.If(e_floor < fmt.emin, z3.BitVecVal(fmt.emin, 32), e_floor) - fmt.mantissa_bits
        t = fp.ldexp(f64, "rn", z3.fpMul(z3.RNE(), _const64(float(c.ulp), f64), ax), ulp_exp)
    minus_one = _const64(-1.0, f64)
    up = z3.fpFMA(z3.RTP(), rw, xw, minus_one)
    down = z3.fpFMA(z3.RTN(), rw, xw, minus_one)
    within = z3.And(z3.fpLEQ(up, t), z3.fpGEQ(down, z3.fpNeg(t)))
    one = _const64(1.0, f64)
    ok = z3.And(z3.Not(r_nan), z3.Not(r_inf), z3.Not(r_zero), within)
    if c.flush_outputs:
        mn = _f64(fmt, fp.const(fmt, fmt.min_normal), f64)
        zero_ok = z3.fpLT(z3.fpSub(z3.RTN(), one, t), z3.fpMul(z3.RTP(), mn, ax))
        ok = z3.Or(ok, z3.And(r_zero, neg(r) == neg(x), zero_ok))
    big = _f64(fmt, fp.const(fmt, fmt.max_finite), f64)
    inf_ok = z3.fpGEQ(z3.fpAdd(z3.RTP(), one, t), z3.fpMul(z3.RTN(), big, ax))
    ok = z3.Or(ok, z3.And(r_inf, neg(r) == neg(x), inf_ok))
    verdict = ok
    handled = z3.BoolVal(False)
    cases = []
    for special in c.specials:
        operand, res = special.operands[0], special.result
        cases.append((z3.And(classes[operand](x), z3.Not(handled)), classes[res](r)))
        handled = z3.Or(handled, classes[operand](x))
    for hit, want in reversed(cases):
        verdict = z3.If(hit, want, verdict)
    return verdict


def encode_sequence(name: str, variant: str, inputs: dict, mode: dict | None = None, *, db):
    """Symbolic run of a sequence: returns ``(trace, constraints)``.

    ``trace.result`` is the result pattern term, ``trace.values`` every intermediate; each contract
    step (the reciprocal) is a fresh bit-vector named after its destination, and ``constraints``
    holds its contract (assert them).
    """
    seq = lookup_sequence(name, db=db)
    constraints = []

    def choose(step, form, args):
        r = z3.BitVec(f"{step.dst[0]}!{next(_fresh)}", form.fmt.width)
        constraints.append(encode_rcp_contract(form, variant, r, args[0]))
        return r

    terms = {}
    for n in seq.inputs:
        t = inputs[n]
        terms[n] = z3.BitVecVal(t, seq.fmt.width) if isinstance(t, int) else t
    trace: Trace = run_sequence(seq, variant, Z3Backend(), terms, choose, db=db, mode=mode)
    return trace, constraints
