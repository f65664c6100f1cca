"""Event-time joins in the plan: the interval join and the event-time temporal join.

An *interval join* is a join whose ON clause bounds the distance between a
rowtime attribute of each side, both ways, as Flink's planner finds them
(``IntervalJoinUtil``)::

    a.ts BETWEEN b.ts - INTERVAL '5' SECOND AND b.ts + INTERVAL '5' SECOND
    a.ts >= b.ts - INTERVAL '5' SECOND AND a.ts < b.ts + INTERVAL '2' SECOND

In a streaming query over insert-only inputs such a join runs as an
:class:`IntervalJoin` (rule :mod:`~changeflow.plan.rules.interval_join`): its
state holds only the rows the watermark says can still match, and it emits
insert-only (an outer join pads a row when it can no longer match). Flink's
bounds: ``right.ts + lower_ms <= left.ts <= right.ts + upper_ms``, a strict
``<`` / ``>`` taking one millisecond off (``leftUpperBound=1999`` for ``<
b.ts + INTERVAL '2' SECOND``). The output keeps both rowtime attributes, as in
Flink. A batch plan keeps the regular join: over bounded input it gives the
same rows.

An *event-time temporal join* (:class:`TemporalJoin`) is ``probe [LEFT] JOIN
versioned FOR SYSTEM_TIME AS OF probe.rowtime ON probe.k = versioned.pk``, where
the versioned table has a PRIMARY KEY and a rowtime attribute (a WATERMARK): each
probe row is joined with the version of its key valid at its time, and emitted
when the watermark passes that time (SQL in :mod:`changeflow.sql.temporal_join`).
Both rowtime columns stay time attributes in the output, as in Flink.
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.expressions import Call, Column, Expression, Literal, strip_alias
from changeflow.plan.event_time import is_rowtime
from changeflow.plan.nodes import Join, PlanNode

_UNIT_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True, eq=False)
class IntervalJoin(Join):
    """A :class:`~changeflow.plan.nodes.Join` run as an event-time interval join.

    ``left_time`` / ``right_time`` name the rowtime columns (in each input's own
    names); ``lower_ms <= left_time - right_time <= upper_ms``. ``condition``
    stays the whole non-equi part of ON (EXPLAIN prints it, as Flink's
    ``where``); ``remaining`` is it without the time bounds (the kernel checks
    the bounds itself).
    """

    left_time: str = ""
    right_time: str = ""
    lower_ms: int = 0
    upper_ms: int = 0
    remaining: Expression | None = None


@dataclass(frozen=True, eq=False)
class TemporalJoin(Join):
    """A :class:`~changeflow.plan.nodes.Join` of a probe input with the versions of a versioned table.

    ``join_type`` is INNER or LEFT; ``left_time`` names the probe's rowtime column,
    ``right_time`` the versioned table's (each in its input's own names);
    ``primary_key`` is the versioned table's key (among ``right_keys``).
    ``condition`` is the rest of ON.
    """

    left_time: str = ""
    right_time: str = ""
    primary_key: tuple[str, ...] = ()


def declared_key(node: PlanNode) -> tuple[str, ...]:
    """The PRIMARY KEY declared on the table ``node`` reads, followed through its watermark and renames."""
    from changeflow.plan.event_time import WatermarkAssigner
    from changeflow.plan.nodes import Filter, Project, Source

    if isinstance(node, Source):
        return tuple(node.primary_key)
    if isinstance(node, (WatermarkAssigner, Filter)):
        return declared_key(node.input)
    if isinstance(node, Project):
        below = declared_key(node.input)
        passed: dict[str, str] = {}
        for name, expr in node.exprs:
            expr = strip_alias(expr)
            if isinstance(expr, Column) and expr.name not in passed:
                passed[expr.name] = name
        return tuple(passed[k] for k in below) if below and all(k in passed for k in below) else ()
    return ()


@dataclass(frozen=True)
class Bounds:
    left_time: str
    right_time: str
    lower_ms: int
    upper_ms: int
    remaining: Expression | None


def interval_bounds(node: Join) -> Bounds | None:
    """The time bounds of ``node``'s condition, if it has a lower and an upper one over two rowtime attributes.

    Each bound is a conjunct comparing a rowtime column of the left input
    (shifted by a literal interval or not) with one of the right input. Several
    bounds of one direction keep the tightest. None: a regular join.
    """
    if node.condition is None:
        return None
    n = len(node.left.schema)
    out_names = node.field_names
    types = dict(zip(out_names, [t for _, t in node.left.schema] + [t for _, t in node.right.schema], strict=True))
    left_out = {o for o in out_names[:n] if is_rowtime(types[o])}
    right_out = {o for o in out_names[n:] if is_rowtime(types[o])}
    lower: list[tuple[int, str, str]] = []
    upper: list[tuple[int, str, str]] = []
    rest: list[Expression] = []
    for conjunct in _conjuncts(node.condition):
        bound = _bound(conjunct, left_out, right_out)
        if bound is None:
            rest.append(conjunct)
        elif bound[0] == "lower":
            lower.append(bound[1:])
        else:
            upper.append(bound[1:])
    if not lower or not upper:
        return None
    columns = {(lt, rt) for _, lt, rt in lower + upper}
    if len(columns) != 1:
        return None  # bounds over different time columns: Flink plans a regular join
    ((left_time, right_time),) = columns
    remaining = None
    for c in rest:
        remaining = c if remaining is None else Call("and", (remaining, c))
    to_left = dict(zip(out_names[:n], node.left.field_names, strict=True))
    to_right = dict(zip(out_names[n:], node.right.field_names, strict=True))
    return Bounds(to_left[left_time], to_right[right_time], max(b for b, _, _ in lower), min(b for b, _, _ in upper),
                  remaining)


def interval_join(node: Join, bounds: Bounds) -> IntervalJoin:
    return IntervalJoin(node.left, node.right, node.join_type, node.left_keys, node.right_keys, node.condition,
                        node.out_schema, node.left_ttl_ms, node.right_ttl_ms, traits=node.traits,
                        left_time=bounds.left_time, right_time=bounds.right_time, lower_ms=bounds.lower_ms,
                        upper_ms=bounds.upper_ms, remaining=bounds.remaining)


def _conjuncts(expr: Expression) -> list[Expression]:
    expr = strip_alias(expr)
    if isinstance(expr, Call) and expr.function == "and":
        return _conjuncts(expr.args[0]) + _conjuncts(expr.args[1])
    return [expr]


def shifted_time(expr: Expression) -> tuple[str, int] | None:
    """``column`` or ``column +/- INTERVAL 'n' UNIT`` (a day-time unit) as ``(column, shift ms)``."""
    expr = strip_alias(expr)
    if isinstance(expr, Column):
        return expr.name, 0
    if isinstance(expr, Call) and expr.function == "plus_interval":
        base, count, unit = expr.args
        inner = shifted_time(base)
        if inner is None or not isinstance(count, Literal) or not isinstance(unit, Literal):
            return None
        if unit.value not in _UNIT_MS:
            return None
        return inner[0], inner[1] + int(count.value) * _UNIT_MS[unit.value]
    return None


def _bound(expr: Expression, left: set[str], right: set[str]) -> tuple[str, int, str, str] | None:
    """A conjunct ``left_time (+a) OP right_time (+b)`` as ``(lower|upper, ms, left, right)`` of ``left - right``."""
    if not (isinstance(expr, Call) and expr.function in _FLIP and len(expr.args) == 2):
        return None
    a, b = shifted_time(expr.args[0]), shifted_time(expr.args[1])
    if a is None or b is None:
        return None
    op = expr.function
    if a[0] in right and b[0] in left:
        a, b, op = b, a, _FLIP[op]
    if not (a[0] in left and b[0] in right):
        return None
    # left + sa OP right + sb  <=>  left - right OP sb - sa
    c = b[1] - a[1]
    if op == ">=":
        return "lower", c, a[0], b[0]
    if op == ">":
        return "lower", c + 1, a[0], b[0]
    if op == "<=":
        return "upper", c, a[0], b[0]
    return "upper", c - 1, a[0], b[0]


__all__ = ["Bounds", "IntervalJoin", "TemporalJoin", "declared_key", "interval_bounds", "interval_join"]
