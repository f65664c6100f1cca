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

from changeflow.datastream.operator_attributes import (OperatorAttributes, OperatorAttributesBuilder,
                                                       function_is_output_idempotent,
                                                       function_is_output_only_after_end_of_stream)

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

    @property
    def keyed(self) -> bool:
        return False

    def attributes(self) -> OperatorAttributes:
        """What the operator tells the planner (FLIP-365 idempotence; see :mod:`.operator_attributes`)."""
        return OperatorAttributes()


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

    def attributes(self) -> OperatorAttributes:
        return OperatorAttributesBuilder().set_output_idempotent(function_is_output_idempotent(self.op.function)).build()


@dataclass(eq=False)
class KeyedNode(Node):
    """A stateful operator over ``input`` partitioned by ``key_selector``, running ``function``."""

    input: Node = None
    key_selector: Any = None
    function: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]

    @property
    def keyed(self) -> bool:
        return True

    def _declared(self) -> OperatorAttributesBuilder:
        # FLIP-331: the user's function may declare that the operator emits only after end of input.
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(
            function_is_output_only_after_end_of_stream(self.function))


@dataclass(eq=False)
class KeyedReduceNode(KeyedNode):
    """reduce, sum, min, max, min_by, max_by: one output per input (streaming) or per key (batch)."""

    def attributes(self) -> OperatorAttributes:
        # A keyed reduce's output for a key is its running value: a later one supersedes the
        # earlier ones whatever the reduce function (FLIP-365's built-in idempotent operators).
        return self._declared().set_output_idempotent(True).build()


@dataclass(eq=False)
class KeyedProcessNode(KeyedNode):
    """``KeyedStream.process``: a KeyedProcessFunction with per-key state and timers."""

    def attributes(self) -> OperatorAttributes:
        return self._declared().set_output_idempotent(function_is_output_idempotent(self.function)).build()


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
