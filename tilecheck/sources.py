"""Reading the source files a user names (PTX, AMDGCN assembly): the one place where a file that
cannot be read, or is not text, becomes a located usage error (exit 2) instead of an exception."""

from __future__ import annotations

from tilecheck.errors import Location, UsageError


def read_source(path, what: str = "a PTX module") -> str:
    """The UTF-8 text of ``path``. A file that cannot be opened is a usage error naming the
    system's reason; one that is not UTF-8 text (a binary, an object file given for its source) is
    one located at its first byte that is not (``FILE:line:column``), ``what`` saying what text was
    expected."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                         f"{what} was expected", Location(str(path), line, column)) from None
