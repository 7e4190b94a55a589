"""Find a PTX function by the name a user knows: mangled, demangled, or unqualified.

nvcc writes C++ kernels under their Itanium-mangled names (``_Z6div_gsPKfS0_Pfi``,
``_Z4tdivIfEvPKT_S2_PS0_i``); users know them as ``div_gs`` or ``tdiv<float>``.
:func:`resolve` accepts, in order of precedence, the exact PTX name, the full demangled name
(``void tdiv<float>(float const*, float const*, float*, int)``, with or without its return type), the
name without parameters (``ns::tdiv<float>``), the same without namespaces (``tdiv<float>``) and the
bare name without template arguments (``tdiv``). The first spelling that names exactly one function
wins; one that names several is ambiguous and the error lists them.

Demangling uses libstdc++'s ``__cxa_demangle`` through ctypes (the library every Linux with a C++
runtime has), else binutils' ``c++filt``; with neither, only exact PTX names match and the error says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re
import shutil
import subprocess

_ID_CHAR = re.compile(r"[A-Za-z0-9_$]")


@functools.lru_cache(maxsize=1)
def _cxa_demangle():
    """libstdc++'s ``abi::__cxa_demangle`` and ``free``, or None where the library is absent."""
    for name in (ctypes.util.find_library("stdc++"), "libstdc++.so.6"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            fn = lib.__cxa_demangle
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        libc.free.argtypes = [ctypes.c_void_p]
        libc.free.restype = None
        return fn, libc.free
    return None


def demangler() -> str | None:
    """Which demangler this process uses: ``"__cxa_demangle"``, ``"c++filt"`` or None."""
    if _cxa_demangle() is not None:
        return "__cxa_demangle"
    if shutil.which("c++filt"):
        return "c++filt"
    return None


def demangle_all(names: list[str]) -> dict[str, str | None]:
    """Each Itanium-mangled name (``_Z...``) -> its demangled spelling; None for names that are
    not mangled or that no available demangler reads."""
    out: dict[str, str | None] = {n: None for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    if not mangled:
        return out
    cxa = _cxa_demangle()
    if cxa is not None:
        fn, free = cxa
        for n in mangled:
            status = ctypes.c_int(0)
            ptr = fn(n.encode(), None, None, ctypes.byref(status))
            if ptr and status.value == 0:
                out[n] = ctypes.string_at(ptr).decode("utf-8", "replace")
            if ptr:
                free(ptr)
        return out
    tool = shutil.which("c++filt")
    if tool is None:
        return out
    try:
        res = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=30,
                             check=True)
    except (OSError, subprocess.SubprocessError):
        return out
    lines = res.stdout.splitlines()
    if len(lines) == len(mangled):
        # c++filt echoes what it cannot read unchanged
        out.update({n: d for n, d in zip(mangled, lines) if d != n})
    return out


def canonical(name: str) -> str:
    """A spelling with insignificant blanks removed (``tdiv< float >`` -> ``tdiv<float>``): a blank
    stays only between two identifier characters (``unsigned int``)."""
    name = name.strip()
    out = []
    for i, c in enumerate(name):
        if c.isspace():
            prev = out[-1] if out else ""
            nxt = name[i + 1] if i + 1 < len(name) else ""
            if prev and prev != " " and _ID_CHAR.match(prev) and nxt and _ID_CHAR.match(nxt):
                out.append(" ")
            continue
        out.append(c)
    return "".join(out)


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside ``<>``/``()``/``[]``."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return parts


def spellings(demangled: str) -> list[str]:
    """The names one demangled signature answers to, most specific first (all canonical)."""
    full = canonical(demangled)
    out = [full]
    head = full
    if full.endswith(")"):  # drop the parameter list: the last balanced (...) group
        depth = 0
        for i in range(len(full) - 1, -1, -1):
            depth += full[i] == ")"
            depth -= full[i] == "("
            if depth == 0:
                head = full[:i]
                break
    words = _split_top(head, " ")
    if len(words) > 1:  # a function template's return type comes first: `void tdiv<float>`
        out.append(canonical(" ".join(words[1:])) + full[len(head):])
        head = words[-1]
    out.append(head)
    unqualified = _split_top(head, "::")[-1]
    out.append(unqualified)
    if "<" in unqualified and not unqualified.startswith("operator"):
        out.append(unqualified[:unqualified.index("<")])
    seen, uniq = set(), []
    for s in out:
        if s and s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


class NameNotFound(LookupError):
    """No function, or several, answer to a name; ``message`` says which and lists the candidates."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def resolve(name: str, names: list[str]) -> str:
    """The one function in ``names`` (PTX names, in module order) that ``name`` designates (module
    doc for the spellings accepted). Raises :class:`NameNotFound` when none or several do."""
    if name in names:
        return name
    demangled = demangle_all(names)
    want = canonical(name)
    levels: dict[int, list[str]] = {}
    for n in names:
        if demangled[n] is None:
            continue
        for level, s in enumerate(spellings(demangled[n])):
            if s == want:
                levels.setdefault(level, []).append(n)
                break
    for level in sorted(levels):
        hits = levels[level]
        if len(hits) == 1:
            return hits[0]
        listed = "; ".join(f"{h} ({demangled[h]})" for h in hits)
        raise NameNotFound(f"function name {name!r} is ambiguous: {len(hits)} functions answer to it: {listed}; "
                         "give the mangled name or the full signature")

    def show(n: str) -> str:
        return f"{n} ({demangled[n]})" if demangled[n] else n

    have = ", ".join(show(n) for n in names) or "none"
    note = ""
    if any(n.startswith("_Z") for n in names) and demangler() is None:
        note = ("; names are matched as written in the PTX only: no demangler is available (libstdc++'s "
                "__cxa_demangle, binutils' c++filt)")
    raise NameNotFound(f"no function {name!r} defined in the module (defined: {have}){note}")
