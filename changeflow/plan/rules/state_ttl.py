"""The state TTL of each stateful operator: ``table.exec.state.ttl``, or a ``STATE_TTL`` hint.

Flink bounds the state of group aggregations, regular joins, deduplications and
Top-Ns (and the sink upsert materializer) by ``table.exec.state.ttl``; since
Flink 1.19 the ``STATE_TTL`` query hint overrides it per operator: per input side
of a regular join and for a group aggregation (the only operators the hint
reaches). The SQL front end records a hint's TTLs on the plan nodes
(:class:`~changeflow.plan.nodes.Aggregate` ``state_ttl_ms``,
:class:`~changeflow.plan.nodes.Join` ``left_ttl_ms`` / ``right_ttl_ms``; None where
the hint says nothing); this rule resolves them against the global TTL and
annotates each stateful operator of a streaming plan (``state_ttl_ms``; a
join's ``side_ttl_ms``), for the runtime and for EXPLAIN alike. 0 means no TTL
(state is kept forever). The sink upsert materializer carries its TTL on its
node (:mod:`.sink_materialize`). Batch queries keep no state between runs.

>>> from changeflow.plan.nodes import Aggregate
>>> operator_ttl_ms(Aggregate(None, ("k",), (), ()), 20_000)
20000
>>> operator_ttl_ms(Aggregate(None, ("k",), (), (), state_ttl_ms=0), 20_000)
0
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import Aggregate, ChangelogNormalize, Deduplicate, Join, PlanNode, Rank
from changeflow.plan.nodes import TableAggregate
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: the state TTL of every stateful operator of a streaming plan."""
    if not settings.streaming:
        return plan

    def ttl(node: PlanNode) -> dict:
        if isinstance(node, Join):
            return {"side_ttl_ms": join_ttl_ms(node, settings.state_ttl_ms)}
        if isinstance(node, (Aggregate, Deduplicate, Rank, TableAggregate, ChangelogNormalize)):
            return {"state_ttl_ms": operator_ttl_ms(node, settings.state_ttl_ms)}
        return {}

    return annotate_all(plan, ttl)


def operator_ttl_ms(node: PlanNode, default_ms: int) -> int:
    """The state TTL (ms) of a group aggregation, deduplication or Top-N node; 0 for none."""
    if isinstance(node, Aggregate):
        return default_ms if node.state_ttl_ms is None else node.state_ttl_ms
    if isinstance(node, (Deduplicate, Rank, TableAggregate, ChangelogNormalize)):
        return default_ms  # the STATE_TTL hint does not reach them (as in Flink)
    raise TypeError(f"{type(node).__name__} has no single state TTL")


def join_ttl_ms(node: Join, default_ms: int) -> tuple[int, int]:
    """The state TTL (ms) of each side of a regular join, ``(left, right)``; 0 for none."""
    return (default_ms if node.left_ttl_ms is None else node.left_ttl_ms,
            default_ms if node.right_ttl_ms is None else node.right_ttl_ms)


RULE = Rule("state_ttl", 80, apply, ("state_ttl_ms", "side_ttl_ms"))
