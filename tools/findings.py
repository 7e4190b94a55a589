"""Verify every function of the compiled-code corpus and print the README's findings table.

    python tools/findings.py                       # both manifests, markdown table on stdout
    python tools/findings.py --readme README.md    # also rewrite the table between its markers
    python tools/findings.py --only hdiv           # entries whose function, entry, file or reference contains 'hdiv'
    python tools/findings.py --readme README.md --only hdiv   # rerun those rows, keep the others
    python tools/findings.py --readme README.md --table triton  # only the Triton table
    python tools/findings.py --only hsqrt --html findings.html  # also a page of the runs (tilecheck[report])
    python tools/findings.py --readme README.md --only ex2.approx.f32 --out runs/  # exhaustive rows resumable in runs/

Each manifest entry (examples/cuda/manifest.yaml, examples/llvm/manifest.yaml; and, in a table of
its own, each reference of each kernel of examples/triton/manifest.yaml) is run through
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

from tilecheck.errors import TilecheckError  # noqa: E402
from tilecheck.sim.frontend import Instr, parse_module  # noqa: E402
from tilecheck.spec.database import load_database  # noqa: E402
from tilecheck.verify.amdgcn import element_instructions, prepare as prepare_amdgcn, verify_amdgcn  # noqa: E402
from tilecheck.verify.compiled import parse_reference, verify_ptx  # noqa: E402
from tilecheck.verify.sharded import CHECKPOINT, verify_batched  # noqa: E402

MANIFESTS = (ROOT / "examples" / "cuda" / "manifest.yaml", ROOT / "examples" / "llvm" / "manifest.yaml")
BEGIN, END = "<!-- findings:begin -->", "<!-- findings:end -->"
_BOILERPLATE = re.compile(r"^(ld\.param|st\.param|cvta|ld\.global|st\.global|ld\.u|st\.u|mad\.lo\.s32|mul\.wide|"
                          r"cvt\.s64\.s32|add\.s64|shl\.b64|ret|mov\.u32|mov\.b16|mov\.b32|mov\.u16|mov\.f32|mov\.f64)")


_TRITON_INDEX = re.compile(r"^(shl\.b32|and\.b32|or\.b32|setp\.lt\.s32|mov\.u64|mov\.b64)$")
"""Triton's element offsets (``pid * BLOCK | (tid << k) & mask``) and its mask (``offs < n``)."""


def ptx_line(path: Path, entry: str) -> str:
    """The function's instructions in one line, address arithmetic and moves left out (and, for
    Triton's kernels, its element offsets and mask)."""
    fn = parse_module(path.read_text(), str(path)).function(entry)
    triton = "examples/triton" in str(path)
    out: list[str] = []
    for item in fn.body:
        if not isinstance(item, Instr) or _BOILERPLATE.match(item.opcode) or \
                (triton and _TRITON_INDEX.match(item.opcode) and not any(
                    getattr(o, "float_bits", None) for o in item.operands)):
            continue
        if item.opcode == "bra.uni" and getattr(item.operands[0], "name", "").startswith("$return@"):
            continue  # the return of an inlined call
        op = ("@p " if item.guard else "") + item.opcode
        if out and out[-1].split(" x")[0] == op:
            head, _, n = out[-1].partition(" x")
            out[-1] = f"{head} x{int(n or 1) + 1}"
        else:
            out.append(op)
    return "; ".join(_fold_repeats(out))


def _fold_repeats(items: list[str], shortest: int = 4) -> list[str]:
    """``items`` with the longest run of a block of at least ``shortest`` instructions repeated
    back to back (a vector kernel's elements, each computed by the same code) written once, as
    ``N x [block]``; the instructions before and after it folded the same way."""
    n = len(items)
    best = None  # (instructions covered, start, block length, repeats)
    for start in range(n):
        for size in range(shortest, (n - start) // 2 + 1):
            block, k = items[start:start + size], 1
            while items[start + k * size:start + (k + 1) * size] == block:
                k += 1
            if k > 1 and (best is None or k * size > best[0]):
                best = (k * size, start, size, k)
    if best is None:
        return items
    _, start, size, k = best
    block = "; ".join(items[start:start + size])
    return (_fold_repeats(items[:start], shortest) + [f"{k} x [{block}]"]
            + _fold_repeats(items[start + k * size:], shortest))


_CLASS_WORDS = {"nan_payload": "only by the payload of a NaN", "zero_sign": "only by the sign of a zero"}


def _misrounded(o) -> str:
    """The misrounded count the verdict leads with (in value where any are), and the other
    classes beside it, each only when it holds inputs."""
    classes = o.misrounded_classes
    lead = f"{classes.get('value', 0)} misrounded in value" if "value" in classes else f"{o.misrounded_count} misrounded"
    others = [f"{n} {_CLASS_WORDS[k]}" for k, n in classes.items() if k != "value"]
    return lead + (f" (and {', '.join(others)})" if others and "value" in classes else
                   f" ({', '.join(others)})" if others else "")


def _unknown_cause(o) -> str:
    """What the unknown inputs reach, in the table's words: an unbounded contract, unless every
    input listed has an allowed set too large to enumerate (wide bounds, lg2.approx near 1), a
    documented bound tilecheck does not model yet (tanh), a bound the ISA states on a range only
    (sin and cos beyond 100pi) or an allowed set that is no single run of values (the absolute
    bounds of lg2.approx.ftz and sin/cos.approx.ftz across zero), or a result the ISA leaves open
    (integer division by zero and its kin: :func:`tilecheck.model.api.unspecified`)."""
    why = repr(getattr(o, "unknown_inputs", []))
    if ("no defined error guarantees" in why or "sin.approx" in why or "cos.approx" in why) and "no single run" in why:
        # (the examples kept are the first unknown inputs: an exhaustive sin/cos run meets the .ftz
        # zeros first and the inputs beyond 100pi later; both kinds are counted)
        return "a bound stated on [-100pi, 100pi] only, or whose allowed values are no single run under .ftz"
    if "no defined error guarantees" in why:
        return "a bound the ISA states on [-100pi, 100pi] only"
    if "§9.7.1.8-9" in why or "§9.7.1.9" in why or "the most negative value" in why:
        return "a result the ISA leaves open (integer division: a zero divisor, ...)"
    if "does not model" in why and "more than" not in why:
        return "a bound tilecheck does not model yet"
    if "no single run of values" in why and "more than" not in why and "does not model" not in why:
        return "a contract whose allowed values are no single run (both signs, the flushed subnormals left out)"
    if "more than" in why and "reaches zero" not in why and "no document" not in why and \
            "for these operands bounds nothing" not in why and "says nothing" not in why:
        return "a contract whose allowed results are too many to enumerate"
    return "an unbounded contract"


def run_folder(out: str, entry: dict) -> Path:
    """The folder under ``out`` that keeps the resumable run of one row (kernel file and reference)."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "_", entry["against"]).strip("_")
    return Path(out) / f"{Path(entry['file']).stem}--{slug}"


def _batched(entry: dict, db, out: str):
    """An exhaustive PTX row run in checkpointed batches under ``out`` (:func:`run_folder`): a run
    stopped part way continues where its checkpoint ends, a finished one is reported from it."""
    folder = run_folder(out, entry)
    folder.mkdir(parents=True, exist_ok=True)
    resume = (folder / CHECKPOINT).is_file()
    last = [0.0]

    def progress(p) -> None:  # a line a minute: these rows run for tens of minutes
        if p.finished or time.time() - last[0] >= 60:
            last[0] = time.time()
            print(f"    {entry['function']} against {entry['against']}: {p.done}/{p.total} inputs, "
                  f"{p.misrounded} misrounded so far", file=sys.stderr)

    return verify_batched(entry["file"], entry["entry"], entry["against"], db=db, out=str(folder), resume=resume,
                          progress=progress).outcome


def row(entry: dict, db, runs: list | None = None, out: str | None = None) -> tuple[str, int]:
    """One markdown row and the verdict's exit code. ``runs``: append the run for the HTML page
    (``{"function", "against", "data"}``, ``data`` as ``verify --json`` writes it, or ``refused``).
    ``out``: run an exhaustive PTX row resumably in a folder under it (:func:`_batched`)."""
    path = ROOT / entry["file"]
    inputs = entry["inputs"]
    exhaustive = inputs == "exhaustive"
    started = time.time()
    amd = path.suffix == ".s"
    try:
        if out is not None and exhaustive and not amd:
            o = _batched(entry, db, out)
        else:
            run = verify_amdgcn if amd else verify_ptx
            o = run(str(path.relative_to(ROOT)), entry["entry"], entry["against"], db=db,
                    exhaustive=True if exhaustive else False, cases=None if exhaustive else int(inputs))
    except TilecheckError as exc:  # a kernel tilecheck refuses: the row says why (exit 2), it is no verdict
        print(f"  {entry['function']}: refused ({time.time() - started:.1f} s)", file=sys.stderr)
        message = str(exc).split(": error: ", 1)[-1].replace("|", "/")
        if runs is not None:
            runs.append({"function": entry["function"], "against": entry["against"], "data": None,
                         "refused": str(exc).split(": error: ", 1)[-1]})
        code = "" if amd else f"`{ptx_line(path, entry['entry'])}`"
        return (f"| {entry['function']} | {entry['against']} | {code} | none | "
                f"refused (exit 2): {message} |  |"), 2
    checked = f"{o.inputs_checked} (exhaustive)" if o.exhaustive else f"{o.inputs_checked} sampled"
    approx = ", ".join(o.approximate_forms) or "none"
    verdict = {"verified": "verified",
               "no-counterexample": "no counterexample",
               "counterexample": f"**not correctly rounded**: {_misrounded(o)}",
               "unknown": f"unknown ({o.unknown_count} inputs reach {_unknown_cause(o)})"}[o.verdict_word]
    cex = ""
    if o.counterexamples:
        c = o.counterexamples[0]
        ins = ", ".join(i["hex"] for i in c["inputs"])
        choice = "; ".join(f"{ch['instruction'].split()[0]} returned {ch['position']}"
                           for ch in c["approximate_choices"])
        cex = (f"({ins}) -> {c['got']['hex']}, expected {c['expected']['hex']}"
               + (f" ({choice})" if choice else "") + f"<br>`{c['repro']}`")
    print(f"  {entry['function']}: {o.verdict} ({time.time() - started:.1f} s)", file=sys.stderr)
    if runs is not None:  # the data `tilecheck verify FILE.ptx --json` writes: the page and the CLI agree
        from tilecheck.commands.verify_ptx import to_json

        runs.append({"function": entry["function"], "against": entry["against"], "data": to_json(o)})
    code = f"`{amdgcn_line(path, entry)}`" if amd else f"`{ptx_line(path, entry['entry'])}`"
    return (f"| {entry['function']} | {entry['against']} | {code} | {checked} | "
            f"{verdict} (approximate: {approx}) | {cex} |"), o.exit_code


def amdgcn_line(path: Path, entry: dict) -> str:
    """The instructions that compute a kernel's stored element, in order (the simulator's own
    slice: address arithmetic, masks and the store left out), repeats counted."""
    p = prepare_amdgcn(str(path.relative_to(ROOT)), entry["entry"], entry["against"], db=load_database())
    out: list = []
    for name in element_instructions(p):
        name = re.sub(r"_(e32|e64)$", "", name)
        if out and out[-1][0] == name:
            out[-1][1] += 1
        else:
            out.append([name, 1])
    return "; ".join(n if k == 1 else f"{n} x{k}" for n, k in out)


TRITON = ROOT / "examples" / "triton" / "manifest.yaml"
TRITON_BEGIN, TRITON_END = "<!-- triton-findings:begin -->", "<!-- triton-findings:end -->"


def triton_entries(db) -> list[dict]:
    """One row entry per (Triton kernel, reference) of examples/triton/manifest.yaml: every
    reference a user would check the kernel against, first the correctly rounded operation.
    Kernels whose operands together hold at most 32 bits (16-bit unary and binary, 32-bit unary,
    float16 widened) run exhaustively; the others sampled (an entry's ``inputs`` says otherwise, for all
    its references or, as a mapping, for those it names)."""
    out = []
    for e in yaml.safe_load(TRITON.read_text())["entries"]:
        vector = e["vector"] in (True, "yes")
        fusion = {True: "on", False: "off"}.get(e["fp_fusion"], e["fp_fusion"])  # YAML reads on/off as booleans
        per_thread = e["block"] // (32 * e["num_warps"])
        widest = max(int(re.search(r"\d+", t).group()) for t in e.get("pointers") or [e["dtype"]]) // 8  # bytes
        # aligned pointers give 128-bit accesses where a thread's elements fill 16 bytes; fewer, narrower ones
        access = (", 128-bit vectors" if vector and per_thread * widest >= 16 else
                  f", aligned, {per_thread} elements per thread" if vector else "")
        name = (f"Triton `{e['source']}` ({e['dtype']}{access}; BLOCK {e['block']}, "
                f"{e['num_warps']} warps; {e['target']}{'; FP fusion ' + fusion if fusion != 'default' else ''})")
        for against in e["against"]:
            domain_bits = sum(f.width for f in parse_reference(against, db).operand_formats)
            default = "exhaustive" if domain_bits <= 32 else 65536
            inputs = e.get("inputs", default)
            if isinstance(inputs, dict):  # per reference: those it names; the others the default
                inputs = inputs.get(against, default)
            out.append({"function": name, "file": e["file"], "entry": e["entry"], "against": against,
                        "inputs": inputs})
    return out


AMDGPU = ROOT / "examples" / "amdgpu" / "manifest.yaml"
AMDGPU_BEGIN, AMDGPU_END = "<!-- amdgpu-findings:begin -->", "<!-- amdgpu-findings:end -->"
TRITON_AMDGPU = ROOT / "examples" / "amdgpu" / "triton" / "manifest.yaml"
TRITON_AMDGPU_BEGIN, TRITON_AMDGPU_END = "<!-- triton-amdgpu-findings:begin -->", "<!-- triton-amdgpu-findings:end -->"
VENDORS_BEGIN, VENDORS_END = "<!-- vendors-findings:begin -->", "<!-- vendors-findings:end -->"
AMDGPU_CASES = {16: 16384, 32: 16384, 64: 2048}
"""Sampled inputs per llc AMDGPU row by element width (the binary64 macros fork up to 17 sampled
reciprocals per input and run slowest); 16-bit unary rows are exhaustive."""


def amdgpu_entries(db) -> list[dict]:
    """One row entry per llc kernel and target of examples/amdgpu/manifest.yaml."""
    out = []
    for e in yaml.safe_load(AMDGPU.read_text())["entries"]:
        ref = parse_reference(e["against"], db)
        inputs = "exhaustive" if ref.fmt.width == 16 and ref.arity == 1 else AMDGPU_CASES[ref.fmt.width]
        out.append(dict(e, inputs=inputs))
    return out


def triton_amdgpu_entries(db) -> list[dict]:
    """One row entry per kernel of examples/amdgpu/triton/manifest.yaml (Triton for gfx942); the
    binary64 rows sampled as the llc ones (:data:`AMDGPU_CASES`)."""
    out = []
    for e in yaml.safe_load(TRITON_AMDGPU.read_text())["entries"]:
        inputs = "exhaustive" if e["inputs"] == "exhaustive" else int(e["inputs"])
        if e.get("dtype") == "fp64":
            inputs = AMDGPU_CASES[64]
        out.append(dict(e, inputs=inputs))
    return out


TABLES = [
    ("compiled", BEGIN, END, lambda db: [en for m in MANIFESTS for en in yaml.safe_load(m.read_text())["entries"]]),
    ("triton", TRITON_BEGIN, TRITON_END, triton_entries),
    ("amdgpu", AMDGPU_BEGIN, AMDGPU_END, amdgpu_entries),
    ("triton-amdgpu", TRITON_AMDGPU_BEGIN, TRITON_AMDGPU_END, triton_amdgpu_entries),
]
TABLE_NAMES = tuple(t[0] for t in TABLES)


def vendor_key(file: str) -> str:
    """The stem that names one Triton case in both corpora (examples/triton/div_f16.ptx and
    examples/amdgpu/triton/div_f16.s: the same source, BLOCK, warps, vectors and fusion)."""
    return Path(file).stem


def vendors_table(rows: dict, db) -> list[str]:
    """The "one question, both vendors" table: per Triton case of the AMD corpus, its correctly
    rounded reference and the verdict cell of that reference in the NVIDIA (sm_90) and the AMD
    (gfx942) table; ``rows`` maps (table, file stem, against) to a row's verdict cell."""
    out = ["| Triton source (element type; BLOCK, warps) | correctly rounded reference | NVIDIA sm_90a (PTX) | "
           "AMD gfx942 (AMDGCN) |", "|---|---|---|---|"]
    for e in yaml.safe_load(TRITON_AMDGPU.read_text())["entries"]:
        stem = vendor_key(e["file"])
        nv = rows.get(("triton", stem, e["against"]), "not in the NVIDIA corpus")
        amd = rows.get(("triton-amdgpu", stem, e["against"]), "not run")
        vec = ", vectors" if e.get("vector") in (True, "yes") else ""
        fusion = {True: "on", False: "off"}.get(e.get("fp_fusion"), e.get("fp_fusion"))
        fuse = f", FP fusion {fusion}" if fusion not in (None, "default") else ""
        out.append(f"| `{e['source']}` ({e['dtype']}; BLOCK {e['block']}, {e['num_warps']} warps{vec}{fuse}) | "
                   f"{e['against']} | {nv} | {amd} |")
    return out


def _verdict_cell(line: str) -> str:
    """A findings row's verdict (its fifth cell), without the approximate instructions."""
    cells = line.split(" | ")
    return cells[4].split(" (approximate:")[0] if len(cells) > 4 else ""


PTX_HEADER = ["| function | documented result | PTX (one line; address arithmetic left out) | inputs checked | "
              "verdict under the documented contracts (ulp reading: either; sign rule: IEEE) | counterexample and repro |",
              "|---|---|---|---|---|---|"]
AMD_HEADER = ["| function | documented result | AMDGCN (the instructions that compute the stored element) | inputs "
              "checked | verdict under AMD's documented contracts (spec/amdgpu, observed variant; ulp reading: "
              "either) | counterexample and repro |", "|---|---|---|---|---|---|"]


def _cells_from_readme(body: str, verdicts: dict, db) -> None:
    """Fill ``verdicts`` for the Triton tables not run this time from their rows in the README."""
    for name, begin, end, entries in TABLES:
        if name not in ("triton", "triton-amdgpu") or any(k[0] == name and len(k) == 3 for k in verdicts):
            continue
        kept = {}
        for line in body.split(begin, 1)[1].split(end, 1)[0].splitlines()[2:]:
            if line.startswith("| "):
                kept[_key(line)] = line
        for entry in entries(db):
            line = kept.get((entry["function"], entry["against"]))
            if line is not None:
                verdicts[(name, vendor_key(entry["file"]), entry["against"])] = _verdict_cell(line)


def _write_table(readme: str, begin: str, end: str, lines: list[str]) -> None:
    """Put ``lines`` between the markers ``begin`` and ``end`` of ``readme``, read afresh so that
    what changed elsewhere in the file while the rows ran is kept."""
    head, rest = Path(readme).read_text().split(begin, 1)
    _, tail = rest.split(end, 1)
    Path(readme).write_text(f"{head}{begin}\n" + "\n".join(lines) + f"\n{end}{tail}")


def _key(line: str) -> tuple:
    """A table row's function and reference (its first two cells)."""
    cells = line.split(" | ")
    return cells[0][2:], cells[1] if len(cells) > 1 else ""


def main(argv=None) -> int:
    """Run the manifests; print (and optionally write) the tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readme", help="rewrite the tables between their findings markers of this file")
    ap.add_argument("--only", help="run only entries whose function, entry, file or reference contains this text "
                                   "(or one of several, comma-separated)")
    ap.add_argument("--table", choices=TABLE_NAMES + ("vendors",),
                    help="only this table (default: every table; 'vendors' rebuilds the both-vendors table from "
                         "the README's Triton rows)")
    ap.add_argument("--html", metavar="FILE", help="also write a page of the runs made (verdicts, pictures of the "
                                                  "misrounded inputs, repros; needs tilecheck[report])")
    ap.add_argument("--out", metavar="DIR", help="run the exhaustive PTX rows in checkpointed batches, each in a "
                                                "folder of DIR: a stopped run continues where it ended when run "
                                                "again with the same DIR")
    args = ap.parse_args(argv)
    db = load_database()
    runs = None
    if args.html:  # a missing extra or folder is said before the runs, not after them
        from tilecheck.commands.output import check_writable
        from tilecheck.report import render

        try:
            check_writable(args.html, "--html")
            render.require("jinja2")
            render.require("matplotlib")
        except TilecheckError as exc:
            print(exc, file=sys.stderr)
            return 2
        runs = []
    body = Path(args.readme).read_text() if args.readme else ""
    verdicts: dict = {}
    for name, begin, end, entries in TABLES:
        if args.table and args.table != name:
            continue
        header = AMD_HEADER if name.endswith("amdgpu") else PTX_HEADER
        if args.readme and (begin not in body or end not in body):
            print(f"{args.readme}: no {begin} ... {end} markers", file=sys.stderr)
            return 2
        table_entries = entries(db)  # read once: the manifest may be edited while the rows run
        # each entry's row as the README has it (matched by function and reference) until it is rerun
        kept = {}
        if args.readme:
            for line in body.split(begin, 1)[1].split(end, 1)[0].splitlines()[2:]:
                if line.startswith("| "):
                    kept[_key(line)] = line
        selected = [not args.only or any(o in e["function"] or o in e["entry"] or o in e["file"] or o in e["against"]
                                         for o in args.only.split(",")) for e in table_entries]
        table_rows = [kept.get((e["function"], e["against"])) for e in table_entries]
        for entry, chosen, old in zip(table_entries, selected, table_rows):
            if not chosen and old is None and args.readme:
                print(f"{entry['function']} against {entry['against']}: not in {args.readme}'s table yet; run "
                      "without --only", file=sys.stderr)
                return 2
        fresh = []
        for i, entry in enumerate(table_entries):
            if not selected[i]:
                continue
            text, _ = row(entry, db, runs, args.out)
            fresh.append(text)
            table_rows[i] = text
            if args.readme:  # each row lands as it finishes: a long run stopped later loses nothing done
                _write_table(args.readme, begin, end, header + [r for r in table_rows if r is not None])
        if name in ("triton", "triton-amdgpu"):
            for entry, line in zip(table_entries, table_rows):
                if line is not None:
                    verdicts[(name, vendor_key(entry["file"]), entry["against"])] = _verdict_cell(line)
        print("\n".join(header + fresh))
        if args.readme:
            _write_table(args.readme, begin, end, header + [r for r in table_rows if r is not None])
    if args.readme:
        body = Path(args.readme).read_text()
    if args.readme and VENDORS_BEGIN in body and (not args.table or args.table in ("vendors", "triton",
                                                                                   "triton-amdgpu")):
        if not any(k[0] == "triton" and len(k) == 3 for k in verdicts) or \
                not any(k[0] == "triton-amdgpu" and len(k) == 3 for k in verdicts):
            _cells_from_readme(body, verdicts, db)
        _write_table(args.readme, VENDORS_BEGIN, VENDORS_END, vendors_table(verdicts, db))
    if args.html:
        from tilecheck.report.run_report import write_findings_report

        write_findings_report(args.html, runs, db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
