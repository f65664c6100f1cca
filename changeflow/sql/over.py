"""OVER aggregations in a select list: ``SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS ...)``.

A SELECT whose items hold ``agg(x) OVER (...)`` or ``agg(x) OVER w`` (with
``WINDOW w AS (...)``) is planned as Flink plans it: a projection computing the
aggregates' arguments, an :class:`~changeflow.plan.over.OverAggregate` that
appends one column per aggregate to every row (named ``w0$o0``, ``w0$o1``, ...
as Flink names them), and the select list over that.

Implemented: one window per SELECT (Flink's streaming planner refuses several,
"All aggregates must be computed on the same window"), ordered by one column,
ascending; frames ``ROWS BETWEEN n|UNBOUNDED PRECEDING AND CURRENT ROW``,
``RANGE BETWEEN INTERVAL ... PRECEDING|UNBOUNDED PRECEDING AND CURRENT ROW`` and
the default (``RANGE UNBOUNDED PRECEDING``); COUNT, SUM, AVG, MIN, MAX. Every
other form is refused with its name: FOLLOWING bounds (Flink's message), a
descending order (Flink's), a window without ORDER BY, ranking and offset
functions (ROW_NUMBER outside its Top-N pattern, RANK, LAG, ...), DISTINCT
aggregates. That the order is a time attribute in a streaming query is checked
by the rule :mod:`changeflow.plan.rules.over_aggregate`, which knows the mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.expressions import Agg, Alias, Column, Expression, strip_alias
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.builder import aggregate_type
from changeflow.plan.nodes import PlanNode, Project
from changeflow.plan.over import OVER_FUNCTIONS, OverAggregate, OverFrame, over_call
from changeflow.plan.type_inference import is_proctime, type_of
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.scalar import ExpressionTranslator, Scope, ScopeColumn

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

_UNIT_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
SAME_WINDOW = "Over Agg: Unsupported use of OVER windows. All aggregates must be computed on the same window."
FOLLOWING = "OVER RANGE FOLLOWING windows are not supported yet."


def has_over(items: list[tuple[exp.Expr, str]]) -> bool:
    """Whether a select list has a window function (``... OVER ...``)."""
    return any(isinstance(n, exp.Window) for e, _ in items for n in e.walk())


def plan_over(planner: "QueryPlanner", plan: PlanNode, scope: Scope, items: list[tuple[exp.Expr, str]],
              select: exp.Select) -> PlanNode:
    """``SELECT items FROM plan`` where items hold OVER aggregates (see the module docstring)."""
    sql = planner.sql
    named = {w.this.name: w for w in select.args.get("windows") or []}
    windows = [n for e, _ in items for n in e.walk() if isinstance(n, exp.Window)]
    specs = [_resolve(w, named, sql) for w in windows]
    text = {_spec_text(s) for s in specs}
    if len(text) > 1:
        raise SqlError(located(SAME_WINDOW + " (changeflow computes one OVER window per SELECT)", windows[1], sql))
    spec, first = specs[0], windows[0]
    types = plan.type_map()
    partition = tuple(_column(planner, e, scope, "PARTITION BY") for e in spec.args.get("partition_by") or [])
    order_by, ascending = _order(planner, spec, scope, first)
    frame = _frame(spec.args.get("spec"), sql, first)

    # The aggregates' arguments: input columns, or computed by a projection below the window.
    pre: list[tuple[str, Expression]] = [(n, Column(n)) for n in plan.field_names]
    calls: list[AggCall] = []
    for w in windows:
        agg = _aggregate(planner, w, scope)
        try:
            calls.append(over_call(agg, pre, types, len(calls)))
        except ValueError as e:
            raise SqlError(located(str(e), w, sql)) from None
    below = plan
    if len(pre) > len(plan.field_names):
        below = Project(plan, tuple(pre), tuple((n, type_of(e, types)) for n, e in pre))
    schema = below.schema + tuple((c.output, aggregate_type(c, grouped=False)) for c in calls)
    over = OverAggregate(below, partition, order_by, ascending, frame, tuple(calls), schema,
                         proctime=is_proctime(types[order_by]))

    # The select list over the window's output: each OVER call replaced by its column.
    replaced = {id(w): c.output for w, c in zip(windows, calls, strict=True)}
    over_scope = Scope(list(scope.columns) + [ScopeColumn(None, c.output, c.output) for c in calls])
    exprs: list[Expression] = []
    for e, name in items:
        exprs.append(Alias(ExpressionTranslator(over_scope, sql, False).tr(_replace_windows(e, replaced)), name))
    out_types = over.type_map()
    return Project(over, tuple((name, strip_alias(x)) for x, (_, name) in zip(exprs, items, strict=True)),
                   tuple((name, type_of(strip_alias(x), out_types)) for x, (_, name) in zip(exprs, items, strict=True)))


def _replace_windows(e: exp.Expr, replaced: dict[int, str]) -> exp.Expr:
    """``e`` with every window function (by identity) replaced by a reference to its column."""
    if id(e) in replaced:
        return exp.column(replaced[id(e)], quoted=True)
    copy = e.copy()
    originals = [n for n in e.walk()]
    for original, node in zip(originals, list(copy.walk()), strict=True):
        if id(original) in replaced:
            node.replace(exp.column(replaced[id(original)], quoted=True))
    return copy


def _resolve(w: exp.Window, named: dict[str, exp.Window], sql: str | None) -> exp.Window:
    """The window specification of ``w``: its own, or that of the ``WINDOW`` clause it names."""
    alias = w.args.get("alias")
    if alias is None:
        return w
    if alias.name not in named:
        raise SqlError(located(f"window '{alias.name}' is not defined (WINDOW {alias.name} AS (...))", w, sql))
    if any(w.args.get(k) for k in ("partition_by", "order", "spec")):
        raise unsupported("OVER a named window with more clauses", w, sql)
    return named[alias.name]


def _spec_text(w: exp.Window) -> str:
    parts = [w.args.get(k) for k in ("partition_by", "order", "spec")]
    return "|".join(("" if p is None else " ".join(x.sql() for x in p) if isinstance(p, list) else p.sql())
                    for p in parts)


def _column(planner: "QueryPlanner", e: exp.Expr, scope: Scope, clause: str) -> str:
    if not isinstance(e, exp.Column):
        raise unsupported(f"{clause} an expression in an OVER window (a column only)", e, planner.sql)
    return scope.lookup(e, planner.sql)


def _order(planner: "QueryPlanner", spec: exp.Window, scope: Scope, w: exp.Window) -> tuple[str, bool]:
    order = spec.args.get("order")
    if order is None or not order.expressions:
        raise unsupported("OVER window without ORDER BY", w, planner.sql)
    if len(order.expressions) != 1:
        raise SqlError(located("The window can only be ordered by a single time column.", order, planner.sql))
    ordered = order.expressions[0]
    if ordered.args.get("desc"):
        raise SqlError(located("The window can only be ordered in ASCENDING mode.", ordered, planner.sql))
    return _column(planner, ordered.this, scope, "ORDER BY"), True


def _frame(spec: exp.WindowSpec | None, sql: str | None, w: exp.Window) -> OverFrame:
    """The frame of a window spec; the default (no frame) is RANGE UNBOUNDED PRECEDING."""
    if spec is None:
        return OverFrame(rows=False, preceding=None)
    rows = spec.args.get("kind", "").upper() == "ROWS"
    start, side = spec.args.get("start"), (spec.args.get("start_side") or "").upper()
    end, end_side = spec.args.get("end"), (spec.args.get("end_side") or "").upper()
    if side == "FOLLOWING" or end_side == "FOLLOWING" or (end is not None and end != "CURRENT ROW"):
        raise SqlError(located(f"{FOLLOWING} (a FOLLOWING bound: the frame must end at the CURRENT ROW)", spec, sql))
    if start == "UNBOUNDED":
        return OverFrame(rows, None)
    if start == "CURRENT ROW":
        return OverFrame(rows, 0)
    if rows:
        if not (isinstance(start, exp.Literal) and not start.is_string and start.this.isdigit()):
            raise unsupported("ROWS frame whose bound is not a row count", spec, sql)
        return OverFrame(True, int(start.this))
    if not isinstance(start, exp.Interval) or start.unit is None:
        raise unsupported("RANGE frame whose bound is not an INTERVAL (OVER windows are ordered by time)", spec, sql)
    unit = start.unit.name.upper()
    unit = unit[:-1] if unit.endswith("S") and unit[:-1] in _UNIT_MS else unit
    try:
        return OverFrame(False, round(float(start.this.name) * _UNIT_MS[unit]))
    except (KeyError, ValueError, AttributeError):
        raise unsupported(f"RANGE frame bound {start.sql()} (an INTERVAL of a number of "
                          f"{', '.join(_UNIT_MS)}S)", spec, sql) from None


def _aggregate(planner: "QueryPlanner", w: exp.Window, scope: Scope) -> Agg:
    """The aggregate call a window function makes; refused by name when it is not one OVER computes."""
    sql = planner.sql
    func = w.this
    try:
        agg = strip_alias(ExpressionTranslator(scope, sql, True).tr(func))
    except SqlError:
        agg = None
    if not isinstance(agg, Agg):
        raise unsupported(f"window function {func.sql()} (OVER aggregation computes COUNT, SUM, AVG, MIN, MAX; "
                          "ROW_NUMBER only in the deduplication/Top-N pattern)", w, sql)
    if agg.function not in OVER_FUNCTIONS:
        raise unsupported(f"aggregate {func.sql()} over an OVER window", w, sql)
    if agg.is_distinct:
        raise unsupported("DISTINCT aggregate over an OVER window", w, sql)
    return agg


__all__ = ["has_over", "plan_over"]
