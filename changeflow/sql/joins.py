"""Regular joins: ``[INNER] JOIN``, ``LEFT|RIGHT|FULL [OUTER] JOIN ... ON``, comma joins.

The ON condition is split into its conjuncts: each ``left_column =
right_column`` becomes an equi-key pair (the join's hash key, Flink's
``JoinUtil.createJoinInfo``); the rest stays as the join's ``condition``
over the output names. The output is the left columns then the right ones,
a clashing right name renamed as Calcite does (``id`` -> ``id0``); the
columns of an outer join's padded side become nullable. An inner join (``FROM
a, b WHERE a.id = b.id`` or ``a JOIN b ON ... WHERE ...``) takes the WHERE
conjuncts that relate its two sides into its condition, as Flink's planner
pushes them into the join (``FlinkFilterJoinRule``): their equalities become
key pairs, and time bounds there make an interval join
(:mod:`changeflow.plan.rules.interval_join`) as they would in ON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.expressions import Expression
from changeflow.plan.nodes import Join, PlanNode
from changeflow.plan.type_inference import PlanError, type_of
from changeflow.sql.errors import SqlError, located, snippet, unsupported
from changeflow.sql.from_clause import plan_relation
from changeflow.sql.lateral import plan_lateral
from changeflow.sql.rewrite import uniquify
from changeflow.sql.scalar import Scope, ScopeColumn

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

JOIN_TYPES = {"": "INNER", "INNER": "INNER", "LEFT": "LEFT", "RIGHT": "RIGHT", "FULL": "FULL"}


def conjuncts(node: exp.Expr | None) -> list[exp.Expr]:
    """``a AND (b AND c)`` -> ``[a, b, c]``."""
    if node is None:
        return []
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node] if node is not None else []


def conjunction(parts: list[exp.Expr]) -> exp.Expr | None:
    return _and_all(parts) if parts else None


def _and_all(parts: list[exp.Expr]) -> exp.Expr:
    """``parts`` (at least one) joined by AND."""
    result = parts[0]
    for p in parts[1:]:
        result = exp.And(this=result, expression=p)
    return result


def plan_from(planner: "QueryPlanner", first: exp.Expr, joins: list[exp.Join],
              where: exp.Expr | None) -> tuple[PlanNode, Scope, exp.Expr | None]:
    """Plan ``FROM first JOIN ...``; returns the plan, its scope and the unused WHERE condition.

    A comma join takes its equality conditions from the WHERE clause, which is why
    the part of WHERE no join used comes back.
    """
    plan, scope = plan_relation(planner, first)
    for join in joins:
        plan, scope, where = plan_join(planner, plan, scope, join, where)
    return plan, scope, where


def plan_join(planner: "QueryPlanner", left: PlanNode, left_scope: Scope, join: exp.Join,
              where: exp.Expr | None) -> tuple[PlanNode, Scope, exp.Expr | None]:
    """Join the plan so far with ``join``'s relation; returns the unused part of ``where``."""
    if isinstance(join.this, exp.Lateral):  # LATERAL TABLE(f(...)): a table function (sql/lateral.py)
        return plan_lateral(planner, left, left_scope, join, where)
    if isinstance(join.this, exp.Table) and join.this.args.get("version") is not None:
        from changeflow.sql.temporal_join import plan_temporal_join  # FOR SYSTEM_TIME AS OF (sql/temporal_join.py)
        return plan_temporal_join(planner, left, left_scope, join, where)
    sql = planner.sql
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    if kind in ("SEMI", "ANTI", "ASOF") or join.args.get("method"):
        raise unsupported(f"{kind or join.args.get('method')} JOIN", join, sql)
    if join.args.get("using"):
        raise unsupported("JOIN ... USING (write ON left.k = right.k)", join, sql)
    right, right_scope = plan_relation(planner, join.this)
    on = join.args.get("on")
    # The dialect parses a comma join as kind CROSS (Calcite's COMMA join type).
    comma = not side and kind == "CROSS"
    if comma and on is not None:
        # Calcite's validator: a CROSS JOIN takes no condition.
        raise SqlError(located("Cannot specify condition (NATURAL keyword, or ON or USING clause) "
                               "following CROSS JOIN", join, sql))
    if on is None and not comma:
        # Calcite's validator refuses it, rather than reading it as a cross product.
        raise SqlError(located(f"INNER, LEFT, RIGHT or FULL join requires a condition (NATURAL keyword "
                               f"or ON or USING clause): `{snippet(join)}`",
                               join, sql))
    join_type = JOIN_TYPES[side]

    names = _output_names(left.field_names + right.field_names)
    right_names = dict(zip(right.field_names, names[len(left.field_names):], strict=True))
    scope = Scope(left_scope.columns + [ScopeColumn(c.qualifier, c.name, right_names[c.plan_name])
                                        for c in right_scope.columns])
    left_cols = {c.plan_name for c in left_scope.columns}
    right_cols = {right_names[c.plan_name] for c in right_scope.columns}

    join_type = _simplified(join_type, conjuncts(where), scope, left_cols, right_cols)
    # Conditions: all of ON; for an inner join, also the WHERE conjuncts that relate both sides
    # (over an outer join, WHERE filters the padded rows, so it stays above the join).
    candidates = conjuncts(on)
    remaining_where: list[exp.Expr] = []
    for c in conjuncts(where):
        relates = join_type == "INNER" and _relates(c, scope, left_cols, right_cols)
        (candidates if relates else remaining_where).append(c)

    left_keys, right_keys, rest = [], [], []
    for c in candidates:
        pair = _equi_pair(c, scope, sql, left_cols, right_cols)
        if pair is None:
            rest.append(c)
        else:
            left_keys.append(pair[0])
            right_keys.append({v: k for k, v in right_names.items()}[pair[1]])

    left_types, right_types = left.type_map(), right.type_map()
    for lk, rk in zip(left_keys, right_keys, strict=True):
        lt, rt = left_types[lk], right_types[rk]
        comparable = (lt.is_numeric and rt.is_numeric) or (lt.is_string and rt.is_string) or lt.root == rt.root
        if not comparable:
            raise SqlError(located(f"join key {lk} of type {lt} cannot equal {rk} of type {rt}", join, sql))

    pad_left = join_type in ("RIGHT", "FULL")
    pad_right = join_type in ("LEFT", "FULL")
    left_names = names[: len(left.field_names)]  # the output names start with the left columns'
    schema = tuple(
        (n, t.with_nullable(True) if pad_left else t) for n, (_, t) in zip(left_names, left.schema, strict=True)
    ) + tuple((right_names[n], t.with_nullable(True) if pad_right else t) for n, t in right.schema)

    condition: Expression | None = None
    if rest:
        condition = planner.expression(_and_all(rest), scope, aggregates=False)
        try:
            t = type_of(condition, dict(schema))
        except PlanError as e:
            raise SqlError(located(str(e), rest[0], sql)) from None
        if t.root != "BOOLEAN":
            raise SqlError(located(f"join condition {_and_all(rest).sql()} must be BOOLEAN, but it is {t}",
                                   rest[0], sql))
    node = Join(left, right, join_type, tuple(left_keys), tuple(right_keys), condition, schema)
    return node, scope, conjunction(remaining_where)


def _output_names(names: list[str]) -> list[str]:
    return uniquify(names)


# Operators whose result is null when an operand is: a comparison built from them is never true over a
# padded (all-null) row.
_STRICT = (exp.Column, exp.Identifier, exp.Literal, exp.Interval, exp.Var, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg,
           exp.Paren)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)


def _simplified(join_type: str, where: list[exp.Expr], scope: Scope, left_cols: set[str],
                right_cols: set[str]) -> str:
    """The join type once WHERE has removed the rows an outer join pads (Calcite's outer-join simplification).

    A WHERE conjunct comparing a column of the padded side with strict operators
    only is never true for a padded row, so the padding never reaches the output:
    ``a LEFT JOIN b ... WHERE a.ts BETWEEN b.ts - INTERVAL ... AND b.ts`` is an
    inner join (and then an interval join), as Flink plans it.
    """
    def rejects_nulls_of(side: set[str]) -> bool:
        for c in where:
            while isinstance(c, exp.Paren):
                c = c.this
            if not isinstance(c, _COMPARISONS) or any(not isinstance(n, _STRICT) for n in c.iter_expressions()
                                                      for n in n.walk()):
                continue
            try:
                used = {scope.lookup(col, None) for col in c.find_all(exp.Column)}
            except SqlError:
                continue
            if used & side:
                return True
        return False

    pads_left, pads_right = join_type in ("RIGHT", "FULL"), join_type in ("LEFT", "FULL")
    pads_left = pads_left and not rejects_nulls_of(left_cols)
    pads_right = pads_right and not rejects_nulls_of(right_cols)
    return {(False, False): "INNER", (True, False): "RIGHT", (False, True): "LEFT", (True, True): "FULL"}[
        (pads_left, pads_right)]


def _relates(node: exp.Expr, scope: Scope, left_cols: set[str], right_cols: set[str]) -> bool:
    """True when ``node`` reads columns of both sides and nothing outside them (no aggregate, no subquery).

    A column the join's scope does not resolve belongs to a relation joined later
    (``FROM a, b, c WHERE b.x < c.y``): the conjunct waits for that join.
    """
    if node.find(exp.AggFunc, exp.Subquery, exp.Select, exp.Window) is not None:
        return False
    used = set()
    for column in node.find_all(exp.Column):
        try:
            used.add(scope.lookup(column, None))
        except SqlError:
            return False
    return bool(used & left_cols) and bool(used & right_cols)


def _equi_pair(node: exp.Expr, scope: Scope, sql: str | None, left_cols: set[str],
               right_cols: set[str]) -> tuple[str, str] | None:
    """(left output column, right output column) when ``node`` is ``left_col = right_col``."""
    while isinstance(node, exp.Paren):
        node = node.this
    if not isinstance(node, exp.EQ):
        return None
    a, b = node.this, node.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    x, y = scope.lookup(a, sql), scope.lookup(b, sql)
    if x in left_cols and y in right_cols:
        return x, y
    if y in left_cols and x in right_cols:
        return y, x
    return None


__all__ = ["conjunction", "conjuncts", "plan_from", "plan_join"]
