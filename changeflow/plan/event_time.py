"""Event time in the plan: watermark assigners, window table functions, window aggregations.

Three nodes, as Flink's planner has them:

- :class:`WatermarkAssigner` sits on a table declared with ``WATERMARK FOR ts AS
  expr``: it marks ``ts`` a *rowtime attribute* (its type prints
  ``TIMESTAMP(3) *ROWTIME*``) and, at run time, makes the watermark of the rows
  that pass it (the largest ``expr`` seen so far).
- :class:`WindowTableFunction` is ``TABLE(TUMBLE|HOP|CUMULATE(TABLE t,
  DESCRIPTOR(ts), ...))``: every row once per window it falls in, with
  ``window_start``, ``window_end`` and ``window_time`` (``window_end`` - 1 ms, a
  rowtime attribute) appended. It is stateless.
- :class:`WindowAggregate` is a ``GROUP BY`` over a window table function that
  groups by its ``window_start`` and ``window_end`` (the
  :mod:`~changeflow.plan.rules.window_aggregate` rule finds it): in a streaming
  query each window's result is emitted once, insert-only, when the watermark
  passes the window's end; rows arriving after that are late and dropped.

Times are epoch milliseconds of the timestamp as written (a ``TIMESTAMP`` has no
zone; the runtime computes in UTC).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from changeflow.common.types import DataType
from changeflow.expressions import Column, Expression
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.nodes import Filter, PlanNode, Project, Schema, _DeclaredSchema, _OneInput

ROWTIME_MARKER = "*ROWTIME*"
WINDOW_COLUMNS = ("window_start", "window_end", "window_time")


def rowtime_type(t: DataType) -> DataType:
    """``t`` (a TIMESTAMP or TIMESTAMP_LTZ) marked as a rowtime attribute.

    >>> from changeflow.common.types import DataTypes
    >>> str(rowtime_type(DataTypes.TIMESTAMP(3)))
    'TIMESTAMP(3) *ROWTIME*'
    """
    precision = t.params[0] if t.params else 6
    return DataType(t.root, t.nullable, (precision, ROWTIME_MARKER))


def is_rowtime(t: DataType) -> bool:
    return ROWTIME_MARKER in t.params


def plain_time(t: DataType) -> DataType:
    """``t`` without a time-attribute marker (a regular TIMESTAMP)."""
    params = tuple(p for p in t.params if not (isinstance(p, str) and p.startswith("*")))
    return t if params == t.params else DataType(t.root, t.nullable, params, t.element, t.descriptions)


def is_time_attribute(node: PlanNode, column: str) -> bool:
    """Whether ``column`` of ``node`` is a rowtime attribute a window or an event-time operator can use.

    Its type is marked ``*ROWTIME*`` as Flink prints it, but as in Flink's planner
    (which materializes time indicators after validation) only the operators that
    keep event time pass the attribute on: projections of the column itself,
    filters, watermark assigners, window TVFs (and their ``window_time``), a window
    aggregation's ``window_time``, deduplication and Top-N, unions, interval and
    temporal joins. A regular aggregation or join outputs plain timestamps.
    """
    from changeflow.plan.nodes import Aggregate, Deduplicate, Join, Rank, Source, Union
    from changeflow.plan.window_ops import WindowDeduplicate, WindowRank

    if not is_rowtime(node.type_map().get(column, DataType("NULL"))):
        return False
    if isinstance(node, Source):
        return True
    if isinstance(node, WatermarkAssigner):
        return column == node.rowtime or is_time_attribute(node.input, column)
    if isinstance(node, (Filter, Deduplicate, Rank, WindowDeduplicate, WindowRank)):
        return is_time_attribute(node.input, column)
    if isinstance(node, Project):
        expr = dict(node.exprs).get(column)
        return isinstance(expr, Column) and is_time_attribute(node.input, expr.name)
    if isinstance(node, WindowTableFunction):
        return column == "window_time" or is_time_attribute(node.input, column)
    if isinstance(node, (WindowAggregate, Aggregate)):
        # A window aggregation's window_time; a logical Aggregate becomes one when it groups by a
        # window's start and end (plan/rules/window_aggregate.py), of a TVF or a windowed input.
        from changeflow.plan.window_ops import window_columns

        lineage = window_columns(node.input)
        roles = {lineage[k][0] for k in node.keys if k in lineage}
        return {"window_start", "window_end"} <= roles and lineage.get(column, ("",))[0] == "window_time"
    if isinstance(node, Union):
        index = node.field_names.index(column)
        return all(is_time_attribute(i, i.field_names[index]) for i in node.inputs)
    if type(node) is Join:   # a logical join the interval_join rule will make an interval join
        from changeflow.plan.time_joins import interval_bounds, interval_join

        bounds = interval_bounds(node)
        node = interval_join(node, bounds) if bounds is not None else node
    if isinstance(node, Join) and (getattr(node, "left_time", "") or getattr(node, "left_window", None)):
        # interval, temporal and window joins keep both sides' time attributes
        left = len(node.left.field_names)
        index = node.field_names.index(column)
        side, name = (node.left, node.left.field_names[index]) if index < left else \
            (node.right, node.right.field_names[index - left])
        return is_time_attribute(side, name)
    return False


def _interval(ms: int) -> str:
    """A duration as Flink's EXPLAIN prints window sizes: ``10 s``, ``5 min``, ``1500 ms``."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"


@dataclass(frozen=True)
class WindowSpec:
    """The window of a window TVF: ``TUMBLE`` (size), ``HOP`` (slide, size), ``CUMULATE`` (step, size), or
    ``SESSION`` (``size_ms`` is the gap; ``partition_keys`` the columns of its ``PARTITION BY``).

    ``offset_ms`` shifts the aligned windows' boundaries, as the TVFs' optional ``OFFSET``.
    ``fires_at_end``: whether the windows still open when the input ends fire then. True but for
    a legacy group window over processing time: Flink's GroupWindowAggregate does not fire its
    processing-time timers at the end of input, where the window TVF's operator fires every
    window. Not printed: Flink's plan shows no such thing.
    ``zone``: the session time zone whose wall clock aligns the windows (a window over a
    TIMESTAMP_LTZ attribute in a zone other than UTC, set by :mod:`changeflow.plan.time_zone`), or
    None: times are then counted in UTC (:class:`~changeflow.kernels.window.zone_time.WindowClock`).
    Not printed either.

    >>> [w for w in WindowSpec("HOP", 10_000, slide_ms=5_000).windows(12_000)]
    [(10000, 20000), (5000, 15000)]
    >>> [w for w in WindowSpec("CUMULATE", 15_000, step_ms=5_000).windows(7_000)]
    [(0, 10000), (0, 15000)]
    """

    kind: str
    size_ms: int
    slide_ms: int | None = None
    step_ms: int | None = None
    offset_ms: int = 0
    partition_keys: tuple[str, ...] = ()
    fires_at_end: bool = True
    zone: str | None = None

    @property
    def aligned(self) -> bool:
        """Whether a row's windows follow from its time alone (not SESSION, whose windows merge)."""
        return self.kind != "SESSION"

    def start_of(self, ts: int, size: int) -> int:
        """The start of the window of length ``size`` (aligned to the offset) holding ``ts``."""
        return ts - (ts - self.offset_ms) % size

    def windows(self, ts: int) -> list[tuple[int, int]]:
        """Every window ``(start, end)`` holding the instant ``ts`` (ms), as Flink assigns them (aligned only)."""
        if not self.aligned:
            raise ValueError("a SESSION window depends on the rows around a row, not on its time alone")
        if self.kind == "TUMBLE":
            start = self.start_of(ts, self.size_ms)
            return [(start, start + self.size_ms)]
        if self.kind == "HOP":
            assert self.slide_ms is not None
            out, start = [], self.start_of(ts, self.slide_ms)
            while start > ts - self.size_ms:
                out.append((start, start + self.size_ms))
                start -= self.slide_ms
            return out
        assert self.step_ms is not None
        start = self.start_of(ts, self.size_ms)
        first_end = self.start_of(ts, self.step_ms) + self.step_ms
        return [(start, end) for end in range(first_end, start + self.size_ms + 1, self.step_ms)]

    def __str__(self) -> str:
        offset = f", offset=[{_interval(self.offset_ms)}]" if self.offset_ms else ""
        if self.kind == "TUMBLE":
            return f"TUMBLE(size=[{_interval(self.size_ms)}]{offset})"
        if self.kind == "HOP":
            return f"HOP(slide=[{_interval(self.slide_ms or 0)}], size=[{_interval(self.size_ms)}]{offset})"
        if self.kind == "SESSION":
            keys = f", partition keys=[{', '.join(self.partition_keys)}]" if self.partition_keys else ""
            return f"SESSION(gap=[{_interval(self.size_ms)}]{keys})"
        return f"CUMULATE(max_size=[{_interval(self.size_ms)}], step=[{_interval(self.step_ms or 0)}]{offset})"


@dataclass(frozen=True, eq=False)
class WatermarkAssigner(_OneInput, _DeclaredSchema):
    """``WATERMARK FOR rowtime AS expression`` on the rows of ``input``.

    ``expression`` is over the input's columns; ``text`` is it as declared (for
    EXPLAIN). The output is the input with ``rowtime`` typed as a rowtime attribute.
    """

    input: PlanNode
    rowtime: str
    expression: Expression
    text: str
    out_schema: Schema


@dataclass(frozen=True, eq=False)
class ProcessingTimeAssigner(WatermarkAssigner):
    """The wall clock as a watermark, under a window TVF over a ``PROCTIME()`` attribute.

    Flink fires a processing-time window on a timer at its end. changeflow gives a
    micro-batch's rows one processing time ``t`` (Spark's batch timestamp, which
    ``PROCTIME()`` compiles to) and, after them, the watermark ``t - 1 ms``: every
    later row has a larger time, so the windows that end by ``t`` are complete and
    fire, and none of the batch's own rows is late. The rest of event time (watermark
    rows, their numbering per scan, the window kernels) is shared. The output keeps
    ``rowtime`` a processing-time attribute; EXPLAIN does not print the node (Flink's
    plan has no assigner here).
    """

    in_flink_plan: ClassVar[bool] = False


def assign_watermark(plan: PlanNode, rowtime: str, expression: Expression, text: str) -> WatermarkAssigner:
    schema = tuple((n, rowtime_type(t) if n == rowtime else t) for n, t in plan.schema)
    return WatermarkAssigner(plan, rowtime, expression, text, schema)


@dataclass(frozen=True, eq=False)
class WindowTableFunction(_OneInput, _DeclaredSchema):
    """``TABLE(<window>(TABLE input, DESCRIPTOR(time_column), ...))``: rows assigned to their windows.

    Output: the input's columns (``time_column`` still a rowtime attribute, as
    in Flink), then ``window_start``, ``window_end``, ``window_time``.
    """

    input: PlanNode
    time_column: str
    window: WindowSpec
    out_schema: Schema


def window_table_function(plan: PlanNode, time_column: str, window: WindowSpec) -> WindowTableFunction:
    """The window TVF over ``plan``; the time column must be a rowtime or processing-time attribute.

    Over a processing-time attribute the input gets a :class:`ProcessingTimeAssigner`.
    """
    from changeflow.common.types import DataTypes
    from changeflow.plan.type_inference import PlanError, is_proctime, proctime_type

    types = plan.type_map()
    if time_column not in types:
        raise PlanError(f"Unknown column '{time_column}' in the DESCRIPTOR of {window.kind}; "
                        f"available: {', '.join(types)}")
    t = types[time_column]
    proctime = is_proctime(t)
    if not proctime and not is_time_attribute(plan, time_column):
        raise PlanError(f"The window function requires the timecol is a time attribute type, but is "
                        f"{plain_time(t)} (column '{time_column}' of {window.kind}; declare a WATERMARK on it)")
    for name in WINDOW_COLUMNS:
        if name in types:
            raise PlanError(f"{window.kind}: the input already has a column named '{name}'")
    for key in window.partition_keys:
        if key not in types:
            raise PlanError(f"Unknown column '{key}' in the PARTITION BY of {window.kind}; "
                            f"available: {', '.join(types)}")
    bound = DataTypes.TIMESTAMP(3, nullable=False)
    window_time = proctime_type() if proctime else rowtime_type(DataType(t.root, False, (3,)))
    added = (("window_start", bound), ("window_end", bound), ("window_time", window_time))
    if proctime:
        plan = ProcessingTimeAssigner(plan, time_column, Column(time_column), "PROCTIME()", plan.schema)
    return WindowTableFunction(plan, time_column, window, plan.schema + added)


@dataclass(frozen=True, eq=False)
class WindowAggregate(_OneInput, _DeclaredSchema):
    """``GROUP BY window_start, window_end[, window_time], keys`` over a window table function.

    ``keys`` hold the window columns as the input names them (``window_end``
    names the end column, ``window_time`` the time column if grouped by);
    output: the keys, then one column per call (as :class:`~changeflow.plan.nodes.Aggregate`).
    ``attached``: the input is another window operator's output whose rows carry their
    window (Flink's ``WindowAttachedWindowingStrategy``), not a window TVF's.
    """

    input: PlanNode
    keys: tuple[str, ...]
    calls: tuple[AggCall, ...]
    out_schema: Schema
    window: WindowSpec
    window_start: str
    window_end: str
    attached: bool = False

    @property
    def window_text(self) -> str:
        """The window as EXPLAIN prints it: with its columns (``win_start=[..]``) when attached, as Flink does."""
        if not self.attached:
            return str(self.window)
        return str(self.window).replace("(", f"(win_start=[{self.window_start}], win_end=[{self.window_end}], ", 1)


def window_lineage(node: PlanNode) -> dict[str, tuple[str, WindowSpec]]:
    """The columns of ``node`` that are a window TVF's ``window_start``/``window_end``/``window_time``.

    Maps the column's name in ``node`` to ``(role, window)``, role one of
    :data:`WINDOW_COLUMNS`; followed through filters and projections that pass
    the column on unchanged (renamed or not).
    """
    if isinstance(node, WindowTableFunction):
        return {name: (name, node.window) for name in WINDOW_COLUMNS}
    if isinstance(node, Filter):
        return window_lineage(node.input)
    if isinstance(node, Project):
        below = window_lineage(node.input)
        return {n: below[e.name] for n, e in node.exprs if isinstance(e, Column) and e.name in below}
    return {}


__all__ = ["ROWTIME_MARKER", "WINDOW_COLUMNS", "ProcessingTimeAssigner", "WatermarkAssigner", "WindowAggregate",
           "WindowSpec", "WindowTableFunction", "assign_watermark", "is_rowtime", "is_time_attribute", "plain_time",
           "rowtime_type", "window_lineage", "window_table_function"]
