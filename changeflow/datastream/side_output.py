"""Side outputs of a ``ProcessFunction`` (PyFlink's ``OutputTag`` and ``get_side_output``).

As in PyFlink, a function emits to a side output by yielding ``(output_tag, value)``
from ``process_element``; everything else it yields is its main output::

    >>> from changeflow.common import Types
    >>> from changeflow.datastream import ProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment
    >>> small = OutputTag("small", Types.INT())
    >>> class Split(ProcessFunction):
    ...     def process_element(self, value, ctx):
    ...         yield (small, value) if value < 10 else value
    >>> env = StreamExecutionEnvironment.get_execution_environment()
    >>> main = env.from_collection([1, 20, 3]).process(Split(), output_type=Types.INT())
    >>> main.get_side_output(small).get_type()
    Types.INT()

A ``KeyedProcessFunction`` (from ``process_element`` and ``on_timer``) and a
``KeyedCoProcessFunction`` yield side output values the same way.

A side output is a stream like any other: it can be transformed, collected
and ``cache()``d (FLIP-205 caches side outputs as well). On Spark, a side
output of a stateless ``ProcessFunction`` runs the chain up to it keeping that tag's values
only (:func:`~changeflow.plan.stream_walks.side_output_ops`), as a second consumer of a stateless operator
recomputes it. A keyed operator runs once: its side outputs' records travel marked in
its output (:func:`~changeflow.kernels.keyed.records.side_mark`), and its main output and each side
output are filters of that output (:func:`~changeflow.plan.stream_walks.keyed_side_outputs`). A keyed
operator whose side outputs are read does not buffer its output under
``execution.max-flush-interval``: Flink emits side outputs at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from changeflow.common.typeinfo import PickledBytesTypeInfo, TypeInformation
from changeflow.datastream import graph
from changeflow.plan.stream_nodes import SideOutputNode

if TYPE_CHECKING:
    from changeflow.datastream.data_stream import DataStream

__all__ = ["OutputTag", "SideOutputNode", "side_output"]


class OutputTag:
    """Names a side output and the type of its records (PyFlink's ``OutputTag(tag_id, type_info)``)."""

    is_output_tag = True  # how the chain kernel tells a side output value from a main one (kernels/chain.py)

    def __init__(self, tag_id: str, type_info: TypeInformation | None = None) -> None:
        if not isinstance(tag_id, str) or not tag_id:
            raise ValueError(f"OutputTag needs a non-empty string id, got {tag_id!r}")
        self.tag_id = tag_id
        self.type_info = type_info

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, OutputTag) and other.tag_id == self.tag_id

    def __hash__(self) -> int:
        return hash(self.tag_id)

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r}, {self.type_info!r})"


def side_output(stream: "DataStream", output_tag: OutputTag) -> "DataStream":
    """``stream.get_side_output(output_tag)``: ``stream`` must be the output of ``process()`` of a
    ``(Keyed)ProcessFunction`` or a ``(Keyed)CoProcessFunction``."""
    from changeflow.datastream.data_stream import DataStream

    if not isinstance(output_tag, OutputTag):
        raise TypeError(f"get_side_output() takes an OutputTag, got {type(output_tag).__name__}")
    node = stream._node
    if isinstance(node, graph.EventWindowNode):  # side_output_late_data(tag) of an event-time window
        if node.late_tag is None or node.late_tag != output_tag:
            raise ValueError(f"get_side_output({output_tag.tag_id!r}): {node.name} has no such side output "
                             "(side_output_late_data(tag) names the window's only one)")
        late = graph.LateDataNode(f"LateData({output_tag.tag_id})", output_tag.type_info or node.input.type_info,
                                  input=node, tag=output_tag)
        return DataStream(stream._env, late)
    two_input = isinstance(node, graph.CoProcessNode) and node.kind in ("process", "broadcast")
    if not (two_input or isinstance(node, graph.KeyedProcessNode)
            or (isinstance(node, graph.Stateless) and node.op.kind == "process")):
        raise ValueError(f"get_side_output({output_tag.tag_id!r}): side outputs come from process() of a "
                         f"(Keyed)ProcessFunction, a (Keyed)CoProcessFunction or a (Keyed)BroadcastProcessFunction; "
                         f"{node.name} is not one")
    side = SideOutputNode(f"SideOutput({output_tag.tag_id})", output_tag.type_info or PickledBytesTypeInfo(),
                          input=node, tag=output_tag)
    return DataStream(stream._env, side)
