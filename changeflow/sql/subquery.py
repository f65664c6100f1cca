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
``IN`` and is ``NOT EXISTS``, as in Flink. A subquery predicate elsewhere in the
WHERE (under ``OR``, say) is a left "mark" join (:func:`filter_with_subqueries`).
``NOT IN`` (and an ``IN`` under ``NOT`` or ``CASE``) is three-valued, Flink's
null-aware anti join: a second left join brings the subquery's row and non-NULL
counts per correlation key, so a NULL ``x`` or a NULL in the subquery makes the
predicate UNKNOWN unless the subquery is empty. Refused, naming the construct:
an uncorrelated ``EXISTS``, a correlation that is not an equality of columns,
scalar subqueries, and subqueries outside WHERE.
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
    if isinstance(predicate, exp.In) and negated:  # three-valued: a null-aware anti join
        return filter_with_subqueries(planner, plan, scope, conjunct)
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
    joins' columns are projected away after the filter. Where an ``IN`` sits
    below anything but AND / OR (``NOT``, ``CASE``, ``IS NULL``), UNKNOWN and FALSE
    differ, so it becomes its three-valued value (:func:`_three_valued_in`).
    """
    from changeflow.sql.scalar import Scope, ScopeColumn

    condition = condition.copy()
    columns = list(scope.columns)
    joined = plan
    for predicate in _predicates(condition):
        three_valued = isinstance(predicate, exp.In) and not all(
            isinstance(p, (exp.And, exp.Or, exp.Paren)) for p in _ancestors(predicate, condition))
        joined, mark = _keys_join(planner, joined, Scope(columns), predicate, "LEFT")
        columns.append(ScopeColumn("$mark", mark, mark))
        matched = exp.Not(this=exp.Is(this=_mark_column(mark), expression=exp.Null()))
        if three_valued:
            joined, rows, non_null = _counts_join(planner, joined, Scope(columns), predicate)
            columns += [ScopeColumn("$mark", rows, rows), ScopeColumn("$mark", non_null, non_null)]
            predicate.replace(_three_valued_in(predicate.this.copy(), matched, rows, non_null))
        else:
            predicate.replace(matched)
    refuse_nested_subqueries(condition, planner)
    predicate_expr = planner.expression(condition, Scope(columns), aggregates=False)
    filtered = planner.guard(lambda: Filter(joined, predicate_expr), condition)
    return Project(filtered, tuple((n, Column(n)) for n in plan.field_names), plan.schema)


def _mark_column(name: str) -> exp.Column:
    return exp.column(name, table="$mark", quoted=True)


def _three_valued_in(x: exp.Expr, matched: exp.Expr, rows: str, non_null: str) -> exp.Expr:
    """``x IN (subquery)`` as SQL's three-valued logic has it (Flink's null-aware semi / anti join).

    TRUE when a subquery row equals ``x``; FALSE when the subquery has no rows
    (for this row's correlation: no counts row, or a count of 0); otherwise
    UNKNOWN when ``x`` is NULL or a subquery value is NULL (``rows`` counts all
    rows, ``non_null`` the non-NULL values), else FALSE.
    """
    n, nn = _mark_column(rows), _mark_column(non_null)
    empty = exp.Or(this=exp.Is(this=n, expression=exp.Null()),
                   expression=exp.EQ(this=n.copy(), expression=exp.Literal.number(0)))
    unknown = exp.Or(this=exp.Is(this=x, expression=exp.Null()), expression=exp.NEQ(this=n.copy(), expression=nn))
    return exp.Case(ifs=[exp.If(this=matched, true=exp.true()), exp.If(this=empty, true=exp.false()),
                         exp.If(this=unknown, true=exp.Null())], default=exp.false())


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


def _parts(planner: "QueryPlanner", predicate: exp.Expr
           ) -> tuple[exp.Select, list[exp.Expr], list[exp.Expr], int]:
    """``predicate``'s subquery without its correlation, the outer and inner key expressions
    (an ``IN``'s own pair first), and how many of them are correlation pairs."""
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
    if not outer and not pairs:
        raise unsupported("uncorrelated EXISTS (subquery)", predicate, planner.sql)
    return select, outer + [o for o, _ in pairs], inner + [i for _, i in pairs], len(pairs)


def _outer_columns(planner: "QueryPlanner", scope: "Scope", outer: list[exp.Expr]) -> list[str]:
    names = []
    for o in outer:
        e = planner.expression(o, scope, aggregates=False)
        if not isinstance(e, Column):
            raise unsupported("IN / EXISTS keyed by an expression that is not a column", o, planner.sql)
        names.append(e.name)
    return names


def _equalities(left: list[str], right: list[str]) -> Expression | None:
    condition: Expression | None = None
    for lc, rc in zip(left, right, strict=True):
        eq = Call("==", (Column(lc), Column(rc)))
        condition = eq if condition is None else Call("and", (condition, eq))
    return condition


def _keys_join(planner: "QueryPlanner", plan: PlanNode, scope: "Scope", predicate: exp.Expr, join_type: str
               ) -> tuple[PlanNode, str]:
    """``plan`` joined (``join_type``) with the distinct keys of ``predicate``'s subquery; the first key's column."""
    select, outer, inner, _ = _parts(planner, predicate)
    keys_query = select.copy()
    keys_query.set("expressions", [exp.alias_(e.copy(), f"$k{i}", quoted=True) for i, e in enumerate(inner)])
    keys_query.set("distinct", None)
    keys = set_ops.distinct(planner.query(keys_query))
    outer_columns = _outer_columns(planner, scope, outer)
    right_names = output_names(plan.field_names, keys.field_names)
    condition = _equalities(outer_columns, right_names)
    joined = planner.guard(lambda: join(plan, keys, join_type, condition), predicate)
    return joined, right_names[0]


def _counts_join(planner: "QueryPlanner", plan: PlanNode, scope: "Scope", predicate: exp.Expr
                 ) -> tuple[PlanNode, str, str]:
    """``plan`` left-joined with, per correlation key, the subquery's row count and non-NULL value count.

    An uncorrelated ``IN`` joins one global count row on no key (in streaming, no
    row while the subquery is empty: the padded NULL count reads as empty).
    """
    select, outer, inner, correlated = _parts(planner, predicate)
    corr_outer, corr_inner = outer[len(outer) - correlated:], inner[len(inner) - correlated:]
    counts_query = select.copy()
    counts_query.set("distinct", None)
    counts_query.set("expressions", [exp.alias_(e.copy(), f"$c{i}", quoted=True) for i, e in enumerate(corr_inner)]
                     + [exp.alias_(exp.Count(this=exp.Star()), "$n", quoted=True),
                        exp.alias_(exp.Count(this=inner[0].copy()), "$nn", quoted=True)])
    counts_query.set("group", exp.Group(expressions=[e.copy() for e in corr_inner]) if corr_inner else None)
    counts = planner.query(counts_query)
    right_names = output_names(plan.field_names, counts.field_names)
    condition = _equalities(_outer_columns(planner, scope, corr_outer), right_names[:correlated])
    joined = planner.guard(lambda: join(plan, counts, "LEFT", condition), predicate)
    return joined, right_names[-2], right_names[-1]


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
