"""Deduplication on row time: a Top-1 ordered by one rowtime attribute becomes a Deduplicate.

Flink (``RankUtil.canConvertToDeduplicate``, ``StreamPhysicalDeduplicateRule``)
runs ``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY rowtime ASC|DESC) = 1``
as a Deduplicate ordered by ROWTIME (a selected row number is then the constant
1, its ``RankNumberColumnRemoveRule``), whose
functions break ties and time their output differently from a Top-1
(:mod:`changeflow.kernels.rank.rowtime_deduplicate`). Keep first without
mini-batch emits insert-only rows on the watermark (Flink 2.1+,
``RankUtil.outputInsertOnlyInDeduplicate``); keep last, and keep first with
mini-batch, emit updates at once.

Only in streaming plans over insert-only input: a batch plan keeps the Top-1
(Flink's batch Rank); Flink's deduplication functions reject an updating input,
where changeflow keeps the Top-1 (which takes retractions). The rank of a window
(``window_start``/``window_end`` in its partition) is a window operator already
(:mod:`.window_rank`, order 16).
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.event_time import is_time_attribute
from changeflow.plan.nodes import Deduplicate, PlanNode, Rank
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.rules.window_rank import with_constant_rank
from changeflow.plan.type_inference import is_proctime


def rowtime_deduplicate(node: Rank, mini_batch: bool) -> PlanNode | None:
    """``node`` as a Deduplicate on row time, if it is one (else None)."""
    from changeflow.plan.rules.changelog_mode import mode_of

    if (node.rank_start, node.rank_end) != (1, 1) or len(node.order_by) != 1:
        return None
    time, ascending, _ = node.order_by[0]
    if is_proctime(node.input.type_map()[time]) or not is_time_attribute(node.input, time):
        return None
    if not mode_of(node.input).insert_only:
        return None
    dedup = Deduplicate(node.input, tuple(node.partition_keys), keep_last=not ascending, order=time,
                        emit_on_watermark=ascending and not mini_batch)
    return with_constant_rank(dedup, node)  # a selected row number is the constant 1 (RankNumberColumnRemoveRule)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every Top-1 on one rowtime attribute becomes a Deduplicate."""
    if not settings.streaming:
        return plan

    def convert(node: PlanNode) -> PlanNode:
        if type(node) is Rank:
            return rowtime_deduplicate(node, settings.mini_batch) or node
        return node

    return rewrite(plan, convert)


RULE = Rule("rowtime_deduplicate", 17, apply, ())  # rewrites nodes: after window_rank (16), before any annotation
