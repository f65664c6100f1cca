"""The session time zone (``table.local-time-zone``) applied to a Table plan.

The conversions between an instant (TIMESTAMP_LTZ) and a wall clock are written
into the plan with the zone as a literal argument by
:func:`changeflow.plan.time_zone.in_session_zone`, which also refuses by name what
is not computed in a zone yet. As a rule, the rewrite happens where every other
planning decision is made: EXPLAIN prints the conversions (``ltz_to_local(...)``),
and the runtime translates them as it translates any call, without reading the
configuration. ``settings.time_zone`` None, ``default`` or a zone that is UTC at
every instant leaves the plan unchanged.

Runs first (order 3): the window rules (from order 12) rewrite the window table
functions whose time attribute the rewrite checks, and no later rule reads a
column type the rewrite changes (it keeps every column's type). The rewrite is
idempotent, so a plan planned twice is computed in the zone once. A DataStream
job (:class:`~changeflow.plan.stream_nodes.StreamJob`) or graph (the side below a
Table query's ``datastream`` source, planned with the query's settings) is left as
it is: a Table plan converted inside it is the input of its ``TableNode``, planned on
its own side with the Table environment's settings (:mod:`changeflow.plan.stream_bridge`).

>>> from types import SimpleNamespace
>>> from changeflow.common.types import DataTypes as T
>>> from changeflow.expressions import Call, Column, Literal
>>> from changeflow.plan.nodes import Project, Source
>>> t = Source("t", (("ms", T.BIGINT()),), "elements", [])
>>> shown = Call("cast", (Call("to_timestamp_ltz", (Column("ms"), Literal(3))), Literal(T.STRING())))
>>> plan = Project(t, (("s", shown),), (("s", T.STRING()),))
>>> print(apply(plan, SimpleNamespace(time_zone="Asia/Shanghai")).exprs[0][1])
CAST(LTZ_TO_LOCAL(TO_TIMESTAMP_LTZ(ms, 3), 'Asia/Shanghai') AS STRING)
>>> apply(plan, SimpleNamespace(time_zone="UTC")) is plan
True
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode
from changeflow.plan.rules import Rule
from changeflow.plan.stream_nodes import Node, StreamJob
from changeflow.plan.time_zone import in_session_zone


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: ``plan``'s zone-dependent expressions computed in ``settings.time_zone``."""
    if isinstance(plan, (StreamJob, Node)):  # DataStream nodes compute no SQL expression
        return plan
    return in_session_zone(plan, settings.time_zone)


RULE = Rule("session_time_zone", 3, apply, ())
