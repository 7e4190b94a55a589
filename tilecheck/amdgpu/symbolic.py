"""The values a kernel computes from its input data, as a graph over the loads.

The wave simulator (:mod:`tilecheck.amdgpu.machine`) runs everything that does not depend on the
input data (addresses, indices, masks, the count) on concrete numbers, and everything that does as
nodes of a :class:`Graph`: a load of some bytes of an input buffer, or an instruction applied to
node and constant arguments. A stored element is then an expression over loads; the verifier
(:mod:`tilecheck.verify.amdgcn`) checks from the graph that it reads only its own element of each
input (:func:`demanded_loads`), groups the elements whose expressions are the same function of
their own elements (:func:`signature`), and evaluates one expression per group over every input.

Arguments (:data:`Arg`): ``("c", value)`` a constant; ``("r", node, part)`` the 32-bit ``part``
(0 low, 1 high) of a node's value; ``("cat", lo, hi)`` a 64-bit value from two 32-bit arguments;
``("b", node)`` a lane bit (a compare's result, a carry).
"""

from __future__ import annotations

from dataclasses import dataclass, field

LOAD, OP, UNDEF = "load", "op", "undef"


@dataclass(frozen=True)
class Node:
    """``kind`` LOAD: ``key`` = (buffer, byte offset, bytes, signed); OP: ``key`` = (step,
    mode register, args), ``step`` the :class:`tilecheck.amdgpu.machine.Step` that computes it and
    ``slot`` which of its results this node is; UNDEF: bits no instruction defines (the upper half
    of a 16-bit result), which no stored element may depend on. ``width``: 1 (a lane bit), 32 or 64."""

    kind: str
    key: tuple
    width: int
    slot: int = 0


@dataclass
class Graph:
    """Hash-consed nodes: the same load or the same instruction on the same arguments is one node."""

    nodes: list = field(default_factory=list)
    index: dict = field(default_factory=dict)

    def add(self, node: Node) -> int:
        """The id of ``node`` (added if new)."""
        k = (node.kind, node.key, node.width, node.slot)
        i = self.index.get(k)
        if i is None:
            i = len(self.nodes)
            self.nodes.append(node)
            self.index[k] = i
        return i

    def load(self, buffer: int, offset: int, nbytes: int, signed: bool = False) -> int:
        return self.add(Node(LOAD, (buffer, offset, nbytes, signed), 32))

    def undef(self) -> int:
        return self.add(Node(UNDEF, (), 32))


def arg_nodes(arg) -> list[int]:
    """The nodes an argument reads."""
    kind = arg[0]
    if kind == "c":
        return []
    if kind in ("r", "b"):
        return [arg[1]]
    return arg_nodes(arg[1]) + arg_nodes(arg[2])


def order(graph: Graph, roots: list[int]) -> list[int]:
    """The nodes ``roots`` depend on, each after its arguments (a topological order)."""
    seen, out = set(), []
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        n, done = stack.pop()
        if done:
            out.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        node = graph.nodes[n]
        if node.kind == OP:
            for a in reversed(node.key[2]):
                for m in arg_nodes(a):
                    if m not in seen:
                        stack.append((m, False))
    return out


def demanded_loads(graph: Graph, parts: list, halves_of) -> dict:
    """Which 16-bit halves of which loads a stored element can depend on.

    ``parts``: the element's pieces, each ``(arg, bit offset, bits)``. ``halves_of(node, halves)``
    says, for an OP node of which the halves ``halves`` (a set of 0..3: 16-bit quarters of a 64-bit
    value, 0..1 for 32-bit ones) are demanded, which halves of each argument are (a list parallel
    to the node's arguments, each a set). Returns ``{load node: set of halves}``, with the UNDEF
    nodes reached under the key ``"undef"``. The rules over-approximate (an unknown instruction
    demands every half of every argument), so an element found to depend only on its own bytes does.
    """
    want: dict = {}

    def demand_arg(arg, halves: set, out: dict) -> None:
        kind = arg[0]
        if kind == "c" or not halves:
            return
        if kind == "b":
            out.setdefault(arg[1], set()).update({0, 1, 2, 3})
        elif kind == "r":
            shift = 2 * arg[2]
            out.setdefault(arg[1], set()).update(h + shift for h in halves if h < 2)
        else:  # cat: low word halves 0-1, high word 2-3
            demand_arg(arg[1], {h for h in halves if h < 2}, out)
            demand_arg(arg[2], {h - 2 for h in halves if h >= 2}, out)

    for arg, offset, bits in parts:
        halves = {h for h in range(4) if h * 16 < offset + bits and (h + 1) * 16 > offset}
        demand_arg(arg, halves, want)
    loads: dict = {}
    for n in reversed(order(graph, list(want))):
        halves = want.get(n)
        if not halves:
            continue
        node = graph.nodes[n]
        if node.kind == LOAD:
            loads.setdefault(n, set()).update(h for h in halves if h < 2)
        elif node.kind == UNDEF:
            loads.setdefault("undef", set()).add(n)
        else:
            for a, hs in zip(node.key[2], halves_of(node, halves)):
                demand_arg(a, hs, want)
    return loads


def signature(graph: Graph, parts: list, rename) -> tuple:
    """A hashable description of an element's expression in which each load is renamed by
    ``rename(load node) -> hashable`` (its operand and offset relative to the element): two elements
    with equal signatures compute the same function of their own input elements."""
    memo: dict = {}

    def node_sig(n: int):
        if n in memo:
            return ("#", memo[n])
        node = graph.nodes[n]
        if node.kind == LOAD:
            s = ("load", rename(n))
        elif node.kind == UNDEF:
            s = ("undef",)
        else:
            step, mode, args = node.key
            s = ("op", step.index, mode, node.slot, tuple(arg_sig(a) for a in args))
        memo[n] = len(memo)
        return s

    def arg_sig(a):
        kind = a[0]
        if kind == "c":
            return a
        if kind == "r":
            return ("r", node_sig(a[1]), a[2])
        if kind == "b":
            return ("b", node_sig(a[1]))
        return ("cat", arg_sig(a[1]), arg_sig(a[2]))

    return tuple((arg_sig(a), off, bits) for a, off, bits in parts)
