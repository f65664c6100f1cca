"""Runtime mode: whether the plan runs as a streaming or a batch query, on every node.

``execution.runtime-mode`` (AUTOMATIC resolved by the front end from the
sources' boundedness, :mod:`changeflow.plan.boundedness`). EXPLAIN prints a
batch plan without changelog modes; the rules after this one annotate a batch
plan less (no mini-batch, two phases, buffering or state TTL).
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: ``streaming`` on every node."""
    return annotate_all(plan, lambda node: {"streaming": settings.streaming}, streams=True)


RULE = Rule("runtime_mode", 20, apply, ("streaming",))
