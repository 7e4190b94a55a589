"""Verify every function of the compiled-code corpus and print the README's findings table.

    python tools/findings.py                       # both manifests, markdown table on stdout
    python tools/findings.py --readme README.md    # also rewrite the table between its markers
    python tools/findings.py --only hdiv           # entries whose function or entry contains 'hdiv'
    python tools/findings.py --readme README.md --only hdiv   # rerun those rows, keep the others

Each manifest entry (examples/cuda/manifest.yaml, examples/llvm/manifest.yaml) is run through
tilecheck.verify.compiled.verify_ptx on the committed PTX, with every result the documented
contracts allow (ulp reading: either; the sign rule of spec/rules/contracts.yaml), and becomes one
row: function, its PTX in one line, inputs checked, verdict (``verified`` only where every input was
checked, ``no counterexample`` for a sampled run that found none; a misrounded count in value, with
the other classes beside it), first counterexample with its one-line repro.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilecheck.sim.frontend import Instr, parse_module  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402
from tilecheck.verify.compiled import verify_ptx  # noqa: E402

MANIFESTS = (ROOT / "examples" / "cuda" / "manifest.yaml", ROOT / "examples" / "llvm" / "manifest.yaml")
BEGIN, END = "<!-- findings:begin -->", "<!-- findings:end -->"
_BOILERPLATE = re.compile(r"^(ld\.param|st\.param|cvta|ld\.global|st\.global|ld\.u|st\.u|mad\.lo\.s32|mul\.wide|"
                          r"cvt\.s64\.s32|add\.s64|shl\.b64|ret|mov\.u32|mov\.b16|mov\.b32|mov\.u16|mov\.f32|mov\.f64)")


def ptx_line(path: Path, entry: str) -> str:
    """The function's instructions in one line, address arithmetic and moves left out."""
    fn = parse_module(path.read_text(), str(path)).function(entry)
    out: list[str] = []
    for item in fn.body:
        if not isinstance(item, Instr) or _BOILERPLATE.match(item.opcode):
            continue
        if item.opcode == "bra.uni" and getattr(item.operands[0], "name", "").startswith("$return@"):
            continue  # the return of an inlined call
        op = ("@p " if item.guard else "") + item.opcode
        if out and out[-1].split(" x")[0] == op:
            head, _, n = out[-1].partition(" x")
            out[-1] = f"{head} x{int(n or 1) + 1}"
        else:
            out.append(op)
    return "; ".join(out)


_CLASS_WORDS = {"nan_payload": "only by the payload of a NaN", "zero_sign": "only by the sign of a zero"}


def _misrounded(o) -> str:
    """The misrounded count the verdict leads with (in value where any are), and the other
    classes beside it, each only when it holds inputs."""
    classes = o.misrounded_classes
    lead = f"{classes.get('value', 0)} misrounded in value" if "value" in classes else f"{o.misrounded_count} misrounded"
    others = [f"{n} {_CLASS_WORDS[k]}" for k, n in classes.items() if k != "value"]
    return lead + (f" (and {', '.join(others)})" if others and "value" in classes else
                   f" ({', '.join(others)})" if others else "")


def row(entry: dict, db) -> tuple[str, int]:
    """One markdown row and the verdict's exit code."""
    path = ROOT / entry["file"]
    inputs = entry["inputs"]
    exhaustive = inputs == "exhaustive"
    started = time.time()
    o = verify_ptx(str(path.relative_to(ROOT)), entry["entry"], entry["against"], db=db,
                   exhaustive=True if exhaustive else False, cases=None if exhaustive else int(inputs))
    checked = f"{o.inputs_checked} (exhaustive)" if o.exhaustive else f"{o.inputs_checked} sampled"
    approx = ", ".join(o.approximate_forms) or "none"
    verdict = {"verified": "verified",
               "no-counterexample": "no counterexample",
               "counterexample": f"**not correctly rounded**: {_misrounded(o)}",
               "unknown": f"unknown ({o.unknown_count} inputs reach an unbounded contract)"}[o.verdict_word]
    cex = ""
    if o.counterexamples:
        c = o.counterexamples[0]
        ins = ", ".join(i["hex"] for i in c["inputs"])
        choice = "; ".join(f"{ch['instruction'].split()[0]} returned {ch['position']}"
                           for ch in c["approximate_choices"])
        cex = (f"({ins}) -> {c['got']['hex']}, expected {c['expected']['hex']}"
               + (f" ({choice})" if choice else "") + f"<br>`{c['repro']}`")
    print(f"  {entry['function']}: {o.verdict} ({time.time() - started:.1f} s)", file=sys.stderr)
    return (f"| {entry['function']} | {entry['against']} | `{ptx_line(path, entry['entry'])}` | {checked} | "
            f"{verdict} (approximate: {approx}) | {cex} |"), o.exit_code


def main(argv=None) -> int:
    """Run the manifests; print (and optionally write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readme", help="rewrite the table between the findings markers of this file")
    ap.add_argument("--only", help="run only entries whose function or entry contains this text")
    args = ap.parse_args(argv)
    db = load_database()
    header = ["| function | documented result | PTX (one line; address arithmetic left out) | inputs checked | "
              "verdict under the documented contracts (ulp reading: either; sign rule: IEEE) | counterexample and repro |",
              "|---|---|---|---|---|---|"]
    body = Path(args.readme).read_text() if args.readme else ""
    if args.readme and (BEGIN not in body or END not in body):
        print(f"{args.readme}: no {BEGIN} ... {END} markers", file=sys.stderr)
        return 2
    # with --only, the other rows of the README's table are kept as they are (matched by function)
    kept = {}
    if args.readme:
        for line in body.split(BEGIN, 1)[1].split(END, 1)[0].splitlines()[2:]:
            if line.startswith("| "):
                kept[line.split(" | ", 1)[0][2:]] = line
    fresh, table_rows = [], []
    for manifest in MANIFESTS:
        for entry in yaml.safe_load(manifest.read_text())["entries"]:
            if args.only and args.only not in entry["function"] and args.only not in entry["entry"]:
                old = kept.get(entry["function"])
                if old is None and args.readme:
                    print(f"{entry['function']}: not in {args.readme}'s table yet; run without --only",
                          file=sys.stderr)
                    return 2
                table_rows.append(old)
                continue
            text, _ = row(entry, db)
            fresh.append(text)
            table_rows.append(text)
    print("\n".join(header + fresh))
    if args.readme:
        head, rest = body.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        table = "\n".join(header + [r for r in table_rows if r is not None])
        Path(args.readme).write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
