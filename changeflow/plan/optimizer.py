"""The planner: a logical plan in, the physical plan out, by a sequence of rules.

:func:`optimize` runs :data:`RULES` (the ``RULE`` of each module of
:mod:`changeflow.plan.rules`, by order) over a logical plan; each is a pure
function from plan to plan. The result is
the physical plan: the same tree (plus the nodes rules insert) with every
node's :class:`~changeflow.plan.physical.Traits` filled in. EXPLAIN prints it
(:mod:`changeflow.plan.explain`), the Spark runtime translates it, and a
connector checks its input by it; none of them derives an annotation again.

>>> from changeflow.common.types import DataTypes as T
>>> from changeflow.kernels.aggregate.functions import AggCall
>>> from changeflow.plan.nodes import Aggregate, Source
>>> src = Source("t", (("k", T.STRING()), ("v", T.BIGINT())), "elements", [])
>>> agg = Aggregate(src, ("k",), (AggCall("sum", "v", T.BIGINT(), "s"),), (("k", T.STRING()), ("s", T.BIGINT())))
>>> physical = optimize(agg, PlannerSettings(mini_batch=True))
>>> physical.traits.changelog_mode, physical.traits.upsert_keys, physical.traits.two_phase
(ChangelogMode(insert=True, update_before=True, update_after=True, delete=False), [('k',)], True)
>>> physical.input.traits.mini_batch_assigner, physical.input is src
((0, -1, 'ProcTime'), False)
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, replace
from typing import TypeVar

from changeflow.plan import rules
from changeflow.plan.flush_policy import FlushPolicy
from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import Traits, every_node, is_physical, rewrite, with_inputs
from changeflow.plan.rules import Rule
from changeflow.plan.rules.sink_materialize import MaterializeSettings
from changeflow.plan.stream_bridge import Boundary


@dataclass(frozen=True)
class PlannerSettings:
    """What the rules decide by: the job's mode and its ``table.*`` / ``execution.*`` options."""

    streaming: bool = True
    mini_batch: bool = False               # table.exec.mini-batch.enabled
    mini_batch_latency_ms: int = 0         # table.exec.mini-batch.allow-latency
    mini_batch_size: int = -1              # table.exec.mini-batch.size
    agg_phase_strategy: str = "AUTO"       # table.optimizer.agg-phase-strategy
    flush: FlushPolicy | None = None       # execution.max-flush-interval & co
    state_ttl_ms: int = 0                  # table.exec.state.ttl
    materialize: MaterializeSettings | None = None  # None: sinks were planned with their statement
    distinct_agg_split: bool = False       # table.optimizer.distinct-agg.split.enabled
    distinct_agg_split_buckets: int = 1024  # table.optimizer.distinct-agg.split.bucket-num
    cdc_events_duplicate: bool = False     # table.exec.source.cdc-events-duplicate
    time_zone: str | None = None           # table.local-time-zone (None, default or UTC: computed in UTC)


N = TypeVar("N", bound=PlanNode)  # a rule keeps the root's kind (a Sink stays a Sink)


def _discover() -> tuple[Rule, ...]:
    """The ``RULE`` of every module of :mod:`changeflow.plan.rules`, by order."""
    found = [importlib.import_module(f"{rules.__name__}.{m.name}").RULE for m in pkgutil.iter_modules(rules.__path__)]
    orders = [r.order for r in found]
    if len(set(orders)) != len(orders):
        raise RuntimeError(f"two planner rules share an order: {sorted((r.order, r.name) for r in found)}")
    return tuple(sorted(found, key=lambda r: r.order))


# The order matters: a rule reads what the rules before it annotated.
RULES: tuple[Rule, ...] = _discover()


def optimize(plan: N, settings: PlannerSettings, until: str | None = None) -> N:
    """The physical plan of ``plan``; with ``until`` (a name in :data:`RULES`), the plan after that rule."""
    if until is not None and until not in [r.name for r in RULES]:
        raise ValueError(f"no planner rule {until!r}; rules: {', '.join(r.name for r in RULES)}")
    result: PlanNode = plan
    for rule in RULES:
        result = _by_side(rule, result, settings)
        if rule.name == until:
            break
    return result  # type: ignore[return-value]


def _by_side(rule: Rule, plan: PlanNode, settings: PlannerSettings) -> PlanNode:
    """``rule`` over ``plan``, a program of one API or of both (:mod:`changeflow.plan.stream_bridge`).

    Each side is planned with its own settings: the rule runs first on the plan below each boundary, with
    the settings the boundary carries (deeper boundaries first, recursively), then on this side with
    ``settings``, where each boundary is sealed into a leaf, so the rule neither sees the other API's
    nodes nor annotates them again with this side's settings.
    """
    if not any(n.boundary for n in every_node(plan)):
        return rule.apply(plan, settings)
    done: dict[int, PlanNode] = {}

    def seal(node: PlanNode) -> PlanNode:
        if id(node) not in done:
            if isinstance(node, Boundary):
                below = _by_side(rule, node.below, node.side_settings or settings)
                done[id(node)] = replace(node, below=below, sealed=True)
            else:
                done[id(node)] = with_inputs(node, tuple(seal(c) for c in node.inputs))
        return done[id(node)]

    result = rule.apply(seal(plan), settings)
    return rewrite(result, lambda n: replace(n, sealed=False) if isinstance(n, Boundary) and n.sealed else n)


def planned(plan: N, settings: PlannerSettings) -> N:
    """``plan`` if it is physical already, else its physical plan."""
    return plan if is_physical(plan) else optimize(plan, settings)


__all__ = ["PlannerSettings", "RULES", "Rule", "Traits", "optimize", "planned"]
