"""The DataStream job graph: immutable nodes the API builds and the Spark runtime translates.

A node knows its inputs, its output type and a name; nothing here runs
anything. Stateless nodes (:class:`Stateless`) are fused by the runtime into
one Python call per partition; keyed nodes (:class:`KeyedReduceNode`,
:class:`KeyedProcessNode`) carry their key selector and run as stateful
kernels keyed by hash bucket.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count()


@dataclass(eq=False)
class Node:
    name: str
    type_info: Any
    uid: str | None = field(default=None, init=False)
    id: int = field(default_factory=lambda: next(_ids), init=False)

    @property
    def inputs(self) -> list["Node"]:
        return []


@dataclass(eq=False)
class SourceNode(Node):
    """``kind``: ``collection`` (payload: list of values), ``text`` (a path), ``dataframe`` (a Spark DataFrame)."""

    kind: str = "collection"
    payload: Any = None


@dataclass(eq=False)
class Stateless(Node):
    """map, flat_map, filter or a non-keyed process (see :class:`changeflow.datastream.chain.Op`)."""

    input: Node = None
    op: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


@dataclass(eq=False)
class KeyedReduceNode(Node):
    """reduce, sum, min, max, min_by, max_by: one output per input (streaming) or per key (batch)."""

    input: Node = None
    key_selector: Any = None
    function: Any = None
    idempotent: bool = False   # FLIP-365: whether a key's latest output supersedes the earlier ones

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


@dataclass(eq=False)
class KeyedProcessNode(Node):
    input: Node = None
    key_selector: Any = None
    function: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


@dataclass(eq=False)
class UnionNode(Node):
    streams: list = field(default_factory=list)

    @property
    def inputs(self) -> list[Node]:
        return list(self.streams)


def sources(node: Node) -> list[SourceNode]:
    """Every source under ``node``, each once, in first-visit order."""
    seen: dict[int, SourceNode] = {}

    def visit(n: Node) -> None:
        if isinstance(n, SourceNode):
            seen.setdefault(n.id, n)
        for i in n.inputs:
            visit(i)

    visit(node)
    return list(seen.values())
