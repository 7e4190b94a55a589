"""``tilecheck verify FILE.s --entry KERNEL --against REF``: verify AMDGCN that LLVM or Triton wrote.

The options are those of ``verify FILE.ptx`` (``--entry``, ``--against`` with the same REF
language, ``--exhaustive``, ``--cases``, ``--seed``, ``--input``, ``--params``, ``--json``,
``--html``) plus ``--semantics documented|observed``: which spec variant of every AMD
instruction runs (default observed). Exit 0 verified or no counterexample in a sampled run, 1
counterexample, 2 usage or unsupported assembly (located ``FILE:line:col``), 4 unknown (a contract
that could only be sampled, and nothing failed). The batched-run options of FILE.ptx
(``--workers``, ``--out``, ``--resume`` ...) are not available for AMDGCN yet.
"""

from __future__ import annotations

import sys

from tilecheck.commands import verify_ptx
from tilecheck.errors import UsageError
from tilecheck.spec.database import load_database
from tilecheck.verify import amdgcn, compiled

SUFFIXES = (".s", ".asm", ".amdgcn")


def wants_amdgcn(args) -> bool:
    """True when the command line names an AMDGCN assembly file."""
    return any(str(t).endswith(SUFFIXES) for t in args.targets)


def run(args) -> int:
    """Run the AMDGCN verification; returns the exit code."""
    files = [t for t in args.targets if str(t).endswith(SUFFIXES)]
    if len(files) != 1 or len(args.targets) != 1:
        raise UsageError("verify FILE.s takes exactly one assembly file (and --entry NAME --against REF)")
    if not args.entry or not args.against:
        raise UsageError("verify FILE.s needs --entry KERNEL and --against REF")
    if verify_ptx.batched(args):
        raise UsageError("--workers, --scheduler, --out, --resume, --batch and --stop-after are for FILE.ptx; "
                         "an AMDGCN run is one process")
    if args.exhaustive and args.cases is not None:
        raise UsageError("--exhaustive and --cases are exclusive")
    if args.approx == "reference":
        raise UsageError("--approx reference applies to PTX; AMDGCN runs every allowed result ('all', or "
                         "'provisional' to judge under the spec's provisional bounds too)")
    db = load_database()
    outcome = amdgcn.verify_amdgcn(files[0], args.entry, args.against, db=db,
                                   exhaustive=True if args.exhaustive else None, cases=args.cases, seed=args.seed,
                                   semantics=args.semantics, params=args.params, ulp_reading=args.ulp_reading,
                                   progress=compiled.progress_printer(sys.stderr),
                                   input_=args.input.split(",") if args.input else None, approx=args.approx)
    return verify_ptx.report_outcome(args, outcome)
