"""Lookup joins: ``probe [LEFT] JOIN dim FOR SYSTEM_TIME AS OF probe.proc_time ON probe.k = dim.k``.

When ``AS OF`` names the probe's processing-time attribute and the dimension table's
connector can look rows up (``jdbc``: its ``lookup_function``), the join is Flink's lookup
join: each probe row, when processed, is joined with the dimension rows whose key
columns equal its values. It keeps no state and passes the probe's changelog through, so
it is planned as a correlate (:mod:`changeflow.plan.correlate`) whose table function
queries the dimension table (:mod:`changeflow.connectors.jdbc_lookup`). The ON clause's
equalities between a probe expression's column and a dimension column are the lookup
keys (at least one, as Flink requires); any other condition filters the joined rows of an
inner join. A LEFT join takes equalities only (a further condition would have to pad the
probe row with NULLs, which the correlate cannot; refused by name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.common.types import DataTypes
from changeflow.expressions import Column, UserCall
from changeflow.functions import UserFunction
from changeflow.plan import builder
from changeflow.plan.correlate import correlate
from changeflow.plan.nodes import Join, PlanNode, Source
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.scalar import Scope

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

_WHAT = "FOR SYSTEM_TIME AS OF a processing-time attribute (a lookup join)"


def lookup_source(node: PlanNode):
    """The connector of ``node`` if it is a table whose connector can look rows up, else None."""
    if isinstance(node, Source) and node.kind == "connector" and hasattr(node.payload, "lookup_function"):
        return node.payload
    return None


def plan_lookup_join(planner: "QueryPlanner", joined: Join, scope: Scope, join: exp.Join, name: str,
                     rest: exp.Expr | None) -> tuple[PlanNode, Scope, exp.Expr | None]:
    """The regular join ``joined`` (planned from the ON clause) as a lookup join into its right table."""
    sql = planner.sql
    connector = lookup_source(joined.right)
    if connector is None:
        raise unsupported(f"{_WHAT} into table {name}, whose connector cannot look rows up (a processing-time "
                          f"temporal join); the 'jdbc' connector can", join, sql)
    if not joined.right_keys:
        raise SqlError(located(f"{_WHAT}: Temporal table join requires an equality condition on fields of table "
                               f"[{name}]", join, sql))
    if joined.join_type == "LEFT" and joined.condition is not None:
        raise unsupported(f"{_WHAT}: a LEFT lookup join with a condition other than equalities between probe "
                          f"columns and columns of {name}", join, sql)
    function = connector.lookup_function(tuple(joined.right_keys))
    fields = joined.right.schema
    user_function = UserFunction(f"lookup_{name}", "table", function,
                                 DataTypes.ROW([DataTypes.FIELD(n, t) for n, t in fields]))
    call = UserCall(user_function, tuple(Column(k) for k in joined.left_keys))
    names = [n for n, _ in joined.out_schema][len(joined.left.field_names):]
    node: PlanNode = planner.guard(lambda: correlate(joined.left, call, joined.join_type, names), join)
    if joined.condition is not None:
        condition = joined.condition
        node = planner.guard(lambda: builder.filter_(node, condition), join)
    return node, scope, rest


__all__ = ["lookup_source", "plan_lookup_join"]
