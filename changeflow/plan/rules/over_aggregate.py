"""OVER aggregation: what a streaming query can order by, and what it can consume.

Flink's ``StreamExecOverAggregate`` orders a streaming OVER window by one time
attribute: a rowtime attribute (rows wait for the watermark) or a ``PROCTIME()``
attribute (rows come out as they arrive); any other order is refused, with
Flink's messages. Its input must be insert-only ("doesn't support consuming
update and delete changes"). A batch plan sorts bounded input, so there the order
column only has to be a timestamp (changeflow's kernel orders by its instant).
This rule only checks: it rewrites nothing.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.event_time import is_rowtime
from changeflow.plan.nodes import PlanNode
from changeflow.plan.over import OverAggregate
from changeflow.plan.rules import Rule
from changeflow.plan.type_inference import PlanError, is_proctime


def check(node: OverAggregate, streaming: bool) -> None:
    """Raise a PlanError if ``node`` cannot run in this mode."""
    t = node.input.type_map()[node.order_by]
    if streaming:
        if not (is_rowtime(t) or is_proctime(t)):
            message = ("OVER windows' ordering in stream mode must be defined on a time attribute."
                       if node.frame.preceding is None else
                       "Non-time attribute sort is not supported for bounded OVER window.")
            raise PlanError(f"{message} (ORDER BY {node.order_by}, a {t}: order by a column with a WATERMARK "
                            "or a PROCTIME() column)")
        from changeflow.plan.rules.changelog_mode import mode_of

        if not mode_of(node.input).insert_only:
            raise PlanError("OverAggregate doesn't support consuming update and delete changes "
                            f"(OVER ... ORDER BY {node.order_by} over an updating input)")
    elif t.root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        raise PlanError(f"OVER window ordered by {node.order_by}, a {t}: changeflow orders OVER windows by a "
                        "TIMESTAMP column only")


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: check every OVER aggregation of the plan."""
    def visit(node: PlanNode) -> None:
        if isinstance(node, OverAggregate):
            check(node, settings.streaming)
            if settings.streaming and getattr(settings, "state_ttl_ms", 0) > 0:
                # Flink's over functions clean a key up when idle, but keep rows still waiting for the
                # watermark; changeflow's key TTL would drop those: refused rather than done differently.
                raise PlanError("table.exec.state.ttl with an OVER aggregation is not supported by changeflow "
                                f"(OVER ... ORDER BY {node.order_by}): unset the option for this query")
        for child in node.inputs:
            visit(child)

    visit(plan)
    return plan


RULE = Rule("over_aggregate", 13, apply, ())  # a check: after window_aggregate (12), before any annotation
