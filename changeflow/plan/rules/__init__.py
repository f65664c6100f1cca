"""The planner's rules: one module each, each a pure function from plan to plan.

A rule module declares ``RULE = Rule(name, order, apply, traits)``;
:mod:`changeflow.plan.optimizer` finds every module of this package and runs
their rules by ``order``, so adding a rule is adding a module (and its fixture
file ``tests/plan/fixtures/<name>.sql``). A rule either rewrites the plan
(:mod:`.sink_materialize` inserts nodes) or annotates its nodes'
:class:`~changeflow.plan.physical.Traits`, reading what the rules of lower
order annotated. An annotation without a field of its own in ``Traits`` is
kept in its ``extra`` (``annotate(node, watermark=...)``; read with
``node.traits.get("watermark")``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Rule:
    """One planner rule: ``apply(plan, settings) -> plan``, run in ``order`` (lower first)."""

    name: str
    order: int
    apply: Callable[[Any, Any], Any]
    traits: tuple[str, ...] = ()  # the annotations it sets (its fixture file prints them)


__all__ = ["Rule"]
