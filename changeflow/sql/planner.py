"""Plans a Flink SQL query into the engine's logical plan.

There is one planner: SQL is translated into the same nodes the Table API
builds, through the same builder (``builder.project``, ``builder.filter_``,
``builder.aggregate``), so typing, changelog modes, EXPLAIN and both runtimes
treat a SQL query and its Table API twin alike.

A SELECT is planned in SQL's logical order: FROM (tables, aliased subqueries,
joins: :mod:`changeflow.sql.joins`), WHERE, GROUP BY / aggregates / HAVING,
the select list, DISTINCT. A FROM subquery that numbers rows with
``ROW_NUMBER() OVER (...)`` and an outer WHERE that bounds the number becomes
Deduplicate or Rank (:mod:`changeflow.sql.ranking`), as Flink's
``StreamLogicalRank``/``Deduplicate`` rules do. Column names follow Flink's:
an alias, the column's name, or ``EXPR$i``; a clash gets a numeric suffix
(``id0``) as Calcite's ``SqlValidatorUtil.uniquify``.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.plan.nodes import Source
>>> t = Source("t", (("k", DataTypes.STRING()), ("v", DataTypes.BIGINT())), "elements", [])
>>> plan = plan_query("SELECT k, SUM(v) AS s, COUNT(*) FROM t GROUP BY k", {"t": t}.__getitem__)
>>> [(n, str(ty)) for n, ty in plan.schema]
[('k', 'STRING'), ('s', 'BIGINT'), ('EXPR$2', 'BIGINT NOT NULL')]
"""

from __future__ import annotations

from typing import Callable, TypeVar

from sqlglot import exp

from changeflow.plan import builder
from changeflow.expressions import Alias, Column, Expression, strip_alias
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project
from changeflow.plan.type_inference import PlanError, type_of
from changeflow.sql.dialect import parse
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.joins import plan_from
from changeflow.sql.ranking import plan_ranked_subquery
from changeflow.sql.rewrite import merge_projections, name_aggregates, uniquify
from changeflow.sql.scalar import ExpressionTranslator, Scope, ScopeColumn, contains_aggregate
from changeflow.sql.aggregate_filter import rewrite_aggregate_filters
from changeflow.sql.grouping_sets import expand as expand_grouping_sets
from changeflow.sql.grouping_sets import has_grouping_sets
from changeflow.sql.order_limit import plan_order_limit
from changeflow.sql.over import has_over, plan_over
from changeflow.sql.group_window import has_group_window, plan_group_window
from changeflow.sql.setops import set_operation
from changeflow.sql.subquery import (apply_subquery, filter_with_subqueries, has_nested_subquery,
                                     refuse_nested_subqueries, split_subqueries)
from changeflow.sql.values import plan_values
from changeflow.sql.state_ttl_hint import apply_query_hints

Resolver = Callable[[str], PlanNode]
_Node = TypeVar("_Node", bound=PlanNode)  # guard returns what its builder step returns

# Clauses of a SELECT the planner does not support, with the words an error uses.
_UNSUPPORTED_CLAUSES = {
    "qualify": "QUALIFY", "windows": "WINDOW clause",
    "laterals": "LATERAL", "connect": "CONNECT BY", "sample": "TABLESAMPLE", "match": "MATCH_RECOGNIZE",
    "pivots": "PIVOT", "prewhere": "PREWHERE", "settings": "SETTINGS", "into": "SELECT INTO",
}


def plan_query(query: str | exp.Expr, resolve: Resolver, sql: str | None = None) -> PlanNode:
    """The logical plan of a SQL query (``SELECT``, ``UNION ALL``, ``WITH``...).

    ``resolve(name)`` returns the plan of a table or view, or raises
    :class:`PlanError` naming it and listing the known ones. ``sql`` is the
    statement's text when ``query`` is already parsed (for error positions).
    User-defined functions registered by name resolve through :mod:`changeflow.sql.user_functions`.
    """
    if isinstance(query, str):
        statements = parse(query)
        if len(statements) != 1:
            raise SqlError(f"expected one query, got {len(statements)} statements")
        sql, query = query, statements[0]
    return QueryPlanner(resolve, sql).query(query)


# The FROM of a SELECT without one, parsed once (sqlglot's parser costs more than a copy of its tree).
_ONE_ROW_SELECT = parse("SELECT 1 FROM (VALUES (0)) AS __one_row(__zero)")[0]
_ONE_ROW_FROM: exp.From = _ONE_ROW_SELECT.args.get("from") or _ONE_ROW_SELECT.args["from_"]

class QueryPlanner:
    def __init__(self, resolve: Resolver, sql: str | None, ctes: dict[str, PlanNode] | None = None) -> None:
        self._resolve = resolve
        self.sql = sql
        self.ctes = dict(ctes or {})

    # --- queries ------------------------------------------------------------------------------
    def query(self, node: exp.Expr) -> PlanNode:
        with_ = node.args.get("with") or node.args.get("with_")
        if with_ is not None:
            planner = QueryPlanner(self._resolve, self.sql, self.ctes)
            for cte in with_.expressions:
                planner.ctes[cte.alias] = planner.query(cte.this)
            body = node.copy()
            body.set("with", None)
            body.set("with_", None)
            return planner.query(body)
        if isinstance(node, exp.Subquery):
            return self.query(node.this)
        if isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
            return self.union(node)
        if isinstance(node, exp.Select):
            return self.select(node)
        if isinstance(node, exp.Values):
            return plan_values(self, node)
        raise unsupported(f"statement {type(node).__name__} where a query is expected", node, self.sql)

    def with_ctes(self, ctes: dict[str, PlanNode]) -> "QueryPlanner":
        """A planner of the same statement that also knows the plans ``ctes`` by name."""
        return QueryPlanner(self._resolve, self.sql, {**self.ctes, **ctes})

    def table(self, name: str, node: exp.Expr) -> PlanNode:
        if name in self.ctes:
            return self.ctes[name]
        try:
            return self._resolve(name)
        except SqlError:
            raise
        except PlanError as e:
            raise SqlError(located(str(e), node, self.sql)) from None

    def union(self, node: exp.SetOperation) -> PlanNode:
        return plan_order_limit(self, node, set_operation(self, node))

    # --- SELECT -------------------------------------------------------------------------------
    def _one_row_from(self, node: exp.Select) -> exp.From:
        """``SELECT 1 AS a`` reads one row of no columns, as Calcite plans it (``Values(tuples=[[{ 0 }]])``
        under the projection); ``SELECT *`` and a WHERE without FROM are refused, as Flink refuses them."""
        if any(isinstance(e, exp.Star) for e in node.expressions):
            star = next(e for e in node.expressions if isinstance(e, exp.Star))
            raise SqlError(located("SELECT * requires a FROM clause", star, self.sql))
        if node.args.get("where") is not None:
            raise unsupported("WHERE without FROM", node.args["where"], self.sql)
        return _ONE_ROW_FROM.copy()  # a copy: planning may annotate or rewrite the tree it is given

    def select(self, node: exp.Select) -> PlanNode:
        if has_group_window(node):  # GROUP BY TUMBLE(ts, ...): a window TVF and aggregation (sql/group_window.py)
            return plan_group_window(self, node)
        node = rewrite_aggregate_filters(node, self.sql)
        if has_grouping_sets(node):
            return plan_order_limit(self, node, self.query(expand_grouping_sets(node, self)))
        for clause, words in _UNSUPPORTED_CLAUSES.items():
            value = node.args.get(clause)
            if clause == "windows" and any(isinstance(n, exp.Window) for e in node.expressions for n in e.walk()):
                continue  # WINDOW w AS (...) names the window of OVER aggregates (sql/over.py)
            if value:
                first = value[0] if isinstance(value, list) else value
                raise unsupported(words, first if isinstance(first, exp.Expr) else node, self.sql)
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise unsupported("DISTINCT ON", distinct, self.sql)

        from_ = node.args.get("from") or node.args.get("from_")
        if from_ is None:
            from_ = self._one_row_from(node)
        where = node.args.get("where")
        where_condition, subqueries = split_subqueries(where.this if where is not None else None)

        ranked = plan_ranked_subquery(self, node, from_.this, where_condition)
        if ranked is not None:
            plan, scope, where_condition = ranked
        else:
            plan, scope, where_condition = plan_from(self, from_.this, node.args.get("joins") or [],
                                                     where_condition)
        from_plan = plan  # a STATE_TTL hint names the inputs of its joins (sql/state_ttl_hint.py)
        # IN / EXISTS below OR & co: mark joins (sql/subquery.py)
        if where_condition is not None and has_nested_subquery(where_condition):
            plan = filter_with_subqueries(self, plan, scope, where_condition)
            where_condition = None
        refuse_nested_subqueries(where_condition, self)
        if where_condition is not None:
            if contains_aggregate(where_condition):
                raise unsupported("aggregate in WHERE (use HAVING)", where_condition, self.sql)
            predicate = self.expression(where_condition, scope, aggregates=False)
            plan = self.guard(lambda: builder.filter_(plan, predicate), where_condition)
        for conjunct in subqueries:  # [NOT] EXISTS / IN (subquery): semi and anti joins (sql/subquery.py)
            plan = apply_subquery(self, plan, scope, conjunct)

        items = self.select_items(node, scope)
        group = node.args.get("group")
        having = node.args.get("having")
        for e, _ in items:
            refuse_nested_subqueries(e, self)
        refuse_nested_subqueries(having, self)
        if group is not None or having is not None or any(contains_aggregate(e) for e, _ in items):
            if has_over(items):
                raise unsupported("OVER aggregation in a SELECT with GROUP BY or aggregates (aggregate in a "
                                  "subquery first)", group or having or node, self.sql)
            plan = self.aggregate(plan, scope, items, group, having)
        elif has_over(items):
            plan = merge_projections(self.guard(lambda: plan_over(self, plan, scope, items, node), node))
        else:
            exprs: list[Expression] = [Alias(self.expression(e, scope, aggregates=False), name) for e, name in items]
            plan = merge_projections(self.guard(lambda: builder.project(plan, exprs), node))
        if distinct is not None:
            keys: list[Expression] = [Column(n) for n in plan.field_names]
            grouped = _without_identity(builder.aggregate(plan, keys, list(keys)))
            # DISTINCT selects exactly its keys, so the projection over the Aggregate is an identity.
            assert isinstance(grouped, Aggregate)
            plan = Aggregate(merge_projections(grouped.input), grouped.keys, grouped.calls, grouped.out_schema)
        return plan_order_limit(self, node, apply_query_hints(self, node, from_plan, plan), items)

    def select_items(self, node: exp.Select, scope: Scope) -> list[tuple[exp.Expr, str]]:
        """The select list with ``*`` expanded, each item with its output name."""
        items: list[tuple[exp.Expr, str | None]] = []
        for e in node.expressions:
            if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
                _refuse_star_modifiers(e.this if isinstance(e, exp.Column) else e, e, self.sql)
                qualifier = e.table or None if isinstance(e, exp.Column) else None
                columns = scope.star(qualifier)
                if not columns:
                    raise SqlError(located(f"{qualifier}.* matches no table of the FROM clause", e, self.sql))
                for c in columns:
                    items.append((exp.column(c.name, table=c.qualifier, quoted=True), c.name))
                continue
            if isinstance(e, exp.Alias):
                items.append((e.this, e.alias))
            elif isinstance(e, exp.Column):
                items.append((e, e.name))
            elif isinstance(e, (exp.CurrentTimestamp, exp.CurrentDate, exp.Localtimestamp)) and not e.args:
                # Calcite names a niladic function column after the function.
                items.append((e, e.sql_name()))
            else:
                items.append((e, None))
        names = uniquify([n or f"EXPR${i}" for i, (_, n) in enumerate(items)])
        return list(zip([e for e, _ in items], names, strict=True))

    def aggregate(self, plan: PlanNode, scope: Scope, items: list[tuple[exp.Expr, str]],
                  group: exp.Group | None, having: exp.Having | None) -> PlanNode:
        keys: list[Expression] = []
        for i, g in enumerate(group.expressions if group is not None else []):
            if isinstance(g, exp.Literal) and not g.is_string:
                raise unsupported("GROUP BY position", g, self.sql)
            if contains_aggregate(g):
                raise SqlError(located(f"aggregate {g.sql()} in GROUP BY", g, self.sql))
            key = self.expression(g, scope, aggregates=False)
            if not isinstance(key, Column):
                # Name an expression key after the select item computing it (Flink's EXPR$i).
                name = next((n for e, n in items if str(self.expression_or_none(e, scope)) == str(key)),
                            f"$f{i}")
                key = Alias(key, name)
            keys.append(key)
        select: list[Expression] = [Alias(self.expression(e, scope, aggregates=True), name) for e, name in items]
        having_name = "$having"
        if having is not None:
            select.append(Alias(self.expression(having.this, scope, aggregates=True), having_name))
        result = self.guard(lambda: builder.aggregate(plan, keys, select), group or having or items[0][0])
        # builder.aggregate returns Project(Aggregate(...)) and puts a projection of keys and
        # arguments below the aggregate.
        grouped = result.input
        assert isinstance(grouped, Aggregate)
        below = grouped.input
        if isinstance(below, Project):
            merged = merge_projections(below)
            if merged is not below:
                result = Project(_replace_input(grouped, below, merged), result.exprs, result.out_schema)
        if having is not None:
            pairs = dict(result.exprs)
            condition = pairs[having_name]
            t = type_of(condition, result.input.type_map())
            if t.root != "BOOLEAN":
                raise SqlError(located(f"HAVING condition {having.this.sql()} must be BOOLEAN, but it is {t}",
                                       having, self.sql))
            kept = tuple((n, e) for n, e in result.exprs if n != having_name)
            schema = tuple((n, t) for n, t in result.schema if n != having_name)
            result = Project(Filter(result.input, condition), kept, schema)
        return _without_identity(name_aggregates(result))

    # --- expressions --------------------------------------------------------------------------
    def expression(self, node: exp.Expr, scope: Scope, aggregates: bool) -> Expression:
        return ExpressionTranslator(scope, self.sql, aggregates).tr(node)

    def expression_or_none(self, node: exp.Expr, scope: Scope) -> Expression | None:
        try:
            return strip_alias(self.expression(node, scope, aggregates=False))
        except PlanError:
            return None

    def guard(self, build: Callable[[], _Node], node: exp.Expr) -> _Node:
        """Run a builder step; its PlanError (a type error, an unknown column) gets the SQL position."""
        try:
            return build()
        except SqlError:
            raise
        except PlanError as e:
            raise SqlError(located(str(e), node, self.sql)) from None


# sqlglot reads ``* EXCEPT (c)`` (BigQuery, Spark), ``* EXCLUDE (c)`` (Snowflake, DuckDB),
# ``* REPLACE (e AS c)`` and ``* RENAME (a AS b)`` for other dialects. None is Flink SQL:
# Flink's parser (Calcite's SelectExpression) takes a bare ``*`` and then reads EXCEPT as
# the set operator, so such a query fails there. Expanding the star while ignoring the
# modifier would return the columns the user meant to drop; refuse it instead.
_STAR_MODIFIERS = {"except": "EXCEPT", "except_": "EXCEPT", "exclude": "EXCLUDE",
                   "replace": "REPLACE", "rename": "RENAME", "ilike": "ILIKE"}


def _refuse_star_modifiers(star: exp.Star, item: exp.Expr, sql: str | None) -> None:
    for arg, word in _STAR_MODIFIERS.items():
        if star.args.get(arg):
            raise unsupported(f"SELECT * {word} (not Flink SQL; list the columns to keep)", item, sql)


def _replace_input(plan: PlanNode, old: PlanNode, new: PlanNode) -> PlanNode:
    """``plan`` with the node ``old`` somewhere below it swapped for ``new`` (a short chain)."""
    if plan is old:
        return new
    if isinstance(plan, Project):
        return Project(_replace_input(plan.input, old, new), plan.exprs, plan.out_schema)
    if isinstance(plan, Filter):
        return Filter(_replace_input(plan.input, old, new), plan.predicate)
    if isinstance(plan, Aggregate):
        return Aggregate(_replace_input(plan.input, old, new), plan.keys, plan.calls, plan.out_schema)
    raise TypeError(type(plan).__name__)




def _without_identity(plan: PlanNode) -> PlanNode:
    """Drop a projection that passes its input through unchanged (Flink shows none there)."""
    if isinstance(plan, Project) and [n for n, _ in plan.exprs] == plan.input.field_names and all(
            isinstance(e, Column) and e.name == n for n, e in plan.exprs) and plan.schema == plan.input.schema:
        return plan.input
    return plan


def scope_of(plan: PlanNode, qualifier: str | None) -> Scope:
    return Scope([ScopeColumn(qualifier, n, n) for n in plan.field_names])


__all__ = ["QueryPlanner", "plan_query", "scope_of", "uniquify"]
