"""Compiles expressions to Spark Columns, so stateless work stays in the JVM.

Where Spark and Flink disagree the compiled Column follows Flink: arithmetic is
Java's whatever Spark's ANSI mode (:mod:`.arithmetic`: integers wrap on overflow,
``/`` between integers truncates toward zero, a division by zero fails naming the
SQL expression, a DOUBLE divided by zero is infinite, a DECIMAL overflow is NULL); a
function's result is cast to the type Flink gives it (``FLOOR`` of a DOUBLE
stays DOUBLE); parsing functions that Flink makes return NULL on bad input
(``TO_TIMESTAMP``, ``TO_DATE``, ``SPLIT_INDEX`` past the end) use Spark's
``try_`` variants, which return NULL where ANSI mode would fail the query.
``PROCTIME()`` is Spark's current timestamp: a processing-time attribute.

CASTs that Spark's own cast gets wrong for Flink: to and from TIME, to BINARY(n) / VARBINARY(n).

A TIME is a LONG of microseconds of the day here (:mod:`.spark_types`), so Spark's cast
of a string or timestamp to it would read a number; Flink's TIME keeps milliseconds
(``TIME(p)`` for p > 3 holds no more), and a cast to ``TIME(p)`` truncates to p digits.
A cast to ``VARBINARY(n)`` truncates to n bytes, one to ``BINARY(n)`` also pads with
zero bytes to n, as Flink does. Strings encode to and decode from UTF-8 (Spark's cast).
"""

from __future__ import annotations

import re

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.types import DataType
from changeflow.expressions import Alias, Call, Column as ColumnRef, Expression, Literal, UserCall
from changeflow.kernels.current_watermark import COLUMN as CURRENT_WATERMARK_COLUMN
from changeflow.plan.json_calls import JSON_FUNCTIONS
from changeflow.plan.type_inference import ltz_epoch_precision, type_of
from changeflow.runtime.spark import arithmetic, java_time_format, simple_date_format
from changeflow.runtime.spark.json_columns import compile_json
from changeflow.runtime.spark.spark_types import to_spark as _to_spark_type
from changeflow.runtime.spark.zone_columns import ZONE_COLUMNS


def to_spark(t: DataType) -> T.DataType:
    """Spark's type for a Flink type, including the expression-only NULL type."""
    if t.root == "NULL":
        return T.NullType()
    return _to_spark_type(t)

_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def _constant(expr: Expression):
    """The value of a planner-made literal argument (a CAST's type, a time unit, an interval count)."""
    if not isinstance(expr, Literal):
        raise TypeError(f"expected a literal argument, got {expr}")
    return expr.value


def compile_expr(expr: Expression, schema: dict[str, DataType]) -> Column:
    """A Spark Column computing ``expr`` (typed as Flink types it) over ``schema``."""
    if isinstance(expr, Alias):
        return compile_expr(expr.child, schema)
    if isinstance(expr, ColumnRef):
        return F.col(_quote(expr.name))
    if isinstance(expr, Literal):
        if expr.value is None:
            t = expr.type()
            return F.lit(None) if t.root == "NULL" else F.lit(None).cast(to_spark(t))
        return F.lit(expr.value).cast(to_spark(expr.type()))
    if isinstance(expr, UserCall):  # a Python function: a pandas_udf over Arrow batches
        from changeflow.runtime.spark.python_udf import compile_user_call
        return compile_user_call(expr, schema, lambda a: compile_expr(a, schema))
    assert isinstance(expr, Call), expr
    f = expr.function
    if f == "cast":
        value, target = compile_expr(expr.args[0], schema), _constant(expr.args[1])
        special = special_cast(value, type_of(expr.args[0], schema), target)  # TIME, BINARY(n): special_cast
        return special if special is not None else value.cast(to_spark(target))
    if f == "try_cast":
        value, target = compile_expr(expr.args[0], schema), _constant(expr.args[1])
        special = special_cast(value, type_of(expr.args[0], schema), target, safe=True)
        return special if special is not None else value.try_cast(to_spark(target))
    if f == "current_watermark":
        # The watermark before the row, stamped by the CurrentWatermarkStamp stage the translator
        # put under this Calc (runtime/spark/current_watermark.py), typed as the rowtime argument.
        instant = F.timestamp_millis(F.col(CURRENT_WATERMARK_COLUMN))
        return instant if type_of(expr, schema).root == "TIMESTAMP_LTZ" else instant.cast("timestamp_ntz")
    if f == "timestampdiff":
        # Whole units from t1 to t2, truncated toward zero (Flink's TIMESTAMPDIFF).
        unit = _constant(expr.args[0])
        t1, t2 = (compile_expr(a, schema).cast("timestamp") for a in expr.args[1:])
        if unit in ("YEAR", "MONTH"):
            months = F.months_between(t2, t1, roundOff=False)
            whole = F.when(months >= 0, F.floor(months)).otherwise(F.ceil(months))
            return (F.call_function("div", whole.cast("long"), F.lit(12)) if unit == "YEAR" else whole).cast("int")
        micros = F.unix_micros(t2) - F.unix_micros(t1)
        return F.call_function("div", micros, F.lit(_UNIT_MICROS[unit])).cast("int")
    if f == "extract" and type_of(expr.args[1], schema).root in _TIMESTAMPS:
        return _extract_from_timestamp(_constant(expr.args[0]), compile_expr(expr.args[1], schema))
    if f == "floor_to":
        return F.date_trunc(_constant(expr.args[1]), compile_expr(expr.args[0], schema)).cast(
            to_spark(type_of(expr.args[0], schema)))
    if f == "plus_interval":
        value = compile_expr(expr.args[0], schema)
        count, unit = _constant(expr.args[1]), _constant(expr.args[2])
        if unit == "DAY" and type_of(expr.args[0], schema).root == "DATE":
            return F.date_add(value, count)
        if unit in ("YEAR", "MONTH"):
            return F.add_months(value, count * 12 if unit == "YEAR" else count).cast(
                to_spark(type_of(expr.args[0], schema)))
        return value + F.expr(f"INTERVAL {int(count)} {unit}")
    if f in JSON_FUNCTIONS:  # vectorised Python over Flink's JSON rules (json_columns.py)
        return compile_json(expr, lambda a: compile_expr(a, schema), to_spark, type_of(expr, schema))
    args = [compile_expr(a, schema) for a in expr.args]
    result_type = type_of(expr, schema)
    if f in ("+", "-", "*", "/", "%"):
        return _arithmetic(expr, args, result_type, schema)
    if f in _COMPARE:
        return _COMPARE[f](*args)
    if f == "and":
        return args[0] & args[1]
    if f == "or":
        return args[0] | args[1]
    if f == "not":
        return ~args[0]
    if f == "negate":
        if result_type.is_integral:
            # -MIN is MIN in Java; Spark's ANSI mode would fail.
            return arithmetic.integral("-", F.lit(0), args[0], result_type, _sql_of(expr)).cast(
                to_spark(result_type))
        return -args[0]
    if f == "hash_code":  # internal: a split distinct aggregation's bucket (plan/rules/split_distinct.py)
        return F.hash(args[0])
    if f == "not_distinct":
        return args[0].eqNullSafe(args[1])
    if f == "is_null":
        return args[0].isNull()
    if f == "is_not_null":
        return args[0].isNotNull()
    if f in ("is_true", "is_false", "is_not_true", "is_not_false"):
        test = args[0] if f.endswith("true") else ~args[0]
        test = F.coalesce(test, F.lit(False))
        return ~test if "_not_" in f else test
    if f in _SCALAR:
        return _SCALAR[f](expr, args).cast(to_spark(result_type))
    raise NotImplementedError(f"function {f} has no Spark translation")


def _arithmetic(expr: Call, args: list[Column], result_type: DataType, schema: dict[str, DataType]) -> Column:
    """``+ - * / %`` with Flink's (Java's) semantics in either Spark ANSI mode (see arithmetic.py)."""
    a, b = args
    where = _sql_of(expr)
    out_type = to_spark(result_type)
    roots = {type_of(x, schema).root for x in expr.args}
    if result_type.root in ("DOUBLE", "FLOAT") or roots & {"DOUBLE", "FLOAT"}:
        # Approximate arithmetic is done in DOUBLE (a MOD of a DECIMAL by a DOUBLE is DOUBLE).
        return arithmetic.floating(expr.function, a, b).cast(out_type)
    if result_type.root == "DECIMAL" or "DECIMAL" in roots:
        # MOD takes its divisor's type: a DECIMAL % INT is an INT.
        return arithmetic.decimal(expr.function, a, b, out_type, where)
    return arithmetic.integral(expr.function, a, b, result_type, where).cast(out_type)


def _sql_of(expr: Expression) -> str:
    """The expression as an error names it: ``a / b`` (without the outer parentheses)."""
    text = str(expr)
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def _literal_value(expr: Expression, what: str):
    """The value of an argument Spark takes only as a constant (a format pattern, a separator)."""
    if not isinstance(expr, Literal) or expr.value is None:
        raise NotImplementedError(f"{what} must be a literal, got {expr}")
    return expr.value


def _case(expr: Call, args: list[Column]) -> Column:
    result = F.when(args[0], args[1])
    for i in range(2, len(args) - 1, 2):
        result = result.when(args[i], args[i + 1])
    return result.otherwise(args[-1]) if len(args) % 2 else result


def _trim(expr: Call, args: list[Column]) -> Column:
    position = _literal_value(expr.args[1], "TRIM's position")
    trim = {"BOTH": F.trim, "LEADING": F.ltrim, "TRAILING": F.rtrim}[position]
    return trim(args[0], args[2])


def _split_index(expr: Call, args: list[Column]) -> Column:
    # Flink splits on the literal separator and counts from 0; past the end is NULL.
    separator = re.escape(_literal_value(expr.args[1], "SPLIT_INDEX's separator"))
    return F.try_element_at(F.split(args[0], separator), args[2] + 1)


def _regexp_extract(expr: Call, args: list[Column]) -> Column:
    from changeflow.runtime.spark.regexp_extract import regexp_extract

    group = expr.args[2] if len(expr.args) > 2 else Literal(0)   # a literal pattern and group (type inference)
    return regexp_extract(args[0], expr.args[1].value, group.value)  # type: ignore[attr-defined]


def _to_timestamp(expr: Call, args: list[Column]) -> Column:
    if len(args) > 1:   # java.time with the format, then Flink's fallbacks
        return java_time_format.to_timestamp(args[0], _literal_value(expr.args[1], "TO_TIMESTAMP's format"))
    return F.try_to_timestamp(args[0], F.lit("yyyy-MM-dd HH:mm:ss"))


def _to_timestamp_ltz(expr: Call, args: list[Column]) -> Column:
    """The epoch value in units of 10^-precision s as an instant, floored to the millisecond whatever the
    precision, as Flink 2.3 computes it (``TO_TIMESTAMP_LTZ(1000007, 6)`` is 1.000 s, -993 µs is -1 ms)."""
    precision = ltz_epoch_precision(expr)
    scaled = args[0] * (10 ** (6 - precision)) if precision <= 6 else args[0] / (10 ** (precision - 6))
    return _millis(F.timestamp_micros(F.floor(scaled).cast("long")))


def _to_date(expr: Call, args: list[Column]) -> Column:
    if len(args) > 1:   # Flink reads a format with SimpleDateFormat, as UNIX_TIMESTAMP's
        return simple_date_format.to_date(args[0], _literal_value(expr.args[1], "TO_DATE's format"))
    return F.try_to_timestamp(args[0], F.lit("yyyy-MM-dd")).cast("date")


def _unix_timestamp(expr: Call, args: list[Column]) -> Column:
    if not args:
        return F.unix_timestamp()
    pattern = _literal_value(expr.args[1], "UNIX_TIMESTAMP's format") if len(args) > 1 else "yyyy-MM-dd HH:mm:ss"
    return simple_date_format.unix_timestamp(args[0], pattern)


def _from_unixtime(expr: Call, args: list[Column]) -> Column:
    pattern = _literal_value(expr.args[1], "FROM_UNIXTIME's format") if len(args) > 1 else "yyyy-MM-dd HH:mm:ss"
    return F.from_unixtime(args[0], pattern)


def _extract(expr: Call, args: list[Column]) -> Column:
    part = _literal_value(expr.args[0], "EXTRACT's unit")
    return F.extract(F.lit(part), args[1])


# Flink's EXTRACT of a time field from a timestamp: (millis % factor) / unit with Java's truncating
# remainder and division, so a time before 1970 has negative fields (HOUR of 1969-12-31 16:00 is -8,
# checked with PyFlink 2.3); a date field reads the day millis / 1 day, truncated too.
_TIME_FIELDS = {"HOUR": (86_400_000, 3_600_000), "MINUTE": (3_600_000, 60_000), "SECOND": (60_000, 1000),
                "MILLISECOND": (1000, 1)}
_DATE_FIELDS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "DOY", "DOW")


def _extract_from_timestamp(part: str, value: Column) -> Column:
    millis = F.floor(_micros(value) / 1000).cast("long")  # Flink's TimestampData millisecond: floored
    if part in _TIME_FIELDS:
        factor, unit = _TIME_FIELDS[part]
        return F.call_function("div", millis % F.lit(factor), F.lit(unit)).cast("long")
    if part in _DATE_FIELDS:
        day = F.date_from_unix_date(F.call_function("div", millis, F.lit(86_400_000)).cast("int"))
        return F.extract(F.lit(part), day).cast("long")
    return F.extract(F.lit(part), value)


def _millis(timestamp: Column) -> Column:
    """Flink's time functions are TIMESTAMP(3) / TIMESTAMP_LTZ(3): millisecond precision."""
    return F.date_trunc("millisecond", timestamp)


_UNIT_MICROS = {"SECOND": 10**6, "MINUTE": 60 * 10**6, "HOUR": 3600 * 10**6, "DAY": 86400 * 10**6}


def _call(name: str):
    return lambda expr, args: F.call_function(name, *args)


# Scalar functions of the SQL front end (typed in plan.type_inference.SCALAR_FUNCTIONS).
_SCALAR = {
    "concat": lambda e, a: F.concat(*a), "concat_ws": _call("concat_ws"),
    "upper": _call("upper"), "lower": _call("lower"),
    "char_length": _call("char_length"), "substring": _call("substring"), "trim": _trim,
    "ltrim": _call("ltrim"), "rtrim": _call("rtrim"), "initcap": _call("initcap"), "reverse": _call("reverse"),
    "replace": _call("replace"), "regexp_replace": _call("regexp_replace"), "regexp_extract": _regexp_extract,
    "lpad": _call("lpad"),
    "rpad": _call("rpad"), "left": _call("left"), "right": _call("right"), "split_index": _split_index,
    "position": _call("position"), "like": _call("like"), "in": lambda e, a: a[0].isin(*a[1:]),
    "case": _case, "coalesce": lambda e, a: F.coalesce(*a), "ifnull": lambda e, a: F.coalesce(*a),
    "nullif": _call("nullif"), "abs": _call("abs"), "floor": _call("floor"), "ceil": _call("ceil"),
    "round": _call("round"), "power": _call("power"), "sqrt": _call("sqrt"), "ln": _call("ln"),
    "exp": _call("exp"), "log10": _call("log10"),
    "current_timestamp": lambda e, a: _millis(F.current_timestamp()),
    "now": lambda e, a: _millis(F.current_timestamp()),
    "proctime": lambda e, a: _millis(F.current_timestamp()), "localtimestamp": lambda e, a: _millis(F.localtimestamp()),
    "current_date": lambda e, a: F.current_date(), "to_timestamp": _to_timestamp, "to_date": _to_date,
    "to_timestamp_ltz": _to_timestamp_ltz,
    "date_format": lambda e, a: F.date_format(a[0], _literal_value(e.args[1], "DATE_FORMAT's format")),
    "extract": _extract, "unix_timestamp": _unix_timestamp, "from_unixtime": _from_unixtime,
    "get_field": lambda e, a: a[0].getField(_literal_value(e.args[1], "a ROW field's name")),
    **ZONE_COLUMNS,
}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


_DAY_MICROS = 86_400_000_000


def special_cast(value: Column, source: DataType, target: DataType, safe: bool = False) -> Column | None:
    """``CAST(value AS target)`` where Spark's cast differs from Flink's; None where Spark's is right.

    ``safe``: ``TRY_CAST``, NULL where a string does not parse."""

    def to(column: Column, spark_type: str) -> Column:
        return column.try_cast(spark_type) if safe else column.cast(spark_type)

    if target.root == "TIME":
        if source.root == "TIME":
            micros = value
        elif source.is_string:
            parts = F.split(F.trim(value), ":")
            seconds = to(F.try_element_at(parts, F.lit(3)), "decimal(18, 9)")
            micros = ((to(F.try_element_at(parts, F.lit(1)), "long") * 3600
                       + to(F.try_element_at(parts, F.lit(2)), "long") * 60) * 1_000_000
                      + F.floor(seconds * 1_000_000).cast("long"))
        else:  # TIMESTAMP / TIMESTAMP_LTZ (the session time zone is UTC, query_settings.py)
            micros = F.pmod(_micros(value), F.lit(_DAY_MICROS))
        unit = 10 ** (6 - min(target.params[0], 3))
        return (micros - F.pmod(micros, F.lit(unit))).cast("long")
    if source.root == "TIME" and target.is_string:
        return _time_text(value, source.params[0])
    if source.root in _TIMESTAMPS and target.is_string:
        return _timestamp_text(value, source.params[0])
    if target.root in _TIMESTAMPS and target.params[0] < 6 and (source.is_string or source.root in _TIMESTAMPS):
        return _truncated(to(value, "timestamp_ntz" if target.root == "TIMESTAMP" else "timestamp"),
                          target.params[0], target.root)
    if source.root == "TIME":  # to TIMESTAMP: that time on 1970-01-01
        return F.timestamp_micros(value).cast("timestamp_ntz" if target.root == "TIMESTAMP" else "timestamp")
    if target.root in ("BINARY", "VARBINARY"):
        data = value.cast("binary")
        n = target.params[0]
        if target.root == "BINARY":
            return F.rpad(data, n, F.lit(b"\x00"))  # rpad also truncates a longer value
        return F.when(F.length(data) > n, F.substring(data, 1, n)).otherwise(data)
    return None


_TIMESTAMPS = ("TIMESTAMP", "TIMESTAMP_LTZ")


def _micros(value: Column) -> Column:
    """Microseconds since the epoch of a TIMESTAMP (NTZ: read in the session zone, UTC) or TIMESTAMP_LTZ."""
    return F.unix_micros(value.cast("timestamp"))


def _timestamp_text(value: Column, precision: int) -> Column:
    """A TIMESTAMP(p) as Flink casts it to STRING: ``yyyy-MM-dd HH:mm:ss``, then ``.`` and
    exactly ``p`` digits (Spark's cast drops trailing zeros: ``...01.1`` for Flink's ``...01.100``)."""
    text = F.date_format(value, "yyyy-MM-dd HH:mm:ss")
    if precision <= 0:
        return text
    fraction = F.lpad(F.pmod(_micros(value), F.lit(1_000_000)).cast("string"), 6, "0")
    digits = F.rpad(fraction, precision, "0") if precision > 6 else F.substring(fraction, 1, precision)
    return F.concat(text, F.lit("."), digits)


def _truncated(value: Column, precision: int, root: str) -> Column:
    """A timestamp cut to ``precision`` fractional digits, as Flink's CAST to TIMESTAMP(p) cuts
    (``'...01.5'`` as TIMESTAMP(0) is ``...01``; Spark keeps microseconds whatever the precision)."""
    micros = _micros(value)
    cut = F.timestamp_micros(micros - F.pmod(micros, F.lit(10 ** (6 - precision))))
    return cut.cast("timestamp_ntz") if root == "TIMESTAMP" else cut


def _time_text(micros: Column, precision: int) -> Column:
    """A TIME as Flink prints it: ``HH:mm:ss``, then ``.`` and ``precision`` digits (at most 3 kept)."""
    text = F.date_format(F.timestamp_micros(micros), "HH:mm:ss")
    if precision <= 0:
        return text
    fraction = F.lpad((F.floor(F.pmod(micros, F.lit(1_000_000)) / 1000)).cast("long").cast("string"), 3, "0")
    digits = F.rpad(fraction, precision, "0") if precision > 3 else F.substring(fraction, 1, precision)
    return F.concat(text, F.lit("."), digits)
