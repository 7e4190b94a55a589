"""Verify PTX that compilers wrote against a correctly rounded operation, for every allowed choice.

``verify_ptx(path, entry, ref, ...)`` parses the module (:mod:`tilecheck.sim.frontend`), compiles
the function once (:mod:`tilecheck.sim.plan`), finds its ABI, and runs it over the inputs with
every result the documented contracts allow (lane forking). "Verified" means: for every input
(an exhaustive run) and every combination of allowed results, the output equals ``REF`` (NaNs by
class); a sampled run that finds nothing has found no counterexample in its inputs, which is what
its report says (:attr:`Outcome.verdict_word`).

ABIs: a ``.func`` whose parameters are the operands and whose return parameter is the result; or
an elementwise ``.entry`` kernel ``out[i] = f(in0[i], ...)`` whose input and output pointers are
found by running it once on distinct buffers (the ones it reads are inputs in parameter order,
the one it writes the output). Containers twice the width of ``REF``'s format (``half2``,
``bf162``) are checked lane by lane where the code is packed; a reference whose type does not fit
what the code loads and computes is a usage error (:func:`check_element_types`). A reference whose
operands have other widths than its result (``div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))``) fits
code whose parameters or buffers hold elements of those widths, each its own (:func:`mixed_widths`;
no packed lanes then).

``REF`` is ``OP.RND.FMT`` (div rcp sqrt rsqrt add sub mul fma; rn rz rm rp; f16 bf16 f32 f64), a
PTX form name of the spec database (a conversion between an integer and a float, ``cvt.rzi.s32.f32``,
gives an integer result or takes an integer operand, compared bit for bit), or an expression over the operands in the query language
(``add.rn.f32(mul.rn.f32(a, b), c)``; :mod:`tilecheck.verify.expression`); an approximate form
(``div.approx.f32``) means "every result the code can produce lies in that form's contract".

Inputs: exhaustive where asked, and by default where the operands hold at most 32 bits together
(16-bit unary and binary, f32 unary: :data:`EXHAUSTIVE_LIMIT`; in blocks, progress on stderr), else
sampled: that many distinct inputs in the operand mix of :mod:`tilecheck.inputs.mix`
(edge-class patterns, constructed hard cases of the operation -- exact results on or next to a
rounding boundary of the result format, which is where a wider intermediate format double-rounds --
and uniform bit patterns).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import shlex
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from tilecheck import cpus
from tilecheck.errors import Location, UnknownFormError, UsageError
from tilecheck.sources import read_source
from tilecheck.formats import UINT_DTYPES
from tilecheck.spec.contract import FREE_RESULTS
from tilecheck.spec.database import load_database
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.inputs.forms import mixed_operands, uniform_operands
from tilecheck.model import api, contracts, ops
from tilecheck.sim import fused
from tilecheck.sim.choices import MAX_CHOICES, READINGS, allowed_choices, contract_allows
from tilecheck.sim.errors import ExecutionError, OutsideBuffersError, UnsupportedPtxError
from tilecheck.sim.frontend import Instr, parse_module
from tilecheck.sim.parser import Addr, Imm, Reg, Symbol, Vec
from tilecheck.sim.plan import TYPES, Memory, Plan, RunContext, compile_function
from tilecheck.sim.shared import SINK_PART
from tilecheck.sim.wide_int import CARRY, reads_carry, writes_carry
from tilecheck.verify import expression, identity
from tilecheck.verify import layout as element_layout
from tilecheck.verify.heap import keep_freed_memory
from tilecheck.verify.layout import launch_block

REF_OPS = {"div": 2, "rcp": 1, "sqrt": 1, "rsqrt": 1, "add": 2, "sub": 2, "mul": 2, "fma": 3}
REF_FORMATS = ("f16", "bf16", "f32", "f64")
EXHAUSTIVE_LIMIT = 1 << 32
"""The largest domain an exhaustive run takes, and the default: a run with no count given goes over every
input of a domain this small (16-bit unary and binary, 32-bit unary; minutes on a few cores), else samples."""
DEFAULT_CASES = 1 << 16
MISROUNDED_CAP = 1 << 18  # misrounded inputs listed in full (beyond: counted, and the report says so)
EXHAUSTIVE_BLOCK = 1 << 16  # inputs per block of an exhaustive run
RUN_CHUNK = 1 << 14
"""Inputs per run of a plan that runs every step as numpy, within a block of code without packed
lanes: a run's live registers (a few per forked lane) then stay in one core's cache; 2^16-input
runs spill it and cost about a quarter more per input. Plans with fused regions (which keep
values in machine registers, and cost a fixed overhead per call) run the whole block at once.
The results do not depend on it (inputs are judged one by one)."""
PROCESS_MIN = 1 << 24
"""Parallel exhaustive runs of at least this many inputs use worker processes instead of threads:
the simulator's numpy passes over cache-sized runs hold the GIL for much of their time, so two
threads overlap poorly, while processes do not contend (and start in under a second)."""
PROCESS_TASK = 1 << 20  # inputs handed to a worker process at a time
_UINT = UINT_DTYPES
PTX_TYPES_BITS = {name: bits for name, (bits, _) in TYPES.items()}
UNWRITTEN = 0xA5A5A5A5A5A5A5A5
"""What registers start as in the second run of a counterexample, which tells the registers its
lane wrote from those it never reached (both runs agree on every written one)."""


# ---------------------------------------------------------------------------------------------
# the reference


@dataclass
class Reference:
    """What the code must compute: an IEEE operation or a spec form (exact or a contract).
    ``formats`` is the spec database's formats table (``fmt`` is one of them)."""

    text: str
    fmt: object
    arity: int
    op: str | None = None
    rounding: str | None = None
    form: object = None
    formats: dict = field(default_factory=dict, repr=False)

    @property
    def contract(self) -> bool:
        """True when the reference is an approximate form's contract (a set of allowed results)."""
        return self.form is not None and self.form.kind == "contract"

    @property
    def operand_formats(self) -> list:
        """The format of each operand: ``fmt`` for an IEEE operation, the form's operand formats
        for a spec form."""
        if self.form is None:
            return [self.fmt] * self.arity
        return [self.form.format_of(o.element_format) for o in self.form.sources]

    def sample_mix(self, n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], dict]:
        """``n`` operand tuples in the mix of :func:`tilecheck.inputs.forms.mixed_operands` for
        the operation and its rounding, and how many of each source."""
        op = self.op or self.form.semantics.operation
        rounding = self.rounding or str(self.form.semantics.params.get("rounding", "rn"))
        return mixed_operands(op, self.fmt, rounding, n, rng, self.arity)

    def expected(self, operands: list[np.ndarray]) -> np.ndarray:
        """Expected bits per input (the form's representative value for a contract)."""
        with np.errstate(all="ignore"):
            if self.form is not None:
                if self.form.kind == "exact":
                    return np.asarray(api.evaluate(self.form, *operands))
                return np.asarray(api.reference(self.form, *operands))
            if self.op == "rsqrt":
                return _rsqrt_reference(self.fmt, operands[0], self.rounding, self.formats.get("f64"))
            if self.rounding == "rn" and self.fmt.name in ("f16", "bf16") and self.op != "fma":
                return _half_reference(self.op, self.fmt, operands)
            return np.asarray(api.ieee_op(self.op, self.fmt, self.rounding, *operands))

    def unknown(self, operands: list[np.ndarray], ulp_reading: str = "either") -> np.ndarray:
        """Per input: True where the reference's contract bounds nothing (any result stands, so
        none is verified); never for an exact reference. (Whether a bound exists does not depend on
        how an ulp bound is read: ``ulp_reading`` is for expressions, whose sets do.)"""
        if not self.contract or not contracts.may_bound_nothing(self.form):
            return np.zeros(np.shape(operands[0]), dtype=bool)
        with np.errstate(all="ignore"):
            arrays = [np.asarray(o).astype(np.uint64) for o in operands]
            return np.asarray(contracts.unbounded_lanes(np, self.form, arrays), dtype=bool)

    def judge(self, got: np.ndarray, operands: list[np.ndarray], expected: np.ndarray,
              ulp_reading: str = "either") -> np.ndarray:
        """True where ``got`` is acceptable (NaN by class; for a contract: inside it, under the same
        ulp reading as the code's approximate instructions)."""
        if self.contract:
            return contract_allows(self.form, got.astype(expected.dtype), operands, ulp_reading=ulp_reading,
                                   reference=expected.astype(got.dtype))
        return expression.agree_by_class(self.fmt, got, expected)


OPERAND_NAMES = "abcdefgh"
"""The names a bare value-function reference (``--against max.f32``) gives its operands."""


def parse_reference(text: str, db) -> "Reference | expression.ExpressionReference":
    """``OP.RND.FMT``, a PTX form name (a value function such as ``max.f32`` or ``cvt.rn.bf16.f32``
    means that form applied to the operands in order), or an expression over the operands (one that
    is a single approximate form applied to the operands is that form's contract); a usage error
    otherwise."""
    m = re.fullmatch(r"(\w+)\.(rn|rz|rm|rp)\.(f16|bf16|f32|f64)", text)
    if m and m.group(1) in REF_OPS:
        op, rnd, fmt = m.groups()
        if op == "rsqrt" and rnd != "rn":
            raise UsageError(f"--against {text}: rsqrt is available round-to-nearest only (rsqrt.rn.FMT)")
        return Reference(text, db.formats[fmt], REF_OPS[op], op=op, rounding=rnd, formats=db.formats)
    if expression.looks_like_expression(text):
        form = expression.applied_contract(text, db)
        if form is None:
            return expression.parse_expression(text, db)
        return Reference(text.strip(), form.format, len(form.sources), form=form, formats=db.formats)
    form = expression.resolve_form(db, text)
    if form is not None and form.kind == "function" and form.lanes == 1 \
            and (form.semantics.key in expression.VALUE_FUNCTIONS + expression.INT_CONVERSIONS
                 or expression.integer_form(form)):
        # max.f32, neg.bf16, cvt.rn.bf16.f32: the form applied to the operands in order, as an expression
        # (its typing refuses a form whose operands hold no float)
        ref = expression.parse_expression(f"{text}({', '.join(OPERAND_NAMES[:len(form.sources)])})", db)
        ref.text = text  # messages and repros say what the user wrote
        return ref
    if form is None and re.fullmatch(r"[A-Za-z0-9]+(\.[A-Za-z0-9]+)+", text):
        try:  # a spelling the spec knows to be no PTX (lg2.rn.f32) says why; an unknown one, what is near
            verdict = db.verdict(text)
        except UnknownFormError as exc:
            raise UsageError(f"--against {text!r}: {exc.message}") from None
        if not verdict.legal:
            raise UsageError(f"--against {text!r} is not a PTX form: {verdict.reason}")
    if form is not None and form.kind == "function" and form.semantics.key in expression.PREDICATE_RESULTS:
        operands = ", ".join(OPERAND_NAMES[:len(form.sources)])
        raise UsageError(f"--against {text!r} gives a predicate, which no buffer holds: say how the kernel stores it, "
                         f"e.g. 'selp.u32(1, 0, {text}({operands}))' (Triton's boolean tensors are bytes: "
                         f"'cvt.u8.u16(selp.u16(1, 0, {text}({operands})))')")
    if form is not None and form.lanes != 1:
        raise UsageError(f"--against {text!r} is a packed form ({form.lanes} lanes); a reference computes one "
                         "element: name the scalar form")
    if form is None or form.kind not in ("exact", "contract") or form.lanes != 1:
        raise UsageError(f"--against {text!r}: expected OP.RND.FMT (OP one of {', '.join(REF_OPS)}; RND rn rz rm rp; "
                         f"FMT {' '.join(REF_FORMATS)}), a scalar floating-point PTX form name or an expression "
                         "of forms over the operands (add.rn.f32(mul.rn.f32(a, b), c))")
    return Reference(text, form.format, len(form.sources), form=form, formats=db.formats)


def operand_widths(ref) -> list[int]:
    """Each operand's width in bits (an expression's operands may differ from each other and
    from the result: ``div.rn.f32(cvt.f32.f16(a), cvt.f32.f16(b))``)."""
    return [f.width for f in ref.operand_formats]


def mixed_widths(ref) -> bool:
    """True where some operand's width is not the result's: the kernel's buffers then hold
    elements of different widths (each operand's, and the result's)."""
    return any(w != ref.fmt.width for w in operand_widths(ref))


def _operand_uints(ref) -> list:
    """Each operand's unsigned dtype."""
    return [f.uint for f in ref.operand_formats]


def _half_reference(op: str, fmt, operands: list[np.ndarray]) -> np.ndarray:
    """Correctly rounded (to nearest) f16/bf16 add/sub/mul/div/sqrt/rcp, independent of the model:
    numpy's float64 operation, then float32 for bf16, then the half format. Each double rounding is
    innocuous: a basic operation on p-bit operands rounded first to q >= 2p+2 bits and then to p
    bits rounds as if once (53 >= 2*24+2 for f64 -> f32, 24 >= 2*11+2 and >= 2*8+2 for the halves);
    1/b is div(1, b)."""
    with np.errstate(all="ignore"):
        if fmt.name == "f16":
            vals = [o.astype(np.uint16).view(np.float16).astype(np.float64) for o in operands]
        else:
            vals = [(o.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64) for o in operands]
        fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
        if op in fn:
            x = fn[op](vals[0], vals[1])
        elif op == "sqrt":
            x = np.sqrt(vals[0])
        else:  # rcp
            x = 1.0 / vals[0]
        if fmt.name == "f16":
            out = x.astype(np.float16).view(np.uint16)
            return np.where(np.isnan(x), np.uint16(fmt.default_nan), out)
        v = x.astype(np.float32).view(np.uint32)
        lsb = (v >> np.uint32(16)) & np.uint32(1)
        out = ((v + np.uint32(0x7FFF) + lsb) >> np.uint32(16)).astype(np.uint16)
        return np.where(np.isnan(x), np.uint16(fmt.default_nan), out)


def _rsqrt_reference(fmt, a: np.ndarray, rounding: str, f64) -> np.ndarray:
    """Correctly rounded 1/sqrt (round to nearest) for f16/bf16/f32: the float64 value (two
    roundings, within 2 ulp of float64) rounded once to the format; lanes whose float64 value lies
    within 2^-48 (relative) of a midpoint of the format are decided exactly with integers. f64: exact.
    ``f64`` is the spec database's binary64 format. f32 takes a shortcut to the same bits
    (:func:`_rsqrt_reference_f32`)."""
    a = np.asarray(a).astype(fmt.uint)
    mode = ops.Mode("rn")
    rule = ops.NanRule(False, fmt.default_nan, fixed=fmt.default_nan)
    if fmt.width == 64:
        return np.asarray(contracts._rsqrt_rn(np, fmt, a.astype(np.uint64), mode, rule)).astype(fmt.uint)
    if fmt.width == 32 and fmt.mantissa_bits == 23:
        return _rsqrt_reference_f32(fmt, a, mode)
    x = fmt.to_float64(a)
    with np.errstate(all="ignore"):
        y = 1.0 / np.sqrt(x)
        if fmt.width == 32:
            r = y.astype(np.float32).view(np.uint32).astype(fmt.uint)
        else:
            r = ops.convert(np, f64, fmt, y.view(np.uint64), mode, rule).astype(fmt.uint)
        fin = np.isfinite(y) & (y > 0) & np.isfinite(x) & (x > 0)
        r_v = fmt.to_float64(r)
        mag = r.astype(np.uint64) & np.uint64(fmt.magnitude_mask)
        up = fmt.to_float64(np.minimum(mag + np.uint64(1), np.uint64(fmt.exponent_mask)).astype(fmt.uint))
        dn = fmt.to_float64(np.maximum(mag.astype(np.int64) - 1, 0).astype(fmt.uint))
        near = np.minimum(np.abs(y - (r_v + up) / 2), np.abs(y - (r_v + dn) / 2)) <= np.abs(y) * 2.0 ** -48
    out = np.where(np.isnan(y), fmt.uint(fmt.default_nan), r).astype(fmt.uint)
    for i in np.flatnonzero(near & fin).tolist():
        out[i] = contracts._rsqrt_exact_bits(fmt, int(a[i]), mode)
    return out


def _rsqrt_reference_f32(fmt, a: np.ndarray, mode) -> np.ndarray:
    """:func:`_rsqrt_reference` for binary32 in fewer passes, with the same result. 1/sqrt of a
    positive finite binary32 is a normal binary32 number, so the float64 value ``y`` rounds to
    binary32 by its 29 low significand bits, and a binary32 midpoint has them equal to 2^28 in the
    same binade as every ``y`` that is within 32 float64 ulps of it (a midpoint lies at least
    2^-25 of its binade from a power of two). Lanes whose 29 low bits are within 64 of 2^28 are
    decided exactly: a superset of the lanes within 2^-48 (relative, under 32 ulps) of a midpoint."""
    with np.errstate(all="ignore"):
        x = a.view(np.float32).astype(np.float64)
        y = 1.0 / np.sqrt(x)
        r = y.astype(np.float32).view(np.uint32)
        low = (y.view(np.uint64) & np.uint64((1 << 29) - 1)).view(np.int64) - np.int64(1 << 28)
        near = (np.abs(low) <= 64) & (x > 0) & (x < np.inf)
    out = np.where(np.isnan(y), np.uint32(fmt.default_nan), r)
    for i in np.flatnonzero(near).tolist():
        out[i] = contracts._rsqrt_exact_bits(fmt, int(a[i]), mode)
    return out


# ---------------------------------------------------------------------------------------------
# the ABI


@dataclass
class Abi:
    """How operands reach the code and the result comes back."""

    kind: str                 # func | entry
    lanes: int                # 1, or 2 for half2/bf162 containers
    width: int                # container bits of the result, and of each operand unless operands_width says
    inputs: list = field(default_factory=list)   # func: param names; entry: param names (pointers)
    output: str = ""
    params: list = field(default_factory=list)   # entry: every param in order (name, type)
    input_regions: list = field(default_factory=list)
    output_region: int = -1
    by_pointer: bool = False  # func: operands (and the result, unless returned) through pointer parameters
    returned: bool = False    # by_pointer: the result is the return parameter ``output``
    block: int = 256          # entry: threads per CTA (.reqntid's, at most .maxntid's; else 256)
    layout: object = None     # entry: several elements per thread (tilecheck.verify.layout.Layout)
    stated: str | None = None  # the --params the layout was found with (repro lines repeat it)
    operands_width: list | None = None  # bits of each operand's element where they differ from ``width``
    values: tuple = ()        # entry: the operands given by value (``inputs`` names them too, in parameter order)
    # the approximate form the code stores, applied to the element's loaded operand (identity.py)
    stored_form: object = None
    # the code stores the reference expression itself (identity.stored_expression): its allowed
    # results are the reference's, so a run takes the simulator's representative for each choice
    stored_expression: bool = False

    def operand_bits(self, arity: int) -> list[int]:
        """The container bits of each of ``arity`` operands (``width`` unless they differ)."""
        return list(self.operands_width) if self.operands_width is not None else [self.width] * arity

    @property
    def in_memory(self) -> bool:
        """Operands and result live in memory regions (``.entry``, or a ``.func`` by pointer)."""
        return self.kind == "entry" or self.by_pointer

    def describe(self) -> str:
        """The ABI in a report: ``.func``, ``.func (by pointer)`` or ``.entry``, with the lanes."""
        how = " (operands by pointer)" if self.returned else " (operands and result by pointer)"
        if self.layout is not None:
            return f".entry ({self.layout.describe()})"
        return (f".{self.kind}" + (how if self.by_pointer else "")
                + (f", {self.lanes} lanes per {self.width}-bit element" if self.lanes > 1 else "")
                + (f" (by value: {', '.join(self.values)})" if self.values else ""))


def _param_width(p) -> int:
    if p.array is not None:
        return 8 * p.nbytes
    return TYPES[p.ptx_type][0] if p.ptx_type in TYPES else 0


def _loaded_as_floats(fn) -> bool:
    """True when a parameter of ``fn`` is loaded as a floating-point value (``ld.param.f64``)."""
    names = {p.name for p in fn.params}
    for item in fn.body:
        if isinstance(item, Instr) and item.opcode.startswith("ld.param.") and item.opcode.split(".")[-1] in \
                ("f16", "bf16", "f32", "f64") and isinstance(item.operands[1], Addr) and \
                getattr(item.operands[1].base, "name", None) in names:
            return True
    return False


def _dereferences(fn) -> bool:
    """True when ``fn`` loads or stores memory other than ``.param`` space."""
    return any(isinstance(item, Instr) and item.opcode.split(".", 1)[0] in ("ld", "st")
               and ".param" not in item.opcode for item in fn.body)


def find_abi(plan: Plan, ref: Reference, path: str, params: str | None = None) -> Abi:
    """The function's ABI (``.func`` from its declaration, ``.entry`` by running it once).
    ``params`` (``--params in,in,out,n``): the user's statement of each parameter's role
    (:func:`tilecheck.verify.layout.parse_roles`); the kernel then runs by its element layout."""
    fn = plan.function
    here = Location(path, fn.line, fn.col)
    if fn.kind == "entry":
        element_layout.require_one_dimensional(fn, path)
    if params is not None:
        if fn.kind != "entry":
            raise UsageError(f"--params states the parameters of an .entry kernel; {fn.name} is a .func", here)
        abi = _layout_abi(plan, ref, here, element_layout.parse_roles(params, fn, here))
        abi.stated = params
        return abi
    fw = ref.fmt.width
    if fn.kind == "func":
        pointers = bool(fn.params) and all(_param_width(p) == 64 and p.array is None for p in fn.params)
        if pointers and (_loaded_as_floats(fn) or (fw == 64 and not _dereferences(fn))):
            # 64-bit operands read as floats (`ld.param.f64`), or never used to reach memory:
            # values, not pointers
            pointers = False
        if pointers and mixed_widths(ref):
            raise UnsupportedPtxError(f".func {fn.name}: operands of another width than the result ({ref.text}) are "
                                      "supported in registers and in a kernel's buffers, not through pointers", here)
        if pointers and not fn.returns:
            # the result and each operand through a generic pointer parameter: nvcc's .func for
            # half2/bf162 values (ld.u32 [%rd2] ... st.u32 [%rd1]) or `void f(const float*, float*)`;
            # found by running it like a kernel, lane i's pointers a packed pair apart (the element
            # width is what it reads and writes)
            return _memory_abi(plan, ref, here, 2 * fw // 8)
        if pointers and len(fn.returns) == 1:
            # operands by reference (`const __half&`), the result returned (of a width that fits
            # the reference, or the element types are refused)
            return _memory_abi(plan, ref, here, _param_width(fn.returns[0]) // 8, fn.returns[0].name)
        if len(fn.returns) != 1:
            raise UnsupportedPtxError(f".func {fn.name} must have one return parameter (has {len(fn.returns)})", here)
        width = _param_width(fn.returns[0])
        if mixed_widths(ref):
            return _mixed_func_abi(fn, ref, here)
        if any(_param_width(p) != width for p in fn.params):
            raise UnsupportedPtxError(
                f".func {fn.name}: parameters of {', '.join(str(_param_width(p)) for p in fn.params)} bits and a "
                f"{width}-bit result "
                f"do not match {ref.text} ({fw}-bit operands, or {2 * fw}-bit packed pairs)", here)
        # the element type before the operand count: a wrong type is what a user fixes first
        check_element_types(fn, ref, path, width=width, in_memory=False, inputs=[p.name for p in fn.params],
                            output=fn.returns[0].name)
        if len(fn.params) != ref.arity:
            raise UnsupportedPtxError(f".func {fn.name} takes {len(fn.params)} operand(s); {ref.text} takes "
                                      f"{ref.arity}", here)
        return Abi("func", width // fw, width, [p.name for p in fn.params], fn.returns[0].name)
    if element_layout.wants_layout(fn, fw):
        return _layout_abi(plan, ref, here)
    try:
        return _memory_abi(plan, ref, here, None)
    except (UnsupportedPtxError, ExecutionError) as simple:
        # not "thread i computes element i": the layout a whole kernel has, found by running it
        try:
            return _layout_abi(plan, ref, here)
        except (UnsupportedPtxError, ExecutionError) as whole:
            # the simpler reading's refusal, unless it ran past its buffers (16 bytes a thread):
            # that says less than what the whole-kernel reading found
            past = isinstance(simple, OutsideBuffersError)
            raise (whole if past or getattr(simple, "not_one_per_thread", False) else simple) from None


def _mixed_func_abi(fn, ref, here: Location) -> Abi:
    """The ABI of a ``.func`` taking operands of other widths than its result, by value: each
    parameter must be its operand's width and the return parameter the result's (no packed
    lanes; the element-type check of one-width references does not apply)."""
    want = operand_widths(ref)
    got = [_param_width(p) for p in fn.params]
    result = _param_width(fn.returns[0])
    if len(got) != ref.arity:
        raise UnsupportedPtxError(f".func {fn.name} takes {len(got)} operand(s); {ref.text} takes {ref.arity}", here)
    if got != want or result != ref.fmt.width:
        raise UnsupportedPtxError(f".func {fn.name}: parameters of {', '.join(map(str, got))} bits and a {result}-bit "
                                  f"result do not match {ref.text} ({', '.join(map(str, want))}-bit operands, a "
                                  f"{ref.fmt.width}-bit result)", here)
    return Abi("func", 1, result, [p.name for p in fn.params], fn.returns[0].name, operands_width=want)


def _layout_abi(plan: Plan, ref: Reference, here: Location, roles: list | None = None) -> Abi:
    """The ABI of a kernel whose threads compute several elements (:mod:`tilecheck.verify.layout`),
    after the element types are checked against the reference."""
    fn = plan.function
    fw = ref.fmt.width
    stores = element_layout.stores(fn)
    widths = {element_layout.store_bits(ins)[0] for ins in stores}
    width = max(widths) if widths else fw
    mixed = mixed_widths(ref)
    if not mixed:  # (the element-type check reads one width for every buffer)
        check_element_types(fn, ref, here.path, width=width, in_memory=True, inputs=[], output="")
    lay = element_layout.discover(plan, fw, ref.arity, here.path, roles,
                                  operand_bits=operand_widths(ref) if mixed else None)
    return Abi("entry", 1, fw, list(lay.operands), lay.pointers[lay.output_region],
               [(p.name, p.ptx_type) for p in fn.params], list(lay.input_regions), lay.output_region,
               block=lay.block, layout=lay, operands_width=operand_widths(ref) if mixed else None,
               values=tuple(lay.values))


def _not_one_per_thread(text: str, here: Location) -> UnsupportedPtxError:
    """A refusal of the "thread i computes element i" reading that the whole-kernel reading
    (:mod:`tilecheck.verify.layout`) explains better when it fails too."""
    exc = UnsupportedPtxError(text, here)
    exc.not_one_per_thread = True
    return exc


def _memory_abi(plan: Plan, ref: Reference, here: Location, stride: int | None, returned: str | None = None) -> Abi:
    """The ABI of code that reads its operands from and writes its result to memory: an ``.entry``
    kernel (``stride`` None: every thread gets the same pointers and indexes them by its thread
    index) or a ``.func`` taking pointers (``stride``: lane i gets pointers to element i; the result
    is the return parameter ``returned`` if given, else written through a pointer). Runs 64 lanes
    on distinct buffers and sees what is read and what is written."""
    fn = plan.function
    fw = ref.fmt.width
    kind = "entry" if stride is None else "func"
    block = launch_block(fn, here) if stride is None else 256
    # a block the kernel requires is the block it indexes by; otherwise 32 (a warp), so that a
    # kernel indexing by %tid.x alone is seen not to be elementwise
    found = block if ".reqntid" in (getattr(fn, "launch", None) or {}) else min(32, block)
    # two CTAs at least: where the CTAs' elements do not follow each other (a Triton BLOCK smaller
    # than its threads), thread i of the second does not read element i
    n = max(64, 2 * found) if stride is None else 64
    params = [(p.name, p.ptx_type) for p in fn.params]
    pointers = [name for name, t in params if t in element_layout.POINTER_TYPES]
    values = element_layout.value_params(fn) if stride is None else []
    counts = [name for name, t in params if name not in pointers and name not in values]

    def launch(setting: tuple = ()) -> SimpleNamespace:
        rng = np.random.default_rng(0)
        # 16 bytes per thread: a vector access (float4) is seen and reported, not an access outside
        memory = Memory([(name, rng.integers(0, 256, n * 16, dtype=np.uint8)) for name in pointers])
        lanes = plan.new_lanes(n)
        for name, t in params:
            if name in pointers:
                lanes.params[name] = np.full(n, memory.pointer(pointers.index(name)), dtype=np.uint64)
                if stride is not None:
                    lanes.params[name] += np.arange(n, dtype=np.uint64) * np.uint64(stride)
            elif name in values:
                lanes.params[name] = np.zeros(n, dtype=np.uint64)  # a value operand: 0.0 while the ABI is found
            else:
                lanes.params[name] = np.full(n, n, dtype=np.uint64)  # a count parameter: every thread in range
        for name, value in setting:
            lanes.params[name] = np.full(n, value, dtype=np.uint64)
        plan.run(lanes, RunContext(approx="reference", memory=memory, block=found, threads=n, record_loads=True))
        return SimpleNamespace(lanes=lanes, memory=memory)

    lanes = launch().lanes
    if found == block:
        element_layout.fit_dynamic_shared(plan, lanes)
    elif plan.dynamic_shared:
        _fit_dynamic_shared_at(plan, params, pointers, block)
    read = {}
    for region, nbytes, *_ in lanes.loads:
        read.setdefault(region, set()).add(nbytes)
    written = {}
    for region, nbytes, offs, vals, done in lanes.stores:
        written.setdefault(region, set()).add(nbytes)
    if returned is not None:
        if written:
            raise UnsupportedPtxError(f".func {fn.name}: returns its result and also writes memory "
                                      f"({', '.join(pointers[k] for k in written)})", here)
        written = {-1: {stride}}
    if len(written) != 1:
        raise UnsupportedPtxError(f".{kind} {fn.name}: expected an elementwise kernel writing one buffer; it wrote "
                                  f"{len(written)} ({', '.join(pointers[k] for k in written) or 'none'})", here)
    out_region = next(iter(written))
    if out_region in read and kind != "entry":
        raise UnsupportedPtxError(f".{kind} {fn.name}: the output buffer {pointers[out_region]} is also read", here)
    # a kernel that reads its result buffer works in place (y = a * x + y): that buffer holds an
    # operand before the launch and the result after it (each thread reading its element before
    # it stores it, which the checks below and every run hold to)
    if returned is None:
        # every thread (lane) stores, and element i: a thread the count masks off (a count of
        # elements where a thread holds two), or a store elsewhere, is not "thread i computes
        # element i" (the whole-kernel reading is tried next)
        stored = np.zeros(n, dtype=bool)
        for region, nbytes, offs, vals, done in lanes.stores:
            step = nbytes if stride is None else stride
            if (done & (np.asarray(offs) != lanes.origin * step)).any():
                raise _not_one_per_thread(f".{kind} {fn.name}: thread i does not store element i of "
                                          f"{pointers[region]}", here)
            stored |= done
        if found == block and not stored.all():  # (a smaller block than the kernel's own may leave threads idle)
            raise _not_one_per_thread(f".{kind} {fn.name}: thread {int(np.flatnonzero(~stored)[0])} of {n} stores "
                                      f"nothing with the count set to {n}", here)

    def counted(abi: Abi) -> Abi:  # a count only bounds the elements: one read into them is refused
        if kind == "entry":
            element_layout.check_counts(fn, here, counts, element_layout.loaded_params(fn), launch, out_region,
                                        pointers[out_region], n)
        return abi

    if mixed_widths(ref):
        return counted(_mixed_memory_abi(fn, ref, here, kind, lanes, pointers, read, written, out_region, params,
                                         block, values))
    widths = set().union(*read.values(), *written.values()) if read else set()
    if not read:  # what it stores comes from no input (a constant, or a value never loaded)
        raise UnsupportedPtxError(f".{kind} {fn.name} reads no buffer; {ref.text} takes {ref.arity} operand(s)", here)
    if len(widths) != 1:
        raise UnsupportedPtxError(f".{kind} {fn.name}: accesses of {_bits_text(widths)} bits; an elementwise "
                                  "kernel reads and writes one element width", here)
    width = 8 * widths.pop()
    inputs = sorted(read)
    # what the code loads and computes must fit the reference (never re-read as something else)
    check_element_types(fn, ref, here.path, width=width, in_memory=True, inputs=[pointers[k] for k in inputs],
                        output=returned or "", returned=returned is not None)
    if width not in (fw, 2 * fw):  # (widths that fit no reference are refused above)
        raise UnsupportedPtxError(f".{kind} {fn.name}: {width}-bit elements do not match {ref.text}", here)
    if len(inputs) + len(values) != ref.arity:
        raise UnsupportedPtxError(f".{kind} {fn.name} reads {len(inputs)} buffer(s)"
                                  f"{element_layout.values_text(values)}; {ref.text} takes {ref.arity} operand(s)", here)
    for v in values:  # a value is one container, as each buffer's element is (a __half2: a packed pair)
        pw = _param_width(next(p for p in fn.params if p.name == v))
        if pw != width:
            raise UnsupportedPtxError(f".{kind} {fn.name}: the value parameter {v} holds {pw} bits; the elements are "
                                      f"{width}-bit" + (f" ({width // fw} lanes of {ref.text})" if width != fw else ""),
                                      here)
    # elementwise: thread (lane) i touches element i of every buffer
    for region, nbytes, offs, origin, _ in lanes.loads:
        step = nbytes if stride is None else stride
        if stride is not None and not (offs == origin * step).all():
            raise UnsupportedPtxError(f".func {fn.name}: lane i does not read only the element its pointer "
                                      f"{pointers[region]} points at", here)
        if offs.shape[0] and not (offs == origin * step).all():  # (a permutation is no elementwise kernel)
            raise _not_one_per_thread(f".{kind} {fn.name}: thread i does not read element i of "
                                      f"{pointers[region]}", here)
    if stride is not None and (width > 8 * stride or (returned is not None and width != 8 * stride)):
        raise UnsupportedPtxError(f".func {fn.name}: {width}-bit elements by pointer do not match {ref.text} "
                                  f"({8 * stride}-bit {'elements at most' if returned is None else 'result'})", here)
    output = returned if returned is not None else pointers[out_region]
    return counted(Abi(kind, width // fw, width, element_layout.operand_order(fn, [pointers[k] for k in inputs],
                                                                              values),
                       output, params, inputs, out_region, by_pointer=stride is not None,
                       returned=returned is not None, block=block, values=tuple(values)))


def _fit_dynamic_shared_at(plan: Plan, params: list, pointers: list, block: int) -> None:
    """:func:`tilecheck.verify.layout.fit_dynamic_shared` from one CTA of ``block`` threads (the
    CTA later runs have: its shared addresses come from %tid) on distinct buffers; where that run
    fails, the plan keeps the most a CTA may have."""
    rng = np.random.default_rng(1)
    memory = Memory([(name, rng.integers(0, 256, block * 16, dtype=np.uint8)) for name in pointers])
    lanes = plan.new_lanes(block)
    for name, t in params:
        if name in pointers:
            lanes.params[name] = np.full(block, memory.pointer(pointers.index(name)), dtype=np.uint64)
        else:
            lanes.params[name] = np.full(block, block, dtype=np.uint64)
    try:
        plan.run(lanes, RunContext(approx="reference", memory=memory, block=block, threads=block))
    except (ExecutionError, UnsupportedPtxError):
        return
    element_layout.fit_dynamic_shared(plan, lanes)


def _bits_text(widths: set) -> str:
    """Access widths in bytes as bits for a message: ``16``, or ``16- and 32`` for two."""
    bits = [str(8 * b) for b in sorted(widths)]
    return bits[0] if len(bits) == 1 else ", ".join(bits[:-1]) + "- and " + bits[-1]


def _mixed_memory_abi(fn, ref, here: Location, kind: str, lanes, pointers: list, read: dict, written: dict,
                      out_region: int, params: list, block: int, values: list = ()) -> Abi:
    """The rest of :func:`_memory_abi` for a kernel whose operands have other widths than its
    result: operand ``j`` is the ``j``-th buffer read (parameter order) and holds elements of its
    width, the result buffer elements of the result's; thread i touches element i of each."""
    inputs = sorted(read)
    if len(inputs) + len(values) != ref.arity:
        raise UnsupportedPtxError(f".{kind} {fn.name} reads {len(inputs)} buffer(s)"
                                  f"{element_layout.values_text(values)}; {ref.text} takes {ref.arity} operand(s)", here)
    want = operand_widths(ref)
    order = element_layout.operand_order(fn, [pointers[k] for k in inputs], values)
    bits = dict(zip(order, want))
    for k in inputs:
        w = bits[pointers[k]]
        if read[k] != {w // 8}:
            raise UnsupportedPtxError(f".{kind} {fn.name}: reads {_bits_text(read[k])}-bit elements of "
                                      f"{pointers[k]}; {ref.text} takes a {w}-bit operand there", here)
    if written[out_region] != {ref.fmt.width // 8}:
        raise UnsupportedPtxError(f".{kind} {fn.name}: writes {_bits_text(written[out_region])}-bit elements "
                                  f"of {pointers[out_region]}; {ref.text} gives a {ref.fmt.width}-bit result", here)
    for region, nbytes, offs, origin, _ in lanes.loads:
        if offs.shape[0] and not (offs == origin * nbytes).all():
            raise _not_one_per_thread(f".{kind} {fn.name}: thread i does not read element i of "
                                      f"{pointers[region]}", here)
    return Abi(kind, 1, ref.fmt.width, order, pointers[out_region], params, inputs, out_region,
               block=block, operands_width=want, values=tuple(values))


# ---------------------------------------------------------------------------------------------
# what the code says about its elements: data flow, and the element types it loads and computes


MEMORY = "[memory]"
"""The data-flow node of every memory access that is not a ``.param`` (one node: a static reading
cannot tell stack slots of ``-G`` builds apart, and a node too many only widens a slice)."""
_NO_FLOW = ("bra", "ret", "exit", "bar", "membar", "fence", "trap", "brkpt", "nanosleep", "call")
_FLOAT_TYPES = {"f16": "f16", "bf16": "bf16", "f16x2": "f16", "bf16x2": "bf16", "f32": "f32", "f64": "f64",
                "f32x2": "f32"}
"""Floating-point PTX types and the element format of each (a packed type: of its lanes)."""


@dataclass(frozen=True)
class Flow:
    """One instruction's data flow: what it writes and what it reads (registers by name,
    ``.param`` variables as ``param:NAME``, other memory as :data:`MEMORY`). Address operands are
    left out: the address of an access is not a value the access computes with; a guard is read."""

    instr: object
    writes: frozenset
    reads: frozenset
    access: str = ""   # "load" | "store" for memory and .param accesses

    @property
    def types(self) -> list[str]:
        """The PTX types named in the opcode, in order (``cvt.rn.f16.f32``: f16, f32)."""
        return [p for p in self.instr.opcode.split(".")[1:] if p in TYPES]

    @property
    def head(self) -> str:
        """The opcode's first word (``ld``, ``cvt``, ``div``)."""
        return self.instr.opcode.split(".", 1)[0]

    @property
    def transparent(self) -> bool:
        """True when the instruction moves bits without reading them as a number: moves (packing
        and unpacking included), loads and stores, integer conversions."""
        if self.head in ("mov", "ld", "ldu", "st"):
            return True
        return self.head == "cvt" and all(TYPES[t][1] in "bus" for t in self.types)

    def read_type(self) -> str | None:
        """The floating-point type the instruction reads its operands as (``cvt.f32.f16``: f16)."""
        t = self.types
        return t[-1] if t and t[-1] in _FLOAT_TYPES else None

    def write_type(self) -> str | None:
        """The floating-point type of the value it writes (``cvt.rn.f16.f32``: f16)."""
        t = self.types
        return t[0] if t and t[0] in _FLOAT_TYPES else None


def _widens_bf16(f: Flow) -> bool:
    """True for ``shl.b32 d, s, 16`` and ``mov.b32 d, {0, s}``: 16 bits placed at the top of 32."""
    ops_ = f.instr.operands
    if f.instr.opcode in ("shl.b32", "shl.u32") and len(ops_) == 3:
        return isinstance(ops_[2], Imm) and ops_[2].value == 16
    if f.instr.opcode == "mov.b32" and len(ops_) == 2 and isinstance(ops_[1], Vec) and len(ops_[1].items) == 2:
        low = ops_[1].items[0]
        return isinstance(low, Imm) and low.value == 0 and isinstance(ops_[1].items[1], Reg)
    return False


def _names(op) -> list[str]:
    if isinstance(op, Reg):
        return op.name.split("|")  # setp's `%p|%q`
    if isinstance(op, Vec):
        return [n for item in op.items for n in _names(item)]
    return []


def dataflow(fn) -> list[Flow]:
    """The data flow of every instruction of ``fn`` (calls inlined), in program order."""
    out = []
    for item in fn.body:
        if not isinstance(item, Instr):
            continue
        head = item.opcode.split(".", 1)[0]
        if head in _NO_FLOW:
            continue
        guard = {item.guard[0]} if item.guard else set()
        ops_ = item.operands
        if head in ("ld", "ldu", "st") and len(ops_) >= 2:
            addr = ops_[1] if head != "st" else ops_[0]
            node = (f"param:{addr.base.name}" if ".param" in item.opcode and isinstance(addr, Addr)
                    and isinstance(addr.base, Symbol) else MEMORY)
            if head == "st":
                out.append(Flow(item, frozenset({node}), frozenset(guard.union(*map(_names, ops_[1:]))), "store"))
            else:
                out.append(Flow(item, frozenset(_names(ops_[0])), frozenset(guard | {node}), "load"))
        elif head in ("atom", "red"):
            out.append(Flow(item, frozenset(_names(ops_[0]) + [MEMORY] if head == "atom" else [MEMORY]),
                            frozenset(guard.union({MEMORY}, *map(_names, ops_[1:])))))
        elif ops_:
            carry_in = {CARRY} if reads_carry(item.opcode) else set()
            carry_out = [CARRY] if writes_carry(item.opcode) else []
            out.append(Flow(item, frozenset(_names(ops_[0]) + carry_out),
                            frozenset(guard.union(carry_in, *map(_names, ops_[1:])))))
    return out


def _closure(flows: list[Flow], start, *, forward: bool, through=None) -> set:
    """Every node reached from ``start`` along the data flow (``forward``: to what reads it;
    else back to what it was computed from), through the flows ``through`` accepts (all if None)."""
    seen = set(start)
    changed = True
    while changed:  # to a fixed point: loops carry values backwards in program order
        changed = False
        for f in flows:
            if through is not None and not through(f):
                continue
            src, dst = (f.reads, f.writes) if forward else (f.writes, f.reads)
            if src & seen and not dst <= seen:
                seen |= dst
                changed = True
    return seen


@dataclass
class Ends:
    """Where the elements enter the code and where the result leaves it: the flows that load
    the operands, the registers they load into, the flows that store the result and the
    registers they store."""

    loads: list
    sources: set
    stores: list
    sinks: set


def element_ends(flows: list[Flow], in_memory: bool, inputs: list, output: str, returned: bool) -> Ends:
    """The loads of the operands (memory, or the operand ``.param``s of a by-value ``.func``) and
    the stores of the result (memory, or the return ``.param``)."""
    if in_memory:
        loads = [f for f in flows if f.access == "load" and MEMORY in f.reads]
    else:
        names = {f"param:{n}" for n in inputs}
        loads = [f for f in flows if f.access == "load" and f.reads & names]
    if in_memory and not returned:
        stores = [f for f in flows if f.access == "store" and MEMORY in f.writes]
    else:
        stores = [f for f in flows if f.access == "store" and f"param:{output}" in f.writes]
    return Ends(loads, set().union(*[f.writes for f in loads]), stores, set().union(*[f.reads for f in stores]))


def result_slice(flows: list[Flow], ends: Ends) -> set:
    """The registers on the data-flow path from the operand loads to the result's store: computed
    from a loaded value and used to compute the stored one (address arithmetic, loop counters and
    the like are not on it)."""
    fwd = _closure(flows, ends.sources, forward=True)
    back = _closure(flows, ends.sinks, forward=False)
    return {n for n in (fwd & back) | (ends.sources & back) if n != MEMORY and not n.startswith("param:")}


def _where(f: Flow, whole: bool = False) -> str:
    """``line N: OPCODE`` (``whole``, or a move or shift whose operands are the evidence: the
    instruction as written) for messages."""
    whole = whole or f.head in ("mov", "shl")
    text = " ".join(f.instr.text.split()).rstrip(";") if whole else f.instr.opcode
    return f"line {f.instr.line}: {text}"


@dataclass
class ElementTypes:
    """What the code says about the type of its elements (:func:`element_types`). Each entry is
    ``(type, flow)``: the evidence and where it is."""

    loads: list            # float-typed accesses of whole elements (ld.global.f32, a .param .f32 operand)
    reads: list            # how the loaded bits are first read as numbers (cvt.f32.f16: f16)
    writes: list           # what type the stored result was computed as (cvt.rn.f16.f32: f16)
    packs: list            # flows that split or join lanes of `lane` bits (mov.b32 {a, b}; .v2; f16x2)
    access: str            # the first element load (its line and opcode), for messages


def element_types(fn, flows: list[Flow], ends: Ends, width: int, lane: int | None) -> ElementTypes:
    """The evidence of the element type in code that loads ``width``-bit elements: typed loads,
    the first numeric reading of the loaded bits and the computation of the stored ones (followed
    through moves, unpacking, ``.param`` passing and memory), and, where ``lane`` is given, the
    packing of ``lane``-bit lanes anywhere in the function (packed code says so: half2 and
    bf162 values are split with ``mov.b32 {a, b}``, loaded as ``.v2`` of 16 bits, or computed
    on with f16x2/bf16x2 instructions)."""
    typed = []
    for f in ends.loads + ends.stores:
        t = f.types[-1] if f.types else None
        if t in ("f32", "f64") and TYPES[t][0] == width and ".local" not in f.instr.opcode:
            typed.append((t, f))
    moved = _closure(flows, ends.sources, forward=True, through=lambda f: f.transparent)
    reads = [(f.read_type(), f) for f in flows if not f.transparent and f.read_type() and f.reads & moved]
    for f in flows:
        # bfloat16 widened by hand: the 16 bits moved to the top of a 32-bit word that is then read
        # as f32 (`shl.b32 %r2, %r1, 16; mov.b32 %f1, %r2` as LLVM writes it, `mov.b32 fl, {0, hl}`)
        if f.reads & moved and _widens_bf16(f):
            after = _closure(flows, f.writes, forward=True, through=lambda g: g.transparent)
            if any(not g.transparent and g.read_type() == "f32" and g.reads & after for g in flows):
                reads.append(("bf16", f))
    stored = _closure(flows, ends.sinks, forward=False, through=lambda f: f.transparent)
    writes = [(f.write_type(), f) for f in flows if not f.transparent and f.write_type() and f.writes & stored]
    packs = []
    if lane is not None:
        regs = fn.registers
        for f in flows:
            ops_ = f.instr.operands
            vec = [o for o in ops_ if isinstance(o, Vec)]
            lanes_of = [TYPES.get(regs.get(n, ""), (0,))[0] for v in vec for n in _names(v)]
            if vec and len(vec[0].items) == 2 and all(isinstance(i, Reg) for i in vec[0].items) \
                    and lanes_of and all(w == lane for w in lanes_of) and f.head in ("mov", "ld", "st"):
                packs.append(f)
            elif any(t.endswith("x2") and TYPES[t][0] == 2 * lane for t in f.types):
                packs.append(f)
    access = _where(ends.loads[0]) if ends.loads else ""
    return ElementTypes(typed, reads, writes, packs, access)


def check_element_types(fn, ref: Reference, path: str, *, width: int, in_memory: bool, inputs: list,
                        output: str, returned: bool = False) -> None:
    """A usage error (exit 2, both types named) when what ``fn`` loads and computes does not fit
    ``ref``'s format: elements of another width; ``width``-bit elements read as two lanes of
    ``ref``'s format where the code is not packed (an f32 kernel against an f16 reference) or
    loads whole f32/f64 values; 16-bit elements computed on as the other half format (bf16 code
    against an f16 reference); half2 code against an f32 reference. Only what the code states
    refuses: bits that are never read as a number of either kind (integer emulation) fit. An
    integer reference on integer operands (``add.s32``) has no float format to misread: any
    element width the layout finds fits it (int8 elements four to a 32-bit register)."""
    if ref.fmt.integer and all(f.integer for f in ref.operand_formats):
        return
    fw = ref.fmt.width
    name = ref.fmt.name
    if ref.fmt.integer:
        # an integer result (cvt.rzi.s16.f16): the code computes on the float operand's format
        name = next((f.name for f in ref.operand_formats if not f.integer and f.width == fw), name)
    flows = dataflow(fn)
    ends = element_ends(flows, in_memory, inputs, output, returned)
    lane = fw if width == 2 * fw else {32: 16, 64: 32}.get(width)
    ev = element_types(fn, flows, ends, width, lane)
    how = "loads and stores" if in_memory else "takes and returns"
    halves = [(_FLOAT_TYPES[t], f) for t, f in ev.reads + ev.writes if _FLOAT_TYPES[t] in ("f16", "bf16")]
    kinds = {t for t, _ in halves}
    whole = [(t, f) for t, f in ev.reads + ev.writes if t in ("f32", "f64") and TYPES[t][0] == width]
    # the loaded registers themselves (and plain copies of them) read as one number: repacking
    # moves (bf16 widened as mov.b32 f, {0, h}) make other values, which do not count
    as_loaded = _closure(flows, ends.sources, forward=True,
                         through=lambda f: f.head == "mov" and not any(isinstance(o, Vec) for o in f.instr.operands))
    whole_reads = [(t, f) for t, f in ev.reads if t in ("f32", "f64") and TYPES[t][0] == width and f.reads & as_loaded]
    at = f" ({ev.access})" if ev.access else ""
    what = None
    if width == 2 * fw:
        if ev.loads:
            t, f = ev.loads[0]
            what = f"{how} {width}-bit {t} elements ({_where(f)})"
        elif not ev.packs and whole:
            what = (f"{how} {width}-bit elements{at}"
                    + f" and computes on them as {whole[0][0]} ({_where(whole[0][1])})"
                    + f", never as two {fw}-bit lanes (no mov.b{width} {{a, b}}, .v2 access of {fw} bits or "
                      f"{name}x2 instruction)")
        elif whole_reads:
            # packed-looking moves elsewhere (libdevice's sin splits a double to read its exponent)
            # do not outweigh the loaded element itself read as one number
            what = (f"{how} {width}-bit elements{at} and reads each whole element as one "
                    f"{whole_reads[0][0]} ({_where(whole_reads[0][1])})")
        elif fw == 16 and kinds and name not in kinds:
            t, f = halves[0]
            what = f"{how} {width}-bit elements as packed {t} pairs ({_where(ev.packs[0], True)}; {_where(f)})"
    elif width == fw:
        if fw == 16 and kinds and name not in kinds:
            t, f = halves[0]
            what = f"{how} 16-bit elements and computes on them as {t} ({_where(f)})"
        elif fw == 32 and not ev.loads and ev.packs and kinds:
            t, f = halves[0]
            what = f"{how} 32-bit elements as packed {t} pairs ({_where(ev.packs[0], True)}; {_where(f)})"
    else:
        if ev.loads:
            t, f = ev.loads[0]
            what = f"{how} {width}-bit {t} elements ({_where(f)})"
        elif width == 16 and len(kinds) == 1:
            evidence = "; ".join(x for x in (ev.access, _where(halves[0][1])) if x)
            what = f"{how} 16-bit {halves[0][0]} elements ({evidence})"
        elif width == 32 and ev.packs and len(kinds) == 1:
            what = f"{how} 32-bit elements as packed {halves[0][0]} pairs ({_where(ev.packs[0], True)}; " \
                   f"{_where(halves[0][1])})"
        elif whole:
            what = f"{how} {width}-bit elements{at}, computed on as {whole[0][0]} ({_where(whole[0][1])})"
        else:
            what = f"{how} {width}-bit elements{at}"
    if what is None:
        return
    fits = f"{fw}-bit elements" + (f", or {2 * fw}-bit pairs in packed code" if fw < 64 else "")
    kind = "kernel" if fn.kind == "entry" else ".func"
    raise UsageError(f"--against {ref.text}: the {kind} {fn.name} {what}; the reference is {name} ({fits})",
                     Location(path, fn.line, fn.col))


# ---------------------------------------------------------------------------------------------
# running a block of inputs


@dataclass
class BlockResult:
    """Per input of a block: misrounded / unknown flags, lanes run, one failing lane's output."""

    bad: np.ndarray
    unknown: np.ndarray
    lanes: int
    got: np.ndarray
    by_value: np.ndarray  # misrounded in value (not only by a zero's sign or a NaN's payload)
    by_nan: np.ndarray | None = None  # misrounded only by a NaN's payload (where REF compares payloads)


def run_block(plan: Plan, abi: Abi, ref: Reference, elements: list[np.ndarray], ctx_args: dict,
              trace: bool = False, fill: bool = False, every_position: bool = True, sample_positions: bool = True):
    """Run the code on ``elements`` (one container array per operand); judge every lane.
    ``fill``: registers start as :data:`UNWRITTEN` instead of zeros (see :func:`register_path`).
    A kernel with an element layout runs by :func:`run_layout` (``trace`` then gives its plan
    too: (result, lanes, failing lanes, context, plan))."""
    if abi.layout is not None:
        return run_layout(abi, ref, elements, ctx_args, every_position=every_position, trace=trace, fill=fill,
                          sample_positions=sample_positions)
    asked = elements[0].shape[0]
    if abi.in_memory and not abi.by_pointer and abi.lanes == 1 and (plan.shared_bytes or plan.dynamic_shared) \
            and 0 < asked < abi.block:
        # a kernel whose threads pass values through shared memory needs its CTA's other threads
        # (a counterexample's one input): the inputs repeated to a whole CTA, the first judged
        elements = [np.resize(e, abi.block) for e in elements]
    n = elements[0].shape[0]
    lanes = plan.new_lanes(n)
    if fill:
        lanes.regs = {name: np.full(n, True if arr.dtype == bool else UNWRITTEN & np.iinfo(arr.dtype).max,
                                    dtype=arr.dtype) for name, arr in lanes.regs.items()}
    ctx = RunContext(trace=trace, **run_args(abi, ctx_args))
    if not abi.in_memory:
        for name, e in zip(abi.inputs, elements):
            lanes.params[name] = e.astype(np.uint64)
    else:
        nbytes = abi.width // 8
        in_bits = abi.operand_bits(len(elements))
        regions = []
        for name, _ in abi.params:
            if name in abi.values:
                data = np.zeros(8, dtype=np.uint8)  # (no memory: a value parameter)
            elif name in abi.inputs:
                j = abi.inputs.index(name)
                data = elements[j].astype(_UINT[in_bits[j]]).view(np.uint8)
            else:
                data = np.zeros(n * nbytes, dtype=np.uint8)
            regions.append((name, data))
        memory = Memory(regions)
        ctx.memory = memory
        ctx.block = abi.block
        ctx.threads = n
        names = [name for name, _ in abi.params]
        for name, t in abi.params:
            if name in abi.values:  # thread i's value is input i's operand
                lanes.params[name] = elements[abi.inputs.index(name)].astype(np.uint64)
            elif name in abi.inputs or name == abi.output:
                lanes.params[name] = np.full(n, memory.pointer(names.index(name)), dtype=np.uint64)
                if abi.by_pointer:  # lane i's pointers point at element i
                    lanes.params[name] += np.arange(n, dtype=np.uint64) * np.uint64(nbytes)
            else:
                lanes.params[name] = np.full(n, n, dtype=np.uint64)
        # the thread index must equal the element index: one block of `n` elements starting at 0
    plan.run(lanes, ctx)
    if not abi.in_memory or abi.returned:
        got = lanes.params.get(abi.output)
        if got is None:
            got = np.zeros(lanes.size, dtype=np.uint64)
        got = got & np.uint64((1 << abi.width) - 1)
    else:
        out_k = [name for name, _ in abi.params].index(abi.output)
        records = [(vals, done) for region, nbytes, offs, vals, done in lanes.stores if region == out_k]
        if len(records) == 1 and records[0][1].all():
            got = records[0][0]  # every lane stored once (the usual kernel)
        else:
            got = np.zeros(lanes.size, dtype=np.uint64)
            stored = np.zeros(lanes.size, dtype=bool)
            for vals, done in records:
                got = np.where(done, vals, got)
                stored |= done
            if not stored.all():  # a lane that stored nothing has no result to judge: never a verdict
                lane = int(np.flatnonzero(~stored)[0])
                raise UnsupportedPtxError(f".entry {plan.function.name}: thread {int(lanes.origin[lane])} of {n} "
                                          "stored nothing: its count parameter may count other units than "
                                          "elements (--params states the roles)",
                                          Location(plan.path, plan.function.line, plan.function.col))
    fw = ref.fmt.width
    u = ref.fmt.uint
    mask = np.uint64((1 << fw) - 1)
    ops_by_lane, got_by_lane = [], []
    for lane in range(abi.lanes):
        if abi.lanes == 1:  # one element per container: the bits themselves
            ops_by_lane.append([e.astype(ou, copy=False) for e, ou in zip(elements, _operand_uints(ref))])
            got_by_lane.append(got.astype(u, copy=False))
        else:
            shift = np.uint64(lane * fw)
            ops_by_lane.append([((e.astype(np.uint64) >> shift) & mask).astype(u) for e in elements])
            got_by_lane.append(((got >> shift) & mask).astype(u))
    bad, res = judge_lanes(ref, ops_by_lane, got_by_lane, lanes, n, ctx.ulp_reading, abi.stored_form,
                           abi.stored_expression)
    if asked < n:  # the repeats are the same inputs again: the verdicts and lanes of the asked ones
        res = BlockResult(res.bad[:asked], res.unknown[:asked], int(np.count_nonzero(lanes.origin < asked)), None,
                          res.by_value[:asked], None if res.by_nan is None else res.by_nan[:asked])
    res.got = got
    if trace:
        return res, lanes, bad, ctx
    return res


def run_args(abi: Abi, ctx_args: dict) -> dict:
    """The run context's arguments for ``abi``'s code: ``ctx_args``, but the simulator's
    representative for every approximate choice where the code stores the reference's own
    expression (:func:`tilecheck.verify.identity.stored_expression`: enumerating them would only
    repeat the reference's own set)."""
    return {**ctx_args, "approx": "reference"} if abi.stored_expression else ctx_args


def judge_lanes(ref: Reference, ops_by_lane: list, got_by_lane: list, lanes, n: int, ulp_reading: str,
                stored_form=None, stored_expression: bool = False):
    """Judge every lane of a run of ``n`` inputs: ``got_by_lane[j]`` (per lane) is element j of
    each lane's thread, computed from ``ops_by_lane[j]`` (per input: element j of input i holds the
    operands of input ``i - j``, a rotation). Returns the lanes that failed and the per-input
    :class:`BlockResult` (``got`` left for the caller). ``stored_form``: the approximate form the
    code stores applied to the element's operand (:mod:`tilecheck.verify.identity`). Where it is
    the reference's own form, a lane the run left unknown (more allowed results than it
    enumerates) holds the reference's set, and only the reference decides what is unknown; where
    it is another form, such a lane is judged when every result that form allows the reference
    allows too, or none does (then its representative, refused, is the counterexample: any result
    would be), and stays unknown otherwise. ``stored_expression``: the code stores the reference's
    own expression; its lanes, as a lane of the reference's own form, are judged by the reference
    alone."""
    is_reference = (stored_form is not None and stored_form is ref.form) or stored_expression
    unknown = lanes.unknown
    if stored_form is not None and not is_reference and unknown is not None and unknown.any():
        unknown = unknown & ~_judged_beside_reference(stored_form, ref, ops_by_lane, lanes.origin, unknown,
                                                      ulp_reading)
    u = ref.fmt.uint
    bad = np.zeros(lanes.size, dtype=bool)
    bad_in = np.zeros(n, dtype=bool)
    value_in = np.zeros(n, dtype=bool)
    nan_in = np.zeros(n, dtype=bool)
    origin = lanes.origin
    for lane, (ops_lane, g) in enumerate(zip(ops_by_lane, got_by_lane)):
        expected = ref.expected(ops_lane)
        exp_lanes = expected[origin]
        if stored_expression and hasattr(ref, "judge_identical"):
            ok = ref.judge_identical(g, ops_lane, origin, ulp_reading)
        elif ref.contract and hasattr(ref, "judge_at"):
            # an expression's sets are worked out once per input, whatever the lanes forked from it
            ok = ref.judge_at(g, ops_lane, origin, ulp_reading)
        else:
            # only a contract's judgement looks at the operands
            per_lane_ops = [o[origin] for o in ops_lane] if ref.contract else []
            ok = ref.judge(g, per_lane_ops, exp_lanes, ulp_reading)
        if not is_reference:
            # a lane the run left unknown (an instruction whose result there is free: an unbounded
            # contract, an integer division by zero) could have held any value: its result is no
            # evidence of a misrounding (its input is counted unknown below, unless another lane fails)
            ok = ok | unknown
        if ok.all():
            continue
        bad |= ~ok
        bad_in[(origin[~ok] - lane) % n] = True  # lane j of element i holds input i - j
        # a zero of the wrong sign, or a NaN with another payload where REF judges payloads, is a
        # misrounding too; the inputs misrounded in value are counted apart from those classes
        if ref.fmt.integer:  # an integer result has no zero sign or NaN payload to differ by
            both_nan = np.zeros_like(ok)
            by_value = ~ok
        else:
            mag = u(ref.fmt.magnitude_mask)
            gm, em = g.astype(u) & mag, exp_lanes.astype(u) & mag
            both_nan = (gm > u(ref.fmt.exponent_mask)) & (em > u(ref.fmt.exponent_mask))
            by_value = ~ok & ~((gm == 0) & (em == 0)) & ~both_nan
        value_in[(origin[by_value] - lane) % n] = True
        nan_in[(origin[~ok & both_nan] - lane) % n] = True
    unk_in = np.zeros(n, dtype=bool)
    if unknown.any() and not is_reference:
        for lane in range(len(ops_by_lane)):
            unk_in[(origin[unknown] - lane) % n] = True
    for lane, ops_lane in enumerate(ops_by_lane):  # inputs where the reference itself bounds nothing
        free = (ref.unbounded if stored_expression and hasattr(ref, "unbounded") else ref.unknown)(ops_lane,
                                                                                                   ulp_reading)
        if free.any():
            unk_in[(np.flatnonzero(free) - lane) % n] = True
    nan_in &= ~value_in  # an input with a lane misrounded in value is in that class
    return bad, BlockResult(bad_in, unk_in, lanes.size, None, value_in, nan_in)


def _judged_beside_reference(form, ref: Reference, ops_by_lane: list, origin, lanes_at, ulp_reading: str):
    """Per lane: True at the lanes ``lanes_at`` where, for the input of every element of the lane's
    thread, each result ``form`` allows the reference's form allows too (``ulp_reading`` for both,
    as the run enumerates ``form``'s results and the reference judges them), or where, for some
    element, none does: the lane's verdict is then certain either way."""
    at = np.flatnonzero(lanes_at)
    within = np.ones(at.size, dtype=bool)
    apart = np.zeros(at.size, dtype=bool)
    for ops_lane in ops_by_lane:
        ops = [np.asarray(o)[origin[at]] for o in ops_lane]
        with np.errstate(all="ignore"):
            inner = api.allowed_results(form, *ops, ulp_reading=ulp_reading)
            outer = api.allowed_results(ref.form, *ops, ulp_reading=ulp_reading)
        within &= np.asarray(api.results_within(inner, outer), dtype=bool)
        apart |= np.asarray(api.results_disjoint(inner, outer), dtype=bool)
    out = np.zeros(lanes_at.shape, dtype=bool)
    out[at] = within | apart
    return out


POSITION_SAMPLE = 1 << 12
POSITION_EVERY = 64
"""In an exhaustive run, the elements outside their class's representative run the first
:data:`POSITION_SAMPLE` inputs of one block in :data:`POSITION_EVERY` (:func:`position_block`);
a sampled run puts every input at every element. What makes a class is that its elements compute
equal expressions (:mod:`tilecheck.verify.layout`); these runs check that on the hardware's own
terms, placing and all, and one block in 64 does it for 2^12 inputs at every element of 2^10
divisors of a 16-bit binary sweep. (Each run of a cut-down function costs a millisecond or two
whatever its inputs: running every element on every block would cost more than the
representative's whole block; one block in 16 cost a 16-bit vector kernel's sweep 5-10 per cent.)"""


def position_block(start: int, block: int = EXHAUSTIVE_BLOCK) -> bool:
    """True for the exhaustive blocks whose first inputs every element runs: one in
    :data:`POSITION_EVERY`, chosen by a hash of the block's index over its 6-bit digits so that
    the divisors (a block's second operand) of the chosen blocks differ in their low bits too."""
    k = start // block
    h = 0
    while k:
        h ^= k & 0x3F
        k >>= 6
    return h % POSITION_EVERY == 0


@dataclass
class _JudgedLanes:
    """The lanes of a run that :func:`judge_lanes` judges where some threads store nothing: each
    kept lane's number among the threads that store (``origin``), and its unknown flag."""

    origin: np.ndarray
    unknown: np.ndarray

    @property
    def size(self) -> int:
        """The lanes judged."""
        return int(self.origin.shape[0])


def run_layout(abi: Abi, ref: Reference, elements: list[np.ndarray], ctx_args: dict, *, every_position: bool = True,
               trace: bool = False, fill: bool = False, sample_positions: bool = True):
    """:func:`run_block` for a kernel whose threads compute several elements
    (:mod:`tilecheck.verify.layout`): each group of elements runs in its cut-down function, the
    ``n`` inputs placed so that element j of thread t holds input ``t - j``; groups outside their
    class's representative run the first :data:`POSITION_SAMPLE` inputs (where
    ``sample_positions``, else none) unless ``every_position``. ``trace``: (result, lanes, failing lanes, context, plan) of the first
    group that fails (else of the last).

    Where some threads of a CTA store nothing (``layout.active``), the launch has as many threads
    that store as inputs, numbered in order (thread t above is the t-th thread that stores); the
    others run but are no lanes of the verdict: a run in which one of them stores, or in which a
    thread that stores does not, is refused."""
    layout = abi.layout
    n = elements[0].shape[0]
    fw = ref.fmt.width
    u = ref.fmt.uint
    eb = layout.element_bytes
    op_uints = _operand_uints(ref)
    # operands given by value (each thread its input's: every group holds one element of a thread,
    # as discovery requires) apart from those in buffers
    value_ix = {layout.operands.index(v): v for v in layout.values}
    buffer_ix = [k for k in range(len(op_uints)) if k not in value_ix]
    # each region's element dtype: an operand buffer its operand's, the result buffer the result's
    region_uint = {r: op_uints[k] for r, k in zip(layout.input_regions, buffer_ix)}
    total = None
    last = None
    for group in layout.groups:
        m = n if every_position or group.representative else (min(n, POSITION_SAMPLE) if sample_positions else 0)
        if m == 0:
            continue
        plan = group.plan
        m_in = m
        if plan.shared_bytes or plan.dynamic_shared:
            # threads pass values through shared memory: whole CTAs run, the inputs repeated to fill
            # them (a counterexample's one input), the first m_in judged
            per = layout.block if layout.active is None else layout.workers
            m = -(-m // per) * per
        ops = [np.resize(e[:m_in], m) for e in elements]
        threads = layout.threads_for(m)
        judged = layout.judged(threads)
        ctas = -(-threads // layout.block)
        size = ctas * layout.per_cta
        regions = []
        for k, name in enumerate(layout.pointers):
            data = np.zeros(size if k in layout.input_regions or k == layout.output_region else 1,
                            dtype=region_uint.get(k, u))
            regions.append((name, data))
        # each atom's element index in every thread (the element it must store, and where its
        # operands are placed)
        positions = [layout.positions(threads, a) for a in group.atoms]
        for atom_ix, a in enumerate(group.atoms):
            pos = positions[atom_ix][judged]  # the m threads that store, in order
            for r, k in zip(layout.input_regions, buffer_ix):
                o = ops[k]
                regions[r][1][pos] = (np.roll(o, atom_ix) if atom_ix else o).astype(region_uint[r], copy=False)
        memory = Memory([(name, data.view(np.uint8)) for name, data in regions])
        lanes = plan.new_lanes(threads)
        if fill:
            lanes.regs = {name: np.full(threads, True if arr.dtype == bool else UNWRITTEN & np.iinfo(arr.dtype).max,
                                        dtype=arr.dtype) for name, arr in lanes.regs.items()}
        cta = np.arange(threads, dtype=np.uint64) // np.uint64(layout.block) if layout.single_cta else None
        for k, name in enumerate(layout.pointers):
            if layout.single_cta:
                lanes.params[name] = memory.pointer(k) + cta * np.uint64(layout.per_cta * layout.bytes_of(k))
            else:  # one value for every lane: a read-only view (steps replace parameters, never write into them)
                lanes.params[name] = np.broadcast_to(np.uint64(memory.pointer(k)), (threads,))
        # the count in the kernel's units (vectors of count_unit elements): a larger count would
        # send a grid-stride loop past the buffers
        count = -(-(layout.per_cta if layout.single_cta else size) // layout.count_unit)
        for name in layout.scalars:
            lanes.params[name] = np.full(threads, count, dtype=np.uint64)
        for name in layout.zeroed:
            lanes.params[name] = np.zeros(threads, dtype=np.uint64)
        for k, name in value_ix.items():  # the thread that stores input i's element holds input i's value
            v = np.zeros(threads, dtype=np.uint64)
            v[judged] = ops[k].astype(np.uint64)
            lanes.params[name] = v
        ctx = RunContext(trace=trace, memory=memory, block=layout.block, threads=threads,
                         single_cta=layout.single_cta, local_flows=group.local_flows, **run_args(abi, ctx_args))
        if layout.sinks:
            ctx.store_redirect = _sink_addresses(layout, group, positions, memory.pointer(layout.output_region))
        plan.run(lanes, ctx)
        # each lane's number among the threads that store (-1: its thread stores nothing); the
        # lanes of a thread that stores nothing are never judged, nor counted
        if layout.active is None:  # every thread stores: a lane's number is its thread's
            lane_number, kept, every = lanes.origin, np.ones(lanes.size, dtype=bool), True
        else:
            number = np.full(threads, -1, dtype=np.int64)
            number[judged] = np.arange(m)
            lane_number = number[lanes.origin]
            kept = lane_number >= 0
            every = bool(kept.all())
        got_by_lane, ops_by_lane = [], []
        for atom_ix, (a, (key, sub)) in enumerate(zip(group.atoms, group.keys)):
            atom = layout.atoms[a]
            slot = lanes.store_slots.get(key)
            if slot is None:
                raise UnsupportedPtxError(f".entry {plan.function.name}: {atom.where()} did not run",
                                          Location(plan.path, atom.store.line, atom.store.col))
            region, nbytes, offs, vals, done = lanes.stores[slot]
            # every judged lane stored its element where discovery found it (the byte offset of its
            # record: element - sub elements in), and no lane of a thread that stores nothing stored
            # at all (a value it wrote would go unjudged)
            at = layout.record_offsets(threads, a, sub)[lanes.origin]
            offs = np.asarray(offs)
            if not np.array_equal(done, kept) or \
                    not (np.array_equal(offs, at) if every else np.array_equal(offs[kept], at[kept])):
                stray = done & ~kept
                why = ""
                if stray.any():
                    t = int(lanes.origin[np.flatnonzero(stray)[0]])
                    why = (f": thread {t % layout.block} of CTA {t // layout.block}, one of the threads that store "
                           "nothing, stores")
                elif not done[kept].all():
                    t = int(lanes.origin[np.flatnonzero(kept & ~done)[0]])
                    why = f": thread {t % layout.block} of CTA {t // layout.block} stores nothing"
                raise UnsupportedPtxError(f".entry {plan.function.name}: with {ctas} CTAs, {atom.where()} does not "
                                          f"store each thread's element where a smaller launch did{why}",
                                          Location(plan.path, atom.store.line, atom.store.col))
            vals = np.asarray(vals)
            # the element's bits of the record (its low ``fw`` bits once shifted: astype truncates)
            got_by_lane.append((vals >> vals.dtype.type(sub * fw) if sub else vals).astype(u))
            ops_by_lane.append([(np.roll(o, atom_ix) if atom_ix else o).astype(ou, copy=False)
                                for o, ou in zip(ops, op_uints)])
        if every:
            bad, res = judge_lanes(ref, ops_by_lane, got_by_lane, lanes, m, ctx.ulp_reading, abi.stored_form,
                                   abi.stored_expression)
        else:
            # an unjudged lane's unknown bound says nothing of an input (nor does explain_unknown)
            lanes.unknown = (np.zeros(lanes.size, dtype=bool) if lanes.unknown is None else lanes.unknown) & kept
            view = _JudgedLanes(lane_number[kept], lanes.unknown[kept])
            bad_kept, res = judge_lanes(ref, ops_by_lane, [g[kept] for g in got_by_lane], view, m, ctx.ulp_reading,
                                        abi.stored_form, abi.stored_expression)
            bad = np.zeros(lanes.size, dtype=bool)
            bad[kept] = bad_kept
        res.got = got_by_lane[0]
        if trace:  # each lane's element that fails, if one does (the one a report shows)
            res.got = got_by_lane[0].copy()
            origin = np.where(kept, lane_number, 0)
            for ops_j, got_j in reversed(list(zip(ops_by_lane, got_by_lane))):
                expected = ref.expected(ops_j)[origin]
                ok = ref.judge(got_j, [o[origin] for o in ops_j] if ref.contract else [], expected,
                               ctx.ulp_reading) | ~kept
                res.got[~ok] = got_j[~ok]
        last = (res, lanes, bad, ctx, plan)
        if trace and bad.any():
            return last
        if total is None:
            # (``got`` per input means nothing here: lanes of several groups; a trace gives a group's)
            total = BlockResult(np.zeros(n, bool), np.zeros(n, bool), 0, np.zeros(n, dtype=u), np.zeros(n, bool),
                                np.zeros(n, bool))
        total.bad[:m_in] |= res.bad[:m_in]
        total.unknown[:m_in] |= res.unknown[:m_in]
        total.by_value[:m_in] |= res.by_value[:m_in]
        total.by_nan[:m_in] |= res.by_nan[:m_in]
        total.lanes += res.lanes
    if trace:
        return last
    total.by_nan &= ~total.by_value
    return total


def _sink_addresses(layout, group, positions, out_base: int) -> dict:
    """Where each element of the ``st.shared`` stores that hold a group's elements (the layout's
    sinks) is recorded instead: ``{step: {the element's first byte in the stored vector: (element
    bytes, its address in the result buffer per thread)}}``, each element a record of its own
    (:func:`tilecheck.verify.layout.sink_key`)."""
    eb = layout.element_bytes
    out: dict = {}
    for pos, ((step, part), _) in zip(positions, group.keys):
        at = np.uint64(out_base) + (pos * eb).astype(np.uint64)
        out.setdefault(step, {})[part - SINK_PART] = (eb, at)
    return out


# ---------------------------------------------------------------------------------------------
# inputs


def sampled_inputs(ref: Reference, n: int, seed: int) -> tuple[list[np.ndarray], dict]:
    """``n`` distinct operand tuples (fewer only where the domain is smaller) in the mix of
    :func:`tilecheck.inputs.forms.mixed_operands` (edge-class patterns, constructed hard cases of the
    operation, uniform patterns), the repeats replaced by more uniform patterns, shuffled by
    ``seed``; and how many of those inputs each source gave: ``{"special": .., "hard": ..,
    "uniform": ..}``, adding up to the inputs returned (an input drawn twice counts for its first
    source)."""
    formats = ref.operand_formats
    rng = np.random.default_rng([seed, 12])
    cols, drawn = ref.sample_mix(n, rng)
    # where each row came from (the draws are in that order): an input drawn twice counts once,
    # for its first source, so that the parts add up to the inputs checked
    source = np.repeat(np.arange(3), [drawn["edge"], drawn["hard"], drawn["uniform"]])
    # each input once (edge patterns and hard cases repeat), topped up with uniform patterns so that
    # ``n`` distinct inputs are checked where the domain has them; a seeded shuffle keeps blocks mixed
    uniq, first = np.unique(np.stack(cols, axis=1), axis=0, return_index=True)
    source = source[first]
    for _ in range(8):
        short = min(n, 1 << min(62, sum(f.width for f in formats))) - uniq.shape[0]
        if short <= 0:
            break
        extra = np.stack([uniform_operands(f, short, rng, 1)[0] for f in formats], axis=1)
        uniq, first = np.unique(np.concatenate([uniq, extra]), axis=0, return_index=True)
        source = np.concatenate([source, np.full(short, 2)])[first]
    order = rng.permutation(uniq.shape[0])
    uniq, source = uniq[order], source[order]
    cols = [uniq[:, j].astype(f.uint) for j, f in enumerate(formats)]
    counts = np.bincount(source, minlength=3).tolist()
    return cols, {"special": counts[0], "hard": counts[1], "uniform": counts[2]}


def _pack(abi: Abi, ref: Reference, lane_ops: list[np.ndarray]) -> list[np.ndarray]:
    """Containers for the code: one lane per element, or two; lane j of element i gets the operands
    of input i - j (a rotation), so each lane sees every input and a mix-up of lanes shows."""
    if abi.lanes == 1:
        return [o.astype(_UINT[w]) for o, w in zip(lane_ops, abi.operand_bits(len(lane_ops)))]
    fw = ref.fmt.width
    out = []
    for o in lane_ops:
        acc = np.zeros(o.shape[0], dtype=np.uint64)
        for j in range(abi.lanes):
            acc |= np.roll(o, j).astype(np.uint64) << np.uint64(j * fw)
        out.append(acc.astype(_UINT[abi.width]))
    return out


# ---------------------------------------------------------------------------------------------
# the verifier


@dataclass
class Outcome:
    """The result of one verification (see :func:`verify_ptx`)."""

    path: str
    entry: str
    ref: str
    verdict: str           # verified | counterexample | unknown
    exhaustive: bool
    inputs_checked: int
    lanes_run: int
    misrounded: list
    misrounded_count: int
    unknown_count: int
    misrounded_by_value: int
    counterexamples: list
    ulp_reading: str
    approx: str
    abi: str
    sampling: dict
    approximate_forms: list
    seconds: float
    contraction_sites: list
    misrounded_by_nan: int = 0
    unknown_inputs: list = field(default_factory=list)  # the first unknown inputs, each with why (explain_unknown)
    sign_rule: str | None = None       # the contracts' sign rule, short (spec/rules/contracts.yaml)
    sign_rule_line: str | None = None  # ... as a report line
    stored_expression: bool = False    # the code stores the reference's own expression (identity.py)

    @property
    def exit_code(self) -> int:
        """0 verified or no counterexample, 1 counterexample, 4 unknown."""
        return {"verified": 0, "counterexample": 1, "unknown": 4}[self.verdict]

    @property
    def verdict_word(self) -> str:
        """The verdict as reports print it: ``verified`` only for a run over every input,
        ``no-counterexample`` for one that passed on some of them (sampled, the first N of an
        exhaustive run, one given input); ``counterexample`` and ``unknown`` as they are.
        (:attr:`verdict` keeps ``verified`` for any run that passed: it is the outcome's class.)"""
        if self.verdict == "verified" and not self.exhaustive:
            return "no-counterexample"
        return self.verdict

    @property
    def inputs_text(self) -> str:
        """What was checked, in words: ``all 65536 inputs``, ``2000 sampled inputs``..."""
        n = self.inputs_checked
        s = "" if n == 1 else "s"
        if self.exhaustive:
            return f"all {n} inputs"
        if "exhaustive" in self.sampling:
            return f"the first {n} input{s} of the exhaustive enumeration"
        if "given" in self.sampling:
            return f"the {n} given input{s}"
        return f"{n} sampled input{s}"

    @property
    def misrounded_by_zero_sign(self) -> int:
        """Misrounded inputs whose results differ only by the sign of a zero."""
        return self.misrounded_count - self.misrounded_by_value - self.misrounded_by_nan

    @property
    def misrounded_classes(self) -> dict:
        """The misrounded inputs by class, the non-empty classes only: ``value`` (a different
        number, or a number for a NaN), ``nan_payload`` (both NaNs, where REF judges payloads),
        ``zero_sign`` (both zeros, of different signs). They add up to the misrounded count."""
        classes = {"value": self.misrounded_by_value, "nan_payload": self.misrounded_by_nan,
                   "zero_sign": self.misrounded_by_zero_sign}
        return {k: v for k, v in classes.items() if v}

    @property
    def headline(self) -> dict:
        """What the verdict leads with: the inputs misrounded in value where there are any (the
        count that matters; a zero's sign or a NaN's payload is counted apart), else every
        misrounded input; ``counts`` says which."""
        if self.misrounded_by_value:
            return {"misrounded": self.misrounded_by_value, "counts": "value"}
        return {"misrounded": self.misrounded_count, "counts": "all" if self.misrounded_count else "none"}


def _domain(ref: Reference, abi: Abi) -> int:
    return 1 << sum(operand_widths(ref))


def exhaustive_block(ref: Reference, start: int, stop: int) -> list[np.ndarray]:
    """Inputs ``start .. stop-1`` of the exhaustive enumeration: operand 0 varies fastest, so a block
    of 2^16 pairs of a 16-bit binary operation has one divisor, whose allowed approximate results
    are then the same for every lane of the block (forked by copying blocks, computed once)."""
    idx = np.arange(start, stop, dtype=np.uint64)
    out, shift = [], 0
    for f in ref.operand_formats:  # (operands of different widths take fields of their own widths)
        out.append(((idx >> np.uint64(shift)) & np.uint64((1 << f.width) - 1)).astype(f.uint))
        shift += f.width
    return out


@dataclass
class Prepared:
    """A function ready to run: its PTX parsed and compiled once, its reference and ABI found.
    Everything a run over an input range needs (:func:`run_range`)."""

    path: str
    entry: str
    against: str
    ref: Reference
    plan: Plan
    abi: Abi
    ctx_args: dict
    text: str = ""                 # the PTX (a worker process compiles it again)
    spec_root: str | None = None   # the spec database's folder (likewise)
    db: object = field(default=None, repr=False)  # the spec database (its forms explain unknown inputs)
    params: str | None = None      # --params: the user's statement of the parameters' roles

    @property
    def domain(self) -> int:
        """How many inputs there are (2^(width x arity))."""
        return _domain(self.ref, self.abi)


def prepare(path: str, entry: str, against: str, *, db, ulp_reading: str = "either", approx: str = "all",
            tininess: str = TININESS_DEFAULT, text: str | None = None, params: str | None = None) -> Prepared:
    """Parse ``path`` (or ``text``, its contents, when given: a worker need not have the file),
    compile ``entry`` and find its ABI against ``against`` (``params``: as ``--params`` states
    the parameters' roles, :func:`find_abi`)."""
    if ulp_reading not in READINGS:
        raise UsageError(f"--ulp-reading must be one of {', '.join(READINGS)}")
    if approx not in ("all", "provisional", "reference"):
        raise UsageError("--approx must be 'all', 'provisional' or 'reference'")
    if text is None:
        text = read_source(path)
    module = parse_module(text, path)
    ref = parse_reference(against, db)
    fn = module.function(entry)  # the PTX name from here on: reports and repro lines name it exactly
    plan = compile_function(fn, db, path)
    abi = find_abi(plan, ref, path, params)
    abi.stored_form = identity.stored_form(plan, ref, db) if approx == "all" else None
    abi.stored_expression = approx == "all" and identity.stored_expression(plan, ref, db)
    return Prepared(path, fn.name, against, ref, plan, abi,
                    dict(approx=approx, ulp_reading=ulp_reading, tininess=tininess), text,
                    str(db.root) if getattr(db, "root", None) is not None else None, db, params)


@dataclass
class Tally:
    """What a run over some inputs found, mergeable: ``a.merge(b)`` for consecutive input ranges
    equals the tally of their union. It keeps the first ``MISROUNDED_CAP`` misrounded inputs and the
    first ``keep`` of each kind of example, in input order, so that neither the block size nor the
    split into batches changes what a run reports."""

    keep: int = 3
    checked: int = 0
    lanes: int = 0
    misrounded: int = 0
    by_value: int = 0
    unknown: int = 0
    # the first MISROUNDED_CAP misrounded operand tuples, as uint64 arrays (one per block that added
    # some): a sweep where most inputs misround fills the cap in every task, and rows of Python ints
    # cost more to build and to send back from a worker than the task's runs
    rows: list = field(default_factory=list)
    held: int = 0                                        # the rows' total length
    first_value: list = field(default_factory=list)      # misrounded in value
    first_zero: list = field(default_factory=list)       # misrounded only by the sign of a zero
    unknown_examples: list = field(default_factory=list)
    by_nan: int = 0                                      # misrounded only by a NaN's payload
    first_nan: list = field(default_factory=list)
    # every misrounded input counted by the high bytes of its first two operands (:func:`map_bins`):
    # the picture of an HTML report, whose total is the misrounded count however long the list is
    map: np.ndarray | None = None
    map_lost: bool = False  # resumed from a checkpoint written before maps were kept
    # hold every misrounded input, not the first MISROUNDED_CAP (a range whose tally a parent with a
    # sink merges); ``sink(rows)``: called with every misrounded input, in input order, as they
    # are added or merged (``--misrounded FILE``); neither is part of a checkpoint
    every: bool = False
    sink: object = field(default=None, repr=False, compare=False)

    @property
    def inputs(self) -> list:
        """The misrounded operand tuples kept (at most ``MISROUNDED_CAP``), in input order, as lists
        of ints."""
        return np.concatenate(self.rows).tolist() if self.rows else []

    def _keep_rows(self, rows: np.ndarray) -> None:
        room = rows.shape[0] if self.every else MISROUNDED_CAP - self.held
        if room > 0 and rows.shape[0]:
            part = np.array(rows[:room], dtype=np.uint64)  # a copy: the block's arrays are let go
            self.rows.append(part)
            self.held += part.shape[0]

    @property
    def by_zero_sign(self) -> int:
        """Inputs misrounded only by the sign of a zero (every other misrounded input is counted
        in value or by a NaN's payload)."""
        return self.misrounded - self.by_value - self.by_nan

    def add(self, lane_ops: list[np.ndarray], res: BlockResult) -> None:
        """Count one block of inputs (``lane_ops``, one array per operand) and its result."""
        self.checked += lane_ops[0].shape[0]
        self.lanes += res.lanes
        self.by_value += int(res.by_value.sum())
        nan = res.by_nan if res.by_nan is not None else np.zeros_like(res.bad)
        self.by_nan += int(nan.sum())
        if res.bad.any():
            sel = np.flatnonzero(res.bad)
            self.misrounded += sel.size
            stacked = np.stack([o[sel].astype(np.uint64) for o in lane_ops], axis=1)
            if self.sink is not None:
                self.sink(stacked)
            self._keep_rows(stacked)
            value, payload = res.by_value[sel], nan[sel]
            self._extend(self.first_value, stacked[value], self.keep)
            self._extend(self.first_nan, stacked[payload], self.keep)
            self._extend(self.first_zero, stacked[~value & ~payload], self.keep)
            self._count_map(map_bins([o[sel] for o in lane_ops]), len(lane_ops))
        unk = res.unknown & ~res.bad
        if unk.any():
            self.unknown += int(unk.sum())
            sel = np.flatnonzero(unk)[:self.keep]
            self._extend(self.unknown_examples, np.stack([o[sel].astype(np.uint64) for o in lane_ops], axis=1),
                         self.keep)

    def _count_map(self, flat: np.ndarray, arity: int) -> None:
        """Add the flat bin indices of some misrounded inputs (one bincount: cheap per block)."""
        counts = np.bincount(flat, minlength=MAP_BINS ** min(arity, 2)).astype(np.int64)
        self.map = counts if self.map is None else self.map + counts

    @staticmethod
    def _extend(into: list, rows, cap: int) -> None:
        room = cap - len(into)
        if room > 0:
            into.extend([list(r) for r in (rows[:room].tolist() if hasattr(rows, "tolist") else rows[:room])])

    def merge(self, later: "Tally") -> "Tally":
        """Append the tally of the inputs that follow this one's; returns self."""
        self.checked += later.checked
        self.lanes += later.lanes
        self.misrounded += later.misrounded
        self.by_value += later.by_value
        self.by_nan += later.by_nan
        self.unknown += later.unknown
        if later.map is not None:
            self.map = later.map.copy() if self.map is None else self.map + later.map
        self.map_lost |= later.map_lost
        if self.sink is not None:
            if later.held != later.misrounded:  # a capped range: its inputs past the cap are gone
                raise ValueError("a tally merged into one with a sink must hold every misrounded input")
            for rows in later.rows:
                self.sink(rows)
        for rows in later.rows:
            self._keep_rows(rows)
        self._extend(self.first_value, later.first_value, self.keep)
        self._extend(self.first_nan, later.first_nan, self.keep)
        self._extend(self.first_zero, later.first_zero, self.keep)
        self._extend(self.unknown_examples, later.unknown_examples, self.keep)
        return self

    def to_json(self) -> dict:
        """A JSON-ready dict (a checkpoint holds one; the map as its non-zero bins)."""
        data = dict(self.__dict__)
        del data["rows"], data["held"], data["every"], data["sink"]
        data["inputs"] = self.inputs
        data["map"] = None if self.map is None else sparse_map(self.map)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Tally":
        """The inverse of :meth:`to_json` (a checkpoint from before maps: the map is lost)."""
        data = dict(data)
        inputs = data.pop("inputs", [])
        if "map" not in data:
            data["map_lost"] = bool(data.get("misrounded"))
        elif data["map"] is not None:
            data["map"] = dense_map(data["map"])
        tally = cls(**data)
        if inputs:
            tally._keep_rows(np.array(inputs, dtype=np.uint64).reshape(len(inputs), -1))
        return tally


MAP_BINS = 256
"""Bins per operand of the misrounded map: the high byte of the operand's bit pattern (its sign,
and its exponent's top bits: all of a binary16's exponent and 2 fraction bits, 7 of a bfloat16's
exponent bits). A binary reference's map is 256 x 256 over (a, b); a unary one's 256 bins."""


def map_bins(operands: list[np.ndarray]) -> np.ndarray:
    """Flat bin index of each input (:data:`MAP_BINS` per operand, first two operands only)."""
    hi = [(o.astype(np.uint64) >> np.uint64(o.dtype.itemsize * 8 - 8)).astype(np.intp) for o in operands[:2]]
    return hi[0] if len(hi) == 1 else hi[0] * MAP_BINS + hi[1]


def sparse_map(counts: np.ndarray) -> dict:
    """A map as JSON: its shape and ``[flat index, count]`` for each non-zero bin."""
    nz = np.flatnonzero(counts)
    shape = [MAP_BINS, MAP_BINS] if counts.size > MAP_BINS else [MAP_BINS]
    return {"shape": shape, "nonzero": np.stack([nz, counts[nz]], axis=1).tolist()}


def dense_map(data: dict) -> np.ndarray:
    """The inverse of :func:`sparse_map` (flat counts)."""
    counts = np.zeros(int(np.prod(data["shape"])), dtype=np.int64)
    for k, n in data["nonzero"]:
        counts[k] = n
    return counts


def run_range(p: Prepared, start: int, stop: int, *, block: int = EXHAUSTIVE_BLOCK, threads: int = 1,
              progress=None, keep: int = 3, every: bool = False, sink=None) -> Tally:
    """Run inputs ``start .. stop-1`` of the exhaustive enumeration in blocks of ``block`` aligned on
    multiples of ``block`` (packed half2 code pairs inputs within a block, so equal blocks give equal
    results however the range is split), ``threads`` blocks at a time. ``progress(n)`` after each
    block with the inputs it held; ``keep``, ``every``, ``sink``: examples of each kind kept, whether
    every misrounded input is held, every misrounded input's destination (:class:`Tally`)."""
    starts = list(range(start, stop, block))
    if start % block:
        raise ValueError(f"start {start} is not a multiple of the block {block}")
    keep_freed_memory()  # blocks reuse the pages the previous one freed

    def work(s):
        lane_ops = exhaustive_block(p.ref, s, min(s + block, stop))
        return lane_ops, run_inputs(p, lane_ops, positions=position_block(s, block))

    tally = Tally(keep=keep, every=every, sink=sink)
    if threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            results = pool.map(work, starts)
            for lane_ops, res in results:
                tally.add(lane_ops, res)
                if progress:
                    progress(lane_ops[0].shape[0])
    else:
        for s in starts:
            lane_ops, res = work(s)
            tally.add(lane_ops, res)
            if progress:
                progress(lane_ops[0].shape[0])
    return tally


def run_inputs(p: Prepared, lane_ops: list[np.ndarray], positions: bool = True) -> BlockResult:
    """:func:`run_block` on the inputs ``lane_ops`` (one array per operand), in runs of at most
    :data:`RUN_CHUNK` inputs where the code has no packed lanes and no fused regions (packed code
    pairs the inputs of the whole block, so it runs the block at once); the per-input results are
    the same. A kernel with an element layout runs each class's representative on every input,
    and, where ``positions`` (:func:`position_block`), its other elements on the first ones."""
    n = lane_ops[0].shape[0]
    if _reference_bounds_nothing(p.ref, lane_ops):
        # no result could be judged: every input is unknown whatever the code computes, so the code
        # is not run (sin.approx.f32 beyond 100pi: a quarter of the binary32 inputs, and those a
        # full-range sine reduces by Payne-Hanek, its slowest path)
        none = np.zeros(n, dtype=bool)
        return BlockResult(none, np.ones(n, dtype=bool), 0, np.zeros(n, dtype=p.ref.fmt.uint), none, none)
    if p.abi.layout is not None:  # several elements per thread: each class's representative runs every input
        return run_block(p.plan, p.abi, p.ref, _pack(p.abi, p.ref, lane_ops), p.ctx_args, every_position=False,
                         sample_positions=positions)
    if p.abi.lanes != 1 or n <= RUN_CHUNK or (p.plan.regions and fused.enabled()):
        return run_block(p.plan, p.abi, p.ref, _pack(p.abi, p.ref, lane_ops), p.ctx_args)
    parts = [run_block(p.plan, p.abi, p.ref, _pack(p.abi, p.ref, [o[s:s + RUN_CHUNK] for o in lane_ops]),
                       p.ctx_args) for s in range(0, n, RUN_CHUNK)]
    return BlockResult(np.concatenate([r.bad for r in parts]), np.concatenate([r.unknown for r in parts]),
                       sum(r.lanes for r in parts), np.concatenate([r.got for r in parts]),
                       np.concatenate([r.by_value for r in parts]), np.concatenate([r.by_nan for r in parts]))


def _reference_bounds_nothing(ref, lane_ops: list[np.ndarray]) -> bool:
    """Whether a one-form reference bounds nothing for every input of ``lane_ops`` (a contract's
    domain where any result stands): decided on the block's first and last input first, which is
    all a block within one domain region costs."""
    if not isinstance(ref, Reference) or not ref.contract or not contracts.may_bound_nothing(ref.form):
        return False
    ends = [np.asarray(o)[[0, -1]] for o in lane_ops]
    return bool(ref.unknown(ends).all()) and bool(ref.unknown(lane_ops).all())


_WORKER: dict = {}  # in a worker process: the Prepared function it runs (see run_range_processes)


def _die_with_parent() -> None:
    """Linux: have this worker process terminated when the process that started it dies (killed,
    say, for memory). Otherwise a worker that finished a range would wait forever to hand its
    result to a pipe nobody reads. Elsewhere: nothing (the worker ends when its pipe closes)."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _worker_start(key: tuple) -> None:
    """Initialise a worker process: end with its parent, compile the function once (a forked
    worker inherits it)."""
    if sys.platform.startswith("linux"):
        _die_with_parent()
    keep_freed_memory()
    if _WORKER.get("key") == key:
        return
    path, text, entry, against, ctx_args, root, params = key
    _WORKER["p"] = prepare(path, entry, against, db=load_database(root), text=text, params=params, **ctx_args)
    _WORKER["key"] = key


def _worker_range(start: int, stop: int, block: int, keep: int, every: bool = False):
    """Run ``start .. stop-1`` in a worker process; None if it failed (the parent then reruns the
    range itself, so that the error is raised, and reported, exactly as in a serial run)."""
    try:
        return run_range(_WORKER["p"], start, stop, block=block, keep=keep, every=every)
    except Exception:  # noqa: BLE001 -- rerun in the parent, which raises it
        return None


def run_range_processes(p: Prepared, start: int, stop: int, *, workers: int, block: int = EXHAUSTIVE_BLOCK,
                        progress=None, keep: int = 3, sink=None) -> Tally:
    """:func:`run_range` over ``workers`` worker processes in tasks of :data:`PROCESS_TASK` inputs
    (whole blocks), merged in input order: the same tally as the serial run."""
    if start % block:
        raise ValueError(f"start {start} is not a multiple of the block {block}")
    task = max(block, PROCESS_TASK // block * block)
    return run_ranges(p, [(s, min(s + task, stop)) for s in range(start, stop, task)], workers=workers,
                      block=block, progress=progress, keep=keep, sink=sink)


def run_ranges(p: Prepared, ranges: list, *, workers: int, block: int = EXHAUSTIVE_BLOCK, progress=None,
               keep: int = 3, method: str | None = None, sink=None) -> Tally:
    """Run each input range ``(start, stop)`` (``start`` a multiple of ``block``) as :func:`run_range`
    does, ``workers`` at a time in worker processes, and merge their tallies in the order given.
    ``progress(n)`` after each range merged, with its inputs. Workers are forked when this process
    runs no other thread (they then share the compiled plan and the contract tables filled so
    far), else started afresh ("spawn") and compile the function themselves. Where worker
    processes cannot start or die, what is left runs in this process (:func:`run_range`); a range
    whose run fails in a worker runs again here, so that its error is raised as a serial run's.
    ``method`` forces a start method ("fork" or "spawn"). ``sink``: every misrounded input, in input
    order (:class:`Tally`; each range then holds all of its own until merged)."""
    key = (p.path, p.text, p.entry, p.against, dict(p.ctx_args), p.spec_root, p.params)
    if method is None:
        method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
            else "spawn"
    if method == "fork":
        _WORKER.update(p=p, key=key)
    tally = Tally(keep=keep, sink=sink)
    every = sink is not None
    done = 0

    def merge(part, n):
        nonlocal done
        tally.merge(part)
        done += 1
        if progress:
            progress(n)

    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                                 initializer=_worker_start, initargs=(key,)) as pool:
            futures = [pool.submit(_worker_range, s, e, block, keep, every) for s, e in ranges]
            try:
                for k, (s, e) in enumerate(ranges):
                    part = futures[k].result()
                    # a merged range's tally is let go: each holds up to MISROUNDED_CAP inputs, and a
                    # sweep where many inputs misround would otherwise keep thousands of them
                    futures[k] = None
                    merge(part if part is not None else run_range(p, s, e, block=block, keep=keep, every=every), e - s)
                    del part
            except BaseException:
                for fut in futures:
                    if fut is not None:
                        fut.cancel()
                raise
    except (BrokenProcessPool, OSError):
        pass  # no worker processes here (or they died): the rest runs in this process
    finally:
        if method == "fork":
            _WORKER.clear()
    for s, e in ranges[done:]:
        merge(run_range(p, s, e, block=block, threads=workers, keep=keep, every=every), e - s)
    return tally


def exhaustive_total(p: Prepared, limit: int | None = None) -> int:
    """Inputs of an exhaustive run (the domain, or the first ``limit``); a usage error past 2^32."""
    if p.domain > EXHAUSTIVE_LIMIT:
        raise UsageError(f"--exhaustive: {p.ref.text} has 2^{sum(operand_widths(p.ref))} inputs; exhaustive runs "
                         "cover at most 2^32 (16-bit unary and binary, 32-bit unary): use --cases N")
    return p.domain if limit is None else min(p.domain, limit)


def _forking_steps(steps) -> tuple[list, list, list]:
    """The labels of the steps a run forks on, by kind: approximate forms (spec names), mul+add
    contraction sites, and spellings the ISA leaves undefined read as any of their readings."""
    labels = {st.approximate for st in steps if st.approximate}
    contraction = sorted(x for x in labels if "contracted" in x)
    read_as = sorted(x for x in labels if "read as any of" in x)
    return sorted(labels - set(contraction) - set(read_as)), contraction, read_as


def finish(p: Prepared, tally: Tally, *, exhaustive: bool, sampling: dict, seconds: float) -> Outcome:
    """The :class:`Outcome` of a run that found ``tally`` (counterexamples explained here)."""
    cases = (tally.first_value + tally.first_nan + tally.first_zero)[:tally.keep]
    counterexamples = [explain(p.plan, p.abi, p.ref, [np.array([v], dtype=u) for v, u in zip(case, _operand_uints(p.ref))],
                               p.ctx_args,
                               p.path, p.entry, p.against, p.ctx_args["ulp_reading"], p.ctx_args["approx"])
                       for case in cases]
    verdict = "counterexample" if tally.misrounded else ("unknown" if tally.unknown else "verified")
    steps = p.plan.steps
    approx_forms, contraction, read_as = _forking_steps(steps)
    abi = p.abi
    out = Outcome(p.path, p.entry, p.against, verdict, bool(exhaustive), tally.checked, tally.lanes,
                  tally.inputs[:MISROUNDED_CAP], tally.misrounded, tally.unknown, tally.by_value, counterexamples,
                  p.ctx_args["ulp_reading"], p.ctx_args["approx"],
                  abi.describe(),
                  sampling, approx_forms, seconds, contraction, tally.by_nan,
                  [explain_unknown(p, case) for case in tally.unknown_examples[:tally.keep]],
                  *_sign_rule(p.db))
    out.stored_expression = abi.stored_expression
    out.read_as = read_as  # type: ignore[attr-defined]
    out.unknown_examples = tally.unknown_examples  # type: ignore[attr-defined]
    out.misrounded_map = None if tally.map_lost else (tally.map if tally.map is not None else  # type: ignore
                                                      np.zeros(MAP_BINS ** min(p.ref.arity, 2), dtype=np.int64))
    out.format = p.ref.fmt.name  # type: ignore[attr-defined]
    out.prepared = p  # type: ignore[attr-defined]  # (an HTML report re-runs some misrounded inputs traced)
    out.readings = {f: api.reading_used(f, p.ctx_args["ulp_reading"]) for f in approx_forms}  # type: ignore[attr-defined]
    return out


def _sign_rule(db) -> tuple:
    """The contracts' sign rule as ``(short, report line)``, (None, None) for a database without it."""
    rule = getattr(db, "sign_rule", None)
    return (rule.short, rule.describe()) if rule is not None else (None, None)


def covers_domain(domain: int, cases: int | None, *, small: int) -> bool:
    """Whether a run with no ``--exhaustive`` goes over every input: when no count is given and the
    domain has at most ``small`` inputs, or when the count asked for is the domain's size or more (a
    sample that large would check fewer distinct inputs than the enumeration)."""
    return domain <= small if cases is None else cases >= domain


def verify_ptx(path: str, entry: str, against: str, *, db, exhaustive: bool | None = None, cases: int | None = None,
               seed: int = 0, ulp_reading: str = "either", approx: str = "all", tininess: str = TININESS_DEFAULT,
               block: int | None = None, threads: int | None = None, progress=None, limit: int | None = None,
               report_limit: int = 3, processes: bool | None = None, params: str | None = None,
               misrounded=None, announce=None) -> Outcome:
    """Verify function ``entry`` of the PTX file ``path`` against ``against`` (see the module doc).

    With no ``exhaustive`` and no ``cases``, every input is run where the domain has at most
    :data:`EXHAUSTIVE_LIMIT` inputs, else :data:`DEFAULT_CASES` are sampled.
    ``limit`` stops an exhaustive run after that many inputs (for measuring; the outcome then says
    ``exhaustive: False``). ``threads``: blocks run at once (default: :func:`tilecheck.cpus.threads`): by
    worker processes when ``processes`` (default: for runs of at least :data:`PROCESS_MIN` inputs),
    else by threads of this process; the outcome is the same. Sharding over machines, with
    checkpoints, is :mod:`tilecheck.verify.sharded`.
    ``progress(done, total)`` is called after each block. ``misrounded(rows)``: called with every
    misrounded input, in input order (a uint64 array, one column per operand), as the run finds them.
    ``announce(total, workers)``: called before an exhaustive run starts."""
    started = time.time()
    p = prepare(path, entry, against, db=db, ulp_reading=ulp_reading, approx=approx, tininess=tininess, params=params)
    if exhaustive is None:
        exhaustive = covers_domain(p.domain, cases, small=EXHAUSTIVE_LIMIT)
    if exhaustive:
        total = exhaustive_total(p, limit)
        done = 0

        def step(n):
            nonlocal done
            done += n
            if progress:
                progress(done, total)

        workers = threads or cpus.threads()
        if announce:
            announce(total, workers)
        if processes is None:
            processes = total >= PROCESS_MIN
        if processes and workers > 1:
            tally = run_range_processes(p, 0, total, workers=workers, block=block or EXHAUSTIVE_BLOCK, progress=step,
                                        keep=report_limit, sink=misrounded)
        else:
            tally = run_range(p, 0, total, block=block or EXHAUSTIVE_BLOCK, threads=workers, progress=step,
                              keep=report_limit, sink=misrounded)
        return finish(p, tally, exhaustive=total == p.domain, sampling={"exhaustive": total},
                      seconds=round(time.time() - started, 3))
    n = cases or DEFAULT_CASES
    lane_ops, sampling = sampled_inputs(p.ref, n, seed)
    block = block or (1 << 14)
    tally = Tally(keep=report_limit, sink=misrounded)
    for s in range(0, lane_ops[0].shape[0], block):
        part = [o[s:s + block] for o in lane_ops]
        tally.add(part, run_block(p.plan, p.abi, p.ref, _pack(p.abi, p.ref, part), p.ctx_args))
        if progress:
            progress(min(s + block, n), n)
    return finish(p, tally, exhaustive=False, sampling=sampling, seconds=round(time.time() - started, 3))


def explain(plan: Plan, abi: Abi, ref: Reference, lane_ops: list[np.ndarray], ctx_args: dict, path: str, entry: str,
            against: str, ulp_reading: str, approx: str) -> dict:
    """One counterexample in full: inputs, the choice each approximate instruction made (and its
    place in the contract), every register of the failing lane, expected vs got, a repro command."""
    fmt = ref.fmt
    traced = run_block(plan, abi, ref, _pack(abi, ref, lane_ops), ctx_args, trace=True)
    res, lanes, bad, ctx = traced[:4]
    plan = traced[4] if len(traced) > 4 else plan  # an element layout: the group's cut-down function
    # the same run with registers starting as UNWRITTEN: a register zero in the first run and
    # UNWRITTEN in this one was never written by the lane (a branch it did not take)
    again = run_block(traced[4] if len(traced) > 4 else plan, abi, ref, _pack(abi, ref, lane_ops), ctx_args,
                      trace=True, fill=True)[1]
    lane_ix = int(np.flatnonzero(bad)[0]) if bad.any() else 0
    expected = ref.expected([o for o in lane_ops])
    got_container = int(res.got[lane_ix])
    fw = fmt.width
    got_lanes = [(got_container >> (j * fw)) & ((1 << fw) - 1) for j in range(abi.lanes)]
    exp = int(np.asarray(expected).reshape(-1)[0])
    inputs = []
    for o, ofmt in zip(lane_ops, ref.operand_formats):
        v = int(o[0])
        text, cls = ofmt.describe(v)
        inputs.append({"hex": ofmt.hex(v), "value": text, "class": cls})
    choices = []
    for k, (ret, refv, lo, hi, has) in sorted(lanes.trace.items()):
        if not has[lane_ix]:
            continue
        st = plan.steps[k]
        low, high = int(lo[lane_ix]), int(hi[lane_ix])
        wide = _unenumerated_range(plan, st, lanes, lane_ix)
        if wide is not None:  # the run kept one result of more than it enumerates: give them all
            low, high = wide
        choices.append({"instruction": st.instr.text, "line": st.instr.line, **source_fields(st.instr),
                        "returned": int(ret[lane_ix]), "reference": int(refv[lane_ix]), "low": low,
                        "high": high})
    for rec in choices:
        width = 64 if rec["returned"] >> 32 or rec["reference"] >> 32 else 32
        ffmt = ref.formats["f64" if width == 64 else "f32"]
        d = _ord(rec["returned"], ffmt) - _ord(rec["reference"], ffmt)
        rec["position"] = "RN" if d == 0 else f"RN{d:+d}ulp"
        # the range in value order, with the values: for negative results the lower value has the
        # larger bit pattern, so bits alone read reversed
        rec["low"], rec["high"] = sorted((rec["low"], rec["high"]), key=lambda v: _ord(v, ffmt))
        rec["allowed"] = (f"[{ffmt.hex(rec['low'])} ({ffmt.describe(rec['low'])[0]}), "
                          f"{ffmt.hex(rec['high'])} ({ffmt.describe(rec['high'])[0]})]")
        for key in ("returned", "reference", "low", "high"):
            rec[key] = ffmt.hex(rec[key])
    # the registers on the data-flow path from the operand loads to the result's store, in the
    # order the code first writes them (address arithmetic and loop counters are not on it)
    path_regs = register_path(plan, abi, lanes.regs, lane_ix, again.regs if again.size == lanes.size else None)
    registers = {r["register"]: r["value"] for r in path_regs}
    # the lane that disagrees (both lanes of a packed element hold this input)
    lane_of, got = 0, got_lanes[0]
    for j, g in enumerate(got_lanes):
        exp1 = np.asarray(expected).reshape(-1)[:1]
        if not bool(ref.judge(np.array([g], dtype=fmt.uint), [o[:1] for o in lane_ops], exp1, ulp_reading)[0]):
            lane_of, got = j, g
            break
    repro = (f"tilecheck verify {path} --entry {entry} --against {shlex.quote(against)} --input "
             + ",".join(ofmt.hex(int(o[0])) for o, ofmt in zip(lane_ops, ref.operand_formats))
             + (f" --ulp-reading {ulp_reading}" if ulp_reading != "either" else "")
             + (f" --approx {approx}" if approx != "all" else "")
             + (f" --params {abi.stated}" if abi.stated else ""))
    return {"inputs": inputs, "expected": {"hex": fmt.hex(exp), "value": fmt.describe(exp)[0]},
            "got": {"hex": fmt.hex(got), "value": fmt.describe(got)[0], "lane": lane_of},
            "approximate_choices": choices, "registers": registers, "register_path": path_regs, "repro": repro}


def _unenumerated_range(plan: Plan, st, lanes, lane_ix: int):
    """(low, high): every result ``st``'s approximate form allows in lane ``lane_ix`` where the run
    left the lane unknown (more results than it enumerates; judged beside the reference, see
    :func:`judge_lanes`), from its operands as the run left them; else None."""
    unknown = getattr(lanes, "unknown", None)
    if unknown is None or not bool(unknown[lane_ix]) or not st.approximate:
        return None
    form = plan.db.form(st.approximate)
    bits = _operand_bits(st.instr, lanes.regs, lane_ix, form)
    if bits is None or form.lanes != 1:
        return None
    with np.errstate(all="ignore"):
        r = api.allowed_results(form, *[np.array([v], dtype=np.uint64) for v in bits])
    if bool(r.unbounded[0]) or bool(r.empty[0]):
        return None
    return int(r.lo[0]), int(r.hi[0])


def source_fields(instr) -> dict:
    """Where an instruction comes from in the program's source (its ``.loc``): ``{"source":
    "kernel.py:12:5"}`` (None without line info); for code inlined from a header (nvcc's
    cuda_fp16.hpp) ``source`` is the user's line it was inlined at and ``inlined_from`` the header's."""
    src, at = getattr(instr, "source", None), getattr(instr, "inlined_at", None)
    if at is not None:
        return {"source": at, "inlined_from": src}
    return {"source": src}


def register_path(plan: Plan, abi: Abi, regs: dict, lane: int, filled: dict | None = None) -> list[dict]:
    """The registers on the data-flow path from the operand loads to the result's store
    (:func:`result_slice`), in the order the code first writes them, each with its value in
    ``lane`` and the instructions that write it: ``{"register", "value", "written"}``. With
    ``filled``, the registers of the same run started as :data:`UNWRITTEN`, those the lane never
    wrote are left out."""
    fn = plan.function
    flows = dataflow(fn)
    on_path = result_slice(flows, element_ends(flows, abi.in_memory, abi.inputs, abi.output, abi.returned))
    writers: dict = {}
    for f in flows:
        for name in f.writes:
            if name in on_path:
                src = source_fields(f.instr)["source"]
                writers.setdefault(name, []).append(_where(f, whole=True) + (f" [{src}]" if src else ""))
    out, shown = [], set()
    for name, lines in writers.items():  # dict order: first write first
        arr = regs.get(name)
        if arr is None:
            continue
        t = fn.registers.get(name, "b64")
        v = arr[lane]
        if filled is not None and name in filled and not v:
            w = filled[name][lane]
            if bool(w) if w.dtype == bool else int(w) == UNWRITTEN & np.iinfo(w.dtype).max:
                continue  # zero from the start, UNWRITTEN from the start: never written
        value = bool(v) if t == "pred" else f"0x{int(v):0{max(1, TYPES.get(t, (64, 'b'))[0] // 4)}x}"
        shown_as = name.split("#")[0] + ("" if "#" not in name else "(scope)")
        k = 2
        while shown_as in shown:  # two inline-asm scopes may each declare a register of one name
            shown_as = name.split("#")[0] + f"(scope {k})"
            k += 1
        shown.add(shown_as)
        out.append({"register": shown_as, "value": value, "written": lines})
    return out


def explain_unknown(p: Prepared, case) -> dict:
    """Why one input is unknown: each approximate instruction its lanes ran whose contract bounds
    nothing for the operands it got (the contract's domain rule and its source, or "more results
    than are enumerated"), with the operands. ``case``: the input's operand bits."""
    lane_ops = [np.array([int(v)], dtype=u) for v, u in zip(case, _operand_uints(p.ref))]
    traced = run_block(p.plan, p.abi, p.ref, _pack(p.abi, p.ref, lane_ops), p.ctx_args, trace=True)
    res, lanes, bad, ctx = traced[:4]
    plan = traced[4] if len(traced) > 4 else p.plan  # an element layout: the group's cut-down function
    hit = np.flatnonzero(lanes.unknown) if lanes.unknown is not None else np.zeros(0, dtype=np.int64)
    reasons = []
    for k, (ret, refv, lo, hi, has) in sorted(lanes.trace.items()):
        st = plan.steps[k]
        form = p.db.resolve(st.approximate) if p.db is not None and st.approximate else None
        if form is None or form.contract is None:
            continue
        for lane in hit.tolist():
            if not has[lane]:
                continue
            operands = _operand_bits(st.instr, lanes.regs, lane, form)
            if operands is None:
                continue
            why = unbounded_reason(form, operands, p.ctx_args)
            if why is not None:
                width = PTX_TYPES_BITS.get(form.type, 32)
                reasons.append({"instruction": " ".join(st.instr.text.split()).rstrip(";"), "line": st.instr.line,
                                **source_fields(st.instr), "operands": [f"0x{v:0{width // 4}x}" for v in operands], "why": why})
                break
    for st in plan.steps if hit.size and not reasons else ():
        # an instruction whose results the ISA leaves open for some operands (integer div by zero)
        for lane in hit.tolist() if st.unspecified is not None else ():
            operands = _source_bits(st.instr, lanes.regs, lane, 2)
            why = st.unspecified(operands) if operands is not None else None
            if why is not None:
                reasons.append({"instruction": " ".join(st.instr.text.split()).rstrip(";"), "line": st.instr.line,
                                **source_fields(st.instr), "operands": [f"0x{v:x}" for v in operands], "why": why})
                break
    return {"inputs": [f.hex(int(v)) for v, f in zip(case, p.ref.operand_formats)], "reasons": reasons,
            "reference": _reference_unbounded(p, case, lane_ops)}


def _reference_unbounded(p: Prepared, case, lane_ops) -> str | None:
    """Why the reference itself bounds nothing for one input (None where it does): its contract's
    domain rule or bound, or, for an expression, that one of its approximate calls bounds nothing
    or, inside the expression, allows more results than are enumerated."""
    reading = p.ctx_args["ulp_reading"]
    if p.abi.stored_expression:  # by identity: the call that bounds nothing, and why
        if not bool(np.asarray(p.ref.unbounded(lane_ops, reading))[0]):
            return None
        found = expression.free_call(p.ref.root, p.ref._arrays(lane_ops), reading)
        if found is not None:
            form, operands = found
            if operands is None:
                return f"the arguments of {form.name} in the reference have more results than are enumerated"
            why = unbounded_reason(form, operands, p.ctx_args)
            if why is not None:
                return f"{form.name} of {', '.join(f'0x{v:x}' for v in operands)} in the reference: {why}"
    elif not bool(np.asarray(p.ref.unknown(lane_ops, reading))[0]):
        return None
    form = p.ref.form
    why = unbounded_reason(form, [int(v) for v in case], p.ctx_args) if form is not None else None
    if why is None and getattr(p.ref, "leaves_open", False):
        why = p.ref.open_why(lane_ops)
    return why or (f"an approximate call of the reference bounds nothing for this input, or allows more than "
                   f"{MAX_CHOICES} results inside the expression (not enumerated)")


def _operand_bits(instr, regs: dict, lane: int, form) -> list[int] | None:
    """The source operands' bits of ``instr`` in ``lane`` (registers as the run left them,
    immediates as written); None where one cannot be read."""
    return _source_bits(instr, regs, lane, len(form.sources))


def _source_bits(instr, regs: dict, lane: int, count: int) -> list[int] | None:
    """The first ``count`` source operands' bits of ``instr`` in ``lane`` (:func:`_operand_bits`)."""
    out = []
    for op in instr.operands[1:1 + count]:
        if isinstance(op, Reg) and op.name in regs:
            out.append(int(regs[op.name][lane]))
        elif isinstance(op, Imm) and isinstance(op.value, int):
            out.append(int(op.value))
        else:
            return None
    return out


def unbounded_reason(form, operands: list[int], ctx_args: dict) -> str | None:
    """Why ``form``'s contract bounds nothing for these operand bits (None where it does): the
    first domain rule that decides them, if it is ``unbounded`` (its source says why), an allowed
    set too large to enumerate, or a bound no document states (provisional, not asked for)."""
    arrays = [np.array([v], dtype=np.uint64) for v in operands]
    if form.contract.provisional and ctx_args.get("approx") == "all":
        return (f"no document states a bound for {form.name}: the spec's bound is provisional "
                f"({form.contract.source or 'see its notes'}); --approx provisional uses it")
    with np.errstate(all="ignore"):
        fmt, flushed, _, _ = contracts._prepare(np, form, arrays)
        for rule in form.contract.rules:
            if all(bool(np.asarray(contracts._condition(np, fmt, flushed[i], cond))[0]) for i, cond in rule.when):
                if rule.result not in FREE_RESULTS:
                    return None
                return rule.source or "the contract's domain rule for these operands bounds nothing"
        why = contracts.beneath_bound_reason(form, operands)
        if why is not None:
            return why
        dtype = _UINT[PTX_TYPES_BITS.get(form.type, 32)]
        ch = allowed_choices(form, [a.astype(dtype) for a in arrays], ulp_reading=ctx_args["ulp_reading"],
                             tininess=ctx_args["tininess"])
    if bool(np.asarray(ch.unbounded)[0]):
        return f"the contract allows more than {MAX_CHOICES} results for these operands (not enumerated)"
    return None


def _ord(bits: int, fmt) -> int:
    mag = bits & fmt.magnitude_mask
    return -mag - 1 if bits & fmt.sign_mask else mag


def verify_single(path: str, entry: str, against: str, operands: list[str], *, db, ulp_reading="either",
                  approx="all", tininess=TININESS_DEFAULT, params: str | None = None) -> Outcome:
    """Verify one input (``--input a,b``): the repro of a counterexample."""
    started = time.time()
    p = prepare(path, entry, against, db=db, ulp_reading=ulp_reading, approx=approx, tininess=tininess, params=params)
    ref, plan, abi = p.ref, p.plan, p.abi
    if len(operands) != ref.arity:
        raise UsageError(f"--input: {ref.text} takes {ref.arity} operand(s), got {len(operands)}")
    lane_ops = [np.array([f.parse_operand(o, "--input")], dtype=f.uint)
                for o, f in zip(operands, ref.operand_formats)]
    ctx_args = p.ctx_args
    res = run_block(plan, abi, ref, _pack(abi, ref, lane_ops), ctx_args)
    bad = bool(res.bad[0])
    unknown = bool(res.unknown[0]) and not bad
    cex = [explain(plan, abi, ref, lane_ops, ctx_args, path, p.entry, against, ulp_reading, approx)] if bad else []
    verdict = "counterexample" if bad else ("unknown" if unknown else "verified")
    approx_forms, _, read_as = _forking_steps(plan.steps)
    case = [int(o[0]) for o in lane_ops]
    out = Outcome(path, p.entry, against, verdict, False, 1, res.lanes,
                  [case] if bad else [], int(bad), int(unknown), int(res.by_value[0]), cex,
                  ulp_reading, approx,
                  abi.describe(), {"given": 1}, approx_forms, round(time.time() - started, 3), [],
                  int(res.by_nan[0]) if bad else 0, [explain_unknown(p, case)] if unknown else [], *_sign_rule(db))
    out.unknown_examples = [case] if unknown else []  # type: ignore[attr-defined]
    out.read_as = read_as  # type: ignore[attr-defined]
    out.readings = {f: api.reading_used(f, ulp_reading) for f in approx_forms}  # type: ignore[attr-defined]
    counts = np.bincount(map_bins(lane_ops), minlength=MAP_BINS ** min(ref.arity, 2)).astype(np.int64)
    out.misrounded_map = counts * int(bad)  # type: ignore[attr-defined]
    out.format = ref.fmt.name  # type: ignore[attr-defined]
    out.prepared = p  # type: ignore[attr-defined]
    return out


POSITION_TRACE = 256
"""Misrounded inputs an HTML report runs again, traced, to count the positions in the allowed
range that the failing choices took (:func:`misround_positions`)."""


def misround_positions(p: Prepared, inputs: list, limit: int = POSITION_TRACE) -> dict:
    """For the first ``limit`` of the misrounded ``inputs`` (operand tuples), which position in
    each approximate instruction's allowed range (``RN-2ulp`` .. ``RN+2ulp``) the lanes that
    misround took: ``{"inputs": k, "lanes": m, "instructions": [{"line", "instruction",
    "positions": {"RN-1ulp": count, ...}}]}``. The hot loop records no choice per lane (its fast
    paths fork without a trace), so this runs those inputs again with a trace, after the run."""
    cases = inputs[:limit]
    if not cases:
        return {"inputs": 0, "lanes": 0, "instructions": []}
    ops = [np.array([c[j] for c in cases], dtype=u) for j, u in enumerate(_operand_uints(p.ref))]
    traced = run_block(p.plan, p.abi, p.ref, _pack(p.abi, p.ref, ops), p.ctx_args, trace=True)
    lanes, bad = traced[1], traced[2]
    plan = traced[4] if len(traced) > 4 else p.plan
    rows = []
    for k, (ret, refv, lo, hi, has) in sorted(lanes.trace.items()):
        sel = bad & has
        if not sel.any():
            continue
        wide = bool((np.asarray(ret[sel]) >> np.uint64(32)).any() or (np.asarray(refv[sel]) >> np.uint64(32)).any())
        ffmt = p.db.formats["f64" if wide else "f32"]
        d = [_ord(int(r), ffmt) - _ord(int(e), ffmt) for r, e in zip(ret[sel], refv[sel])]
        counts: dict = {}
        for v in sorted(d):
            key = "RN" if v == 0 else f"RN{v:+d}ulp"
            counts[key] = counts.get(key, 0) + 1
        st = plan.steps[k]
        rows.append({"line": st.instr.line, "instruction": st.instr.text, "positions": counts})
    return {"inputs": len(cases), "lanes": int(bad.sum()), "instructions": rows}


def progress_printer(stream=None):
    """A progress callback writing ``done/total`` lines, with the rate and the time left at that
    rate, to stderr at most every 2 seconds."""
    stream = stream or sys.stderr
    last = [0.0]
    t0 = time.time()

    def show(done, total):
        now = time.time()
        if now - last[0] >= 2 or done == total:
            last[0] = now
            rate = done / max(now - t0, 1e-9)
            left = (total - done) / rate if rate > 0 else 0.0
            eta = f", {left / 60:.1f} min left" if done < total and left >= 60 else ""
            stream.write(f"  {done}/{total} inputs ({100.0 * done / total:.1f}%), {rate / 1e6:.2f} M inputs/s{eta}\n")
            stream.flush()
    return show


def version_note(version: str | None, db) -> str | None:
    """What a report says about a module's ``.version`` newer than the spec's newest (Triton
    3.9 writes 9.4): the module is accepted, since no instruction the spec knows needs a version
    that new (an instruction the spec does not know is refused where it stands); None for a
    version the spec covers, or one that does not read as MAJOR.MINOR."""
    m = re.fullmatch(r"(\d+)\.(\d+)", (version or "").strip())
    if m is None or db is None:
        return None
    newest = db.newest_ptx
    if (int(m.group(1)), int(m.group(2))) <= newest:
        return None
    return (f".version {version} is newer than the newest PTX ISA version the spec records "
            f"({newest[0]}.{newest[1]}); accepted: no instruction the spec records needs more")


def producer(path: str, db=None) -> dict:
    """Which compiler wrote the PTX, from its header comments (nvcc's "Cuda compilation tools" and
    build lines, LLVM's "Generated by LLVM NVPTX Back-End"), and its ``.version``/``.target``;
    ``version_note`` (:func:`version_note`, against ``db`` or the default spec database) where
    the ``.version`` is newer than the spec records."""
    out: dict = {}
    try:
        with open(path, encoding="utf-8") as fh:
            head = [next(fh, "") for _ in range(30)]
    except OSError:
        return out
    for line in head:
        text = line.strip().lstrip("/").strip()
        if text.startswith(("Cuda compilation tools", "Compiler Build ID", "Based on NVVM", "Generated by")):
            out.setdefault("compiler", []).append(text)
        elif text.startswith((".version", ".target")):
            key, _, value = text.partition(" ")
            out[key.lstrip(".")] = value.strip()
    if "version" in out:
        note = version_note(out["version"], db if db is not None else load_database())
        if note:
            out["version_note"] = note
    return out
