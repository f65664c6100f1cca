"""``x IN (SELECT ..)``, ``EXISTS (SELECT ..)`` and ``NOT EXISTS`` in WHERE, as semi / anti joins.

A WHERE conjunct ``[NOT] EXISTS (subquery)`` or ``x IN (subquery)`` becomes a
join with the distinct keys of the subquery, as Flink's semi / anti join:

* the subquery's correlation, the conjuncts ``inner_column = outer_column`` of
  its WHERE (``IN`` adds ``x = <its select item>``), gives the join keys; the
  subquery is planned without them, projected onto its inner key columns and
  made distinct (a group aggregation with no calls), so each outer row matches
  at most once;
* a semi join (``IN``, ``EXISTS``) is an inner join with those keys; an anti join
  (``NOT EXISTS``) a left join keeping the rows with no match. The join's
  output is projected back onto the outer columns.

A key equality never holds for a NULL, so an outer row with a NULL key is not
``IN`` and is ``NOT EXISTS``, as in Flink. Refused, naming the construct:
``NOT IN (subquery)`` (its three-valued NULL semantics need Flink's null-aware
anti join), an uncorrelated ``EXISTS``, a correlation that is not an equality of
columns, scalar subqueries, and subqueries outside WHERE. A subquery predicate
elsewhere in the WHERE (under ``OR``, say) is a left "mark" join
(:func:`filter_with_subqueries`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.expressions import Call, Column, Expression
from changeflow.plan import set_ops
from changeflow.plan.join_builder import join, output_names
from changeflow.plan.nodes import Filter, PlanNode, Project
from changeflow.sql.errors import unsupported

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner
    from changeflow.sql.scalar import Scope


def split_subqueries(where: exp.Expr | None) -> tuple[exp.Expr | None, list[exp.Expr]]:
    """``where`` without its subquery conjuncts, and those conjuncts."""
    if where is None:
        return None, []
    conjuncts = list(where.flatten()) if isinstance(where, exp.And) else [where]
    subs = [c for c in conjuncts if _is_subquery_predicate(c)]
    rest = [c for c in conjuncts if not _is_subquery_predicate(c)]
    remaining = None
    for c in rest:
        remaining = c if remaining is None else exp.And(this=remaining, expression=c)
    return remaining, subs


def _is_subquery_predicate(c: exp.Expr) -> bool:
    inner = c.this if isinstance(c, exp.Not) else c
    return isinstance(inner, exp.Exists) or (isinstance(inner, exp.In) and inner.args.get("query") is not None)


def refuse_nested_subqueries(node: exp.Expr | None, planner: "QueryPlanner") -> None:
    """A subquery left in an expression (not a WHERE conjunct) is refused by name."""
    if node is None:
        return
    for e in node.find_all(exp.Exists, exp.In, exp.Subquery):
        if isinstance(e, exp.Exists) or (isinstance(e, exp.In) and e.args.get("query") is not None):
            raise unsupported("subquery predicate other than a WHERE conjunct [NOT] EXISTS / IN", e, planner.sql)
        if isinstance(e, exp.Subquery):
            raise unsupported("scalar subquery", e, planner.sql)


def apply_subquery(planner: "QueryPlanner", plan: PlanNode, scope: "Scope", conjunct: exp.Expr) -> PlanNode:
    """``plan`` filtered by one ``[NOT] EXISTS`` / ``IN`` conjunct (a semi or anti join)."""
    negated = isinstance(conjunct, exp.Not)
    predicate = conjunct.this if negated else conjunct
    if isinstance(predicate, exp.In) and negated:
        raise unsupported("NOT IN (subquery) (its NULL semantics need a null-aware anti join; "
                          "use NOT EXISTS)", conjunct, planner.sql)
    joined, mark = _keys_join(planner, plan, scope, predicate, "LEFT" if negated else "INNER")
    if negated:  # NOT EXISTS: the rows the left join padded
        joined = Filter(joined, Call("is_null", (Column(mark),)))
    return Project(joined, tuple((n, Column(n)) for n in plan.field_names), plan.schema)


def has_nested_subquery(condition: exp.Expr | None) -> bool:
    """Whether ``condition`` holds an IN / EXISTS subquery (below OR, CASE, ...: not a plain conjunct)."""
    return condition is not None and bool(_predicates(condition))


def filter_with_subqueries(planner: "QueryPlanner", plan: PlanNode, scope: "Scope", condition: exp.Expr
                           ) -> PlanNode:
    """``plan`` filtered by ``condition``, whose IN / EXISTS subqueries sit anywhere (``a IN (..) OR b > 1``).

    Each subquery is a left join with its distinct keys (a "mark" join: at most
    one match per row), and the predicate becomes ``key IS NOT NULL``; the
    joins' columns are projected away after the filter. An ``IN`` under ``NOT``
    is refused (three-valued NULL semantics).
    """
    from changeflow.sql.scalar import Scope, ScopeColumn

    condition = condition.copy()
    columns = list(scope.columns)
    joined = plan
    for predicate in _predicates(condition):
        if isinstance(predicate, exp.In) and any(isinstance(p, exp.Not) for p in _ancestors(predicate, condition)):
            raise unsupported("NOT IN (subquery) (its NULL semantics need a null-aware anti join; "
                              "use NOT EXISTS)", predicate, planner.sql)
        joined, mark = _keys_join(planner, joined, Scope(columns), predicate, "LEFT")
        columns.append(ScopeColumn("$mark", mark, mark))
        predicate.replace(exp.Not(this=exp.Is(this=exp.column(mark, table="$mark", quoted=True),
                                              expression=exp.Null())))
    refuse_nested_subqueries(condition, planner)
    predicate_expr = planner.expression(condition, Scope(columns), aggregates=False)
    filtered = planner.guard(lambda: Filter(joined, predicate_expr), condition)
    return Project(filtered, tuple((n, Column(n)) for n in plan.field_names), plan.schema)


def _predicates(condition: exp.Expr) -> list[exp.Expr]:
    """The IN / EXISTS subquery predicates of ``condition``, not those inside its subqueries."""
    found: list[exp.Expr] = []

    def visit(e: exp.Expr) -> None:
        if isinstance(e, exp.Exists) or (isinstance(e, exp.In) and e.args.get("query") is not None):
            found.append(e)
            return
        if isinstance(e, (exp.Subquery, exp.Select)):
            return
        for child in e.iter_expressions():
            visit(child)

    visit(condition)
    return found


def _ancestors(node: exp.Expr, root: exp.Expr) -> list[exp.Expr]:
    out = []
    parent = node.parent
    while parent is not None and node is not root:
        out.append(parent)
        if parent is root:
            break
        node, parent = parent, parent.parent
    return out


def _keys_join(planner: "QueryPlanner", plan: PlanNode, scope: "Scope", predicate: exp.Expr, join_type: str
               ) -> tuple[PlanNode, str]:
    """``plan`` joined (``join_type``) with the distinct keys of ``predicate``'s subquery; the first key's column."""
    if isinstance(predicate, exp.In):
        query = predicate.args["query"]
        select = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            raise unsupported("IN (subquery) whose subquery is not a SELECT of one column", predicate, planner.sql)
        outer = [predicate.this]
        inner = [select.expressions[0].unalias()]
    else:
        select = predicate.this
        if not isinstance(select, exp.Select):
            raise unsupported("EXISTS over a set operation", predicate, planner.sql)
        outer, inner = [], []
    select, pairs = _decorrelate(planner, select, predicate)
    outer += [o for o, _ in pairs]
    inner += [i for _, i in pairs]
    if not outer:
        raise unsupported("uncorrelated EXISTS (subquery)", predicate, planner.sql)
    keys_query = select.copy()
    keys_query.set("expressions", [exp.alias_(e.copy(), f"$k{i}", quoted=True) for i, e in enumerate(inner)])
    keys_query.set("distinct", None)
    keys = set_ops.distinct(planner.query(keys_query))
    outer_columns = []
    for o in outer:
        e = planner.expression(o, scope, aggregates=False)
        if not isinstance(e, Column):
            raise unsupported("IN / EXISTS keyed by an expression that is not a column", o, planner.sql)
        outer_columns.append(e.name)
    right_names = output_names(plan.field_names, keys.field_names)
    condition: Expression | None = None
    for lc, rc in zip(outer_columns, right_names, strict=True):
        eq = Call("==", (Column(lc), Column(rc)))
        condition = eq if condition is None else Call("and", (condition, eq))
    joined = planner.guard(lambda: join(plan, keys, join_type, condition), predicate)
    return joined, right_names[0]


def _decorrelate(planner: "QueryPlanner", select: exp.Select, where_used: exp.Expr
                 ) -> tuple[exp.Select, list[tuple[exp.Expr, exp.Expr]]]:
    """The subquery without its correlation conjuncts, and those as (outer, inner) pairs."""
    where = select.args.get("where")
    if where is None:
        return select, []
    probe = select.copy()
    for arg in ("where", "group", "having", "order", "limit", "offset", "distinct"):
        probe.set(arg, None)
    probe.set("expressions", [exp.Star()])
    inner_names = set(planner.query(probe).field_names)
    from_ = select.args.get("from") or select.args.get("from_")
    relations = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    aliases = {t.alias_or_name for t in relations}

    def is_outer(c: exp.Column) -> bool:
        return c.table not in aliases if c.table else c.name not in inner_names

    conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
    pairs, rest = [], []
    for c in conjuncts:
        outer_cols = [col for col in c.find_all(exp.Column) if is_outer(col)]
        if not outer_cols:
            rest.append(c)
            continue
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column):
            a, b = c.this, c.expression
            if is_outer(a) != is_outer(b):
                pairs.append((a, b) if is_outer(a) else (b, a))
                continue
        raise unsupported("correlated subquery condition other than inner_column = outer_column", c, planner.sql)
    out = select.copy()
    remaining = None
    for c in rest:
        remaining = c.copy() if remaining is None else exp.And(this=remaining, expression=c.copy())
    out.set("where", exp.Where(this=remaining) if remaining is not None else None)
    return out, [(o.copy(), i.copy()) for o, i in pairs]
