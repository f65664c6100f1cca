"""Event-time temporal joins run in streaming plans only.

``FOR SYSTEM_TIME AS OF probe.rowtime`` plans a
:class:`~changeflow.plan.time_joins.TemporalJoin` (:mod:`changeflow.sql.temporal_join`);
its operator emits a probe row when the watermark passes its time, which a batch
job does not have. Flink 2.3 fails on such a query in batch mode (``unexpected
correlate variable``); this rule refuses it with an error naming it.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import walk
from changeflow.plan.rules import Rule
from changeflow.plan.time_joins import TemporalJoin
from changeflow.plan.type_inference import PlanError


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: refuse a temporal join in a batch plan; a streaming plan is unchanged."""
    if settings.streaming:
        return plan
    for node in walk(plan):
        if isinstance(node, TemporalJoin):
            raise PlanError(f"unsupported: FOR SYSTEM_TIME AS OF {node.left_time} (an event-time temporal join) "
                            f"in batch mode; run it in streaming mode")
    return plan


RULE = Rule("temporal_join", 9, apply, ())
