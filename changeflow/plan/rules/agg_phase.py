"""One-phase or two-phase aggregation: ``table.optimizer.agg-phase-strategy``.

Flink's streaming planner (TwoStageOptimizedAggregateRule) splits a group
aggregation into LocalGroupAggregate + GlobalGroupAggregate when mini-batch is
enabled, the strategy is not ONE_PHASE and every aggregate function can merge
partial accumulators; AUTO and TWO_PHASE both choose it then. changeflow
follows the same rule, with two restrictions of its own: the input must be
insert-only (the local phase keeps no retraction counts) and each call must be
mergeable by the kernel (``kernels.aggregate.local.mergeable``: no DISTINCT,
no float sums, whose result depends on the order of additions).

The rule (:func:`apply`) annotates every group aggregation of a streaming
plan with ``folds_bundles`` and ``two_phase``; EXPLAIN and the streaming
translator read them, so the plan printed is the plan run.
"""

from __future__ import annotations

from typing import Any

from changeflow.kernels.aggregate.local import mergeable
from changeflow.plan.nodes import Aggregate, PlanNode
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule, changelog_mode
from changeflow.plan.rules.changelog_mode import ChangelogMode
from changeflow.plan.user_aggregates import check_plan

STRATEGIES = ("AUTO", "ONE_PHASE", "TWO_PHASE")


def folds_bundles(*, mini_batch: bool, buffered: bool) -> bool:
    """Whether group aggregations fold each micro-batch per key (and so may run in two phases).

    Mini-batch asks for it. A flush interval (``buffered``) allows it: a
    buffering aggregation emits only each key's latest output, so the
    intermediate values that folding skips would never leave the buffer, and
    folding spares the kernel one output change pair per input row.
    """
    return mini_batch or buffered


def is_two_phase(node: Aggregate, input_mode: ChangelogMode, *, mini_batch: bool, strategy: str) -> bool:
    """Whether ``node`` runs as a local and a global phase.

    >>> from changeflow.common.types import DataTypes
    >>> from changeflow.kernels.aggregate import AggCall
    >>> from changeflow.plan.rules.changelog_mode import INSERT_ONLY, UPDATES
    >>> node = Aggregate(None, ("k",), (AggCall("count_star", None, None, "n"),), ())
    >>> is_two_phase(node, INSERT_ONLY, mini_batch=True, strategy="AUTO")
    True
    >>> is_two_phase(node, INSERT_ONLY, mini_batch=False, strategy="TWO_PHASE")  # as Flink: needs mini-batch
    False
    >>> is_two_phase(node, UPDATES, mini_batch=True, strategy="TWO_PHASE")
    False
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown agg-phase strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    if strategy == "ONE_PHASE" or not mini_batch or not input_mode.insert_only:
        return False
    return all(mergeable(call) for call in node.calls)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: ``folds_bundles`` and ``two_phase`` on the group aggregations of a streaming plan."""
    if not settings.streaming:
        return plan
    check_plan(plan, streaming=True)  # Python aggregates Flink refuses in streaming (retract, pandas)
    folds = folds_bundles(mini_batch=settings.mini_batch, buffered=settings.flush is not None)
    return annotate_all(plan, lambda node: {} if not isinstance(node, Aggregate) else {
        "folds_bundles": folds,
        "two_phase": is_two_phase(node, node.input.traits.changelog_mode, mini_batch=folds,
                                  strategy=settings.agg_phase_strategy)})


def two_phase_aggregates(root: PlanNode, *, mini_batch: bool, strategy: str,
                         modes: dict[int, ChangelogMode] | None = None) -> set[int]:
    """``id()`` of every Aggregate of a logical plan that runs in two phases (streaming mode; for tests)."""
    modes = changelog_mode.infer(root) if modes is None else modes
    chosen: set[int] = set()

    def visit(node: PlanNode) -> None:
        if isinstance(node, Aggregate) and is_two_phase(node, modes[id(node.input)], mini_batch=mini_batch,
                                                        strategy=strategy):
            chosen.add(id(node))
        for child in node.inputs:
            visit(child)

    visit(root)
    return chosen


RULE = Rule("agg_phase", 60, apply, ("folds_bundles", "two_phase"))  # reads changelog_mode
