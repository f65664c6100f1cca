"""``LATERAL TABLE(f(...))`` in a FROM clause: a join with a Python table function.

Flink SQL's forms, each planned as a :class:`~changeflow.plan.correlate.Correlate`:

* ``FROM t, LATERAL TABLE(f(a))`` and ``FROM t CROSS JOIN LATERAL TABLE(f(a)) AS T(x, y)``:
  each row of ``t`` joined with the rows ``f`` emits for it;
* ``FROM t [INNER] JOIN LATERAL TABLE(f(a)) AS T(x) ON cond``: the same, filtered by ``cond``;
* ``FROM t LEFT JOIN LATERAL TABLE(f(a)) AS T(x) ON TRUE``: a row ``f`` emits nothing for is
  kept with NULLs. Flink accepts only ``ON TRUE`` there, and so does changeflow.

Without column aliases the function's columns have its result type's field names
(``f0``, ``f1``... for a list of result types). The function is a table function
registered by name (``create_temporary_function``); its arguments are expressions over
the columns to its left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.expressions import UserCall
from changeflow.plan import builder
from changeflow.plan.correlate import correlate, result_fields
from changeflow.plan.nodes import PlanNode
from changeflow.plan.type_inference import PlanError
from changeflow.sql import user_functions
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.rewrite import uniquify
from changeflow.sql.scalar import Scope, ScopeColumn

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner


def plan_lateral(planner: "QueryPlanner", left: PlanNode, left_scope: Scope, join: exp.Join,
                 where: exp.Expr | None) -> tuple[PlanNode, Scope, exp.Expr | None]:
    """Join the plan so far with ``join``'s ``LATERAL TABLE(...)``; ``where`` comes back unused."""
    sql = planner.sql
    lateral = join.this
    assert isinstance(lateral, exp.Lateral)
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    if side in ("RIGHT", "FULL") or kind in ("SEMI", "ANTI", "ASOF") or join.args.get("method"):
        raise unsupported(f"{side or kind or join.args.get('method')} JOIN LATERAL (Flink joins a table function "
                          f"with CROSS, INNER or LEFT joins)", join, sql)
    if lateral.args.get("view") or lateral.args.get("ordinality"):
        raise unsupported("LATERAL VIEW / WITH ORDINALITY", lateral, sql)
    call_node = _table_call(lateral, sql)
    name = call_node.name if isinstance(call_node, exp.Anonymous) else call_node.sql_name().lower()
    function = user_functions.lookup(name)
    if function is None:
        raise SqlError(located(f"No match found for function signature {name}(); register the table function "
                               f"with create_temporary_function first", call_node, sql))
    if function.kind != "table":
        kind_text = function.kind.replace("_", " ")
        raise SqlError(located(f"{name} is {'an' if kind_text[0] == 'a' else 'a'} {kind_text} function; "
                               f"LATERAL TABLE(...) takes a table function", call_node, sql))
    args = tuple(planner.expression(a, left_scope, aggregates=False) for a in _arguments(call_node))
    call = UserCall(function, args)

    on = join.args.get("on")
    comma_or_cross = kind == "CROSS"
    if comma_or_cross and on is not None:
        raise SqlError(located("Cannot specify condition (NATURAL keyword, or ON or USING clause) "
                               "following CROSS JOIN", join, sql))
    if not comma_or_cross and on is None:
        raise SqlError(located("INNER, LEFT, RIGHT or FULL join requires a condition (NATURAL keyword or ON or "
                               "USING clause)", join, sql))
    join_type = "LEFT" if side == "LEFT" else "INNER"
    on_true = on is None or (isinstance(on, exp.Boolean) and on.this is True)
    if join_type == "LEFT" and not on_true:
        raise SqlError(located("a LEFT JOIN with a table function takes only ON TRUE (as Flink)", on, sql))

    alias = lateral.args.get("alias")
    qualifier = alias.name if alias is not None and alias.name else None
    columns = [c.name for c in alias.columns] if alias is not None and alias.columns else None
    try:
        fields = result_fields(call)
    except PlanError as e:
        raise SqlError(located(str(e), join, sql)) from None
    sql_names = columns if columns else [n for n, _ in fields]   # what the query calls the function's columns
    if len(sql_names) != len(fields):
        raise SqlError(located(f"{name} emits {len(fields)} columns ({', '.join(n for n, _ in fields)}) but the "
                               f"alias names {len(sql_names)}: {', '.join(sql_names)}", alias, sql))
    # A function column named as a column to its left is renamed, as Calcite's ``id0``.
    width = len(left.field_names)
    names = uniquify(left.field_names + sql_names)[width:]
    node: PlanNode = planner.guard(lambda: correlate(left, call, join_type, names), join)
    scope = Scope(left_scope.columns + [ScopeColumn(qualifier, n, plan_name)
                                        for n, plan_name in zip(sql_names, names, strict=True)])
    if on is not None and not on_true:
        condition = planner.expression(on, scope, aggregates=False)
        node = planner.guard(lambda: builder.filter_(node, condition), on)
    return node, scope, where


def _table_call(lateral: exp.Lateral, sql: str | None) -> exp.Func:
    """The function call inside ``LATERAL TABLE(...)``."""
    wrapper = lateral.this
    if not (isinstance(wrapper, exp.Anonymous) and wrapper.name.upper() == "TABLE" and len(wrapper.expressions) == 1):
        raise unsupported("LATERAL without TABLE(function(...)) (a lateral subquery)", lateral, sql)
    call = wrapper.expressions[0]
    if not isinstance(call, exp.Func):
        raise unsupported("LATERAL TABLE of something other than a function call", call, sql)
    return call


def _arguments(call: exp.Expr) -> list[exp.Expr]:
    """A call's arguments in order (a name the dialect knows as a built-in parses to its own node)."""
    if isinstance(call, exp.Anonymous):
        return list(call.expressions)
    out: list[exp.Expr] = []
    for key in type(call).arg_types:
        value = call.args.get(key)
        if isinstance(value, list):
            out.extend(value)
        elif isinstance(value, exp.Expr):
            out.append(value)
    return out


__all__ = ["plan_lateral"]
