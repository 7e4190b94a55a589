"""Verification targets that ``tilecheck verify`` dispatches to by name prefix (``amdgpu.*``).

Each module exposes ``run(target_name, args) -> int`` (CLI glue: prints a report, returns the exit
code) and ``handle_item(item, ctx)`` for the verify runner's per-item table.
"""
