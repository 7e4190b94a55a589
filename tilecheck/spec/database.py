"""Load the spec database: schema-check every file, expand form groups, run database-wide checks.

``load_database()`` reads every YAML file under the spec root, validates it against the schema it
names, expands each form group's qualifier axes into concrete :class:`~tilecheck.spec.forms.Form`
objects with their PTX spelling, and checks the whole: duplicate names, unknown semantics keys or
parameters, two forms claiming one spelling, examples naming unknown forms. Every problem found
is collected and raised together as one :class:`~tilecheck.errors.SpecError`.

Other instruction sets and composite sequences have a loader for their schema name in
``LOADERS`` (:mod:`tilecheck.spec.amdgpu`); the database keeps what they return in ``extras``.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable

from tilecheck.errors import IllegalFormError, Location, Problem, SpecError, UnknownFormError, echo
from tilecheck.formats import Format, read_formats
from tilecheck.spec import amdgpu, amdgpu_integer, registry
from tilecheck.spec.contract import (
    Bound,
    Contract,
    OperandCondition,
    Rule,
    SignRule,
    Special,
    class_word_problem,
    power_of_two,
)
from tilecheck.spec.forms import (
    Example,
    Family,
    Form,
    Hint,
    IllegalSpelling,
    NanPolicy,
    OperandSpec,
    Reference,
    Semantics,
    Target,
    Verdict,
)
from tilecheck.spec.types import PTX_TYPES, format_problems as type_format_problems
from tilecheck.specio.files import display_path, schema_problems, spec_root
from tilecheck.specio.yamlio import LocatedDocument, load_yaml

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
KERNEL_KINDS = ("exact", "contract", "memory")
"""Registry kinds whose forms the single-instruction kernel pipeline handles (see ``kernel_forms``)."""
KERNEL_SPACE = "global"
"""The state space of the memory forms the single-instruction kernel pipeline handles: its kernels
load and store through global pointers (``.param`` forms need a parameter, generic ones a
generic pointer, ``.nc`` ones read-only data: the compiled-PTX executor runs those)."""
SPEC_FOLDERS = ("ptx", "amdgpu", "amdgpu-int", "sequences", "targets", "rules")


def split_spelling(spelling: str) -> tuple[str, tuple[str, ...], str]:
    """``div.rn.ftz.f32`` -> (``div``, (``rn``, ``ftz``), ``f32``). Case is kept: ptxas is
    case-sensitive (``min.NaN.f32`` is legal, ``min.nan.f32`` is not; measured)."""
    tokens = spelling.strip().split(".")
    if len(tokens) < 2 or any(not t for t in tokens):
        return (tokens[0] if tokens else "", (), "")
    return tokens[0], tuple(tokens[1:-1]), tokens[-1]


def spelling_key(spelling: str) -> tuple[str, tuple[str, ...], str]:
    """Order-insensitive identity of a spelling: ptxas accepts qualifiers in any order
    (``div.ftz.rn.f32`` is ``div.rn.ftz.f32``), the type token last."""
    opcode, mods, type_ = split_spelling(spelling)
    return opcode, tuple(sorted(mods)), type_


def _nearest(spelling: str, names: list[str], unknown: list[str], n: int = 3) -> list[str]:
    """The ``n`` names closest to ``spelling`` (difflib ratio >= 0.6); a name holding an anagram of
    an unknown token ranks first (``div.nr.f32`` -> ``div.rn.f32``)."""
    scored = []
    for name in names:
        ratio = difflib.SequenceMatcher(None, spelling, name).ratio()
        if ratio < 0.6:
            continue
        tokens = name.split(".")
        if any(sorted(u) == sorted(t) for u in unknown for t in tokens):
            ratio += 0.1
        scored.append((-ratio, name))
    return [name for _, name in sorted(scored)[:n]]


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


@dataclass
class TargetInfo:
    """A compilation target: name, numeric sm and the lowest .version ptxas accepts for it.

    ``variant`` is ``""`` for a base target (``sm_90``), ``"a"`` for an architecture-specific one
    (``sm_90a``: code runs only on that exact architecture) and ``"f"`` for a family-specific one
    (``sm_100f``: code runs on the family's later members). A variant has its base target's
    instruction gates (``sm``) plus its own ``min_ptx``.
    """

    name: str
    sm: int
    min_ptx: tuple[int, int]
    variant: str = ""

    @property
    def base(self) -> str:
        """The base target's name (``sm_90a`` -> ``sm_90``)."""
        return f"sm_{self.sm}"


@dataclass
class SpecDatabase:
    """Everything loaded from the spec root. Read-only after :func:`load_database`."""

    root: Path
    formats: dict[str, Format] = field(default_factory=dict)
    families: dict[str, Family] = field(default_factory=dict)
    forms: dict[str, Form] = field(default_factory=dict)
    targets: dict[str, TargetInfo] = field(default_factory=dict)
    default_target: str = "sm_90"
    extras: dict[str, dict] = field(default_factory=dict)
    sign_rule: SignRule | None = None  # spec/rules/contracts.yaml: required once any form has a contract
    _by_key: dict = field(default_factory=dict)
    _illegal: dict = field(default_factory=dict)
    # families whose file already reported a problem: an example naming a form they lack is most
    # likely a form of a group that failed to expand, so it is not reported a second time
    _incomplete: set = field(default_factory=set)

    @property
    def digest(self) -> str:
        """SHA-256 of every file the database is read from (formats, instruction, sequence, target
        and rule files, schemas), by path relative to the root: what a recorded verdict rests on.
        A checkpoint keeps it, so that a run is never continued under another reading of its
        reference (tilecheck.verify.sharded)."""
        h = hashlib.sha256()
        for path in sorted(p for p in self.root.rglob("*") if p.is_file() and p.suffix in (".yaml", ".json")):
            h.update(path.relative_to(self.root).as_posix().encode("utf-8") + b"\0")
            h.update(path.read_bytes() + b"\0")
        return h.hexdigest()

    @property
    def newest_ptx(self) -> tuple[int, int]:
        """The newest PTX ISA version the spec records: the highest ``.version`` any of its forms or
        targets needs (9.0 for the PTX ISA 9.0 spec). A module of a newer ``.version`` may use
        forms the spec cannot know."""
        versions = [f.target.ptx for f in self.forms.values() if f.isa == "ptx"] + \
                   [t.min_ptx for t in self.targets.values()]
        return max(versions) if versions else (0, 0)

    # ---- lookups ----------------------------------------------------------------------------
    def ptx_forms(self) -> list[Form]:
        """Every concrete PTX form, in file then expansion order."""
        return [f for f in self.forms.values() if f.isa == "ptx"]

    def kernel_forms(self) -> list[Form]:
        """The PTX forms of the single-instruction kernel pipeline (emitter, simulator, differential
        engine, goldens): arithmetic (exact and approximate) and memory forms, in file order. The
        instructions around the arithmetic (registry kind ``function``: cvt, setp, selp, mov, ...)
        are evaluated by the model and the Z3 encoding but not emitted as kernels of their own, and
        of the memory forms only the plain ``.global`` ones (:data:`KERNEL_SPACE`) are."""
        return [f for f in self.ptx_forms() if self.in_kernel_pipeline(f)]

    @staticmethod
    def in_kernel_pipeline(form: Form) -> bool:
        """Whether the single-instruction kernel pipeline takes ``form`` (see :meth:`kernel_forms`)."""
        if form.kind == "memory":
            return form.semantics.get("space") == KERNEL_SPACE and not form.semantics.get("nc")
        return form.kind in KERNEL_KINDS

    def resolve(self, spelling: str) -> Form | None:
        """The form a spelling denotes, or None.

        Qualifier order is free except for the family's ``opcode_qualifiers``, which must
        directly follow the opcode (``div.ftz.full.f32`` denotes nothing: ptxas rejects it).
        """
        form = self._by_key.get(spelling_key(spelling))
        if form is not None and self._order_problem(form, spelling) is not None:
            return None
        return form

    def hinted(self, spelling: str) -> tuple[str, tuple[Hint, ...]] | None:
        """For a memory access with performance qualifiers (``ld.global.cg.b32``,
        ``ld.global.L1::evict_last.L2::cache_hint.b16``): the spelling of the form it denotes
        without them and the family's hints it uses, each at most once per kind and on a space it
        applies to. None where the spelling carries no hint of its family, carries two of one kind
        or two that exclude each other, or what remains denotes no form (each hint's gate is its ``target``)."""
        opcode, mods, type_ = split_spelling(spelling)
        family = self.families.get(opcode)
        if family is None or not family.hints:
            return None
        tokens = {t for h in family.hints for t in h.tokens}
        kept = [m for m in mods if m not in tokens]
        if len(kept) == len(mods):
            return None
        space = "global.nc" if {"global", "nc"} <= set(kept) else "global" if "global" in kept else \
            "generic" if not {"param", "local", "shared", "const"} & set(kept) else None
        used: list[Hint] = []
        for m in mods:
            if m in tokens:
                hint = next((h for h in family.hints if m in h.tokens and space in h.spaces), None)
                if hint is None or hint in used:  # not on this space, or two of one kind
                    return None
                used.append(hint)
        if any(set(h.excludes) & set(mods) for h in used):
            return None
        base = ".".join((opcode, *kept, type_))
        form = self.resolve(base)
        if form is None or form.kind != "memory":
            return None
        return base, tuple(used)

    def _order_problem(self, form: Form, spelling: str) -> str | None:
        """Why ``spelling`` puts an opcode qualifier of ``form`` in the wrong place (None if it does not)."""
        family = self.families.get(form.family)
        fixed = [m for m in form.modifiers if family is not None and m in family.opcode_qualifiers]
        if not fixed:
            return None
        _, mods, _ = split_spelling(spelling)
        if list(mods[:len(fixed)]) == fixed:
            return None
        lead = "".join("." + m for m in fixed)
        return (f"'{lead}' is part of the opcode '{form.opcode}{lead}' and must directly follow "
                f"'{form.opcode}' (write {form.name})")

    def target(self, name: str | None) -> TargetInfo:
        """A known target (``sm_90``); ``None`` gives the default. Unknown -> UnknownFormError."""
        name = name or self.default_target
        try:
            return self.targets[name]
        except KeyError:
            known = ", ".join(self.targets)
            raise UnknownFormError(f"unknown target {echo(name)}; known targets: {known}") from None

    def verdict(self, spelling: str, target: str | None = None) -> Verdict:
        """The spec's legality verdict on ``spelling`` (for ``target`` when given).

        Legal iff the spelling denotes an expanded form whose gate the target meets. Illegal
        spellings get the recorded reason (and ptxas's message) or a reason derived from the
        family's forms. A spelling whose opcode no family defines raises UnknownFormError.
        """
        spelling = spelling.strip()
        tinfo = self.target(target) if target else None
        form = self._by_key.get(spelling_key(spelling))
        problem = self._order_problem(form, spelling) if form is not None else None
        if problem is not None:
            return Verdict(spelling, False, None, problem, None, tinfo.name if tinfo else None)
        if form is not None:
            if tinfo is not None and tinfo.sm < form.target.sm:
                return Verdict(spelling, False, form,
                               f"{form.name} requires sm_{form.target.sm} or newer (target {tinfo.name})",
                               None, tinfo.name)
            return Verdict(spelling, True, form, "", None, tinfo.name if tinfo else None)
        recorded = self._illegal.get(spelling_key(spelling))
        if recorded is not None:
            return Verdict(spelling, False, None, recorded.reason, recorded.ptxas, tinfo.name if tinfo else None)
        opcode, mods, type_ = split_spelling(spelling)
        family = self.families.get(opcode)
        if family is None:
            raise UnknownFormError(self._unknown_message(spelling))
        unknown = self._unknown_tokens(mods, type_)
        if unknown:
            # a token no PTX form uses is a typo or an instruction tilecheck does not know, not a
            # combination the ISA forbids: unknown (exit 2), with the nearest spellings
            raise UnknownFormError(self._unknown_message(spelling, unknown))
        return Verdict(spelling, False, None, self._derived_reason(family, mods, type_), None,
                       tinfo.name if tinfo else None)

    def form(self, spelling: str, target: str | None = None) -> Form:
        """The legal form a spelling denotes, or raise IllegalFormError / UnknownFormError."""
        verdict = self.verdict(spelling, target)
        if not verdict.legal:
            raise IllegalFormError(f"{spelling}: {verdict.reason}", reason=verdict.reason, ptxas=verdict.ptxas)
        return verdict.form

    def readings(self, spelling: str) -> tuple[Form, ...]:
        """The legal forms a spelling ptxas accepts but the ISA does not define may mean (its recorded
        ``reading``), or () for any other spelling."""
        recorded = self._illegal.get(spelling_key(spelling))
        if recorded is None or not recorded.reading:
            return ()
        return tuple(self.forms[self._by_key[spelling_key(r)].name] for r in recorded.reading)

    def min_version(self, form: Form, target: str | None = None) -> tuple[int, int]:
        """Lowest ``.version`` that both the form and the target accept."""
        tinfo = self.target(target)
        return max(form.target.ptx_for(tinfo.sm), tinfo.min_ptx)

    # ---- messages ---------------------------------------------------------------------------
    def _unknown_tokens(self, mods: tuple[str, ...], type_: str) -> list[str]:
        """The qualifiers and type of a spelling that no PTX form (legal or recorded illegal) uses."""
        known = self._known_tokens()
        return [t for t in (*mods, type_) if t not in known]

    def _known_tokens(self) -> set:
        tokens = getattr(self, "_tokens", None)
        if tokens is None:
            tokens = set(PTX_TYPES)
            for f in self.forms.values():
                _, mods, type_ = split_spelling(f.name)
                tokens.update(mods)
                tokens.add(type_)
            for opcode, mods, type_ in self._illegal:
                tokens.update(mods)
                tokens.add(type_)
            self._tokens = tokens
        return tokens

    def _unknown_message(self, spelling: str, unknown: list[str] | None = None) -> str:
        close = _nearest(spelling.strip().lower(), list(self.forms), unknown or [])
        hint = f"; did you mean {', '.join(close)}?" if close else "; `tilecheck spec list` shows every form"
        if unknown:
            what = echo(", ".join("." + t for t in unknown)).strip("'\"")
            return f"unknown instruction {echo(spelling)}: no PTX form uses {what}{hint}"
        return f"unknown instruction {echo(spelling)}{hint}"

    def _derived_reason(self, family: Family, mods: tuple[str, ...], type_: str) -> str:
        same_type = [f for f in family.forms if f.type == type_]
        if not same_type:
            types = sorted({f.type for f in family.forms})
            return f"{family.name} has no form for type .{type_} (it takes {', '.join('.' + t for t in types)})"
        shown = ", ".join(f.name for f in same_type[:8]) + (" ..." if len(same_type) > 8 else "")
        quals = "".join("." + m for m in mods) or "(none)"
        return f"{family.name}.{type_} takes no qualifier combination {quals}; its forms: {shown}"


# ---------------------------------------------------------------------------------------------
# PTX instruction files


def _reference(data: dict) -> Reference:
    return Reference(data["document"], data["section"], data.get("anchor", ""))


def _substitute(template, values: dict[str, str]):
    if not isinstance(template, str):
        return template
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _expand_group(doc: LocatedDocument, family: dict, gi: int, problems: list[Problem],
                  formats: dict[str, Format]) -> list[Form]:
    group = family["forms"][gi]
    here = ("forms", gi)
    axes: dict[str, list[str]] = group.get("axes", {})
    template = group["spelling"]
    used = set(_PLACEHOLDER.findall(template))
    for key in ("vector", "type"):
        if key in group:
            used |= set(_PLACEHOLDER.findall(group[key]))
    for text in group.get("operand_types", {}).values():
        used |= set(_PLACEHOLDER.findall(text))
    for k, v in group["semantics"].items():
        if isinstance(v, str):
            used |= set(_PLACEHOLDER.findall(v))
    undefined = used - set(axes)
    if undefined:
        problems.append(Problem(doc.locate(here + ("spelling",)),
                                f"placeholder(s) {', '.join(sorted(undefined))} have no axis"))
        return []
    unused = set(axes) - used
    if unused:
        problems.append(Problem(doc.locate(here + ("axes",)), f"axis/axes {', '.join(sorted(unused))} never used"))
    tokens = template.split(".")
    if tokens[0] != family["name"]:
        problems.append(Problem(doc.locate(here + ("spelling",)),
                                f"spelling must start with the family opcode {family['name']!r}"))
        return []
    if tokens[-1] != group["type"]:
        problems.append(Problem(doc.locate(here + ("spelling",)),
                                f"spelling must end with the type token .{group['type']}"))
        return []
    family_names = [o["name"] for o in family["operands"]]
    # an optional operand belongs only to the groups that name it (cvt's b: the packed conversions)
    chosen = group.get("operands", [o["name"] for o in family["operands"] if not o.get("optional")])
    unknown = [n for n in chosen if n not in family_names]
    unknown += [n for n in group.get("operand_types", {}) if n not in chosen]
    if unknown:
        problems.append(Problem(doc.locate(here + ("operands" if "operands" in group else "operand_types",)),
                                f"unknown operand(s) {', '.join(unknown)} (the family declares {', '.join(family_names)})"))
        return []
    group_operands = [o for o in family["operands"] if o["name"] in chosen]
    entry = registry.ENTRIES.get(group["semantics"]["key"])
    if entry is None:
        close = difflib.get_close_matches(group["semantics"]["key"], list(registry.ENTRIES), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        problems.append(Problem(doc.locate(here + ("semantics", "key")),
                                f"unknown semantics key {group['semantics']['key']!r}{hint}"))
        return []
    sources = [o for o in group_operands if o["role"] != "dst"]
    if entry.kind != "memory" and len(sources) != entry.arity:
        problems.append(Problem(doc.locate(here + ("semantics", "key")),
                                f"{entry.key} takes {entry.arity} source operand(s), the family declares {len(sources)}"))
        return []
    contract = None
    if "contract" in group:
        contract = _contract(doc, here + ("contract",), group["contract"], entry, sources, problems)
    if entry.kind == "contract" and contract is None:
        problems.append(Problem(doc.locate(here + ("semantics", "key")), f"{entry.key} is approximate: the group needs a contract"))
        return []
    if entry.kind != "contract" and contract is not None:
        problems.append(Problem(doc.locate(here + ("contract",)), f"{entry.key} is exact: a contract makes no sense here"))
    nan = group["nan"]
    nan_policy = NanPolicy(nan["policy"], int(nan["bits"], 16) if "bits" in nan else None, nan.get("source", ""))
    if nan_policy.policy == "canonical" and nan_policy.bits is None:
        problems.append(Problem(doc.locate(here + ("nan",)), "nan policy canonical needs bits"))
    forms = []
    axis_names = list(axes)
    for combo in itertools.product(*(axes[a] for a in axis_names)) if axis_names else [()]:
        values = dict(zip(axis_names, combo))
        name_tokens = [_substitute(t, values) for t in tokens]
        name = ".".join(t for t in name_tokens if t)
        modifiers = tuple(t for t in name_tokens[1:-1] if t)
        params = {}
        try:
            for k, v in group["semantics"].items():
                if k != "key":
                    params[k] = registry.coerce(entry, k, _substitute(v, values))
        except ValueError as exc:
            problems.append(Problem(doc.locate(here + ("semantics",)), f"{name}: {exc}"))
            continue
        for pname, p in entry.params.items():
            params.setdefault(pname, p.default)
        vector_text = _substitute(group.get("vector", ""), values)
        if vector_text not in ("", "v2", "v4", "v8"):
            problems.append(Problem(doc.locate(here + ("vector",)), f"vector must be v2, v4, v8 or empty, got {vector_text!r}"))
            continue
        registers = int(vector_text[1:]) if vector_text else 1
        type_ = _substitute(group["type"], values)
        if name_tokens[-1] != type_ or type_ not in PTX_TYPES:
            problems.append(Problem(doc.locate(here + ("type",)),
                                    f"{name}: the type {type_!r} must be a PTX type token and the spelling's last token"))
            continue
        operands = []
        for o in group_operands:
            if o["role"] == "addr":
                operands.append(OperandSpec(o["name"], "addr", "b64", "b64", 64, None, 1, 1, o.get("doc", "")))
                continue
            o_type = _substitute(group.get("operand_types", {}).get(o["name"], type_), values)
            if o_type not in PTX_TYPES:
                where = ("operand_types", o["name"]) if o["name"] in group.get("operand_types", {}) else ("type",)
                problems.append(Problem(doc.locate(here + where), f"{name}: unknown type {o_type!r}"))
                break
            t = PTX_TYPES[o_type]
            operands.append(OperandSpec(o["name"], o["role"], o_type, t.register, t.bits, t.element, t.lanes,
                                        registers, o.get("doc", ""), formats.get(t.element) if t.element else None))
        else:
            operands = tuple(operands)
        if not isinstance(operands, tuple):
            continue
        form_nan = nan_policy
        element = PTX_TYPES[type_].element
        if nan_policy.bits is None and nan_policy.policy in ("unspecified", "propagate") and element in formats:
            # the representative (and generated) NaN is declared once, in the element's format file
            form_nan = NanPolicy(nan_policy.policy, formats[element].canonical_nan, nan_policy.source)
        forms.append(Form(
            name=name, isa="ptx", family=family["name"], group=group["id"], opcode=tokens[0],
            modifiers=modifiers, qualifiers=tuple(values.items()), type=type_, operands=operands,
            target=Target(group["target"]["sm"], _version(group["target"]["ptx"]),
                          tuple((g["sm"], _version(g["ptx"])) for g in group["target"].get("later", ()))),
            semantics=Semantics(entry.key, tuple(sorted(params.items()))), kind=entry.kind, nan=form_nan,
            contract=_for_form(contract, entry.key, params),
            reference=_reference(group["reference"]) if "reference" in group else _reference(family["reference"]),
            location=doc.locate(here), notes=group.get("notes", ""), formats=formats))
    return forms


def _contract(doc: LocatedDocument, here: tuple, c: dict, entry, sources: list, problems: list[Problem]) -> Contract:
    """The :class:`Contract` of a schema-valid ``contract:`` block; operand names of the rules and
    the arity of the special cases are checked against the family (located problems)."""
    b = c["bound"]
    a = b.get("absolute")
    bound = Bound(b["kind"], b["ulps"] if b["kind"] == "ulp" else b["log2"], tuple(b.get("readings", ())),
                  absolute=(a["log2"], power_of_two(a["above"]), power_of_two(a["below"])) if a else None,
                  ranges=tuple((int(g["up_to"][:-2]), g["log2"]) for g in b.get("ranges", ())))
    names = [o["name"] for o in sources]
    rules = []
    for ri, r in enumerate(c.get("rules", ())):
        when = []
        for name, cond in r["when"].items():
            if name not in names:
                problems.append(Problem(doc.locate(here + ("rules", ri, "when", name)),
                                        f"rule names operand {name!r}; the source operands are {', '.join(names)}"))
                continue
            for ci, word in enumerate(cond.get("class", ())):
                if class_word_problem(word):
                    problems.append(Problem(doc.locate(here + ("rules", ri, "when", name, "class", ci)),
                                            class_word_problem(word)))
            when.append((names.index(name), OperandCondition(
                tuple(cond.get("class", ())),
                power_of_two(cond["above"]) if "above" in cond else None,
                power_of_two(cond["below"]) if "below" in cond else None)))
        rules.append(Rule(tuple(when), r["result"], r["source"]))
    specials = tuple(Special(tuple(s["operands"]), s["result"]) for s in c.get("specials", ()))
    for si, s in enumerate(specials):
        for oi, word in enumerate(s.operands):
            if class_word_problem(word):
                problems.append(Problem(doc.locate(here + ("specials", si, "operands", oi)), class_word_problem(word)))
        if class_word_problem(s.result, result=True):
            problems.append(Problem(doc.locate(here + ("specials", si, "result")),
                                    class_word_problem(s.result, result=True)))
        if len(s.operands) != entry.arity:
            problems.append(Problem(doc.locate(here + ("specials", si)),
                                    f"special case lists {len(s.operands)} operand(s); {entry.key} takes {entry.arity}"))
    return Contract(bound=bound, source=c["source"], operation=entry.operation,
                    rules=tuple(rules), specials=specials, provisional=c.get("provisional", False),
                    notes=c.get("notes", ""))


def _for_form(contract: Contract | None, key: str, params: dict) -> Contract | None:
    """The group's contract with the form's flushing: ``.ftz`` (always, for the upper-word f64 forms)."""
    if contract is None:
        return None
    flush = bool(params.get("ftz", False)) or key in ("approx.rcp_hi", "approx.rsqrt_hi")
    return dataclasses.replace(contract, flush_inputs=flush, flush_outputs=flush)


def _load_ptx_family(doc: LocatedDocument, path: Path, problems: list[Problem],
                     formats: dict[str, Format]) -> Family | None:
    data = doc.data
    if data["name"] != path.stem:
        problems.append(Problem(doc.locate(("name",)), f"name {data['name']!r} must equal the file stem {path.stem!r}"))
        return None
    names = [o["name"] for o in data["operands"]]
    if len(set(names)) != len(names):
        problems.append(Problem(doc.locate(("operands",)), "operand names must be unique"))
    if data["operands"][0]["role"] != "dst" and data["name"] != "st":
        problems.append(Problem(doc.locate(("operands", 0)), "the first operand must be the destination"))
    ids = [g["id"] for g in data["forms"]]
    for gi, gid in enumerate(ids):
        if ids.index(gid) != gi:
            problems.append(Problem(doc.locate(("forms", gi, "id")), f"duplicate group id {gid!r}"))
    forms: list[Form] = []
    for gi in range(len(data["forms"])):
        forms.extend(_expand_group(doc, data, gi, problems, formats))
    fixed = tuple(data.get("opcode_qualifiers", ()))
    for gi, group in enumerate(data["forms"]):
        tokens = group["spelling"].split(".")
        for q in fixed:
            if q in tokens[2:]:
                problems.append(Problem(doc.locate(("forms", gi, "spelling")),
                                        f"opcode qualifier .{q} must directly follow the opcode"))
    illegal = []
    for n, i in enumerate(data.get("illegal", ())):
        accepts = i.get("ptxas_accepts", False)
        if accepts and "ptxas" in i:
            problems.append(Problem(doc.locate(("illegal", n, "ptxas")),
                                    f"{i['spelling']}: ptxas_accepts is true, so there is no ptxas error message to record"))
        unstable = i.get("ptxas_unstable", False)
        if unstable and ("ptxas" not in i or accepts):
            problems.append(Problem(doc.locate(("illegal", n)), f"{i['spelling']}: ptxas_unstable needs the 'ptxas' "
                                                                "message of the failing runs and no ptxas_accepts"))
        if "reading" in i and not accepts:
            problems.append(Problem(doc.locate(("illegal", n, "reading")), f"{i['spelling']}: a reading is for a "
                                                                           "spelling ptxas accepts (ptxas_accepts)"))
        illegal.append(IllegalSpelling(i["spelling"], i["reason"], i.get("ptxas"), doc.locate(("illegal", n)), accepts,
                                       unstable, tuple(i.get("reading", ()))))
    examples = []
    for n, e in enumerate(data.get("examples", ())):
        examples.append(Example(e["form"], tuple(int(x, 16) for x in e["operands"]), int(e["result"], 16),
                                e["source"], e.get("variant", "documented"), doc.locate(("examples", n))))
    return Family(name=data["name"], isa="ptx", summary=data["summary"], reference=_reference(data["reference"]),
                  path=doc.path, forms=tuple(forms), illegal=tuple(illegal), examples=tuple(examples),
                  notes=data.get("notes", ""), operand_names=tuple(names), opcode_qualifiers=fixed,
                  hints=tuple(Hint(tuple(h["tokens"]), tuple(h["spaces"]),
                                   Target(h["target"]["sm"], _version(h["target"]["ptx"])), h["source"], h.get("operand"),
                                   tuple(h.get("excludes", ())))
                              for h in data.get("hints", ())))


def _load_targets(doc: LocatedDocument, db: SpecDatabase, problems: list[Problem]) -> None:
    data = doc.data
    for i, t in enumerate(data["targets"]):
        variant = t.get("variant", "")
        if t["name"] != f"sm_{t['sm']}{variant}":
            problems.append(Problem(doc.locate(("targets", i, "name")),
                                    f"name {t['name']} does not match sm {t['sm']}{' variant ' + variant if variant else ''}"))
        db.targets[t["name"]] = TargetInfo(t["name"], t["sm"], _version(t["min_ptx"]), variant)
    if data["default"] not in db.targets:
        problems.append(Problem(doc.locate(("default",)), f"default target {data['default']} is not listed"))
    db.default_target = data["default"]


def _load_contract_rules(doc: LocatedDocument, path: Path, db: SpecDatabase, problems: list[Problem]) -> None:
    """The rules every contract follows (schema ``contract-rules``): the sign rule."""
    if db.sign_rule is not None:
        problems.append(Problem(doc.locate(("sign",)), "the sign rule is stated twice"))
        return
    s = doc.data["sign"]
    db.sign_rule = SignRule(s["rule"], " ".join(s["statement"].split()), s["short"], tuple(s["sources"]))


# Loaders for the other schemas: name -> callable(doc, path, db, problems).
LOADERS: dict[str, Callable] = {
    "amdgpu-instruction": amdgpu.load_amdgpu_family,
    "sequence": amdgpu.load_sequence,
    "amdgpu-integer": amdgpu_integer.load_integer_family,
    "contract-rules": _load_contract_rules,
}
# Database-wide checks of those schemas' contents: callable(db, problems).
def _check_type_formats(db: SpecDatabase, problems: list[Problem]) -> None:
    """The element formats of the PTX types the forms use exist in this root, with matching widths."""
    used = {o.ptx_type for f in db.ptx_forms() for o in f.operands}
    # a format file that failed to load has reported its own problem already
    used = {t for t in used if PTX_TYPES[t].element in db.formats
            or not (db.root / "formats" / f"{PTX_TYPES[t].element}.yaml").exists()}
    where = Location(display_path(db.root / "formats", db.root))
    problems.extend(Problem(where, text) for text in type_format_problems(db.formats, used))


CHECKS: list[Callable] = [_check_type_formats, amdgpu.check_sequences]


def _check_database(db: SpecDatabase, problems: list[Problem]) -> None:
    by_key: dict = {}
    for family in db.families.values():
        for form in family.forms:
            if form.name in db.forms:
                other = db.forms[form.name]
                problems.append(Problem(form.location, f"form {form.name} is also defined at {other.location}"))
                continue
            key = spelling_key(form.name)
            if key in by_key:
                other = by_key[key]
                problems.append(Problem(form.location,
                                        f"form {form.name} has the same spelling (up to qualifier order) as {other.name} at {other.location}"))
                continue
            by_key[key] = form
            db.forms[form.name] = form
    db._by_key = by_key
    for family in db.families.values():
        for ill in family.illegal:
            key = spelling_key(ill.spelling)
            if key in by_key:
                problems.append(Problem(ill.location, f"{ill.spelling} is recorded as illegal but form {by_key[key].name} "
                                                      f"({by_key[key].location}) defines it"))
            db._illegal[key] = ill
            for r in ill.reading:  # each reading a legal form of the same operands' types
                form = by_key.get(spelling_key(r))
                if form is None:
                    problems.append(Problem(ill.location, f"{ill.spelling}: its reading {r} is no form of the database"))
    # attach examples to their forms
    attached: dict[str, list[Example]] = {}
    for family in db.families.values():
        for ex in family.examples:
            form = by_key.get(spelling_key(ex.form))
            if form is None:
                if family.name not in db._incomplete:
                    problems.append(Problem(ex.location, f"example names unknown form {ex.form!r}"))
                continue
            n_src = len(form.sources)
            if len(ex.operands) != n_src:
                problems.append(Problem(ex.location, f"{form.name} takes {n_src} source operand(s); the example gives {len(ex.operands)}"))
                continue
            attached.setdefault(form.name, []).append(ex)
    for name, examples in attached.items():
        db.forms[name] = replace(db.forms[name], examples=tuple(examples))
    for family_name, family in list(db.families.items()):
        db.families[family_name] = replace(family, forms=tuple(db.forms.get(f.name, f) for f in family.forms))
    db._by_key = {spelling_key(f.name): f for f in db.forms.values()}
    for check in CHECKS:
        check(db, problems)


def load_database(root: str | Path | None = None) -> SpecDatabase:
    """Load, validate and expand the spec database under ``root`` (default: :func:`spec_root`).

    Cached per root; raises :class:`SpecError` listing every problem found.
    """
    root_path = Path(root) if root else spec_root()
    # keyed by the resolved folder too: a relative root names another folder after a chdir
    return _load_cached(str(root_path), "" if root_path.is_absolute() else str(root_path.resolve()))


@lru_cache(maxsize=8)
def _load_cached(root_text: str, resolved: str = "") -> SpecDatabase:
    # ``resolved`` only keys the cache (see load_database)
    root = Path(root_text)
    if not root.is_dir():
        raise SpecError([Problem(Location(root_text), "spec folder not found")])
    problems: list[Problem] = []
    db = SpecDatabase(root=root)
    db.formats, format_problems = read_formats(root)
    problems.extend(format_problems)
    files = []
    for folder in SPEC_FOLDERS:
        files.extend(sorted((root / folder).glob("*.yaml")))
    if not any(p.parent.name == "ptx" for p in files):
        problems.append(Problem(Location(display_path(root / "ptx", root)), "no PTX instruction files found"))
    for path in files:
        shown = display_path(path, root)
        try:
            doc = load_yaml(path, shown)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        schema = doc.data.get("schema") if isinstance(doc.data, dict) else None
        if schema not in ("ptx-instruction", "targets") and schema not in LOADERS:
            known = ", ".join(sorted({"ptx-instruction", "targets", *LOADERS}))
            problems.append(Problem(doc.locate(("schema",)), f"unknown schema {schema!r} (known: {known})"))
            continue
        found = schema_problems(doc, schema, root)
        if found:
            problems.extend(found)
            continue
        if schema == "ptx-instruction":
            before = len(problems)
            family = _load_ptx_family(doc, path, problems, db.formats)
            if family is not None and len(problems) > before:
                db._incomplete.add(family.name)
            if family is not None:
                if family.name in db.families:
                    problems.append(Problem(doc.locate(("name",)), f"family {family.name} defined twice"))
                else:
                    db.families[family.name] = family
        elif schema == "targets":
            _load_targets(doc, db, problems)
        else:
            LOADERS[schema](doc, path, db, problems)
    if not db.targets:
        problems.append(Problem(Location(display_path(root / "targets", root)), "no target table found"))
    _check_database(db, problems)
    if db.sign_rule is None and any(f.contract is not None for f in db.forms.values()):
        problems.append(Problem(Location(display_path(root / "rules" / "contracts.yaml", root)),
                                "approximate forms need the contract rules (the sign rule): file not found"))
    if problems:
        raise SpecError(problems)
    return db


def clear_cache() -> None:
    """Forget loaded databases (tests that edit spec files call this)."""
    _load_cached.cache_clear()
