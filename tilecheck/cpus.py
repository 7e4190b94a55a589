"""How many threads or worker processes long work uses: one fact, read by every parallel loop.

``TILECHECK_THREADS`` when set (a positive integer, else a usage error), else one per CPU, at most
:data:`MAX_DEFAULT` (beyond that the default would only add memory: each exhaustive-verify worker
holds up to about 0.8 GB).
"""

from __future__ import annotations

import os

from tilecheck.errors import UsageError

MAX_DEFAULT = 8
"""The most threads or workers chosen without ``TILECHECK_THREADS``."""


def threads() -> int:
    """Threads (or worker processes) for large parallel work: ``TILECHECK_THREADS``, else one per
    CPU (at most :data:`MAX_DEFAULT`)."""
    value = os.environ.get("TILECHECK_THREADS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f"TILECHECK_THREADS must be a positive integer, got {value[:40]!r}")
        return int(value)
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT))
