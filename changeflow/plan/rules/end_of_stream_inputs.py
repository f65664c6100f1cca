"""A check: a DataStream operator that outputs only after end of input must not read an unbounded source.

It would wait for an end of input that never comes (:mod:`.end_of_stream`).
The rule fails, naming the operator and the source; it rewrites nothing. It
runs last, so the execution plan (``get_execution_plan``, planned up to
:mod:`.output_buffer`) of such a job still prints, as Flink's does.
"""

from __future__ import annotations

from typing import Any, Callable

from changeflow.plan.boundedness import unbounded_inputs
from changeflow.plan.nodes import PlanNode
from changeflow.plan.rules import Rule
from changeflow.plan.rules.end_of_stream import is_end_of_stream
from changeflow.plan.stream_nodes import Node
from changeflow.plan.stream_walks import all_nodes, graph_nodes


def check_end_of_stream_inputs(roots: list[Node]) -> None:
    """Fails, naming the operator and the source, if an end-of-stream operator under ``roots`` has unbounded input."""
    _check(all_nodes(roots), is_end_of_stream)


def _check(nodes: list[Node], end_of_stream: Callable[[Node], bool]) -> None:
    for node in nodes:
        if end_of_stream(node):
            unbounded = unbounded_inputs(node)
            if unbounded:
                names = ", ".join(repr(s.name) for s in unbounded)
                raise ValueError(
                    f"operator {node.name!r} outputs only after end of input (is_output_only_after_end_of_stream), "
                    f"but its input comes from the unbounded source {names}, which never ends: use bounded input "
                    "or a window that does not wait for the end of input")


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: check every DataStream node the :mod:`.end_of_stream` rule marked ``end_of_stream``."""
    _check(graph_nodes(plan), lambda node: node.traits.get("end_of_stream", False))
    return plan


RULE = Rule("end_of_stream_inputs", 88, apply, ())
