"""CAST to BYTES / BINARY / VARBINARY, TIME and MAP: Flink's results and refusals (issue 17).

Registered into :data:`conformance.sql_cases.CASES`, recorded by
``conformance/record_flink_sql.py``.
"""

from __future__ import annotations

import datetime

from conformance.sql_cases import _view, case

# c(s STRING, ts TIMESTAMP(3), tm STRING)
C_ROWS = [("abc", datetime.datetime(2024, 1, 2, 3, 4, 5, 678000), "12:34:56"),
          ("", datetime.datetime(2024, 1, 2, 23, 59, 59), "00:00:01.5"),
          (None, None, None)]


def _c(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "c", C_ROWS, ("s", D.STRING()), ("ts", D.TIMESTAMP(3)), ("tm", D.STRING()))


@case("cast_to_binary_types")
def cast_to_binary_types(t_env, E):
    """CAST of strings to BYTES, VARBINARY(n) and BINARY(n) (UTF-8, padded or truncated), and back."""
    _c(t_env, E)
    return t_env.sql_query(
        "SELECT CAST(s AS BYTES) AS b, CAST(s AS VARBINARY(2)) AS vb, CAST(s AS BINARY(2)) AS b2, "
        "CAST(s AS BINARY(5)) AS b5, CAST(CAST(s AS BYTES) AS STRING) AS back FROM c")


@case("cast_to_time")
def cast_to_time(t_env, E):
    """CAST of strings and timestamps to TIME and TIME(3), and of a TIME to STRING."""
    _c(t_env, E)
    return t_env.sql_query(
        "SELECT CAST(tm AS TIME) AS t0, CAST(tm AS TIME(3)) AS t3, CAST(ts AS TIME) AS ts0, "
        "CAST(ts AS TIME(3)) AS ts3, CAST(CAST(tm AS TIME) AS STRING) AS shown FROM c")


@case("cast_timestamp_to_string")
def cast_timestamp_to_string(t_env, E):
    """CAST of TIMESTAMP(p) to STRING (exactly p fractional digits, trailing zeros kept), of
    strings to TIMESTAMP(0) and TIMESTAMP(3) (the fraction cut to the precision), and typed
    literals, whose precision is their number of fractional digits."""
    _c(t_env, E)
    return t_env.sql_query(
        "SELECT CAST(ts AS STRING) AS shown3, CAST(CAST(ts AS TIMESTAMP(6)) AS STRING) AS shown6, "
        "CAST(CAST(ts AS TIMESTAMP(0)) AS STRING) AS shown0, CAST('2024-01-01 00:00:01.5' AS TIMESTAMP(0)) AS cut0, "
        "CAST(CAST('2024-01-01 00:00:01.56789' AS TIMESTAMP(3)) AS STRING) AS cut3, "
        "TIMESTAMP '2024-01-01 00:00:01.100' AS lit3, TIMESTAMP '2024-01-01 00:00:00' AS lit0, "
        "CAST(TIMESTAMP '2024-01-01 00:00:01.100' AS STRING) AS lit3_shown, "
        "CAST(TIMESTAMP '2024-01-01 00:00:00' AS STRING) AS lit0_shown, "
        "TIME '01:02:03.45' AS time2, CAST(TIME '01:02:03.45' AS STRING) AS time2_shown FROM c")


@case("cast_to_map")
def cast_to_map(t_env, E):
    """CAST of a MAP column to MAPs of other value types."""
    D = E.DataTypes
    _view(t_env, E, "m", [(1, {"a": 1, "b": 2}), (2, None)], ("k", D.BIGINT()),
          ("m", D.MAP(D.STRING(), D.INT())))
    return t_env.sql_query("SELECT k, CAST(m AS MAP<STRING, BIGINT>) AS mb, "
                           "CAST(m AS MAP<STRING, STRING>) AS ms FROM m")


@case("error_cast_int_to_bytes", compare="error", error_mentions=("CAST", "BYTES"))
def error_cast_int_to_bytes(t_env, E):
    """CAST of an integer to BYTES."""
    _c(t_env, E)
    return t_env.sql_query("SELECT CAST(CHAR_LENGTH(s) AS BYTES) FROM c")


@case("error_cast_string_to_map", compare="error", error_mentions=("CAST", "MAP"))
def error_cast_string_to_map(t_env, E):
    """CAST of a string to a MAP."""
    _c(t_env, E)
    return t_env.sql_query("SELECT CAST(s AS MAP<STRING, STRING>) FROM c")


@case("to_timestamp_ltz_epochs", config={"table.local-time-zone": "UTC"})
def to_timestamp_ltz_epochs(t_env, E):
    """TO_TIMESTAMP_LTZ of epoch seconds (precision 0), milliseconds (3, and the default), microseconds (6)
    and a DOUBLE of seconds, before 1970 too, under the session zone UTC. PyFlink 2.3 cannot collect a
    TIMESTAMP_LTZ (its pickler fails on java.time.Instant), so each instant is cast to TIMESTAMP(3)/(6):
    its wall clock in the session zone."""
    D = E.DataTypes
    _view(t_env, E, "e", [(1, 1700000000, 1700000000123, 1.5), (2, None, -1, -2.25), (3, 0, 86400000, 0.001)],
          ("id", D.INT()), ("s", D.BIGINT()), ("ms", D.BIGINT()), ("d", D.DOUBLE()))
    return t_env.sql_query(
        "SELECT id, CAST(TO_TIMESTAMP_LTZ(s, 0) AS TIMESTAMP(3)) AS from_s, "
        "CAST(TO_TIMESTAMP_LTZ(ms, 3) AS TIMESTAMP(3)) AS from_ms, CAST(TO_TIMESTAMP_LTZ(ms) AS TIMESTAMP(3)) AS dflt, "
        "CAST(TO_TIMESTAMP_LTZ(ms * 1000 + 7, 6) AS TIMESTAMP(6)) AS from_us, "
        "CAST(TO_TIMESTAMP_LTZ(d, 0) AS TIMESTAMP(3)) AS from_double FROM e")
