"""ORDER BY / LIMIT / OFFSET of SQL (:class:`~changeflow.plan.nodes.Sort`), by runtime mode.

Batch mode keeps the Sort: the runtime sorts (and cuts ``OFFSET``/``FETCH``).
Streaming mode, as Flink's planner: a sort with a limit is a Top-N over the
whole input (Flink's ``SortLimit``/``Limit``, run by the same rank functions as
``ROW_NUMBER() <= n``), so it becomes a :class:`~changeflow.plan.nodes.Rank`
with no partition key and no row-number column (a bare ``LIMIT`` keeps the first
rows to arrive); a sort without a limit is refused with Flink's message
(``Sort on a non-time-attribute field is not supported.``): changeflow has no
time-ordered streaming sort (Flink's ``TemporalSort`` on a rowtime) yet.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode, Rank, Sort
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.type_inference import PlanError


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: every Sort of a streaming plan as a Top-N Rank (or refused)."""
    if not settings.streaming:
        return plan

    def visit(node: PlanNode) -> PlanNode:
        if not isinstance(node, Sort):
            return node
        if node.fetch is None:
            raise PlanError("Sort on a non-time-attribute field is not supported. (ORDER BY "
                            f"{', '.join(c for c, _, _ in node.order_by)} without LIMIT in a streaming query; "
                            "add LIMIT / FETCH FIRST n ROWS ONLY for a Top-N, or run in batch mode)")
        return Rank(node.input, (), node.order_by, node.offset + 1, node.offset + node.fetch, None,
                    node.input.schema)

    return rewrite(plan, visit)


RULE = Rule("sort_limit", 15, apply, ())  # rewrites nodes: runs before any annotation

__all__ = ["apply"]
