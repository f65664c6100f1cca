"""CASTs that Spark's own cast gets wrong for Flink: to and from TIME, to BINARY(n) / VARBINARY(n).

A TIME is a LONG of microseconds of the day here (:mod:`.spark_types`), so Spark's cast
of a string or timestamp to it would read a number; Flink's TIME keeps milliseconds
(``TIME(p)`` for p > 3 holds no more), and a cast to ``TIME(p)`` truncates to p digits.
A cast to ``VARBINARY(n)`` truncates to n bytes, one to ``BINARY(n)`` also pads with
zero bytes to n, as Flink does. Strings encode to and decode from UTF-8 (Spark's cast).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeflow.common.types import DataType

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
            micros = F.pmod(F.unix_micros(value.cast("timestamp")), F.lit(_DAY_MICROS))
        unit = 10 ** (6 - min(target.params[0], 3))
        return (micros - F.pmod(micros, F.lit(unit))).cast("long")
    if source.root == "TIME" and target.is_string:
        return _time_text(value, source.params[0])
    if source.root == "TIME":  # to TIMESTAMP: that time on 1970-01-01
        return F.timestamp_micros(value).cast("timestamp_ntz" if target.root == "TIMESTAMP" else "timestamp")
    if target.root in ("BINARY", "VARBINARY"):
        data = value.cast("binary")
        n = target.params[0]
        if target.root == "BINARY":
            return F.rpad(data, n, F.lit(b"\x00"))  # rpad also truncates a longer value
        return F.when(F.length(data) > n, F.substring(data, 1, n)).otherwise(data)
    return None


def _time_text(micros: Column, precision: int) -> Column:
    """A TIME as Flink prints it: ``HH:mm:ss``, then ``.`` and ``precision`` digits (at most 3 kept)."""
    text = F.date_format(F.timestamp_micros(micros), "HH:mm:ss")
    if precision <= 0:
        return text
    fraction = F.lpad((F.floor(F.pmod(micros, F.lit(1_000_000)) / 1000)).cast("long").cast("string"), 3, "0")
    digits = F.rpad(fraction, precision, "0") if precision > 3 else F.substring(fraction, 1, precision)
    return F.concat(text, F.lit("."), digits)
