"""A streaming DataStream job that may run as one batch job, with the same output.

So it may when it has an end-of-input operator (:mod:`.end_of_stream`), every
source is bounded, and every other operator behaves the same in batch and
streaming mode (stateless chains, unions, windows): its output then comes after
end of input anyway and no operator emits running values. The rule then writes
``streaming=False`` (and no flush policy) on the job (:class:`~changeflow.plan.stream_nodes.StreamJob`)
and every node of it, which the runtime translates in batch mode.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.boundedness import is_bounded
from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule
from changeflow.plan.stream_nodes import StreamJob
from changeflow.plan.stream_walks import all_nodes, sources


def runs_as_batch(job: StreamJob) -> bool:
    """Whether the streaming job ``job`` (its nodes annotated by :mod:`.end_of_stream`) may run as batch."""
    nodes = all_nodes(list(job.outputs))
    return (any(n.traits.get("end_of_stream", False) for n in nodes)
            and all(is_bounded(s) for r in job.outputs for s in sources(r))
            and not any(n.keyed and not n.traits.get("at_end_of_stream", False) for n in nodes))


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: a streaming job that may run as batch is annotated as a batch job."""
    if not isinstance(plan, StreamJob) or not settings.streaming or not runs_as_batch(plan):
        return plan
    return annotate_all(plan, lambda node: {"streaming": False, "flush": None}, streams=True)


RULE = Rule("runs_as_batch", 84, apply, ("streaming",))
