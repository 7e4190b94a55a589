"""Per-form checks of ``tilecheck verify``.

``FORM_CHECKS`` is an ordered registry of ``(name, function)``; each function takes the form and a
:class:`Context` and returns a :class:`~tilecheck.verify.report.CheckResult`:

* ``schema`` -- the form came out of a schema-valid spec file and its spelling (and every
  qualifier order) resolves back to it;
* ``legality`` -- the spec's verdict (legal on the kernel's target, illegal below the form's gate)
  agrees with ptxas's parse-only verdict on the instruction (the ptxas half is skipped, with the
  reason, when ptxas is absent);
* ``examples`` -- every documented/recorded example holds in the model;
* ``contract`` -- approximate forms: the model's representative value satisfies the contract;
* ``emission`` -- the single-instruction kernels (plain and predicated) are emitted with the ABI
  the differential engine relies on and parse; ``ptxas`` assembles them to cubins (skipped, not
  failed, without ptxas);
* ``differential`` -- cases (edge-biased, constructed hard ones, uniform) run on the chosen backend
  (``cpu``: emitted PTX executed by the simulator; ``gpu``: CuPy) and every result is judged by
  :func:`tilecheck.allowed`; a predicated run checks that masked-off threads keep their output.

Checks that batch work across forms (ptxas runs) keep their results in the context's caches.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tilecheck import ptxas
from tilecheck.amdgpu.campaign import DEFAULT_CASES
from tilecheck.diff import backends
from tilecheck.diff import cases as gen
from tilecheck.diff.backends import kernel_target
from tilecheck.diff.cases import source_layout
from tilecheck.diff.findings import describe_operand
from tilecheck.diff.support import SUPPORTED, Support
from tilecheck.diff.verdict import ok_mask
from tilecheck.emit import function_kernel, single_instruction_kernel
from tilecheck.emit.kernel import no_kernel_reason
from tilecheck.errors import TilecheckError
from tilecheck.inputs.forms import edge_lane, form_operands
from tilecheck.model import api
from tilecheck.sim import launch, parse_ptx
from tilecheck.spec.contract import ULP_READING_DEFAULT
from tilecheck.spec.forms import Form
from tilecheck.spec.registry import TININESS_DEFAULT
from tilecheck.verify import function_checks
from tilecheck.verify.report import CheckResult
from tilecheck.verify.vectors import mismatch_text

DETAILS = 5
"""Findings listed per check (the counts are always complete)."""


@dataclass
class Context:
    """Options shared by all checks of one verify run, and the caches the checks fill.

    ``backend`` is a backend name or a :class:`tilecheck.diff.backends.Backend`; ``forms`` every
    form of the run (ptxas runs are batched over them); ``tininess`` and ``ulp_reading`` the
    differential verdict's conventions. Sequences: ``semantics`` (observed | documented), ``rcp``
    (contract | nearest) and ``sequence_cases``.
    """

    db: object
    cases: int = 2000
    seed: int = 0
    backend: object = "auto"
    target: str | None = None
    forms: list = field(default_factory=list)
    tininess: str = TININESS_DEFAULT
    ulp_reading: str = ULP_READING_DEFAULT
    semantics: str = "observed"
    rcp: str = "contract"
    sequence_cases: int = DEFAULT_CASES
    # filled by the checks
    ptxas_support: Support | None = None  # whether ptxas is available (None: not asked yet)
    ptxas_version: str | None = None
    ptxas: dict | None = None  # version, path and source of the ptxas used
    resolved_backend: object = None  # the backend object, or a string saying why there is none
    ptxas_legality: dict = field(default_factory=dict)
    kernels: dict = field(default_factory=dict)
    assembled: dict = field(default_factory=dict)
    model_backend: object = None  # the model as a backend (the oracle check of function forms)
    batched_legality: set = field(default_factory=set)  # form names whose ptxas verdicts are batched
    batched_assembly: set = field(default_factory=set)  # form names whose kernels are assembled
    function_cases: int | None = None  # cases per function form (None: FUNCTION_CASES, the default)


# ---------------------------------------------------------------------------------------------
# helpers


def ptxas_support(ctx: Context) -> Support:
    """Whether ptxas is available to the run, or why not (asked once per run)."""
    if ctx.ptxas_support is None:
        try:
            info = ptxas.ptxas_info()  # version, path and source: every ptxas-dependent result names them
            ctx.ptxas = info
            ctx.ptxas_version = info["version"]
            ctx.ptxas_support = SUPPORTED
        except TilecheckError as exc:
            ctx.ptxas_support = Support(f"ptxas not available ({exc.message})")
    return ctx.ptxas_support


def _run_forms(ctx: Context, form: Form, batched: set) -> list[Form]:
    """The forms a batch for ``form`` covers: every form of the run the first time (``batched``
    remembers them), then only ``form`` if an earlier batch did not cover it."""
    if form.name in batched:
        return []
    forms = [f for f in (ctx.forms or [form]) if f.name not in batched]
    if not any(f is form for f in forms):
        forms.append(form)
    batched.update(f.name for f in forms)
    return forms


def _kernel_target(ctx: Context, form: Form) -> str:
    return kernel_target(ctx.db, form, ctx.target)


def _emits(form: Form) -> Support:
    """Whether a legal form has a single-instruction kernel at all, or why not."""
    reason = no_kernel_reason(form)
    return SUPPORTED if reason is None else Support(f"no single-instruction kernel: {reason}")


def _kernel_support(ctx: Context, form: Form) -> Support:
    """Whether ``form`` has a kernel on the run's target, or why not."""
    target = _kernel_target(ctx, form)
    if ctx.db.target(target).sm < form.target.sm:
        return Support(f"{form.name} needs sm_{form.target.sm}; the target is {target}")
    return SUPPORTED


def _below_gate(ctx: Context, form: Form):
    """The newest known target below the form's gate (None when there is none)."""
    below = [t for t in ctx.db.targets.values() if t.sm < form.target.sm and t.sm >= 75 and not t.variant]
    return max(below, key=lambda t: t.sm) if below else None


def backend_for(ctx: Context):
    """The run's backend object (built once from ``ctx.backend``), or a string saying why none."""
    if ctx.resolved_backend is None:
        if isinstance(ctx.backend, backends.Backend):
            ctx.resolved_backend = ctx.backend
        else:
            try:
                ctx.resolved_backend = backends.select(str(ctx.backend), db=ctx.db, target=ctx.target)
            except backends.BackendUnavailableError as exc:
                ctx.resolved_backend = f"backend unavailable: {exc.message}"
    return ctx.resolved_backend


# ---------------------------------------------------------------------------------------------
# schema and legality


def check_schema(form: Form, ctx: Context) -> CheckResult:
    """The form's spelling, in every qualifier order, resolves back to the form."""
    result = CheckResult("schema")
    mods = form.modifiers
    fixed = [m for m in mods if m in getattr(ctx.db.families.get(form.family), "opcode_qualifiers", ())]
    free = [m for m in mods if m not in fixed]
    orders = list(itertools.islice(itertools.permutations(free), 24))
    for order in orders:
        spelling = ".".join([form.opcode, *fixed, *order, form.type])
        result.cases += 1
        if ctx.db.resolve(spelling) is not form:
            result.failures += 1
            result.details.append(f"{spelling} does not resolve to {form.name} ({form.location})")
    return result


def _ptxas_legality(ctx: Context, forms: list[Form]) -> dict:
    """ptxas's parse-only verdicts: (form name, target) -> (accepted, message), batched per target."""
    cache = ctx.ptxas_legality
    todo: dict[tuple[str, str], list[Form]] = {}
    for f in forms:
        targets = {_kernel_target(ctx, f)} if not _kernel_support(ctx, f).ok else \
            {_kernel_target(ctx, f), getattr(_below_gate(ctx, f), "name", None)} - {None}
        for target in targets:
            if (f.name, target) not in cache:
                version = ctx.db.min_version(f, target) if ctx.db.target(target).sm >= f.target.sm else \
                    max(f.target.ptx_for(ctx.db.target(target).sm), ctx.db.target(target).min_ptx)
                todo.setdefault((target, f"{version[0]}.{version[1]}"), []).append(f)
    for (target, version), group in todo.items():
        verdicts = ptxas.check_instructions([ptxas.form_instruction(f) for f in group], target, version)
        for f, v in zip(group, verdicts):
            cache[(f.name, target)] = (v.accepted, v.error)
    return cache


def check_legality(form: Form, ctx: Context) -> CheckResult:
    """The spec's verdict agrees with ptxas: legal on the kernel target, illegal below the gate."""
    result = CheckResult("legality")
    target = _kernel_target(ctx, form)
    below = _below_gate(ctx, form)
    if not _kernel_support(ctx, form).ok:
        expect = [(target, False)]  # an explicit --target older than the form's gate
    else:
        expect = [(target, True)] + ([(below.name, False)] if below is not None else [])
    for name, legal in expect:
        result.cases += 1
        verdict = ctx.db.verdict(form.name, name)
        if verdict.legal != legal or (legal and verdict.form is not form):
            result.failures += 1
            result.details.append(f"spec verdict on {name}: {'legal' if verdict.legal else 'illegal'}, expected "
                                  f"{'legal' if legal else 'illegal'} ({verdict.reason})")
    have_ptxas = ptxas_support(ctx)
    if not have_ptxas.ok:
        result.details.append(f"ptxas half skipped: {have_ptxas.reason}")
        return result
    cache = _ptxas_legality(ctx, _run_forms(ctx, form, ctx.batched_legality))
    for name, legal in expect:
        accepted, message = cache[(form.name, name)]
        result.cases += 1
        if accepted != legal:
            result.failures += 1
            result.details.append(f"ptxas {'accepts' if accepted else 'rejects'} {form.name} on {name}, the spec says "
                                  f"{'legal' if legal else 'illegal'}" + (f": {message}" if message else ""))
    return result


# ---------------------------------------------------------------------------------------------
# examples and contract self-check


def ulp_reading(ctx: Context) -> str:
    """The reading of approximate forms' ulp bounds this run uses (``verify --ulp-reading``)."""
    return ctx.ulp_reading


def check_examples(form: Form, ctx: Context) -> CheckResult:
    """Every example of the form, through the model: bit-exact (NaN per policy) for exact forms,
    within the contract for approximate ones."""
    result = CheckResult("examples")
    if form.kind == "memory":
        result.skipped = "moves bits"
        return result
    for ex in form.examples:
        result.cases += 1
        ok = bool(api.allowed(form, ex.result, *ex.operands, ulp_reading=ulp_reading(ctx)))
        if not ok:
            result.mismatches += 1
            got = api.reference(form, *ex.operands)
            ops = " ".join(f"0x{v:x}" for v in ex.operands)
            result.details.append(f"{ex.location}: {form.name} {ops}: spec says 0x{ex.result:x} "
                                  f"({ex.variant}: {ex.source}), model gives 0x{int(got):x}")
    return result


def check_contract_reference(form: Form, ctx: Context) -> CheckResult:
    """Approximate forms: the model's representative value is allowed by the contract on
    edge-biased inputs (a contract that rejects its own reference is broken)."""
    result = CheckResult("contract")
    if form.kind != "contract":
        result.skipped = "exact form"
        return result
    rng = np.random.default_rng(ctx.seed)
    ops = [o.astype(np.uint64) for o in form_operands(form, min(ctx.cases, 2000), rng, edge_lane)]
    ref = api.reference(form, *ops)
    ok = api.allowed(form, ref, *ops, ulp_reading=ulp_reading(ctx))
    result.cases = int(ok.size)
    bad = np.nonzero(~ok)[0]
    result.mismatches = int(bad.size)
    for i in bad[:DETAILS]:
        args = " ".join(f"0x{int(o[i]):x}" for o in ops)
        result.details.append(f"{form.name} {args}: reference 0x{int(ref[i]):x} rejected by the contract")
    return result


# ---------------------------------------------------------------------------------------------
# emission and ptxas


def _kernels(ctx: Context, form: Form):
    """(plain, predicated) single-instruction kernels of ``form`` (cached)."""
    cache = ctx.kernels
    if form.name not in cache:
        target = _kernel_target(ctx, form)
        cache[form.name] = tuple(single_instruction_kernel(form, target, predicated=p, db=ctx.db)
                                 for p in (False, True))
    return cache[form.name]


def check_emission(form: Form, ctx: Context) -> CheckResult:
    """The form's kernels are emitted with the documented ABI and the lowest ``.version``, and
    the simulator's parser reads them."""
    result = CheckResult("emission")
    result.skipped = _kernel_support(ctx, form).reason or _emits(form).reason
    if result.skipped is not None:
        return result
    target = _kernel_target(ctx, form)
    want_version = ctx.db.min_version(form, target)
    for kernel in _kernels(ctx, form):
        result.cases += 1
        problems = []
        roles = [p.role for p in kernel.params]
        sources, outputs = ((len(form.sources), len(function_kernel.destination_names(form))) if form.kind == "function"
                            else (len(source_layout(form)), 1))
        expected_roles = ["source"] * sources + ["output"] * outputs + (["mask"] if kernel.predicated else []) \
            + ["count"]
        if roles != expected_roles:
            problems.append(f"parameters {roles}, expected {expected_roles}")
        if kernel.version != f"{want_version[0]}.{want_version[1]}":
            problems.append(f".version {kernel.version}, expected the lowest the form and {target} accept "
                            f"({want_version[0]}.{want_version[1]})")
        if f" {form.name} " not in kernel.ptx and f"{form.name} " not in kernel.ptx:
            problems.append(f"the kernel does not contain {form.name}")
        refusal = backends.simulator_refusal(form)
        if refusal is not None:
            result.details.append(f"{kernel.name}: not read by the simulator ({refusal})")
        try:
            if refusal is not None:
                pass
            elif backends.needs_compiled_engine(form):
                launch.parse(kernel)
            else:
                parse_ptx(kernel.ptx).kernel(kernel.name)
        except ModuleNotFoundError as exc:
            if exc.name != "tilecheck.sim":
                raise
        except TilecheckError as exc:
            problems.append(f"the simulator cannot parse it: {exc}")
        if problems:
            result.failures += 1
            result.details.append(f"{kernel.name}: " + "; ".join(problems))
    return result


def _assemble_all(ctx: Context, forms: list[Form]) -> dict:
    """ptxas on every kernel of ``forms``: kernel name -> (ok, message). One module per target
    (entries concatenated, ``.version`` the highest needed); a module that fails is retried
    kernel by kernel so each failure is attributed."""
    cache = ctx.assembled
    groups: dict[str, list] = {}
    for f in forms:
        if not _kernel_support(ctx, f).ok or not _emits(f).ok:
            continue
        for kernel in _kernels(ctx, f):
            if kernel.name not in cache:
                groups.setdefault(kernel.target, []).append(kernel)
    for target, kernels in groups.items():
        version = max((k.version for k in kernels), key=ptxas.version_tuple)
        body = []
        for k in kernels:
            text = k.ptx.split(".address_size 64", 1)[1]
            body.append(text)
        module = f".version {version}\n.target {target}\n.address_size 64\n" + "\n".join(body)
        try:  # a module of hundreds of kernels: its time limit grows with them (a loaded machine is slow)
            outcome = ptxas.assemble(module, target, timeout=60 + len(kernels))
        except TilecheckError:
            outcome = None  # did not finish: each kernel alone, below
        if outcome is not None and outcome.ok:
            for k in kernels:
                cache[k.name] = (True, "")
            continue
        for k in kernels:
            try:
                single = ptxas.assemble(k.ptx, target)
            except TilecheckError as exc:  # ptxas did not finish: that kernel's failure, said so
                cache[k.name] = (False, exc.message)
                continue
            cache[k.name] = (single.ok, "; ".join(m.text for m in single.errors) or single.output.strip())
    return cache


def check_ptxas(form: Form, ctx: Context) -> CheckResult:
    """ptxas assembles the form's kernels (plain and predicated) to cubins for their target."""
    result = CheckResult("ptxas")
    for support in (ptxas_support(ctx), _kernel_support(ctx, form), _emits(form)):
        if not support.ok:
            result.skipped = support.reason
            return result
    cache = _assemble_all(ctx, _run_forms(ctx, form, ctx.batched_assembly))
    for kernel in _kernels(ctx, form):
        result.cases += 1
        ok, message = cache.get(kernel.name, (False, "no ptxas verdict was recorded for it"))
        if not ok:
            result.failures += 1
            result.details.append(f"ptxas -arch={kernel.target} rejects {kernel.name}: {message}")
    return result


# ---------------------------------------------------------------------------------------------
# differential


def check_differential(form: Form, ctx: Context) -> CheckResult:
    """Edge-biased, hard and uniform cases on the run's backend, judged by ``tilecheck.allowed``;
    then a predicated run (random mask) whose masked-off threads must keep their old output."""
    backend = backend_for(ctx)
    name = f"differential({backend.name})" if not isinstance(backend, str) else "differential"
    result = CheckResult(name)
    if isinstance(backend, str):
        result.skipped = backend
        return result
    support = backend.support(form) if _emits(form).ok else _emits(form)
    if not support.ok:
        result.skipped = support.reason
        return result
    if form.kind == "function":
        function_checks.check_differential(form, ctx, backend, result)
        return result
    tininess = ctx.tininess
    operands = gen.batch(form, ctx.seed, 0, ctx.cases)
    found = backend.judge(form, operands, tininess, ulp_reading(ctx))
    result.cases += found.cases
    result.mismatches += found.count
    for j in range(min(found.count, DETAILS)):
        ops = [int(o[j]) for o in found.operands]
        run = f" [{found.labels[j]}]" if found.labels else ""
        if form.kind == "memory":
            result.details.append(f"{form.name}{run}: stored/loaded {describe_operand(form, int(found.results[j]))}, "
                                  f"source {describe_operand(form, ops[0])}")
        else:
            result.details.append(mismatch_text(form, ops, int(found.results[j])) + run)
    if form.kind != "memory" or all(o.registers == 1 for o in form.operands):
        _predicated(form, ctx, backend, result, tininess)
    return result


def _predicated(form: Form, ctx: Context, backend, result: CheckResult, tininess: str) -> None:
    n = max(1, min(ctx.cases, 512))
    operands = gen.batch(form, ctx.seed, 1, n)
    rng = np.random.default_rng([ctx.seed, gen.form_key(form), 1 << 20])
    mask = (rng.random(n) < 0.5).astype(np.uint32)
    value = next(o for o in form.operands if o.role != "addr")
    width = value.container_bits
    out_dtype = np.dtype(f"uint{width}")
    old = np.full(n, (0xA5A5A5A5A5A5A5A5 >> (64 - width)), dtype=out_dtype)
    got = backend.run(form, operands, mask=mask, old=old)
    on = mask != 0
    kept = got[~on] == old[~on]
    ok_on = (np.asarray(ok_mask(form, got[on], [o[on] for o in operands], tininess, ulp_reading(ctx))) if on.any()
             else np.ones(0, bool))
    result.cases += n
    bad_off = int((~kept).sum())
    bad_on = int((~ok_on).sum())
    result.mismatches += bad_off + bad_on
    if bad_off:
        result.details.append(f"predicated {form.name}: {bad_off} masked-off thread(s) overwrote their output")
    if bad_on:
        result.details.append(f"predicated {form.name}: {bad_on} active thread(s) gave results the model rejects")


def check_oracle(form: Form, ctx: Context) -> CheckResult:
    """Forms around the arithmetic: the model judged by an oracle independent of it
    (:mod:`tilecheck.verify.function_checks`)."""
    if ctx.model_backend is None:
        ctx.model_backend = backends.ModelBackend(ctx.tininess)
    return function_checks.check_oracle(form, ctx, ctx.model_backend)


FORM_CHECKS: list[tuple[str, Callable[[Form, Context], CheckResult]]] = [
    ("schema", check_schema),
    ("legality", check_legality),
    ("examples", check_examples),
    ("contract", check_contract_reference),
    ("oracle", check_oracle),
    ("emission", check_emission),
    ("ptxas", check_ptxas),
    ("differential", check_differential),
]
