"""The PTX type table against the real spec: every type a form uses can be held, declared and
passed by the emitters, and agrees with its element format."""

from __future__ import annotations

from tilecheck.spec.database import load_database
from tilecheck.spec.types import KINDS, PTX_TYPES, format_problems


def test_every_type_is_held_by_a_register_type_of_the_table():
    for t in PTX_TYPES.values():
        assert t.kind in KINDS, t
        holder = PTX_TYPES[t.register]
        assert holder.register == holder.name and holder.bits >= t.bits, t
        assert holder.register_class is not None, f".{t.name} is held in .{t.register}, which has no register class"
        assert PTX_TYPES[holder.register_class].prefix, holder


def test_the_real_formats_fit_every_type():
    db = load_database()
    assert format_problems(db.formats, PTX_TYPES) == []
    used = {o.ptx_type for f in db.ptx_forms() for o in f.operands}
    assert used <= set(PTX_TYPES)
