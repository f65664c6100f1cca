"""Flink's legacy group windows: ``GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), k``.

A group window (``TUMBLE(ts, size)``, ``HOP(ts, slide, size)``, ``SESSION(ts, gap)`` in
GROUP BY) and its auxiliary functions (``TUMBLE_START``, ``TUMBLE_END``,
``TUMBLE_ROWTIME`` and the HOP_/SESSION_ twins) are planned on the window TVF machinery,
as Flink plans both as a window aggregation: the FROM/WHERE part of the query (``SELECT *``
of it), then a :class:`~changeflow.plan.event_time.WindowTableFunction` over it (a
SESSION partitioned by the other GROUP BY keys: Flink's group-window sessions are per
key), then the query's aggregation grouped by ``window_start, window_end`` and the other
keys, with ``*_START`` -> ``window_start``, ``*_END`` -> ``window_end`` and ``*_ROWTIME``
-> ``window_time`` (a rowtime attribute, so a second window can follow). The rule
:mod:`changeflow.plan.rules.window_aggregate` then makes it a WindowAggregate in streaming.

Over a processing-time attribute (``pt AS PROCTIME()``) the window TVF is the processing-time
one (streaming mode only, as Flink), ``*_PROCTIME`` reads its ``window_time`` (a processing-time
attribute), and the windows still open when a bounded input ends do not fire
(:attr:`~changeflow.plan.event_time.WindowSpec.fires_at_end`): Flink's GroupWindowAggregate
does not fire processing-time timers at the end of input, where its window TVF operator does.

Refused, with Flink's messages: a processing-time group window in batch mode, ``*_ROWTIME``
over a processing-time window (``*_PROCTIME`` over a row-time window is its rowtime, as in
Flink 2.3). Refused by name: more
than one group window in a GROUP BY, an auxiliary function whose arguments differ from the
group window's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.common.types import DataType
from changeflow.expressions import Column
from changeflow.plan.event_time import WindowSpec, window_table_function
from changeflow.plan.nodes import Project
from changeflow.plan.type_inference import is_proctime, type_of
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.window_tvf import duration_ms

if TYPE_CHECKING:
    from changeflow.plan.nodes import PlanNode
    from changeflow.sql.planner import QueryPlanner

GROUP_WINDOWS = {"TUMBLE": ("SIZE",), "HOP": ("SLIDE", "SIZE"), "SESSION": ("GAP",)}
# Auxiliary function suffix -> the window TVF column it reads.
_AUXILIARY = {"START": "window_start", "END": "window_end", "ROWTIME": "window_time", "PROCTIME": "window_time"}
# The windowed FROM/WHERE plan's name among the sub-planner's CTEs (no user table is named so).
_WINDOWED = "__group_window_input"


def _name(node: exp.Expr) -> str:
    return str(node.this).upper() if isinstance(node, exp.Anonymous) else ""


def _own_calls(node: exp.Select) -> list[exp.Anonymous]:
    """The function calls of ``node``'s own scope: not those of a subquery in it (a group window
    in a FROM subquery belongs to that subquery's SELECT, which is planned on its own)."""
    return [c for c in node.find_all(exp.Anonymous) if c.find_ancestor(exp.Select) is node]


def has_group_window(node: exp.Select) -> bool:
    """Whether ``node`` itself uses a group window or an auxiliary group window function."""
    return any(_name(c) in GROUP_WINDOWS or _auxiliary_kind(_name(c)) is not None for c in _own_calls(node))


def _auxiliary_kind(name: str) -> tuple[str, str] | None:
    window, _, suffix = name.partition("_")
    if window in GROUP_WINDOWS and suffix in _AUXILIARY:
        return window, suffix
    return None


def plan_group_window(planner: "QueryPlanner", node: exp.Select) -> "PlanNode":
    """The plan of a SELECT whose GROUP BY holds a group window (:func:`has_group_window`)."""
    sql = planner.sql
    group = node.args.get("group")
    windows = [g for g in (group.expressions if group is not None else []) if _name(g) in GROUP_WINDOWS]
    if not windows:
        call = next(c for c in _own_calls(node) if _name(c) in GROUP_WINDOWS or _auxiliary_kind(_name(c)))
        raise SqlError(located(f"{_name(call)}(...) is a group window function: it needs a group window "
                               f"(GROUP BY {_name(call).split('_')[0]}(...)) in the same SELECT", call, sql))
    if len(windows) > 1:
        raise unsupported("more than one group window in a GROUP BY", windows[1], sql)
    window = windows[0]
    assert group is not None
    kind = _name(window)
    args = list(window.expressions)
    if len(args) != 1 + len(GROUP_WINDOWS[kind]):
        raise unsupported(f"{kind} with {len(args)} arguments (Flink's group window is {kind}(time_attr, "
                          f"{', '.join(GROUP_WINDOWS[kind])}))", window, sql)
    timecol, *durations = args
    if not isinstance(timecol, exp.Column):
        raise unsupported(f"{kind} over an expression (name a time attribute column)", timecol, sql)
    others = [g for g in group.expressions if g is not window]
    joins = node.args.get("joins") or []

    # The FROM/WHERE part: SELECT * of it (a join's clashing names get suffixes as in any SELECT *).
    inner = node.copy()
    for arg in ("group", "having", "order", "limit", "offset", "distinct", "with", "with_"):
        inner.set(arg, None)
    inner.set("expressions", [exp.Star()])
    plan = planner.query(inner)
    t = plan.type_map().get(timecol.name)
    proctime = t is not None and is_proctime(t)
    _check_time_functions(node, proctime, planner)
    millis = [duration_ms(planner, d, kind) for d in durations]
    if kind == "TUMBLE":
        spec = WindowSpec("TUMBLE", millis[0], fires_at_end=not proctime)
    elif kind == "HOP":
        spec = WindowSpec("HOP", millis[1], slide_ms=millis[0], fires_at_end=not proctime)
    else:
        keys = [g.name for g in others if isinstance(g, exp.Column)]
        if len(keys) != len(others):
            raise unsupported("SESSION group window with an expression among the other GROUP BY keys "
                              "(group by columns)", group, sql)
        spec = WindowSpec("SESSION", millis[0], partition_keys=tuple(keys), fires_at_end=not proctime)
    windowed = planner.guard(lambda: window_table_function(plan, timecol.name, spec), window)

    # The aggregation over the windowed rows.
    outer = node.copy()
    outer.set("from", exp.From(this=exp.to_table(_WINDOWED)))
    outer.set("from_", None)
    outer.set("joins", None)
    outer.set("where", None)
    outer.set("with", None)
    outer.set("with_", None)
    items, rowtimes = [], []
    for i, e in enumerate(outer.expressions):
        replaced = _replace_auxiliary(e, window, kind, planner)
        if _auxiliary_kind(_name(e)) is not None:  # Flink names an unaliased call EXPR$i
            replaced = exp.alias_(replaced, f"EXPR${i}", quoted=True)
        # An item reading the window's row time: *_ROWTIME, or *_PROCTIME of a row-time window, anywhere in it.
        if any(_name(c).endswith("_ROWTIME") or (_name(c).endswith("_PROCTIME") and not proctime)
               for c in e.find_all(exp.Anonymous)):
            rowtimes.append(i)
        items.append(replaced)
    outer.set("expressions", items)
    uses_time = any(_name(c).endswith(("_ROWTIME", "_PROCTIME")) for c in _own_calls(node))
    # window_time is grouped by when a *_ROWTIME or *_PROCTIME reads it (a function of the window, as the window TVF's).
    outer.args["group"].set("expressions", [exp.column("window_start"), exp.column("window_end"),
                                            *([exp.column("window_time")] if uses_time else []),
                                            *[g.copy() for g in others]])
    for arg in ("having", "order"):
        if outer.args.get(arg) is not None:
            outer.set(arg, _replace_auxiliary(outer.args[arg], window, kind, planner))
    for column in outer.find_all(exp.Column):
        if column.table:
            if joins:
                raise unsupported("a qualified column in a group window query over a join (its SELECT * "
                                  "renames clashing columns; select the columns in a subquery first)",
                                  column, sql)
            column.set("table", None)
    result = planner.with_ctes({_WINDOWED: windowed}).select(outer)
    return _nullable_rowtimes(result, rowtimes)


def _check_time_functions(node: exp.Select, proctime: bool, planner: "QueryPlanner") -> None:
    """Refuse ``*_ROWTIME`` over a processing-time window with Flink's message. (Flink 2.3 takes
    ``*_PROCTIME`` over a row-time window and gives the window's rowtime, as ``*_ROWTIME``.)"""
    for call in _own_calls(node):
        aux = _auxiliary_kind(_name(call))
        if aux is not None and aux[1] == "ROWTIME" and proctime:
            raise SqlError(located("A proctime window cannot provide a rowtime attribute.", call, planner.sql))


def _nullable_rowtimes(plan: "PlanNode", positions: list[int]) -> "PlanNode":
    """``plan`` with the select items at ``positions`` (those reading a ``*_ROWTIME``) typed as over a
    nullable row time: Flink types the auxiliary function ``TIMESTAMP(3) *ROWTIME*`` where the window
    TVF's window_time is ``NOT NULL`` (the value is never NULL either way), so an expression over it
    is typed from a nullable argument (PyFlink 2.3: ``CAST(TUMBLE_ROWTIME(...) AS STRING)`` is ``STRING``,
    ``TUMBLE_ROWTIME(...) + INTERVAL '1' SECOND`` ``TIMESTAMP(3) *ROWTIME*``)."""
    if not positions:
        return plan
    if isinstance(plan, Project) and _TIME in plan.input.type_map():
        types = dict(plan.input.type_map())
        types[_TIME] = _nullable(types[_TIME])
        schema = tuple((n, type_of(e, types) if i in positions else t)
                       for i, ((n, e), (_, t)) in enumerate(zip(plan.exprs, plan.schema, strict=True)))
        return Project(plan.input, plan.exprs, schema)
    # Not a projection over the window's columns: the items that are a *_ROWTIME themselves.
    schema = tuple((n, _nullable(t) if i in positions else t) for i, (n, t) in enumerate(plan.schema))
    if isinstance(plan, Project):
        return Project(plan.input, plan.exprs, schema)
    return Project(plan, tuple((n, Column(n)) for n in plan.field_names), schema)


_TIME = _AUXILIARY["ROWTIME"]  # the windowed rows' column a *_ROWTIME reads


def _nullable(t: DataType) -> DataType:
    return DataType(t.root, True, t.params, t.element, t.descriptions)


def _replace_auxiliary(node: exp.Expr, window: exp.Expr, kind: str, planner: "QueryPlanner") -> exp.Expr:
    """``node`` with each auxiliary function replaced by the window column it reads."""
    def swap(n: exp.Expr) -> exp.Expr:
        aux = _auxiliary_kind(_name(n))
        if aux is None:
            return n
        if aux[0] != kind or [a.sql() for a in n.expressions] != [a.sql() for a in window.expressions]:
            raise SqlError(located(f"{_name(n)}({', '.join(a.sql() for a in n.expressions)}) does not match the "
                                   f"group window {window.sql()} of the GROUP BY", n, planner.sql))
        return exp.column(_AUXILIARY[aux[1]])
    return node.transform(swap)
