"""The session time zone (``table.local-time-zone``) made explicit in a plan.

A TIMESTAMP_LTZ value is an instant: changeflow keeps it as a UTC instant whatever the
zone, so most of a plan does not depend on the zone. What does, in Flink 2.3 (checked with
PyFlink 2.3), is every conversion between an instant and a wall-clock time: CAST of a
TIMESTAMP_LTZ to STRING, TIMESTAMP, DATE or TIME and back, ``DATE_FORMAT`` of a
TIMESTAMP_LTZ, ``FROM_UNIXTIME``, ``UNIX_TIMESTAMP`` of a text, ``LOCALTIMESTAMP`` and
``CURRENT_DATE``, EXTRACT (and HOUR, MINUTE, ...) of a TIMESTAMP_LTZ and a comparison of a
TIMESTAMP_LTZ with a TIMESTAMP (Flink compares the wall clocks). :func:`in_session_zone`
rewrites those into the conversions below, which carry the zone as a literal argument, so
the runtime computes them without knowing the configuration:

* ``ltz_to_local(instant, zone)``: the wall clock of the instant in ``zone`` (a TIMESTAMP);
* ``local_to_ltz(wall_clock, zone)``: the instant of a wall-clock time in ``zone``; a time
  in a daylight-saving gap moves forward by the gap, a time in an overlap takes the earlier
  offset (Java's ``LocalDateTime.atZone``, what Flink's CAST does);
* ``local_seconds_to_epoch(seconds, zone)``: epoch seconds of a wall-clock time given as
  seconds since 1970-01-01 00:00 of that wall clock, with the later offset in an overlap
  (Flink's ``UNIX_TIMESTAMP`` parses with ``java.util.TimeZone``, which takes standard time).

A window (TVF, legacy group window, Table API window) over a TIMESTAMP_LTZ time attribute is
aligned to the zone's wall clock, as Flink aligns it: the rewrite puts the zone in its
:class:`~changeflow.plan.event_time.WindowSpec`, which every window operator above it reads
(:class:`~changeflow.kernels.window.zone_time.WindowClock`).

What else depends on the zone and is not done yet is refused with an error naming the
construct and the zone: FLOOR/CEIL,
interval arithmetic and TIMESTAMPDIFF in months or years of a TIMESTAMP_LTZ, a comparison
of a TIMESTAMP_LTZ with a DATE, a Python function taking or returning a TIMESTAMP_LTZ, and a
connector table's column declared TIMESTAMP_LTZ (which changeflow reads and writes as UTC; DDL
types it TIMESTAMP). Under a zone that is UTC at every instant the plan is returned unchanged.
"""

from __future__ import annotations

import dataclasses

from changeflow.common.types import DataType, DataTypes
from changeflow.config.time_zone import is_utc
from changeflow.expressions import Call, Expression, Literal, UserCall
from changeflow.kernels.aggregate.user import UserAggCall
from changeflow.plan.event_time import WindowTableFunction
from changeflow.plan.nodes import Join, PlanNode, Source
from changeflow.plan.type_inference import type_of

__all__ = ["ZONE_FUNCTIONS", "ZoneNotSupported", "in_session_zone", "is_utc_or_default", "non_utc"]

# The conversions :func:`in_session_zone` writes (typed in plan.type_inference, computed in runtime/spark).
ZONE_FUNCTIONS = ("ltz_to_local", "local_to_ltz", "local_seconds_to_epoch")
_LTZ = "TIMESTAMP_LTZ"
_WALL_CLOCK = ("TIMESTAMP", "DATE", "TIME", "CHAR", "VARCHAR")  # the types a CAST reads or writes as a wall clock
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
# What takes a TIMESTAMP_LTZ as the instant it is, whatever the zone (the rest is rewritten or refused):
# comparisons of two instants, NULL tests and choices between instants, TIMESTAMPDIFF (the probe with
# PyFlink 2.3 gave instant differences) and adding hours or days (24 hours: also checked).
_INSTANT_FUNCTIONS = frozenset((*_COMPARISONS, "is_null", "is_not_null", "coalesce", "ifnull", "nullif", "case",
                                "in", "not", "timestampdiff", "plus_interval", "current_watermark", "cast",
                                "try_cast"))


class ZoneNotSupported(NotImplementedError):
    """A construct whose result depends on a session time zone other than UTC, not computed in it yet."""

    def __init__(self, construct: str, zone: str) -> None:
        super().__init__(f"{construct} in the session time zone '{zone}' (table.local-time-zone) is not supported "
                         f"by changeflow yet; it runs in a zone that is UTC, such as 'UTC'")


def in_session_zone(plan: PlanNode, zone: str | None) -> PlanNode:
    """``plan`` with its zone-dependent expressions computed in ``zone``; ZoneNotSupported for the rest."""
    zone = non_utc(zone)
    return plan if zone is None else _Rewriter(zone).node(plan)


def non_utc(zone: str | None) -> str | None:
    """A ``table.local-time-zone`` value to compute in (stripped), or None for one that is UTC."""
    return None if is_utc_or_default(zone) or zone is None else zone.strip()


def is_utc_or_default(zone: str | None) -> bool:
    """Whether a valid ``table.local-time-zone`` value is UTC: unset, ``default`` (changeflow's queries run
    in UTC, not the machine's zone; docs/differences.md) or a zone that is UTC at every instant."""
    return zone is None or zone.strip().lower() == "default" or is_utc(zone)


class _Rewriter:
    def __init__(self, zone: str) -> None:
        self.zone = zone
        self._done: dict[int, PlanNode] = {}  # a node shared by two consumers is rewritten once

    # --- nodes -----------------------------------------------------------------------------
    def node(self, node: PlanNode) -> PlanNode:
        if id(node) not in self._done:
            self._done[id(node)] = self._node(node)
        return self._done[id(node)]

    def _node(self, node: PlanNode) -> PlanNode:
        if isinstance(node, WindowTableFunction) and node.input.type_map()[node.time_column].root == _LTZ:
            # Flink aligns the windows to the zone's wall clock: the window operators read the zone from the spec.
            node = dataclasses.replace(node, window=dataclasses.replace(node.window, zone=self.zone))
        declared = getattr(node, "ltz_columns", ())
        if declared:
            raise ZoneNotSupported(f"The column '{declared[0]}' declared TIMESTAMP_LTZ in table "
                                   f"{getattr(node, 'table', None) or getattr(node, 'name', '')} (a connector reads "
                                   f"and writes it as UTC)", self.zone)
        if isinstance(node, Source) or not dataclasses.is_dataclass(node):
            return node
        # Expressions of a join's condition name its output columns; a one-input node's, its input's.
        schema = dict(node.schema if isinstance(node, Join) or not node.inputs else node.inputs[0].schema)
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = self._field(value, schema)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]

    def _field(self, value, schema: dict[str, DataType]):
        if isinstance(value, UserAggCall) and any(t.root == _LTZ for t in value.arg_types):
            name = value.user.name if value.user is not None else value.output
            raise ZoneNotSupported(f"The Python aggregate function {name} taking a TIMESTAMP_LTZ", self.zone)
        if isinstance(value, PlanNode):
            return self.node(value)
        if isinstance(value, Expression):
            return self.expr(value, schema)
        if isinstance(value, tuple) and value:
            items = tuple(self._field(v, schema) for v in value)
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    # --- expressions ---------------------------------------------------------------------------
    def expr(self, expr: Expression, schema: dict[str, DataType]) -> Expression:
        if isinstance(expr, Call) and expr.function in ZONE_FUNCTIONS:
            return expr  # written by an earlier pass: its subtree is in the zone already (the rewrite is idempotent)
        rebuilt = _with_children(expr, [self.expr(c, schema) for c in expr.children()])
        if isinstance(rebuilt, UserCall):
            types = [type_of(a, schema) for a in rebuilt.args] + [type_of(rebuilt, schema)]
            if any(t.root == _LTZ for t in types):
                raise ZoneNotSupported(f"The Python function {rebuilt.function} taking or returning a TIMESTAMP_LTZ",
                                       self.zone)
        return self._call(rebuilt, schema) if isinstance(rebuilt, Call) else rebuilt

    def _call(self, call: Call, schema: dict[str, DataType]) -> Expression:
        f, args = call.function, call.args
        zone = Literal(self.zone)
        # A constant DataType argument (CAST's target, JSON_VALUE's RETURNING) is not a value to type.
        types = [type_of(a, schema) for a in args if not (isinstance(a, Literal) and isinstance(a.value, DataType))]
        ltz = [t.root == _LTZ for t in types]
        if f in ("cast", "try_cast"):
            source, target = types[0], call.constant_arg(1)
            if source.root == _LTZ and target.root != _LTZ and _wall_clock(target):
                return Call(f, (self._local(args[0]), args[1]))
            if target.root == _LTZ and source.root != _LTZ and _wall_clock(source):
                wall = Call(f, (args[0], Literal(DataTypes.TIMESTAMP(target.params[0]))))
                return Call(f, (Call("local_to_ltz", (wall, zone)), args[1]))
            return call
        if f == "date_format" and ltz[0]:
            return Call(f, (self._local(args[0]),) + args[1:])
        if f == "extract" and ltz[1]:  # EXTRACT(HOUR FROM ltz), HOUR(ltz): fields of the wall clock
            return Call(f, (args[0], self._local(args[1])))
        if f == "from_unixtime":
            instant = Call("to_timestamp_ltz", (args[0], Literal(0)))
            pattern = args[1] if len(args) > 1 else Literal("yyyy-MM-dd HH:mm:ss")
            return Call("date_format", (Call("ltz_to_local", (instant, zone)), pattern))
        if f == "unix_timestamp" and args:
            return Call("local_seconds_to_epoch", (call, zone))
        if f == "localtimestamp":
            return Call("ltz_to_local", (Call("current_timestamp", ()), zone))
        if f == "current_date":
            return Call("cast", (Call("ltz_to_local", (Call("current_timestamp", ()), zone)),
                                 Literal(DataTypes.DATE(False))))
        if not any(ltz):
            return call
        if f in ("floor_to", "ceil_to"):
            raise ZoneNotSupported(f"{f.split('_')[0].upper()} of a TIMESTAMP_LTZ ({call})", self.zone)
        if f in ("plus_interval", "timestampdiff") and any(
                isinstance(a, Literal) and a.value in ("YEAR", "MONTH", "QUARTER") for a in args):
            raise ZoneNotSupported(f"Calendar arithmetic on a TIMESTAMP_LTZ ({call})", self.zone)
        if f in _COMPARISONS and not all(ltz) and any(t.root == "TIMESTAMP" for t in types):
            # Flink compares the TIMESTAMP_LTZ's wall clock in the zone with the TIMESTAMP (PyFlink 2.3).
            return Call(f, tuple(self._local(a) if is_ltz else a for a, is_ltz in zip(args, ltz, strict=True)))
        if f in _COMPARISONS and not all(ltz) and any(t.root == "DATE" for t in types):
            raise ZoneNotSupported(f"A comparison of a TIMESTAMP_LTZ with a DATE ({call})", self.zone)
        if f not in _INSTANT_FUNCTIONS:  # a function that may read the instant as text or fields (in UTC)
            raise ZoneNotSupported(f"{f.upper()} of a TIMESTAMP_LTZ ({call})", self.zone)
        return call

    def _local(self, instant: Expression) -> Expression:
        return Call("ltz_to_local", (instant, Literal(self.zone)))


def _wall_clock(t: DataType) -> bool:
    return t.root in _WALL_CLOCK or t.is_string


def _with_children(expr: Expression, children: list[Expression]) -> Expression:
    """``expr`` with its children replaced (``expr`` itself when none changed)."""
    old = expr.children()
    if all(a is b for a, b in zip(old, children, strict=True)):
        return expr
    if isinstance(expr, (Call, UserCall)):
        return dataclasses.replace(expr, args=tuple(children))
    names = [f.name for f in dataclasses.fields(expr)  # type: ignore[arg-type]
             if isinstance(getattr(expr, f.name), Expression)]
    assert len(names) == len(children), expr
    return dataclasses.replace(expr, **dict(zip(names, children, strict=True)))  # type: ignore[type-var]

