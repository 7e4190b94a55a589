"""Loaders for the ``amdgpu-instruction`` and ``sequence`` schemas (``spec/amdgpu``, ``spec/sequences``).

:mod:`tilecheck.spec.database` dispatches files whose ``schema:`` names one of these to
:func:`load_amdgpu_family` / :func:`load_sequence` (its ``LOADERS`` table);
results land in ``db.extras["amdgpu"]`` (``{"families": {...}, "forms": {...}}``) and
``db.extras["sequences"]`` (``{name: Sequence}``). Every semantics body is compiled (parsed and
type-checked) here, so a syntax error or an unknown primitive is a located spec problem at the
body's line and column in the YAML file. :func:`check_sequences` (a database-wide check) resolves
each sequence step against the instruction forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Mapping

from tilecheck.errors import Location, Problem, SemanticsError, UsageError
from tilecheck.formats import Format
from tilecheck.semantics import T_BOOL, T_INT, T_ROUNDING, block_scalar_origin, compile_body, float_type
from tilecheck.spec.contract import Bound, Contract, Special, class_word_problem
from tilecheck.spec.forms import Reference
from tilecheck.specio.yamlio import LocatedDocument

VARIANTS = ("documented", "observed")
MODE_DEFAULTS = {"round": "rn", "denorm": 3}


@dataclass(frozen=True)
class AmdOperand:
    """One operand: ``kind`` is ``float`` (a value of the form's type, or of the format the form's
    ``types:`` gives this operand), ``int`` (a 32-bit two's complement integer: a body int) or
    ``lane-bit`` (a bool)."""

    name: str
    role: str
    kind: str
    implicit: bool = False
    doc: str = ""


@dataclass(frozen=True, eq=False)
class AmdVariant:
    """One semantics variant of one form: a compiled body or a contract."""

    name: str
    source: str
    notes: str
    program: object | None  # tilecheck.semantics.Program
    contract: Contract | None  # the same contract type as PTX forms (tilecheck.spec.contract)


@dataclass(frozen=True, eq=False)
class AmdForm:
    """One concrete AMD instruction form (``v_div_scale_f64``); ``formats`` is the formats table
    of the database that loaded it."""

    name: str
    family: str
    type: str
    operands: tuple[AmdOperand, ...]
    opcodes: tuple[tuple[str, int], ...]
    constants: tuple[tuple[str, int], ...]
    mode: tuple[tuple[str, object], ...]
    variants: dict
    location: Location
    notes: str = ""
    formats: Mapping[str, Format] = field(default_factory=dict, repr=False)
    operand_types: tuple[tuple[str, str], ...] = ()  # float operands whose format is not ``type``

    @property
    def fmt(self) -> Format:
        """The form's float format, from its own database."""
        return self.formats[self.type]

    def operand_format(self, name: str) -> Format | None:
        """The float format of operand ``name`` (``None`` for int and lane-bit operands)."""
        operand = next(o for o in self.operands if o.name == name)
        if operand.kind != "float":
            return None
        return self.formats[dict(self.operand_types).get(name, self.type)]

    def int_bits(self, name: str) -> int:
        """Width of int operand ``name`` (32 unless ``types:`` says i16, as v_ldexp_f16's exponent)."""
        return INT_TYPES[dict(self.operand_types).get(name, "i32")]

    @property
    def input_format(self) -> Format:
        """The format of the float sources (the form's type when it has none)."""
        fmts = [self.operand_format(o.name) for o in self.sources if o.kind == "float"]
        return fmts[0] if fmts else self.fmt

    @property
    def output_format(self) -> Format:
        """The format of the first float destination (the input format when it has none)."""
        fmts = [self.operand_format(o.name) for o in self.destinations if o.kind == "float"]
        return fmts[0] if fmts else self.input_format

    @property
    def sources(self) -> tuple[AmdOperand, ...]:
        return tuple(o for o in self.operands if o.role == "src")

    @property
    def destinations(self) -> tuple[AmdOperand, ...]:
        return tuple(o for o in self.operands if o.role == "dst")

    @property
    def denorm_field(self) -> str:
        """The MODE field that applies: ``denorm_f32`` for f32, ``denorm_f64`` (FP64/FP16) else."""
        return "denorm_f32" if self.type == "f32" else "denorm_f64"

    def variant(self, name: str) -> AmdVariant:
        try:
            return self.variants[name]
        except KeyError:
            raise UsageError(f"{self.name} has no semantics variant {name!r} (variants: {', '.join(self.variants)})") from None

    def __repr__(self) -> str:
        return f"AmdForm({self.name!r})"


@dataclass(frozen=True)
class Encoding:
    """An assembler line and its machine code bytes."""

    asm: str
    mcpu: str
    mattr: str
    bytes: tuple[int, ...]
    source: str
    location: Location


@dataclass(frozen=True)
class Vector:
    """A known input -> output vector for some variants of a form."""

    form: str
    variants: tuple[str, ...]
    mode: tuple[tuple[str, object], ...]
    operands: tuple[tuple[str, object], ...]
    results: tuple[tuple[str, object], ...]
    source: str
    location: Location


@dataclass(frozen=True, eq=False)
class AmdFamily:
    """One ``spec/amdgpu`` file."""

    name: str
    summary: str
    reference: Reference
    path: str
    forms: tuple[AmdForm, ...]
    encodings: tuple[Encoding, ...]
    vectors: tuple[Vector, ...]
    notes: str = ""


@dataclass(frozen=True)
class Source:
    """A step's source: a value name or an inline constant, optionally negated (NEG modifier)."""

    name: str | None
    constant: Fraction | None
    neg: bool

    def __str__(self) -> str:
        text = self.name if self.name is not None else str(float(self.constant))
        return ("-" if self.neg else "") + text


@dataclass(frozen=True)
class Step:
    """One sequence step: an instruction (``op``, ``dst``, ``src``) or a MODE change."""

    op: str | None
    dst: tuple[str | None, ...]
    src: tuple[Source, ...]
    mode: tuple[tuple[str, int], ...]
    asm: str
    note: str
    location: Location


@dataclass(frozen=True, eq=False)
class Sequence:
    """A ``spec/sequences`` file; ``formats`` is the formats table of the database that loaded it."""

    name: str
    isa: str
    summary: str
    reference: Reference
    path: str
    type: str
    inputs: tuple[str, ...]
    operation: str
    rounding: str
    ftz: bool
    nan: str
    mode: tuple[tuple[str, object], ...]
    steps: tuple[Step, ...]
    result: str
    notes: str = ""
    location: Location | None = None
    formats: Mapping[str, Format] = field(default_factory=dict, repr=False)

    @property
    def fmt(self) -> Format:
        """The sequence's float format, from its own database."""
        return self.formats[self.type]


# ---------------------------------------------------------------------------------------------


def _reference(data: dict) -> Reference:
    return Reference(data["document"], data["section"], data.get("anchor", ""))


def _file_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _compile_variant(doc: LocatedDocument, text: str, family: dict, form: dict, vname: str,
                     problems: list[Problem], seen: set, formats: Mapping[str, Format]) -> AmdVariant | None:
    vdata = family["semantics"][vname]
    here = ("semantics", vname)
    if "contract" in vdata:
        c = vdata["contract"]
        bounds = c["bounds"]
        if form["type"] not in bounds:
            problems.append(Problem(doc.locate(here + ("contract", "bounds")),
                                    f"{form['name']}: the contract has no bound for type {form['type']}"))
            return None
        b = bounds[form["type"]]
        size_key = "ulps" if b["kind"] == "ulp" else "log2"
        wrong = [k for k in (("log2", "subnormal_ulps") if b["kind"] == "ulp" else ("ulps", "readings")) if k in b]
        if size_key not in b or wrong or (b["kind"] == "ulp" and "readings" not in b):
            problems.append(Problem(doc.locate(here + ("contract", "bounds", form["type"])),
                                    f"a {b['kind']} bound needs {size_key}"
                                    + (" and readings" if b["kind"] == "ulp" else "")
                                    + (f" and takes no {', '.join(wrong)}" if wrong else "")))
            return None
        bound = Bound(b["kind"], b[size_key], tuple(b.get("readings", ())), b.get("subnormal_ulps"))
        specials = tuple(Special((s["operand"],), s["result"]) for s in c.get("specials", ()))
        for si, s in enumerate(c.get("specials", ())):
            for key, is_result in (("operand", False), ("result", True)):
                if class_word_problem(s[key], result=is_result):
                    problems.append(Problem(doc.locate(here + ("contract", "specials", si, key)),
                                            class_word_problem(s[key], result=is_result)))
        return AmdVariant(vname, vdata["source"], vdata.get("notes", ""), None,
                          Contract(bound=bound, source=vdata["source"], operation=c["operation"], specials=specials,
                                   notes=vdata.get("notes", ""), flush_inputs=b.get("flush_inputs", False),
                                   flush_outputs=b.get("flush_outputs", False),
                                   provisional=c.get("provisional", False) or b.get("provisional", False)))
    fmt = formats[form["type"]]
    types = form.get("types", {})
    inputs, outputs = {}, {}
    for o in family["operands"]:
        if o["kind"] == "float":
            t = float_type(formats[types.get(o["name"], form["type"])])
        else:
            t = T_INT if o["kind"] == "int" else T_BOOL
        (inputs if o["role"] == "src" else outputs)[o["name"]] = t
    params = {"rm": T_ROUNDING, "denorm_in": T_BOOL, "denorm_out": T_BOOL}
    line, column = doc.locate(here + ("body",)).line, doc.locate(here + ("body",)).column
    try:
        origin = block_scalar_origin(doc.path, text, line, column)
        program = compile_body(vdata["body"], origin, fmt=fmt, inputs=inputs, outputs=outputs, params=params,
                               constants=dict(form.get("constants", {})), formats=formats)
    except SemanticsError as exc:
        key = (str(exc.location), exc.message)
        if key not in seen:  # the same body fails the same way for every form
            seen.add(key)
            problems.append(Problem(exc.location, f"{form['name']} ({vname}): {exc.message}"))
        return None
    return AmdVariant(vname, vdata["source"], vdata.get("notes", ""), program, None)


def _parse_bytes(text: str) -> tuple[int, ...]:
    return tuple(int(b, 16) for b in text.split(","))


def load_amdgpu_family(doc: LocatedDocument, path: Path, db, problems: list[Problem]) -> None:
    """Loader for ``schema: amdgpu-instruction`` (registered in ``database.LOADERS``)."""
    data = doc.data
    if data["name"] != path.stem:
        problems.append(Problem(doc.locate(("name",)), f"name {data['name']!r} must equal the file stem {path.stem!r}"))
        return
    names = [o["name"] for o in data["operands"]]
    if len(set(names)) != len(names):
        problems.append(Problem(doc.locate(("operands",)), "operand names must be unique"))
        return
    if not any(o["role"] == "dst" for o in data["operands"]):
        problems.append(Problem(doc.locate(("operands",)), "an instruction needs a destination operand"))
        return
    text = _file_text(path)
    mode = dict(MODE_DEFAULTS)
    mode.update(data.get("mode", {}))
    store = db.extras.setdefault("amdgpu", {"families": {}, "forms": {}})
    # forms whose semantics failed to compile: already reported once, so vectors and sequence
    # steps naming them are not reported again
    failed = store.setdefault("failed", set())
    forms = []
    seen: set = set()
    for fi, f in enumerate(data["forms"]):
        if not f["name"].startswith(data["name"] + "_"):
            problems.append(Problem(doc.locate(("forms", fi, "name")),
                                    f"form {f['name']} must start with the family name {data['name']}_"))
            continue
        if not f["name"].endswith("_" + f["type"]):
            problems.append(Problem(doc.locate(("forms", fi, "name")), f"form {f['name']} must end with _{f['type']}"))
            continue
        if f["name"] in store["forms"]:
            problems.append(Problem(doc.locate(("forms", fi, "name")), f"form {f['name']} is defined twice"))
            continue
        if f["type"] not in db.formats:
            # a format file that failed to load has reported its own problem already
            if not (db.root / "formats" / f"{f['type']}.yaml").exists():
                problems.append(Problem(doc.locate(("forms", fi, "type")),
                                        f"form {f['name']}: type {f['type']} needs the format {f['type']!r}, "
                                        "which spec/formats lacks"))
            failed.add(f["name"])
            continue
        types = f.get("types", {})
        kinds = {o["name"]: o["kind"] for o in data["operands"]}
        bad = [f"{k} ({_type_problem(kinds.get(k), t, db.formats)})" for k, t in types.items()
               if _type_problem(kinds.get(k), t, db.formats)]
        if bad:
            problems.append(Problem(doc.locate(("forms", fi, "types")),
                                    f"form {f['name']}: types names {', '.join(bad)}"))
            failed.add(f["name"])
            continue
        variants = {}
        for vname in VARIANTS:
            v = _compile_variant(doc, text, data, f, vname, problems, seen, db.formats)
            if v is not None:
                variants[vname] = v
        if len(variants) != len(VARIANTS):
            failed.add(f["name"])
            continue
        operands = tuple(AmdOperand(o["name"], o["role"], o["kind"], o.get("implicit", False), o.get("doc", ""))
                         for o in data["operands"])
        form = AmdForm(f["name"], data["name"], f["type"], operands, tuple(sorted(f["opcodes"].items())),
                       tuple(sorted(f.get("constants", {}).items())), tuple(sorted(mode.items())), variants,
                       doc.locate(("forms", fi)), f.get("notes", ""), db.formats, tuple(sorted(types.items())))
        forms.append(form)
    encodings = []
    for i, e in enumerate(data.get("encodings", ())):
        encodings.append(Encoding(e["asm"], e["mcpu"], e.get("mattr", ""), _parse_bytes(e["bytes"]), e["source"],
                                  doc.locate(("encodings", i))))
    by_name = {f.name: f for f in forms}
    vectors = []
    for i, v in enumerate(data.get("vectors", ())):
        where = doc.locate(("vectors", i))
        form = by_name.get(v["form"])
        if form is None and v["form"] in failed:
            continue
        if form is None:
            problems.append(Problem(doc.locate(("vectors", i, "form")), f"vector names unknown form {v['form']!r}"))
            continue
        srcs = {o.name: o for o in form.sources}
        dsts = {o.name: o for o in form.destinations}
        if set(v["operands"]) != set(srcs):
            problems.append(Problem(doc.locate(("vectors", i, "operands")),
                                    f"{form.name} takes operands {', '.join(srcs)}; the vector gives {', '.join(v['operands'])}"))
            continue
        if not set(v["results"]) <= set(dsts):
            problems.append(Problem(doc.locate(("vectors", i, "results")),
                                    f"{form.name} writes {', '.join(dsts)}; the vector names {', '.join(v['results'])}"))
            continue
        ok = True
        for table, ops in ((v["operands"], srcs), (v["results"], dsts)):
            for name, value in table.items():
                problem = _value_problem(form, ops[name], value)
                if problem:
                    problems.append(Problem(where, f"{name}: {problem}"))
                    ok = False
        if ok:
            vectors.append(Vector(form.name, tuple(v["variants"]), tuple(sorted(v.get("mode", {}).items())),
                                  tuple(_value(form, srcs[k], x) for k, x in v["operands"].items()),
                                  tuple(_value(form, dsts[k], x) for k, x in v["results"].items()), v["source"], where))
    family = AmdFamily(data["name"], data["summary"], _reference(data["reference"]), doc.path, tuple(forms),
                       tuple(encodings), tuple(vectors), data.get("notes", ""))
    if data["name"] in store["families"]:
        problems.append(Problem(doc.locate(("name",)), f"family {data['name']} defined twice"))
        return
    store["families"][family.name] = family
    for form in forms:
        store["forms"][form.name] = form


INT_TYPES = {"i16": 16, "i32": 32}


def _type_problem(kind: str | None, type_: str, formats) -> str | None:
    """Why ``types: {operand: type_}`` does not fit an operand of ``kind`` (None when it does)."""
    if kind is None:
        return "no such operand"
    if kind == "int":
        return None if type_ in INT_TYPES else f"an int operand takes {' or '.join(INT_TYPES)}, not {type_!r}"
    if kind == "float":
        return None if type_ in formats else f"unknown format {type_!r}"
    return "a lane bit has no type"


def _value_problem(form: AmdForm, operand: AmdOperand, value) -> str | None:
    if operand.kind == "lane-bit":
        return None if isinstance(value, bool) else "a lane bit must be true or false"
    if not isinstance(value, str) or not re.fullmatch(r"0x[0-9a-fA-F]+", value):
        return f"a{'n int' if operand.kind == 'int' else ' float'} operand must be a quoted hex bit pattern"
    if operand.kind == "int":
        bits = form.int_bits(operand.name)
        return f"{value} does not fit a {bits}-bit int" if int(value, 16) >> bits else None
    fmt = form.operand_format(operand.name)
    if int(value, 16) >> fmt.width:
        return f"{value} does not fit {fmt.width}-bit {fmt.name}"
    return None


def _value(form: AmdForm, operand: AmdOperand, value) -> tuple[str, object]:
    return (operand.name, value if operand.kind == "lane-bit" else int(value, 16))


# ---------------------------------------------------------------------------------------------
# sequences

_SRC = re.compile(r"^(-?)(?:([a-z][a-z0-9_]*)|([0-9]+(?:\.[0-9]*)?))$")


def load_sequence(doc: LocatedDocument, path: Path, db, problems: list[Problem]) -> None:
    """Loader for ``schema: sequence`` (registered in ``database.LOADERS``)."""
    data = doc.data
    if data["name"] != path.stem:
        problems.append(Problem(doc.locate(("name",)), f"name {data['name']!r} must equal the file stem {path.stem!r}"))
        return
    if data["format"] not in db.formats:
        if not (db.root / "formats" / f"{data['format']}.yaml").exists():
            problems.append(Problem(doc.locate(("format",)),
                                    f"format {data['format']!r} is not in spec/formats"))
        return
    steps = []
    for i, s in enumerate(data["steps"]):
        where = doc.locate(("steps", i))
        if "mode" in s:
            steps.append(Step(None, (), (), tuple(sorted(s["mode"].items())), s.get("asm", ""), s.get("note", ""), where))
            continue
        srcs = []
        for j, text in enumerate(s["src"]):
            m = _SRC.match(text)
            if not m:
                problems.append(Problem(doc.locate(("steps", i, "src", j)), f"bad source {text!r}"))
                continue
            neg, name, number = m.groups()
            srcs.append(Source(name, Fraction(number) if number else None, bool(neg)))
        steps.append(Step(s["op"], tuple(s["dst"]), tuple(srcs), (), s.get("asm", ""), s.get("note", ""), where))
    computes = data["computes"]
    mode = {"round": "rn", "denorm_f32": 3, "denorm_f64": 3}
    mode.update(data.get("mode", {}))
    seq = Sequence(data["name"], data["isa"], data["summary"], _reference(data["reference"]), doc.path, data["format"],
                   tuple(i["name"] for i in data["inputs"]), computes["operation"], computes["rounding"],
                   computes.get("ftz", False), computes.get("nan", "class"), tuple(sorted(mode.items())),
                   tuple(steps), data["result"], data.get("notes", ""), doc.locate(()), db.formats)
    store = db.extras.setdefault("sequences", {})
    if seq.name in store:
        problems.append(Problem(doc.locate(("name",)), f"sequence {seq.name} defined twice"))
        return
    store[seq.name] = seq


def check_sequences(db, problems: list[Problem]) -> None:
    """Resolve every sequence step against the AMD forms: known op, operand counts, names defined
    before use and assigned once, lane bits where lane bits go, constants representable."""
    forms = db.extras.get("amdgpu", {}).get("forms", {})
    failed = db.extras.get("amdgpu", {}).get("failed", set())
    for seq in db.extras.get("sequences", {}).values():
        kinds = {name: "float" for name in seq.inputs}
        if len(set(seq.inputs)) != len(seq.inputs):
            problems.append(Problem(seq.location, f"{seq.name}: input names must be unique"))
        for step in seq.steps:
            if step.op is None:
                continue
            form = forms.get(step.op)
            if form is None and step.op in failed:
                for name in step.dst:  # its destinations exist; their kinds are unknown
                    if name is not None:
                        kinds[name] = "unknown"
                continue
            if form is None:
                problems.append(Problem(step.location, f"unknown instruction {step.op!r} (spec/amdgpu defines "
                                                       f"{', '.join(sorted(forms)) or 'none'})"))
                continue
            if form.type != seq.type:
                problems.append(Problem(step.location, f"{step.op} works on {form.type}; the sequence is {seq.type}"))
            if len(step.src) != len(form.sources):
                problems.append(Problem(step.location, f"{step.op} takes {len(form.sources)} source(s) "
                                                       f"({', '.join(o.name for o in form.sources)}); got {len(step.src)}"))
                continue
            if len(step.dst) != len(form.destinations):
                problems.append(Problem(step.location, f"{step.op} writes {len(form.destinations)} destination(s) "
                                                       f"({', '.join(o.name for o in form.destinations)}); got {len(step.dst)}"))
                continue
            for src, operand in zip(step.src, form.sources):
                if src.name is None:
                    if operand.kind != "float":
                        problems.append(Problem(step.location, f"{operand.name} is a lane bit; a constant cannot go there"))
                        continue
                    bits = form.fmt.from_fraction(src.constant)
                    if form.fmt.to_fraction(bits) != src.constant:
                        problems.append(Problem(step.location, f"constant {src} is not exact in {form.type}"))
                    continue
                if src.name not in kinds:
                    problems.append(Problem(step.location, f"{src.name!r} is used before it is defined"))
                    continue
                if kinds[src.name] == "unknown":
                    continue
                if kinds[src.name] != operand.kind:
                    problems.append(Problem(step.location, f"{src.name!r} is a {kinds[src.name]} value; "
                                                           f"{step.op}'s {operand.name} needs a{'n' if operand.kind == 'int' else ''} {operand.kind}"))
                elif src.neg and operand.kind != "float":
                    problems.append(Problem(step.location, f"NEG does not apply to the lane bit {src.name!r}"))
            for name, operand in zip(step.dst, form.destinations):
                if name is None:
                    continue
                if name in kinds:
                    problems.append(Problem(step.location, f"{name!r} is assigned twice"))
                kinds[name] = operand.kind
        if seq.result not in kinds:
            problems.append(Problem(seq.location, f"{seq.name}: result {seq.result!r} is never assigned"))
        elif kinds[seq.result] not in ("float", "unknown"):
            problems.append(Problem(seq.location, f"{seq.name}: result {seq.result!r} is not a float"))



def amdgpu_forms(db) -> dict[str, AmdForm]:
    """Every AMD form of a loaded database, by name."""
    return db.extras.get("amdgpu", {}).get("forms", {})


def sequences(db) -> dict[str, Sequence]:
    """Every sequence of a loaded database, by name."""
    return db.extras.get("sequences", {})
