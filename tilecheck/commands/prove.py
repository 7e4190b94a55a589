"""``tilecheck prove QUERY...``: prove or refute claims about forms and sequences with an SMT solver.

Each QUERY is a boolean expression that must hold for all values of its free variables (the query
language is described in :mod:`tilecheck.smt.prove` and ``spec/amdgpu/README.md``), or the name
of a built-in query (``tilecheck prove --list``). Every query is answered with one of:

* ``proved`` -- no counterexample exists (the solver showed the negation unsatisfiable);
* ``counterexample`` -- with the variables' values and each compared side's value;
* ``unknown`` -- the solver gave up or reached ``--timeout``: *not* a proof.

Exit code: 0 every query proved, 1 some query has a counterexample, 4 none refuted but some
unknown (timeout), 2 usage errors (bad query, unknown form). Exit 3 stays the CLI's "internal error".
"""

from __future__ import annotations

import difflib
import re
import sys

from tilecheck.commands.options import positive_float
from tilecheck.commands.output import add_json_option, check_writable, human_stream, write_json
from tilecheck.errors import UsageError, echo
from tilecheck.spec.database import load_database

# a query that is a bare dotted/dashed name is meant as a built-in query's name
_NAME_LIKE = re.compile(r"[A-Za-z_][\w.\-]*")
EXIT_PROVED, EXIT_COUNTEREXAMPLE, EXIT_UNKNOWN = 0, 1, 4


def add_parser(sub):
    """Register the ``prove`` subcommand."""
    p = sub.add_parser("prove", help="prove or refute a claim about forms and sequences with Z3",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("queries", nargs="*", metavar="QUERY",
                   help="a boolean expression, e.g. 'div.rn.f32(x, c) == mul.rn.f32(x, rcp.rn.f32(c))', "
                        "or a built-in query name")
    p.add_argument("--assume", action="append", default=[], metavar="EXPR",
                   help="an assumption on the variables (repeatable), e.g. 'is_normal(c)'")
    p.add_argument("--var", action="append", default=[], metavar="NAME=FORMAT",
                   help="format of a free variable (f16, bf16, f32, f64, or eXmY), repeatable")
    p.add_argument("--timeout", type=positive_float, default=60.0, help="seconds per query before answering unknown (default 60)")
    p.add_argument("--semantics", choices=("observed", "documented"), default="observed",
                   help="AMD semantics variant for sequences (default observed)")
    p.add_argument("--solver", choices=("z3",), default="z3", help="SMT solver (default z3)")
    p.add_argument("--list", action="store_true", help="list the built-in queries and exit")
    add_json_option(p, "also write every answer as JSON to FILE ('-': stdout, the human text then goes to stderr)")
    return p


def _vars(specs: list[str]) -> dict:
    out = {}
    for spec in specs:
        name, sep, fmt = spec.partition("=")
        if not sep or not name.isidentifier() or not fmt:
            raise UsageError(f"--var expects NAME=FORMAT, got {echo(spec)}")
        if out.get(name, fmt) != fmt:
            raise UsageError(f"--var gives {name} two formats, {out[name]} and {echo(fmt)}")
        out[name] = fmt
    return out


def _recorded_text(q) -> str:
    """What the record says about named query ``q``: an unknown is never shown as an answer."""
    if q.recorded == "unknown":
        return f"unknown (no answer within {q.measured.replace(' timeout', '')}; not a proof)"
    return f"{q.recorded} in {q.measured}"


def run(args) -> int:
    """Answer every query; returns the exit code."""
    from tilecheck.smt import prove
    check_writable(args.json)
    db = load_database()  # a malformed spec stops here (exit 2, every problem located), before any output
    out = human_stream(args)
    if args.list:
        # "recorded": the answer a past run measured (spec/amdgpu/README.md), not one computed now
        write_json(args.json, {"record": prove.RECORD,
                               "queries": [{"name": q.name, "doc": q.doc, "query": q.query, "assume": list(q.assume),
                                            "var": dict(q.var), "recorded": q.recorded, "measured": q.measured}
                                           for q in prove.NAMED.values()]})
        for q in prove.NAMED.values():
            out.write(f"{q.name}\n    {q.doc}\n    {q.query}\n")
            for a in q.assume:
                out.write(f"    assume {a}\n")
            for name, fmt in q.var:
                out.write(f"    var {name}={fmt}\n")
            out.write(f"    recorded: {_recorded_text(q)}\n")
        out.write(f"(recorded: the answer measured with Z3 and kept in {prove.RECORD}; run a query to answer it now)\n")
        return EXIT_PROVED
    if not args.queries:
        raise UsageError("give a query (or a built-in query name; see --list)")
    declared = _vars(args.var)
    statuses = []
    records = []
    for text in args.queries:
        named = prove.NAMED.get(text.strip())
        if named is None and _NAME_LIKE.fullmatch(text.strip()) and text.strip() not in ("True", "False"):
            close = difflib.get_close_matches(text.strip(), list(prove.NAMED), n=3, cutoff=0.6)
            if close or "-" in text:
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise UsageError(f"{echo(text.strip())} is not a built-in query{hint} (`tilecheck prove --list`)")
        if named is not None:
            query, assumes = named.query, list(named.assume) + list(args.assume)
            variables = dict(named.var)
            variables.update(declared)
            out.write(f"{named.name}: {named.doc}\n")
        else:
            query, assumes, variables = text, list(args.assume), declared
        built = prove.build(query, assumes, variables, args.semantics, db=db)
        out.write(f"query: {query}\n")
        for a in assumes:
            out.write(f"  assuming {a}\n")
        outcome = prove.solve(built, args.timeout, args.solver)
        statuses.append(outcome.status)
        records.append({"name": named.name if named else None, "query": query, "assume": assumes,
                        "status": outcome.status, "solver": outcome.solver, "seconds": round(outcome.seconds, 3),
                        "reason": outcome.reason or None,
                        "assignment": [{"name": n, "value": v} for n, v in outcome.assignment],
                        "values": [{"expression": t, "value": v} for t, v in outcome.values]})
        if outcome.status == "proved":
            out.write(f"  proved ({outcome.solver}, {outcome.seconds:.2f} s)\n")
        elif outcome.status == "unknown":
            out.write(f"  unknown: {outcome.solver} gave no answer within {args.timeout:g} s "
                      f"({outcome.reason or 'no reason given'}); this is not a proof\n")
        else:
            out.write(f"  counterexample ({outcome.solver}, {outcome.seconds:.2f} s):\n")
            for name, shown in outcome.assignment:
                out.write(f"    {name} = {shown}\n")
            for text_, shown in outcome.values:
                out.write(f"    {text_} = {shown}\n")
    counts = {k: statuses.count(k) for k in ("proved", "counterexample", "unknown")}
    write_json(args.json, {"timeout": args.timeout, "semantics": args.semantics, "totals": counts,
                           "queries": records})
    if "counterexample" in statuses:
        return EXIT_COUNTEREXAMPLE
    if "unknown" in statuses:
        return EXIT_UNKNOWN
    return EXIT_PROVED
