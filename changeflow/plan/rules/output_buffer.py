"""Which DataStream operators buffer their output under ``execution.max-flush-interval`` (FLIP-365).

A keyed operator whose output is idempotent (a later output for a key
supersedes the earlier ones: every keyed reduce, a function declaring
``is_output_idempotent()``) keeps its latest output per key and flushes it by
the job's flush policy, as the Table API's group aggregation does
(:mod:`.buffering`); one that outputs only after end of input runs in batch
(:mod:`.end_of_stream`): nothing to buffer. The rule writes ``buffers`` and
``buffer_reason`` (why, for the execution plan) on such a node of a streaming
job; the runtime buffers exactly those (:mod:`changeflow.runtime.spark.stream_graph`).

An operator whose side outputs are read does not buffer: its side outputs are
not idempotent per key, and Flink emits them at once; so its main output is not
buffered either (the two are one output until the runtime splits them).
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule
from changeflow.plan.stream_nodes import Node
from changeflow.plan.stream_walks import graph_nodes, keyed_side_outputs


def buffer_reason(node: Node, side_outputs: bool = False) -> str | None:
    """Why ``node`` buffers under a flush interval (FLIP-365's conditions), or None when it does not;
    ``side_outputs``: some of the operator's side outputs are read (it does not buffer)."""
    if side_outputs:
        return None
    attributes = node.attributes()
    # An operator that outputs only after end of input runs in batch (FLIP-331): nothing to buffer.
    if not node.keyed or not attributes.is_output_idempotent() or attributes.is_output_only_after_end_of_stream():
        return None
    return "output idempotent, keyed"


def buffering(node: Node, policy: Any) -> Any:
    """The flush policy ``node`` runs with: ``policy`` (a :class:`~changeflow.plan.flush_policy.FlushPolicy`)
    if the operator buffers (:func:`buffer_reason`), else None."""
    return policy if policy is not None and buffer_reason(node) is not None else None


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: ``buffers`` and ``buffer_reason`` on the buffering DataStream nodes of a streaming job."""
    with_side_outputs = keyed_side_outputs(graph_nodes(plan))

    def annotations(node: PlanNode) -> dict[str, Any]:
        if not isinstance(node, Node) or not node.traits.streaming or settings.flush is None:
            return {}
        reason = buffer_reason(node, node.id in with_side_outputs)
        return {} if reason is None else {"buffers": True, "buffer_reason": reason}

    return annotate_all(plan, annotations, streams=True)


RULE = Rule("output_buffer", 86, apply, ("buffers", "buffer_reason"))
