"""Event-time temporal joins: ``probe [LEFT] JOIN versioned FOR SYSTEM_TIME AS OF probe.ts ON ...``.

The ON clause is planned as a regular join's (:func:`changeflow.sql.joins.plan_join`
on the table without its ``FOR SYSTEM_TIME``), then the join becomes a
:class:`~changeflow.plan.time_joins.TemporalJoin`, with Flink's checks:

- only ``[INNER] JOIN`` and ``LEFT [OUTER] JOIN``;
- ``AS OF`` names a TIMESTAMP column of the probe side that is a rowtime
  attribute; a processing-time attribute makes it a lookup join
  (:mod:`changeflow.sql.lookup_join`: into a ``jdbc`` table; a processing-time
  temporal join into another table is refused by name);
- the versioned table declares a PRIMARY KEY and a WATERMARK (its rowtime
  attribute), and the equalities of ON cover its primary key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.plan.event_time import is_rowtime
from changeflow.plan.nodes import Join, PlanNode
from changeflow.plan.time_joins import TemporalJoin, declared_key
from changeflow.plan.type_inference import is_proctime
from changeflow.sql.errors import SqlError, located
from changeflow.sql.scalar import Scope

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

_WHAT = "FOR SYSTEM_TIME AS OF (an event-time temporal join)"


def plan_temporal_join(planner: "QueryPlanner", left: PlanNode, left_scope: Scope, join: exp.Join,
                       where: exp.Expr | None) -> tuple[PlanNode, Scope, exp.Expr | None]:
    """Join the plan so far with the versions of ``join``'s table valid at the probe row's time."""
    from changeflow.sql.joins import plan_join

    sql = planner.sql
    table = join.this
    version = table.args["version"]
    name = ".".join(p.name for p in table.parts)
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    if side not in ("", "LEFT") or kind not in ("", "INNER", "OUTER"):
        raise SqlError(located(f"unsupported SQL: {_WHAT} supports INNER and LEFT joins only, not "
                               f"{side or kind} JOIN (table {name})", join, sql))
    if join.args.get("on") is None:
        raise SqlError(located(f"{_WHAT} needs an ON condition with the primary key of {name}", join, sql))
    as_of = version.expression
    if (version.args.get("kind") or "").upper() != "AS OF" or not isinstance(as_of, exp.Column):
        raise SqlError(located(f"unsupported SQL: {_WHAT} supports only FOR SYSTEM_TIME AS OF <left table's "
                               f"time attribute column> (table {name})", version, sql))
    left_time = left_scope.lookup(as_of, sql)
    t = left.type_map()[left_time]
    if t.root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        raise SqlError(located(f"{_WHAT}: The system time period specification expects Timestamp type but is "
                               f"'{t.root}' (column {as_of.sql()})", as_of, sql))
    proctime = is_proctime(t)
    if not proctime and not is_rowtime(t):
        raise SqlError(located(f"{_WHAT}: Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' "
                               f"left table's time attribute field; {as_of.sql()} is not a time attribute",
                               as_of, sql))

    plain = table.copy()
    plain.set("version", None)
    plain_join = join.copy()
    plain_join.set("this", plain)
    node, scope, rest = plan_join(planner, left, left_scope, plain_join, where)
    assert isinstance(node, Join)
    if proctime:  # a lookup join (sql/lookup_join.py)
        from changeflow.sql.lookup_join import plan_lookup_join
        return plan_lookup_join(planner, node, scope, join, name, rest)
    right = node.right
    key = declared_key(right)
    if not key:
        raise SqlError(located(f"{_WHAT}: Temporal Table Join requires primary key in versioned table, but no "
                               f"primary key can be found (table {name})", table, sql))
    rowtimes = [n for n, ty in right.schema if is_rowtime(ty)]
    if not rowtimes:
        raise SqlError(located(f"{_WHAT}: Event-Time Temporal Table Join requires both primary key and row time "
                               f"attribute in versioned table, but no row time attribute can be found "
                               f"(table {name}: declare a WATERMARK)", table, sql))
    if not set(key) <= set(node.right_keys):
        raise SqlError(located(f"{_WHAT}: Temporal table's primary key [{', '.join(key)}] must be included in "
                               f"the equivalence condition of temporal join (table {name})", join, sql))
    # Both rowtime columns stay time attributes in the output, as in Flink.
    temporal = TemporalJoin(node.left, right, node.join_type, node.left_keys, node.right_keys, node.condition,
                            node.out_schema, left_time=left_time, right_time=rowtimes[0], primary_key=key)
    return temporal, scope, rest


__all__ = ["plan_temporal_join"]
