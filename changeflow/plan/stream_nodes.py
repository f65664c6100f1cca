"""The DataStream job graph's nodes: plan nodes the DataStream API builds and the runtime translates.

They are :class:`~changeflow.plan.nodes.PlanNode` subclasses beside the Table
API's nodes: the same ``inputs`` and ``traits``, planned by the same optimizer
(:mod:`changeflow.plan.optimizer`), whose DataStream rules (flush buffering,
FLIP-331 end of input, a job run as batch, the checks; in
:mod:`changeflow.plan.rules`) write their decisions on the nodes' traits. A
job is a :class:`StreamJob` over its sinks' nodes.

A node knows its inputs, its output type and a name; nothing here runs
anything. Stateless nodes (:class:`Stateless`, one :class:`Op` each) are fused
by the runtime into one Python call per partition; keyed nodes
(:class:`KeyedReduceNode`, :class:`KeyedProcessNode`, :class:`WindowNode`)
carry their key selector and run as stateful kernels keyed by hash bucket.
A node's ``id`` names the operator across planning (a planned copy keeps it):
the runtime numbers sources and assigners by it, the cache registry keys by it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Sequence

from changeflow.plan.nodes import PlanNode
from changeflow.plan.stream_bridge import Boundary
from changeflow.plan.operator_attributes import (OperatorAttributes, OperatorAttributesBuilder,
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


@dataclass(frozen=True, eq=False)
class Node(PlanNode):
    """A DataStream operator. ``uid`` is the user's stable id (``DataStream.uid``)."""

    stream: ClassVar[bool] = True
    name: str
    type_info: Any
    uid: str | None = field(default=None, kw_only=True)
    id: int = field(default_factory=lambda: next(_ids), kw_only=True)

    @property
    def inputs(self) -> list["Node"]:  # pyright: ignore[reportIncompatibleVariableOverride] - a list, as PyFlink's
        return []

    @property
    def keyed(self) -> bool:
        return False

    def attributes(self) -> OperatorAttributes:
        """What the operator tells the planner (FLIP-365 idempotence; see :mod:`.operator_attributes`)."""
        return OperatorAttributes()

    def over(self, inputs: Sequence[PlanNode]) -> "Node":
        """This node over new ``inputs`` (same count and order as :attr:`inputs`): how the planner rebuilds it."""
        return replace(self, input=inputs[0]) if self.inputs else self


def set_name(node: Node, name: str) -> None:
    """Names ``node`` in place (``DataStream.name``): as in PyFlink, operators built on it already see the name.

    Nodes are immutable once planned; the API names them while it builds the graph, before any planning.
    """
    object.__setattr__(node, "name", name)


def set_uid(node: Node, uid: str) -> None:
    """Sets ``node``'s stable id in place (``DataStream.uid``), as :func:`set_name`."""
    object.__setattr__(node, "uid", uid)


@dataclass(frozen=True, eq=False)
class OneInputNode(Node):
    """An operator over one ``input``: every graph node but a source, a union and a two-input node."""

    input: Node = field(kw_only=True)

    @property
    def inputs(self) -> list[Node]:
        return [self.input]


@dataclass(frozen=True, eq=False)
class SourceNode(Node):
    """``kind``: ``collection`` (payload: list of values), ``text`` (a path), ``dataframe`` (a Spark DataFrame)."""

    kind: str = "collection"
    payload: Any = None


@dataclass(frozen=True, eq=False)
class TableNode(Boundary, SourceNode):
    """A Table's changes as records (``to_data_stream`` & co): ``kind`` ``table``, ``payload`` a
    :class:`~changeflow.plan.stream_bridge.TableInput`, ``below`` the Table plan, planned with the
    Table environment's settings (``side_settings``). A source of the graph (its walks stop here): the
    runtime translates the Table plan inside the job's query (:mod:`changeflow.runtime.spark.bridge`)."""

    kind: str = "table"


@dataclass(frozen=True, eq=False)
class Stateless(OneInputNode):
    """map, flat_map, filter or a non-keyed process (see :class:`Op`)."""

    op: Any = None

    def attributes(self) -> OperatorAttributes:
        idempotent = function_is_output_idempotent(self.op.function)
        return OperatorAttributesBuilder().set_output_idempotent(idempotent).build()


@dataclass(frozen=True, eq=False)
class KeyedNode(OneInputNode):
    """A stateful operator over ``input`` partitioned by ``key_selector``, running ``function``."""

    key_selector: Any = None
    function: Any = None

    @property
    def keyed(self) -> bool:
        return True

    def _declared(self) -> OperatorAttributesBuilder:
        # FLIP-331: the user's function may declare that the operator emits only after end of input.
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(
            function_is_output_only_after_end_of_stream(self.function))


@dataclass(frozen=True, eq=False)
class KeyedReduceNode(KeyedNode):
    """reduce, sum, min, max, min_by, max_by: one output per input (streaming) or per key (batch)."""

    def attributes(self) -> OperatorAttributes:
        # A keyed reduce's output for a key is its running value: a later one supersedes the
        # earlier ones whatever the reduce function (FLIP-365's built-in idempotent operators).
        return self._declared().set_output_idempotent(True).build()


@dataclass(frozen=True, eq=False)
class KeyedProcessNode(KeyedNode):
    """``KeyedStream.process``: a KeyedProcessFunction with per-key state and timers."""

    def attributes(self) -> OperatorAttributes:
        return self._declared().set_output_idempotent(function_is_output_idempotent(self.function)).build()


@dataclass(frozen=True, eq=False)
class TimestampsNode(OneInputNode):
    """``assign_timestamps_and_watermarks(strategy)``: records timestamped, watermarks after them
    (:mod:`changeflow.kernels.keyed.timestamps`); ``strategy`` the API's ``WatermarkStrategy``."""

    strategy: Any = None


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
class LateDataNode(OneInputNode):
    """The late records of an event-time window (``side_output_late_data(tag)`` then ``get_side_output(tag)``)."""

    tag: Any = None


@dataclass(frozen=True, eq=False)
class UnionNode(Node):
    streams: list = field(default_factory=list)

    @property
    def inputs(self) -> list[Node]:
        return list(self.streams)

    def over(self, inputs: Sequence[PlanNode]) -> Node:
        return replace(self, streams=list(inputs))


@dataclass(frozen=True, eq=False)
class SideOutputNode(OneInputNode):
    """The records ``input``'s ProcessFunction yielded as ``(tag, value)``; ``tag`` an ``OutputTag``."""

    tag: Any = None


class _Triggered:
    """A window operator whose output is its trigger's firings (``GlobalWindows`` with a ``trigger``):
    it outputs only after end of input exactly when the trigger fires there (FLIP-331)."""

    trigger: Any  # changeflow.datastream.window.Trigger, a field of each subclass

    @property
    def fires(self) -> bool:
        return self.trigger.fires_at_end_of_stream

    def attributes(self) -> OperatorAttributes:
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(self.fires).build()


@dataclass(frozen=True, eq=False)
class WindowNode(_Triggered, KeyedNode):
    """A window over ``input`` grouped by ``key_selector`` computing ``spec``
    (a :class:`~changeflow.kernels.window.evaluate.WindowSpec`).

    ``KeyedStream.window(...)`` / ``DataStream.window_all(...)`` followed by
    ``reduce``/``aggregate``/``process``/``apply``, over ``GlobalWindows``.
    """

    spec: Any = None
    trigger: Any = None  # changeflow.datastream.window.Trigger


@dataclass(frozen=True, eq=False)
class TwoInputNode(Node):
    """An operator over two inputs, ``first`` and ``second``: a co-group or join, or a connect's operator."""

    first: Node = field(kw_only=True)
    second: Node = field(kw_only=True)

    @property
    def inputs(self) -> list[Node]:
        return [self.first, self.second]

    def over(self, inputs: Sequence[PlanNode]) -> Node:
        return replace(self, first=inputs[0], second=inputs[1])


@dataclass(frozen=True, eq=False)
class CoGroupNode(_Triggered, TwoInputNode):
    """``first.co_group(second)`` / ``first.join(second)``, then
    ``.where(first_key).equal_to(second_key).window(...).apply(function)``.

    ``kind``: ``co_group``, ``join`` or ``flat_join`` (:class:`~changeflow.kernels.window.CoGroupKernel`).
    """

    first_key: Any = None
    second_key: Any = None
    function: Any = None
    kind: str = "co_group"
    trigger: Any = None
    output_type: Any = None

    @property
    def keyed(self) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class CoProcessNode(TwoInputNode):
    """``first.connect(second)`` then ``map``/``flat_map``/``process`` (``kind``) with a co-function: a two-input
    operator. Keyed (``ConnectedStreams.key_by``) when it has ``first_key`` and ``second_key``: one kernel with
    per-key state and timers shared by both inputs (:class:`~changeflow.kernels.keyed.co_process.KeyedCoProcess`);
    else each input runs the function's calls for it in its own chain, and the outputs are unioned."""

    kind: str = "process"
    function: Any = None
    first_key: Any = None
    second_key: Any = None
    output_type: Any = None  # the declared output type (None: as produced); the unkeyed chains convert to it
    # ``kind`` "broadcast" (``first.connect(second.broadcast(...))``): ``second`` is the broadcast stream, these
    # its MapStateDescriptors, and ``state_handles`` the API's factory of broadcast state handles the kernel
    # hands the function (:class:`~changeflow.kernels.keyed.broadcast.BroadcastProcess`); ``first_key`` is
    # set when ``first`` is keyed, ``second_key`` never.
    broadcast_states: tuple = ()
    state_handles: Any = None

    @property
    def keyed(self) -> bool:
        """Whether the operator runs as one stateful stage (keyed inputs, or broadcast state)."""
        return self.first_key is not None or self.kind == "broadcast"

    def attributes(self) -> OperatorAttributes:
        # FLIP-365: a keyed co-function may declare its output idempotent per key, as a KeyedProcessFunction.
        idempotent = self.first_key is not None and function_is_output_idempotent(self.function)
        return OperatorAttributesBuilder().set_output_idempotent(idempotent).build()


@dataclass(frozen=True, eq=False)
class CacheNode(Node):
    """``DataStream.cache()`` (FLIP-205): ``input``'s records, kept after the first job computing them and read
    by later jobs (:class:`~changeflow.plan.stream_caches.CacheRegistry`)."""

    # None only in a CacheNode made as a bare registry key (tests); the API always gives the input.
    input: Node = None  # pyright: ignore[reportAssignmentType] - see the line above

    @property
    def inputs(self) -> list[Node]:
        return [self.input] if self.input is not None else []


@dataclass(frozen=True, eq=False)
class StreamJob(PlanNode):
    """One DataStream job: the nodes its sinks read, in the sinks' order. The root the planner plans; its
    traits carry the job's decisions (``streaming``: False for a streaming job that runs as one batch job)."""

    stream: ClassVar[bool] = True
    outputs: tuple[Node, ...]

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return self.outputs

    def over(self, inputs: Sequence[PlanNode]) -> "StreamJob":
        return replace(self, outputs=tuple(inputs))  # pyright: ignore[reportArgumentType] - graph nodes
