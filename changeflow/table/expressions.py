"""Table API expressions with PyFlink's names: ``col``, ``lit`` and the functions of
``pyflink.table.expressions``.

Each function builds a call of a built-in function the SQL front end has too
(so it is typed and compiled alike); a PyFlink function changeflow does not map
raises :class:`NotImplementedError` naming it (:data:`UNSUPPORTED_FUNCTIONS`).

>>> from changeflow.table.expressions import col, concat, lit
>>> str(col("a") + lit(1))
'(a + 1)'
>>> str(concat(col("a"), "-", col("b")))
"CONCAT(a, '-', b)"
"""

from __future__ import annotations

import math
from typing import Any

from changeflow import expressions as _json  # the JSON call builders
from changeflow.common.types import DataType, DataTypes
from changeflow.expression_functions import TimeIntervalUnit, TimePointUnit, unit_name
from changeflow.expressions import Agg, Call, Column, Expression, Literal, UserCall, to_expression

__all__ = [
    "Expression", "TimeIntervalUnit", "TimePointUnit", "and_", "call", "call_sql", "coalesce", "col", "concat",
    "concat_ws",
    "count_star", "current_date", "current_timestamp", "current_watermark", "date_format", "e", "from_unixtime",
    "if_then_else",
    "json", "json_array", "json_array_agg", "json_object", "json_object_agg", "json_string",
    "lit", "local_timestamp", "log", "negative", "not_", "null_of", "or_", "pi", "range_", "timestamp_diff",
    "to_date", "to_timestamp", "to_timestamp_ltz", "unix_timestamp", "row_interval", "UNBOUNDED_ROW", "UNBOUNDED_RANGE",
    "CURRENT_ROW", "CURRENT_RANGE", "with_all_columns", "with_columns", "without_columns",
]


def _call(function: str, *args: Any) -> Call:
    return Call(function, tuple(to_expression(a) for a in args))


def col(name: str) -> Expression:
    """A reference to the column ``name``; ``col('*')`` is every column (in a projection)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"col() takes a column name, got {name!r}")
    return Column(name)


def lit(value: Any, data_type: DataType | None = None) -> Expression:
    """A literal value; ``data_type`` is needed for a typed NULL."""
    return Literal(value, data_type)


def count_star() -> Expression:
    """``COUNT(*)``: the number of rows of the group, nulls included."""
    return Agg("count_star", None)


# --- column sets: expanded by the Table methods (changeflow/table/columns_ops.py) -------------
def with_all_columns() -> Expression:
    """Every column, as ``col('*')``."""
    return Column("*")


def range_(start: str | int, end: str | int) -> Expression:
    """The columns from ``start`` to ``end`` (names, or 1-based positions), for :func:`with_columns`."""
    return Call("range", (Literal(start), Literal(end)))


def with_columns(head: Any, *tails: Any) -> Expression:
    """The columns ``head, *tails`` name: columns, ranges (:func:`range_`), positions."""
    return Call("with_columns", tuple(to_expression(a) for a in (head,) + tails))


def without_columns(head: Any, *tails: Any) -> Expression:
    """Every column except those ``head, *tails`` name."""
    return Call("without_columns", tuple(to_expression(a) for a in (head,) + tails))


# --- logic and conditions ---------------------------------------------------------------------
def and_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    """Boolean AND in three-valued logic."""
    result = _call("and", predicate0, predicate1)
    for p in predicates:
        result = _call("and", result, p)
    return result


def or_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    """Boolean OR in three-valued logic."""
    result = _call("or", predicate0, predicate1)
    for p in predicates:
        result = _call("or", result, p)
    return result


def not_(expression: Any) -> Expression:
    """Boolean NOT (NULL stays NULL)."""
    return _call("not", expression)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    """``if_true`` where ``condition`` holds, else ``if_false`` (SQL's CASE WHEN)."""
    return _call("case", condition, if_true, if_false)


def coalesce(*args: Any) -> Expression:
    """The first argument that is not NULL."""
    if not args:
        raise ValueError("coalesce() needs at least one argument")
    return _call("coalesce", *args)


def null_of(data_type: DataType) -> Expression:
    """A NULL of ``data_type``."""
    return Literal(None, data_type.with_nullable(True))


# --- arithmetic ---------------------------------------------------------------------------------
def log(v: Any, base: Any = None) -> Expression:
    """The natural logarithm of ``v``, or its logarithm to ``base``."""
    return to_expression(v).log(base)


def negative(v: Any) -> Expression:
    """``-v``."""
    return _call("negate", v)


def pi() -> Expression:
    """π as a DOUBLE."""
    return Literal(math.pi, DataTypes.DOUBLE(False))


def e() -> Expression:
    """Euler's number as a DOUBLE."""
    return Literal(math.e, DataTypes.DOUBLE(False))


# --- strings ------------------------------------------------------------------------------------
def concat(first: Any, *others: Any) -> Expression:
    """The strings concatenated; NULL if any is NULL."""
    return _call("concat", first, *others)


def concat_ws(separator: Any, first: Any, *others: Any) -> Expression:
    """The strings joined by ``separator``, skipping NULLs."""
    return _call("concat_ws", separator, first, *others)


# --- time -----------------------------------------------------------------------------------------
def current_date() -> Expression:
    return Call("current_date", ())


def current_timestamp() -> Expression:
    return Call("current_timestamp", ())


def current_watermark(rowtime: Any) -> Expression:
    """The watermark that reached this operator before the row (NULL before the first), as SQL's
    ``CURRENT_WATERMARK``: ``rowtime`` must be a rowtime attribute; in a filter it keeps the rows not late."""
    return _call("current_watermark", rowtime)


def local_timestamp() -> Expression:
    return Call("localtimestamp", ())


def to_date(date_str: Any, format: Any = None) -> Expression:
    """A DATE parsed from a string (``yyyy-MM-dd``, or ``format``)."""
    return _call("to_date", date_str) if format is None else _call("to_date", date_str, format)


def to_timestamp(timestamp_str: Any, format: Any = None) -> Expression:
    """A TIMESTAMP(3) parsed from a string (``yyyy-MM-dd HH:mm:ss``, or ``format``)."""
    return _call("to_timestamp", timestamp_str) if format is None else _call("to_timestamp", timestamp_str, format)


def to_timestamp_ltz(*args: Any) -> Expression:
    """A TIMESTAMP_LTZ from a numeric epoch value: ``to_timestamp_ltz(millis)`` or
    ``to_timestamp_ltz(value, precision)`` (units of 10^-precision s; 0 seconds, 3 milliseconds, 6
    microseconds). PyFlink's string forms are refused when planned, naming them."""
    return _call("to_timestamp_ltz", *args)


def date_format(timestamp: Any, format: Any) -> Expression:
    """The timestamp as a string in ``format`` (Java's SimpleDateFormat letters)."""
    return _call("date_format", timestamp, format)


def timestamp_diff(time_point_unit: Any, time_point1: Any, time_point2: Any) -> Expression:
    """Whole ``time_point_unit``s from ``time_point1`` to ``time_point2`` (an INT)."""
    unit = unit_name(time_point_unit, ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"), "timestamp_diff")
    return Call("timestampdiff", (Literal(unit), to_expression(time_point1), to_expression(time_point2)))


def from_unixtime(unixtime: Any, format: Any = None) -> Expression:
    return _call("from_unixtime", unixtime) if format is None else _call("from_unixtime", unixtime, format)


def unix_timestamp(date_str: Any = None, format: Any = None) -> Expression:
    args = [a for a in (date_str, format) if a is not None]
    return _call("unix_timestamp", *args)


# --- JSON functions (PyFlink's pyflink.table.expressions names) --------------------------------

def json_object(on_null: Any = "NULL", *args: Any) -> Expression:
    """``JSON_OBJECT``: a JSON object from alternating keys (string literals) and values.

    >>> str(json_object("ABSENT", "k", col("v")))
    'JSON_OBJECT(KEYS(k) ABSENT ON NULL, v)'
    """
    if len(args) % 2:
        raise ValueError(f"json_object() takes alternating keys and values, got {len(args)} arguments")
    return _json.json_object(list(zip(args[0::2], args[1::2], strict=True)), on_null)


def json_array(on_null: Any = "ABSENT", *args: Any) -> Expression:
    """``JSON_ARRAY``: a JSON array of the values."""
    return _json.json_array(list(args), on_null)


def json_string(value: Any) -> Expression:
    """``JSON_STRING``: the value serialized as JSON; NULL for NULL."""
    return _json.json_string(value)


def json(value: Any) -> Expression:
    """``JSON``: pre-formatted JSON text, inserted as JSON into ``json_object`` / ``json_array``."""
    return _json.json_text(value)


def json_object_agg(on_null: Any, key_expr: Any, value_expr: Any) -> Expression:
    """``JSON_OBJECTAGG(KEY key VALUE value ON NULL)``: the group's key/value pairs as one JSON object.

    ``on_null`` is ``JsonOnNull.NULL`` (a NULL value gives a ``null`` member) or
    ``JsonOnNull.ABSENT`` (the member is left out); members are sorted by key, and a key
    seen twice in a group fails the job, as in Flink.
    """
    return _json.json_object_agg(key_expr, value_expr, on_null)


def json_array_agg(on_null: Any, item_expr: Any) -> Expression:
    """``JSON_ARRAYAGG(item ON NULL)``: the group's items as one JSON array, in arrival order."""
    return _json.json_array_agg(item_expr, on_null)


def call_sql(sql_expression: str) -> Expression:
    """A SQL expression (``call_sql("UPPER(name) || '!'")``), resolved against the table it is used on."""
    from changeflow.sql.call_sql import sql_expression as parsed
    return parsed(sql_expression)


def call(f: Any, *args: Any) -> Expression:
    """A call of a user-defined function: a ``udf``/``udtf``/``udaf`` result, or the name it was
    registered under with ``create_temporary_function`` / ``create_temporary_system_function``."""
    from changeflow.table.functions_env import registered_function, user_function
    function = registered_function(f) if isinstance(f, str) else user_function(f)
    return UserCall(function, tuple(to_expression(a) for a in args))


# --- OVER window bounds (changeflow/table/window.py) -------------------------------------------
def row_interval(rows: int) -> Expression:
    """A ROWS bound of an OVER window: ``rows`` rows preceding (``Over...preceding(row_interval(2))``)."""
    return Call("row_interval", (Literal(rows),))


UNBOUNDED_ROW: Expression = Call("over_bound", (Literal("UNBOUNDED_ROW"),))
"""Every row before the current one (``ROWS BETWEEN UNBOUNDED PRECEDING``)."""
UNBOUNDED_RANGE: Expression = Call("over_bound", (Literal("UNBOUNDED_RANGE"),))
"""Every row up to the current one's time (``RANGE BETWEEN UNBOUNDED PRECEDING``)."""
CURRENT_ROW: Expression = Call("over_bound", (Literal("CURRENT_ROW"),))
"""The current row (``ROWS ... CURRENT ROW``)."""
CURRENT_RANGE: Expression = Call("over_bound", (Literal("CURRENT_RANGE"),))
"""The rows of the current row's time (``RANGE ... CURRENT ROW``)."""


# PyFlink functions changeflow has no built-in for: importing one works (a program may never
# call it); calling it raises, naming it.
UNSUPPORTED_FUNCTIONS = frozenset([
    "current_database", "current_time", "local_time",
    "temporal_overlaps", "convert_tz", "array", "row", "map_", "map_from_arrays", "descriptor", "object_of",
    "rand", "rand_integer", "atan2", "uuid", "source_watermark", "lag", "lead",
])


def __getattr__(name: str) -> Any:
    if name in UNSUPPORTED_FUNCTIONS:
        def unsupported(*args: Any, **kwargs: Any) -> Expression:
            raise NotImplementedError(f"pyflink.table.expressions.{name} is not supported by changeflow")
        unsupported.__name__ = name
        return unsupported
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
