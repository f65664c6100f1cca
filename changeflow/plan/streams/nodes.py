"""The DataStream job graph's nodes: immutable, built by the API, translated by the runtime.

A node knows its inputs, its output type and a name; nothing here runs
anything. Stateless nodes (:class:`Stateless`, one :class:`Op` each) are fused
by the runtime into one Python call per partition; keyed nodes
(:class:`KeyedReduceNode`, :class:`KeyedProcessNode`, :class:`WindowNode`)
carry their key selector and run as stateful kernels keyed by hash bucket.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from changeflow.plan.streams.attributes import (OperatorAttributes, OperatorAttributesBuilder,
                                                function_is_output_idempotent,
                                                function_is_output_only_after_end_of_stream)

_ids = itertools.count()


@dataclass(frozen=True)
class Op:
    """One stateless operator: ``kind`` (map, flat_map, filter, process, key), the user function, its name.

    Run by :mod:`changeflow.kernels.chain`, fused with the other ops of a chain.
    """

    kind: str
    function: Any
    name: str
    output_type: Any = None  # TypeInformation the outputs are converted to, or None
    side_tag: str | None = None  # process only: yield this side output's values instead of the main output
    context: Any = None  # builds the context the function's open() gets (the API's RuntimeContext), or None


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
        """What the operator tells the planner (FLIP-365 idempotence; see :mod:`.attributes`)."""
        return OperatorAttributes()


@dataclass(eq=False)
class SourceNode(Node):
    """``kind``: ``collection`` (payload: list of values), ``text`` (a path), ``dataframe`` (a Spark DataFrame)."""

    kind: str = "collection"
    payload: Any = None


@dataclass(eq=False)
class TableNode(SourceNode):
    """A Table's changes as records (``to_data_stream`` & co): ``kind`` ``table``, ``payload`` a
    :class:`~changeflow.plan.stream_bridge.TableInput`. A source of the graph: the runtime
    translates the Table plan inside the job's query (:mod:`changeflow.runtime.spark.bridge`)."""

    kind: str = "table"


@dataclass(eq=False)
class Stateless(Node):
    """map, flat_map, filter or a non-keyed process (see :class:`Op`)."""

    input: Node = field(kw_only=True)  # every graph node but a source has its input
    op: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]

    def attributes(self) -> OperatorAttributes:
        idempotent = function_is_output_idempotent(self.op.function)
        return OperatorAttributesBuilder().set_output_idempotent(idempotent).build()


@dataclass(eq=False)
class KeyedNode(Node):
    """A stateful operator over ``input`` partitioned by ``key_selector``, running ``function``."""

    input: Node = field(kw_only=True)  # every graph node but a source has its input
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
class TimestampsNode(Node):
    """``assign_timestamps_and_watermarks(strategy)``: records timestamped, watermarks after them
    (:mod:`changeflow.kernels.keyed.timestamps`); ``strategy`` the API's ``WatermarkStrategy``."""

    input: Node = field(kw_only=True)
    strategy: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


@dataclass(eq=False)
class EventWindowNode(KeyedNode):
    """An event-time window (tumbling, sliding, session) or count window over ``input`` grouped by ``key_selector``:
    :class:`~changeflow.kernels.window.event_time.EventTimeWindow` with ``spec`` and ``windows``
    (:class:`~changeflow.kernels.window.event_time.EventWindows`); ``make_window`` builds the API's
    ``TimeWindow``; ``lateness`` the allowed lateness (ms); ``late_tag`` the late-data side output's tag or None."""

    spec: Any = None
    windows: Any = None
    make_window: Any = None
    lateness: int = 0
    late_tag: Any = None
    trigger: Any = None  # the kernel's TriggerSpec (None: the event-time trigger)


@dataclass(eq=False)
class LateDataNode(Node):
    """The late records of an event-time window (``side_output_late_data(tag)`` then ``get_side_output(tag)``)."""

    input: Node = field(kw_only=True)  # the EventWindowNode
    tag: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


def timestamp_assigners(node: Node) -> list[TimestampsNode]:
    """The nearest ``assign_timestamps_and_watermarks`` below ``node`` on each path (each once)."""
    seen: dict[int, TimestampsNode] = {}

    def visit(n: Node) -> None:
        if isinstance(n, TimestampsNode):
            seen.setdefault(n.id, n)
            return
        for i in n.inputs:
            visit(i)

    for i in node.inputs:
        visit(i)
    return list(seen.values())


def unassigned_paths(node: Node) -> bool:
    """Whether some path from ``node`` down to a source meets no ``assign_timestamps_and_watermarks``."""
    if isinstance(node, TimestampsNode):
        return False
    if isinstance(node, SourceNode):
        return True
    return any(unassigned_paths(i) for i in node.inputs)


@dataclass(eq=False)
class UnionNode(Node):
    streams: list = field(default_factory=list)

    @property
    def inputs(self) -> list[Node]:
        return list(self.streams)


@dataclass(eq=False)
class SideOutputNode(Node):
    """The records ``input``'s ProcessFunction yielded as ``(tag, value)``; ``tag`` an ``OutputTag``."""

    input: Node = field(kw_only=True)  # every graph node but a source has its input
    tag: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


@dataclass(eq=False)
class WindowNode(KeyedNode):
    """A window over ``input`` grouped by ``key_selector`` computing ``spec``
    (a :class:`~changeflow.kernels.window.evaluate.WindowSpec`).

    ``KeyedStream.window(...)`` / ``DataStream.window_all(...)`` followed by
    ``reduce``/``aggregate``/``process``/``apply``, over ``GlobalWindows``.
    """

    spec: Any = None
    trigger: Any = None  # changeflow.datastream.window.Trigger

    @property
    def fires(self) -> bool:
        return self.trigger.fires_at_end_of_stream

    def attributes(self) -> OperatorAttributes:
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(self.fires).build()


@dataclass(eq=False)
class CoGroupNode(Node):
    """``first.co_group(second)`` / ``first.join(second)``, then
    ``.where(first_key).equal_to(second_key).window(...).apply(function)``.

    ``kind``: ``co_group``, ``join`` or ``flat_join`` (:class:`~changeflow.kernels.window.CoGroupKernel`).
    """

    first: Node = field(kw_only=True)
    second: Node = field(kw_only=True)
    first_key: Any = None
    second_key: Any = None
    function: Any = None
    kind: str = "co_group"
    trigger: Any = None
    output_type: Any = None

    @property
    def inputs(self) -> list[Node]:
        return [self.first, self.second]

    @property
    def keyed(self) -> bool:
        return True

    @property
    def fires(self) -> bool:
        return self.trigger.fires_at_end_of_stream

    def attributes(self) -> OperatorAttributes:
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(self.fires).build()


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


def all_nodes(roots: list[Node]) -> list[Node]:
    """Every node under ``roots``, each once."""
    seen: dict[int, Node] = {}
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.id not in seen:
            seen[n.id] = n
            stack.extend(n.inputs)
    return list(seen.values())


def chain_under(node: Node) -> tuple[Node, list[Op]]:
    """The first non-stateless node under ``node`` and the stateless ops above it, bottom up (one fused chain).

    >>> src = SourceNode("src", None)
    >>> a = Stateless("a", None, input=src, op=Op("map", str, "a"))
    >>> top = Stateless("b", None, input=a, op=Op("map", str, "b"))
    >>> base, ops = chain_under(top)
    >>> base is src, [op.name for op in ops]
    (True, ['a', 'b'])
    """
    ops: list[Op] = []
    while isinstance(node, Stateless):
        ops.append(node.op)
        node = node.input
    return node, ops[::-1]


def key_op(key_selector: Any, operator: str, context: Any = None) -> Op:
    """The op running ``key_selector`` at the end of a chain feeding the keyed operator named ``operator``;
    ``context`` builds the context a KeySelector's ``open()`` gets."""
    return Op("key", key_selector, f"KeySelector of {operator}", context=context)


def side_output_ops(ops: list[Op], tag: Any) -> list[Op]:
    """The chain ``ops`` (ending with the ProcessFunction) rewritten to yield ``tag``'s values, typed by the tag."""
    last = ops[-1]
    side = [replace(last, side_tag=tag.tag_id, output_type=tag.type_info, name=f"{last.name} side output {tag.tag_id}")]
    return ops[:-1] + side
