"""Mini-batch assignment: ``table.exec.mini-batch.enabled`` in a streaming query.

Flink's planner (MiniBatchIntervalInferRule) puts a ``MiniBatchAssigner`` right
above each source and runs every stateful operator in its mini-batch form
(MiniBatchGroupAggregate, a join folding its bundles). changeflow's bundle is a
micro-batch (at most ``table.exec.mini-batch.size`` rows per source); the
assigner's interval is the configured ``allow-latency``, printed as Flink does.

The rule annotates every node with ``mini_batch`` and each source with its
assigner's ``(interval ms, size)``. Batch queries have no mini-batch.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode, Source
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: ``mini_batch`` on every node, ``mini_batch_assigner`` on sources, when mini-batch is on."""
    if not (settings.streaming and settings.mini_batch):
        return plan
    assigner = (settings.mini_batch_latency_ms, settings.mini_batch_size)
    return annotate_all(plan, lambda node: {"mini_batch": True} if not isinstance(node, Source) else
                        {"mini_batch": True, "mini_batch_assigner": assigner})



RULE = Rule("mini_batch", 50, apply, ("mini_batch", "mini_batch_assigner"))

__all__ = ["apply"]
