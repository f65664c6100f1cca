"""Job-graph nodes of windowed operators and of operators that output only after end of input (FLIP-331).

:class:`WindowNode` is ``KeyedStream.window(...)`` / ``DataStream.window_all(...)``
followed by ``reduce``/``aggregate``/``process``/``apply``; :class:`CoGroupNode`
is a windowed ``co_group``/``join`` of two streams. Both run over
``GlobalWindows``: with the end-of-stream trigger their attributes say
``is_output_only_after_end_of_stream``; with the never-firing trigger they
emit nothing.

:func:`is_end_of_stream` tells the runtime which nodes run with batch
algorithms (these, and keyed operators whose function declares
``is_output_only_after_end_of_stream()``); :func:`unbounded_inputs` finds the
unbounded sources that would make such a node wait forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from changeflow.datastream import graph
from changeflow.datastream.operator_attributes import OperatorAttributes, OperatorAttributesBuilder
from changeflow.kernels.window.evaluate import WindowSpec


def window_all_key(value: Any) -> None:
    """The key of ``window_all``: every element in one group (Flink runs it at parallelism 1)."""
    return None


@dataclass(eq=False)
class WindowNode(graph.KeyedNode):
    """A window over ``input`` grouped by ``key_selector`` computing ``spec`` (:class:`WindowSpec`)."""

    spec: WindowSpec = None
    trigger: Any = None  # changeflow.datastream.window.Trigger

    @property
    def fires(self) -> bool:
        return self.trigger.fires_at_end_of_stream

    def attributes(self) -> OperatorAttributes:
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(self.fires).build()


@dataclass(eq=False)
class CoGroupNode(graph.Node):
    """``first.co_group(second)`` / ``first.join(second)``, then
    ``.where(first_key).equal_to(second_key).window(...).apply(function)``.

    ``kind``: ``co_group``, ``join`` or ``flat_join`` (:class:`~changeflow.kernels.window.CoGroupKernel`).
    """

    first: graph.Node = None
    second: graph.Node = None
    first_key: Any = None
    second_key: Any = None
    function: Any = None
    kind: str = "co_group"
    trigger: Any = None
    output_type: Any = None

    @property
    def inputs(self) -> list[graph.Node]:
        return [self.first, self.second]

    @property
    def keyed(self) -> bool:
        return True

    @property
    def fires(self) -> bool:
        return self.trigger.fires_at_end_of_stream

    def attributes(self) -> OperatorAttributes:
        return OperatorAttributesBuilder().set_output_only_after_end_of_stream(self.fires).build()


def is_end_of_stream(node: graph.Node) -> bool:
    """Whether ``node`` outputs only after end of input, so it runs with batch algorithms."""
    return node.attributes().is_output_only_after_end_of_stream()


def never_fires(node: graph.Node) -> bool:
    """Whether ``node`` is a window whose trigger never fires (``GlobalWindows.create()``)."""
    return isinstance(node, (WindowNode, CoGroupNode)) and not node.fires


def is_bounded(source: graph.SourceNode) -> bool:
    """Whether a source ends: collections and text files do, a streaming Spark DataFrame does not."""
    return not (source.kind == "dataframe" and source.payload.isStreaming)


def unbounded_inputs(node: graph.Node) -> list[graph.SourceNode]:
    """The unbounded sources upstream of ``node``."""
    return [s for s in graph.sources(node) if not is_bounded(s)]


def check_end_of_stream_inputs(roots: list[graph.Node]) -> None:
    """Fails, naming the operator and the source, if an end-of-stream operator under ``roots`` has unbounded input.

    Such an operator would wait for an end of input that never comes.
    """
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        stack.extend(node.inputs)
        if is_end_of_stream(node):
            unbounded = unbounded_inputs(node)
            if unbounded:
                names = ", ".join(repr(s.name) for s in unbounded)
                raise ValueError(
                    f"operator {node.name!r} outputs only after end of input (is_output_only_after_end_of_stream), "
                    f"but its input comes from the unbounded source {names}, which never ends: use bounded input "
                    "or a window that does not wait for the end of input")


def describe_execution(node: graph.Node) -> str | None:
    """How ``node`` runs, for the execution plan; None for an ordinary operator."""
    if never_fires(node):
        return "never fires (GlobalWindows.create()): consumes its input, emits nothing"
    if not is_end_of_stream(node):
        return None
    if isinstance(node, CoGroupNode) or (isinstance(node, WindowNode) and not node.spec.combinable):
        how = "shuffle by key, sort by key and input order, evaluate each key group once"
    elif isinstance(node, graph.KeyedProcessNode):
        how = "shuffle by key, sort by key and input order, each key's input then its timers"
    else:
        how = "combine per partition, shuffle by key, sort, merge each key's partials once"
    return f"batch algorithm after end of input ({how}); blocking input edge"
