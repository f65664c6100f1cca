"""Window Top-N and window deduplication: a ``ROW_NUMBER()`` rank partitioned by a window.

Flink (``StreamPhysicalWindowRankRule``, ``StreamPhysicalWindowDeduplicateRule``)
plans a rank whose ``PARTITION BY`` holds the ``window_start`` and ``window_end``
of one window (of a window TVF, a window aggregation or a window join:
:func:`~changeflow.plan.window_ops.window_columns`) as a window operator that
emits each window's rows once, insert-only, when the watermark passes its end:

- a :class:`~changeflow.plan.window_ops.WindowDeduplicate` when the rank keeps
  only row 1 and is ordered by one rowtime attribute alone;
- a :class:`~changeflow.plan.window_ops.WindowRank` otherwise.

As Flink's ``RankNumberColumnRemoveRule``, a row number kept only at 1 is a
constant: the operator does not compute it and a projection adds ``1``. A rank
partitioned by only part of a window (``window_start`` alone) stays a regular
Top-N. A batch plan keeps the regular Top-N.
"""

from __future__ import annotations

from typing import Any

from changeflow.common.types import DataTypes
from changeflow.expressions import Column, Literal
from changeflow.plan.event_time import is_time_attribute
from changeflow.plan.nodes import PlanNode, Project, Rank
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.type_inference import PlanError, is_proctime
from changeflow.plan.window_ops import WindowDeduplicate, WindowRank, window_columns, window_of


def window_rank(node: Rank) -> PlanNode | None:
    """``node`` as a window Top-N or deduplication, if it is partitioned by a window (else None)."""
    found = window_of(node.partition_keys, window_columns(node.input))
    if found is None:
        return None
    window, start, end = found
    from changeflow.plan.rules.changelog_mode import mode_of

    if not mode_of(node.input).insert_only:
        raise PlanError(f"window Top-N over an updating input is not supported (PARTITION BY {start}, {end} of "
                        f"{window.kind}; Flink's WindowRank takes insert-only rows)")
    keys = tuple(k for k in node.partition_keys if k not in (start, end))
    if not window.aligned and set(keys) != set(window.partition_keys):
        raise PlanError(f"window Top-N over a SESSION window partitioned by other columns than the session's "
                        f"PARTITION BY ({', '.join(window.partition_keys) or 'none'}) is not supported")
    constant = node.rank_start == node.rank_end == 1
    if len(node.order_by) == 1 and constant:
        time = node.order_by[0][0]
        if is_proctime(node.input.type_map()[time]):
            raise PlanError(f"Processing time Window Deduplication is not supported yet (ordered by the "
                            f"PROCTIME() attribute '{time}'; order by a rowtime attribute)")
        if is_time_attribute(node.input, time):
            plan: PlanNode = WindowDeduplicate(node.input, keys, not node.order_by[0][1], time, window, start, end)
            return with_constant_rank(plan, node)
    if constant:
        schema = node.input.schema
        plan = WindowRank(node.input, keys, node.order_by, 1, 1, None, schema, window, start, end)
        return with_constant_rank(plan, node)
    return WindowRank(node.input, keys, node.order_by, node.rank_start, node.rank_end, node.rank_column,
                      node.out_schema, window, start, end)


def with_constant_rank(plan: PlanNode, rank: Rank) -> PlanNode:
    """``plan`` with the rank column ``1`` appended, if ``rank`` selects it."""
    if rank.rank_column is None:
        return plan
    exprs = tuple((n, Column(n)) for n in plan.field_names) + \
        ((rank.rank_column, Literal(1, DataTypes.BIGINT(False))),)
    return Project(plan, exprs, rank.out_schema)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every rank partitioned by a window becomes a window operator."""
    if not settings.streaming:
        return plan

    def convert(node: PlanNode) -> PlanNode:
        if type(node) is Rank:
            return window_rank(node) or node
        return node

    return rewrite(plan, convert)


RULE = Rule("window_rank", 16, apply, ())  # rewrites nodes: after window_aggregate (12) and window_join (14)
