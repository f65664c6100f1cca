"""Interval joins: a join whose ON clause bounds two rowtime attributes both ways.

Flink plans ``a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '5'
SECOND AND b.ts + INTERVAL '5' SECOND`` (and the ``>=``/``<`` forms) as an
*interval join* when both ``ts`` are rowtime attributes: its state keeps a row
only while the watermark says a row of the other side can still match it, and
its output is insert-only. This rule finds such a join in a streaming plan
(:func:`~changeflow.plan.time_joins.interval_bounds`) and makes it an
:class:`~changeflow.plan.time_joins.IntervalJoin`. A batch plan keeps the
regular join, which gives the same rows over bounded input.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import Join, PlanNode
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.time_joins import interval_bounds, interval_join


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every join with time bounds becomes an IntervalJoin."""
    if not settings.streaming:
        return plan

    def convert(node: PlanNode) -> PlanNode:
        if type(node) is not Join:
            return node
        bounds = interval_bounds(node)
        if bounds is None:
            return node
        from changeflow.plan.rules.changelog_mode import mode_of

        if not (mode_of(node.left).insert_only and mode_of(node.right).insert_only):
            # An updating input has no time attributes in Flink (an aggregation or a
            # regular join materializes them): Flink plans a regular join.
            return node
        return interval_join(node, bounds)

    return rewrite(plan, convert)


RULE = Rule("interval_join", 8, apply, ())  # rewrites nodes: before sink_materialize reads changelog modes
