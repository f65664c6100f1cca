"""Window join: two windowed inputs joined on the same window's start and end.

Flink (``StreamPhysicalWindowJoinRule``, ``WindowJoinUtil``) plans a join whose ON
clause equates the ``window_start`` and the ``window_end`` of its two inputs, each
a window TVF, window aggregation or other window operator
(:func:`~changeflow.plan.window_ops.window_columns`) of the same window, as a
window join: each side's rows wait in state until the watermark passes their
window's end; then the window's rows are joined, emitted insert-only, and its
state dropped. Rows of a window that has fired are late and dropped. A join on
windows of different kinds or sizes, or on only one of the two columns, stays a
regular join (as in Flink). A batch plan keeps the regular join.

A side may itself be a window aggregation over windowed input (Nexmark q5 joins
its per-key window counts with their per-window maximum, a window aggregation
over those counts): its rows carry their window like a TVF's. The
``window_aggregate`` rule converts joins in its own bottom-up pass, so a join
over window aggregations and an aggregation over a window join both plan.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import Join, PlanNode
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.window_ops import WindowJoin, window_columns


def window_join(node: Join) -> WindowJoin | None:
    """``node`` as a window join, if its equi keys pair both inputs' start and end of one window (else None)."""
    left, right = window_columns(node.left), window_columns(node.right)
    pairs: dict[str, tuple[str, str]] = {}
    windows = set()
    for lk, rk in zip(node.left_keys, node.right_keys, strict=True):
        if lk in left and rk in right and left[lk][0] == right[rk][0] and left[lk][0] != "window_time":
            if left[lk][1] != right[rk][1]:
                return None   # different windows: Flink plans a regular join
            pairs[left[lk][0]] = (lk, rk)
            windows.add(left[lk][1])
    if set(pairs) != {"window_start", "window_end"} or len(windows) != 1:
        return None
    from changeflow.plan.rules.changelog_mode import mode_of

    if not (mode_of(node.left).insert_only and mode_of(node.right).insert_only):
        return None
    window_keys = {pairs["window_start"], pairs["window_end"]}
    keys = [(lk, rk) for lk, rk in zip(node.left_keys, node.right_keys, strict=True) if (lk, rk) not in window_keys]
    (start_l, start_r), (end_l, end_r) = pairs["window_start"], pairs["window_end"]
    return WindowJoin(node.left, node.right, node.join_type, tuple(k for k, _ in keys), tuple(k for _, k in keys),
                      node.condition, node.out_schema, node.left_ttl_ms, node.right_ttl_ms, traits=node.traits,
                      window=windows.pop(), left_window=(start_l, end_l), right_window=(start_r, end_r))


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every join of two inputs' same window becomes a WindowJoin."""
    if not settings.streaming:
        return plan

    def convert(node: PlanNode) -> PlanNode:
        if type(node) is Join:
            return window_join(node) or node
        return node

    return rewrite(plan, convert)


RULE = Rule("window_join", 14, apply, ())  # rewrites nodes: after window_aggregate (12), before window_rank (16)
