"""``Table.window(...)`` and ``Table.over_window(...)``: PyFlink's ``GroupWindowedTable``,
``WindowGroupedTable`` and ``OverWindowedTable``, planned on the plan nodes SQL uses.

A group window is planned as SQL's legacy ``GROUP BY TUMBLE(ts, ...), k``
(:mod:`changeflow.sql.group_window`): a
:class:`~changeflow.plan.event_time.WindowTableFunction` over the table (a Session
partitioned by the other grouping keys: Flink's group-window sessions are per key), then
the aggregation grouped by ``window_start, window_end`` (and ``window_time`` when
``rowtime`` is selected) and the other keys, ``col('w').start``/``.end``/``.rowtime``
reading ``window_start``/``window_end``/``window_time``; the rule
:mod:`changeflow.plan.rules.window_aggregate` makes it a window aggregate in streaming
(insert-only, each window emitted when the watermark passes its end).

An over window is planned as SQL's ``OVER`` (:mod:`changeflow.sql.over`): a projection of
the aggregates' arguments, an :class:`~changeflow.plan.over.OverAggregate` whose columns
are named ``w0$o0``, ``w0$o1``... and the select list over it; the rule
:mod:`changeflow.plan.rules.over_aggregate` checks the order is a time attribute.

Over a processing-time attribute the window TVF is the processing-time one (streaming mode
only), ``col('w').proctime`` reads its ``window_time`` and the windows still open when a bounded
input ends do not fire, as Flink's legacy GroupWindowAggregate (see
:mod:`changeflow.sql.group_window`); ``.rowtime`` of such a window is refused with Flink's message.

``col('w').proctime`` of a row-time window is, as in Flink, ``PROCTIME()`` taken when the window's row
is emitted (on Spark: the micro-batch that fires it), a processing-time attribute.

Refused by name: row-count group windows, a group
window over an expression, more than one over window, a FOLLOWING bound, a ROWS/RANGE mix
of bounds, an aggregate OVER computes not (as SQL's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from changeflow.common.types import DataType
from changeflow.expressions import Agg, Call, Column, Expression, Literal, replace, strip_alias
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan import builder
from changeflow.plan.event_time import WindowSpec, window_table_function
from changeflow.plan.nodes import Aggregate, PlanNode, Project
from changeflow.plan.over import OVER_FUNCTIONS, OverAggregate, OverFrame, over_call
from changeflow.plan.type_inference import PlanError, is_proctime, type_of
from changeflow.table.window import GroupWindow, OverWindow, bound_name

if TYPE_CHECKING:
    from changeflow.table.table import Table

_UNIT_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
_PROPERTY_COLUMN = {"start": "window_start", "end": "window_end", "rowtime": "window_time", "proctime": "window_time"}
_NAMES = {"TUMBLE": "Tumble", "SLIDE": "Slide", "SESSION": "Session"}


def interval_ms(e: Expression | None, what: str) -> int:
    """An interval literal (``lit(10).seconds``) in milliseconds; anything else is refused naming ``what``."""
    if (isinstance(e, Call) and e.function == "interval" and isinstance(e.args[0], Literal)
            and isinstance(e.args[0].value, (int, float)) and not isinstance(e.args[0].value, bool)):
        ms = round(e.args[0].value * _UNIT_MS[str(e.constant_arg(1))])
        if ms <= 0:
            raise PlanError(f"{what} must be positive, got {e}")
        return ms
    if isinstance(e, Call) and e.function == "row_interval":
        raise NotImplementedError(f"{what} as a row count ({e}): row-count group windows are not supported by "
                                  "changeflow (Flink runs them over processing time only)")
    raise PlanError(f"{what} must be an interval literal such as lit(10).seconds, got {e}")


# --- group windows ------------------------------------------------------------------------

class GroupWindowedTable:
    """A table with a group window (``Table.window``): close it with :meth:`group_by`."""

    def __init__(self, table: "Table", window: GroupWindow) -> None:
        if not isinstance(window, GroupWindow) or window.alias_name is None:
            raise TypeError(f"window(...) takes a group window with an alias (Tumble.over(...).on(...).alias('w')), "
                            f"got {window!r}")
        self._table = table
        self._window = window

    def group_by(self, *fields: Expression | str) -> "WindowGroupedTable":
        """Group by the window's alias and other keys (the alias must be among them)."""
        from changeflow.table.table import _exprs
        return WindowGroupedTable(self._table, self._window, _exprs(fields))


class WindowGroupedTable:
    """A windowed and grouped table: :meth:`select` computes one row per window and key."""

    def __init__(self, table: "Table", window: GroupWindow, keys: list[Expression]) -> None:
        alias = window.alias_name
        aliases = [k for k in keys if isinstance(k, Column) and k.name == alias]
        if len(aliases) != 1:
            raise PlanError(f"A group window expects an alias reference in group_by: group_by(col('{alias}'), ...) "
                            f"(got {', '.join(str(k) for k in keys) or 'no keys'})")
        self._table = table
        self._window = window
        self._keys = [k for k in keys if k is not aliases[0]]

    def select(self, *fields: Expression | str) -> "Table":
        from changeflow.table.table import _exprs
        return self._table._wrap(plan_group_window(self._table.plan, self._window, self._keys, _exprs(fields)))

    def aggregate(self, func) -> None:
        """PyFlink's windowed ``aggregate(udaf)``: not supported (use ``select`` with built-in aggregates)."""
        raise NotImplementedError("WindowGroupedTable.aggregate (a Python aggregate function over a group window) "
                                  "is not supported by changeflow; use select(...) with built-in aggregates")


def plan_group_window(plan: PlanNode, window: GroupWindow, keys: list[Expression],
                      select: list[Expression]) -> PlanNode:
    """``select`` per window and ``keys`` over ``plan`` (see the module docstring)."""
    name = _NAMES[window.kind]
    time = window.time_field
    if not isinstance(time, Column):
        raise PlanError(f"{name} window on {time}: a group window is defined on a time attribute column")
    types = plan.type_map()
    proctime = time.name in types and is_proctime(types[time.name])
    size = interval_ms(window.size, f"the {'gap' if window.kind == 'SESSION' else 'size'} of a {name} window")
    if window.kind == "TUMBLE":
        spec = WindowSpec("TUMBLE", size, fires_at_end=not proctime)
    elif window.kind == "SLIDE":
        if window.slide is None:
            raise PlanError("a Slide window needs every(slide): Slide.over(size).every(slide)")
        spec = WindowSpec("HOP", size, slide_ms=interval_ms(window.slide, "the slide of a Slide window"),
                          fires_at_end=not proctime)
    else:
        partition = [strip_alias(k) for k in keys]
        if not all(isinstance(k, Column) for k in partition):
            raise NotImplementedError("a Session window grouped by an expression is not supported by changeflow "
                                      "(group by columns: add the expression with add_columns first)")
        spec = WindowSpec("SESSION", size, partition_keys=tuple(k.name for k in partition),  # type: ignore[union-attr]
                          fires_at_end=not proctime)
    windowed = window_table_function(plan, time.name, spec)

    # The select list: each window property replaced by the window TVF column it reads.
    alias = window.alias_name
    used: set[str] = set()

    def swap(e: Expression) -> Expression:
        mapping: dict[int, Expression] = {}
        targets = {id(n.args[0]) for n in e.walk() if isinstance(n, Call) and n.function == "window_property"}
        for node in e.walk():
            if isinstance(node, Call) and node.function == "window_property":
                target = node.args[0]
                if not (isinstance(target, Column) and target.name == alias):
                    raise PlanError(f"{node}: the window property of an unknown window (this window is '{alias}')")
                prop = str(node.constant_arg(1))
                if prop == "rowtime" and proctime:   # Flink's type inference refuses it so
                    raise PlanError("Invalid function call:\nrowtime(TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*) "
                                    f"(the window '{alias}' is over a processing-time attribute)")
                if prop == "proctime" and not proctime:
                    # Flink: PROCTIME_MATERIALIZE(proctime('w')), the wall clock when the window's row is
                    # emitted, a processing-time attribute (TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*).
                    mapping[id(node)] = Call("proctime", ())
                    continue
                column = _PROPERTY_COLUMN[prop]
                used.add(column)
                mapping[id(node)] = Column(column)
            elif isinstance(node, Column) and node.name == alias and id(node) not in targets:
                raise PlanError(f"the window alias '{alias}' in {e}: select a window property "
                                f"(col('{alias}').start, .end, .rowtime)")
        return replace(e, mapping)

    names = _names(select)
    rewritten = [swap(e).alias(n) for e, n in zip(select, names, strict=True)]
    group = [Column("window_start"), Column("window_end"),
             *([Column("window_time")] if "window_time" in used else []), *keys]
    result = builder.aggregate(windowed, group, list(rewritten))
    if not keys:
        result = _ungrouped_types(result)
    # Flink types them nullable, but for proctime (NOT NULL *PROCTIME*, as the window TVF's window_time).
    properties = [i for i, e in enumerate(select) if isinstance(strip_alias(e), Call)
                  and strip_alias(e).function == "window_property"  # type: ignore[union-attr]
                  and strip_alias(e).constant_arg(1) != "proctime"]  # type: ignore[union-attr]
    return _nullable(result, properties)


def _names(select: list[Expression], over: bool = False) -> list[str]:
    """The select list's column names, as Flink's Table API names unnamed items: a group window's select
    ``EXPR$0``, ``EXPR$1``, ... counting only those (``select(col('k'), col('w').start)``: ``k, EXPR$0``),
    an over window's ``_c<position>`` (its select is a projection's)."""
    unnamed = iter(range(len(select)))
    return builder.output_names([e if e.output_name() else e.alias(f"_c{i}" if over else f"EXPR${next(unnamed)}")
                                 for i, e in enumerate(select)])


def _ungrouped_types(plan: Project) -> Project:
    """A window without other keys: Flink's Table API types its aggregates as a global aggregation's (SUM
    nullable), SQL's as grouped (NOT NULL): the select list retyped so."""
    aggregate = plan.input
    assert isinstance(aggregate, Aggregate)
    types = dict(aggregate.schema)
    types.update((c.output, builder.aggregate_type(c, grouped=False)) for c in aggregate.calls)
    return Project(aggregate, plan.exprs, tuple((n, type_of(e, types)) for n, e in plan.exprs))


def _nullable(plan: Project, positions: list[int]) -> Project:
    """Flink's Table API types a group window's properties nullable (``TIMESTAMP(3)``, ``TIMESTAMP(3) *ROWTIME*``),
    where the window TVF's columns are NOT NULL."""
    if not positions:
        return plan
    schema = tuple((n, DataType(t.root, True, t.params, t.element, t.descriptions) if i in positions else t)
                   for i, (n, t) in enumerate(plan.schema))
    return Project(plan.input, plan.exprs, schema)


# --- over windows -------------------------------------------------------------------------

class OverWindowedTable:
    """A table with an over window (``Table.over_window``): :meth:`select` its rows with
    aggregates over the window (``col('v').sum.over(col('w'))``)."""

    def __init__(self, table: "Table", windows: tuple[OverWindow, ...]) -> None:
        if len(windows) != 1:
            raise NotImplementedError(f"over_window with {len(windows)} windows: changeflow (as Flink's streaming "
                                      "planner) supports a single over window")
        window = windows[0]
        if not isinstance(window, OverWindow) or window.alias_name is None:
            raise TypeError(f"over_window(...) takes an over window with an alias "
                            f"(Over.partition_by(...).order_by(...).alias('w')), got {window!r}")
        self._table = table
        self._window = window

    def select(self, *fields: Expression | str) -> "Table":
        from changeflow.table.table import _exprs
        return self._table._wrap(plan_over_window(self._table.plan, self._window, _exprs(fields)))


def over_frame(window: OverWindow) -> OverFrame:
    """The frame of ``window``: its preceding bound, and a following bound that is the current row or range."""
    lower = window.lower
    name = bound_name(lower)
    if lower is None or name == "UNBOUNDED_RANGE":
        frame = OverFrame(False, None)
    elif name == "UNBOUNDED_ROW":
        frame = OverFrame(True, None)
    elif name in ("CURRENT_ROW", "CURRENT_RANGE"):
        frame = OverFrame(name == "CURRENT_ROW", 0)
    elif isinstance(lower, Call) and lower.function == "row_interval":
        count = lower.constant_arg(0)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise PlanError(f"row_interval takes a non-negative row count, got {count!r}")
        frame = OverFrame(True, count)
    else:
        frame = OverFrame(False, interval_ms(lower, "the preceding bound of an over window"))
    upper = bound_name(window.upper)
    if window.upper is not None and upper not in ("CURRENT_ROW", "CURRENT_RANGE"):
        raise NotImplementedError(f"following({window.upper}): OVER RANGE FOLLOWING windows are not supported yet "
                                  "(the frame must end at CURRENT_ROW or CURRENT_RANGE)")
    if upper is not None and (upper == "CURRENT_ROW") != frame.rows:
        raise PlanError("Preceding and following must be of same interval type. "
                        f"(preceding {lower}, following {window.upper})")
    return frame


def plan_over_window(plan: PlanNode, window: OverWindow, select: list[Expression]) -> PlanNode:
    """``select`` over ``plan`` with the aggregates over ``window`` (see the module docstring)."""
    types = plan.type_map()
    partition = []
    for p in window.partition:
        if not isinstance(p, Column):
            raise NotImplementedError(f"partition_by({p}): an over window partitioned by an expression is not "
                                      "supported by changeflow (partition by columns)")
        type_of(p, types)  # an unknown column is named
        partition.append(p.name)
    order = window.order
    if not isinstance(order, Column):
        raise PlanError(f"order_by({order}): an over window is ordered by a time attribute column")
    type_of(order, types)
    frame = over_frame(window)

    pre: list[tuple[str, Expression]] = [(n, Column(n)) for n in plan.field_names]
    calls: list[AggCall] = []
    mapping: dict[int, Expression] = {}
    for e in select:
        over_args = {id(n.args[0]) for n in e.walk() if isinstance(n, Call) and n.function == "over"}
        for node in e.walk():
            if not (isinstance(node, Call) and node.function == "over"):
                if isinstance(node, Agg) and id(node) not in over_args:
                    raise PlanError(f"{node} in the select of an over window: an aggregate needs "
                                    f".over(col('{window.alias_name}'))")
                continue
            agg, target = node.args
            if not (isinstance(target, Column) and target.name == window.alias_name):
                raise PlanError(f"{node}: over an unknown window (this window is '{window.alias_name}')")
            if not isinstance(agg, Agg) or agg.function not in OVER_FUNCTIONS or agg.is_distinct:
                raise NotImplementedError(f"{node}: an over window computes COUNT, SUM, AVG, MIN and MAX "
                                          "(no DISTINCT) in changeflow")
            calls.append(over_call(agg, pre, types, len(calls)))
            mapping[id(node)] = Column(calls[-1].output)
    if not calls:
        raise PlanError(f"the select of an over window has no aggregate over it (.over(col('{window.alias_name}')))")
    below = plan
    if len(pre) > len(plan.field_names):
        below = Project(plan, tuple(pre), tuple((n, type_of(e, types)) for n, e in pre))
    schema = below.schema + tuple((c.output, builder.aggregate_type(c, grouped=False)) for c in calls)
    over = OverAggregate(below, tuple(partition), order.name, True, frame, tuple(calls), schema,
                         proctime=is_proctime(types[order.name]))
    names = _names(select, over=True)
    exprs = [strip_alias(replace(e, mapping)) for e in select]
    out_types = over.type_map()
    return Project(over, tuple(zip(names, exprs, strict=True)),
                   tuple((n, type_of(x, out_types)) for n, x in zip(names, exprs, strict=True)))

