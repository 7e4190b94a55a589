"""``tilecheck eval FORM OPERAND...``: evaluate one form on given operands through the model.

Operands are hex bit patterns (``0x3f800000``) or decimal literals (``1.5``, ``-inf``, ``nan``,
``1/3``) rounded to the operand's format; packed operands take one hex container or the lane
values joined by commas, element 0 first, each lane hex or decimal (``1.5,-2``, ``0x3c00,0.25``).
Negative literals need no ``--`` (``eval div.rn.f32 -inf -1e5``). A decimal that overflows to
infinity, underflows to zero or is rounded is noted on stderr. Prints each operand and the result as
bits, value and class. Approximate forms print the model's representative value and their
contract. Exit 0; 1 for an illegal form; 2 for an unknown form or a bad operand.
"""

from __future__ import annotations

import sys

from tilecheck.commands.output import add_json_option, check_writable, human_stream, write_json
from tilecheck.errors import OperandError, UsageError, echo
from tilecheck.model import api
from tilecheck.spec.database import load_database
from tilecheck.spec.forms import Form
from tilecheck.spec.registry import TININESS, TININESS_DEFAULT


def add_parser(sub):
    """Register the ``eval`` subcommand."""
    p = sub.add_parser("eval", help="evaluate a form on operands (bits or decimals)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("form", help="a form name, e.g. div.rn.ftz.f32 (qualifier order is free)")
    p.add_argument("operands", nargs="*", help="hex bits (0x...) or decimal literals, in PTX source order")
    p.add_argument("--target", help="check the form against this target (sm_80, sm_90, ...)")
    p.add_argument("--tininess", choices=TININESS, default=TININESS_DEFAULT,
                   help="with .ftz: judge subnormal results after (default) or before rounding")
    add_json_option(p, "also write the operands and result as JSON to FILE ('-': stdout only JSON, "
                       "the human text goes to stderr)")
    return p


def parse_operand(form: Form, index: int, text: str, notes: list | None = None) -> int:
    """Bits of one source operand of ``form`` from hex or decimal text.

    Packed operands take one hex container (``0x38003c00``) or the lane values joined by commas,
    element 0 first; each lane may be hex or decimal on its own (``0x3c00,0.5``). Sentences about
    literals that did not convert exactly (overflow, underflow, rounding) are appended to ``notes``.
    """
    op = form.sources[index]
    where = f"operand {index + 1} ({op.name})"
    if op.element_format is None:
        width = form.container_bits
        body = text.strip().replace("_", "")
        if len(body) > width + 2:  # longer than any pattern of this width can be written
            raise OperandError(f"{where}: {echo(text)} does not fit in {width} bits")
        try:
            value = int(body, 0)
        except ValueError:
            raise OperandError(f"{where}: {echo(text)} is not an integer bit pattern") from None
        if value < 0 or value >> width:
            raise OperandError(f"{where}: {echo(text)} does not fit in {width} bits")
        return value
    fmt = op.format
    if op.lanes == 1:
        return fmt.parse_operand(text, where, notes)
    parts = text.split(",")
    if len(parts) == 1 and text.strip().lower().startswith("0x"):
        width = fmt.width * op.lanes
        digits = text.strip()[2:].replace("_", "")
        if not digits or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise OperandError(f"{where}: {echo(text)} is not a hex bit pattern")
        if len(digits.lstrip("0")) > width // 4:
            raise OperandError(f"{where}: {echo(text)} does not fit the {width}-bit {op.ptx_type} container")
        return int(digits, 16)
    if len(parts) != op.lanes:
        raise OperandError(f"{where}: a {op.ptx_type} operand takes {op.lanes} comma-separated values "
                           f"(element 0 first, each hex or decimal) or one hex container, got {echo(text)}")
    value = 0
    for lane, part in enumerate(parts):
        value |= fmt.parse_operand(part, f"{where} lane {lane}", notes) << (lane * fmt.width)
    return value


def describe(form: Form, bits: int, lanes_of=None) -> str:
    """``0x... value class`` text for one register value of ``form`` (all lanes for packed)."""
    width = form.container_bits
    text = f"0x{bits:0{width // 4}x}"
    if form.element_format is None:
        return text
    fmt = form.format
    items = []
    for lane in range(form.lanes):
        lane_bits = (bits >> (lane * fmt.width)) & ((1 << fmt.width) - 1)
        value, cls = fmt.describe(lane_bits)
        items.append(f"{value} ({cls})")
    return f"{text}  " + (", ".join(f"[{i}] {t}" for i, t in enumerate(items)) if form.lanes > 1 else items[0])


def lanes_json(form: Form, bits: int) -> dict:
    """JSON record of one register value: bits (number and hex) and, per lane, value and class."""
    width = form.container_bits
    record = {"bits": bits, "hex": f"0x{bits:0{width // 4}x}"}
    if form.element_format is None:
        return record
    fmt = form.format
    lanes = []
    for lane in range(form.lanes):
        lane_bits = (bits >> (lane * fmt.width)) & ((1 << fmt.width) - 1)
        value, cls = fmt.describe(lane_bits)
        lanes.append({"bits": lane_bits, "value": value, "class": cls})
    if form.lanes > 1:
        record["lanes"] = lanes
    else:
        record.update(value=lanes[0]["value"], **{"class": lanes[0]["class"]})
    return record


def run(args) -> int:
    """Evaluate and print; returns the exit code."""
    check_writable(args.json)
    db = load_database()
    form = db.form(args.form, args.target)
    if form.kind == "function":
        raise UsageError(f"{form.name}: `eval` prints arithmetic forms only; evaluate conversions, comparisons, "
                         "moves and integer forms with tilecheck.model.api.evaluate (operands of each operand's type)")
    if len(args.operands) != len(form.sources):
        names = ", ".join(o.name for o in form.sources)
        raise UsageError(f"{form.name} takes {len(form.sources)} operand(s) ({names}), got {len(args.operands)}")
    notes: list[str] = []
    values = [parse_operand(form, i, t, notes) for i, t in enumerate(args.operands)]
    if form.kind not in ("exact", "contract"):
        raise UsageError(f"{form.name} moves bits; there is nothing to evaluate")
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    out = human_stream(args)
    out.write(f"{form.name}\n")
    for op, v in zip(form.sources, values):
        out.write(f"  {op.name:<3}= {describe(form, v)}\n")
    dst = form.destinations[0].name if form.destinations else "d"
    record = {"form": form.name, "kind": form.kind, "tininess": args.tininess, "target": args.target,
              "operands": [dict(name=op.name, text=t, **lanes_json(form, v))
                           for op, t, v in zip(form.sources, args.operands, values)],
              "notes": notes}
    if form.kind == "exact":
        result = int(api.evaluate(form, *values, tininess=args.tininess))
        out.write(f"  {dst:<3}= {describe(form, result)}\n")
    else:
        result = int(api.reference(form, *values, tininess=args.tininess))
        out.write(f"  {dst:<3}~ {describe(form, result)}\n")
        out.write(f"  approximate form: the model's representative value (round-to-nearest of the exact result); "
                  f"acceptable results: {api._contract_text(form)}\n")
        record["contract"] = api._contract_text(form)
    record["result"] = dict(name=dst, **lanes_json(form, result))
    write_json(args.json, record)
    return 0
