"""``table.local-time-zone`` other than UTC: TIMESTAMP_LTZ shown, cast and read in the session zone.

Registered into :data:`conformance.sql_cases.CASES`, recorded by ``conformance/record_flink_sql.py``.
PyFlink 2.3 cannot collect a TIMESTAMP_LTZ (its pickler fails on java.time.Instant), so each
instant is shown through a CAST to STRING / TIMESTAMP / DATE / TIME, and a wall clock read as an
instant through TIMESTAMPDIFF from the epoch. Asia/Shanghai has no daylight saving time today
(it had 1986-1991: the 1988 row); America/Los_Angeles has: its rows sit in the 2024 spring
gap (02:30 does not exist) and the autumn overlap (01:00-02:00 happens twice).
"""

from __future__ import annotations

from conformance.sql_cases import _view, _write, case
from conformance.sql_window_cases import LATE_BID_ROWS, WHY_WINDOW, _bids

# e(id INT, ms BIGINT, x STRING): an instant in epoch milliseconds and a wall-clock text.
E_ROWS = [(1, 0, "1970-01-01 00:00:00"),
          (2, 1710064800000, "2024-03-10 02:30:00"),   # 10:00Z; 02:30 is in Los Angeles' spring gap
          (3, 1730620800000, "2024-11-03 01:00:00"),   # 08:00Z = 01:00 PDT, the overlap's first 01:00
          (4, 1730624400000, "2024-11-03 01:30:00"),   # 09:00Z = 01:00 PST, its second 01:00
          (5, -1500, "1969-12-31 23:59:59"),
          (6, 581126400000, "1988-06-01 08:00:00"),    # Shanghai's daylight saving time of 1988
          (7, None, None)]

_CASTS = ("SELECT id, CAST(TO_TIMESTAMP_LTZ(ms, 3) AS STRING) AS shown, "
          "CAST(TO_TIMESTAMP_LTZ(ms, 3) AS TIMESTAMP(3)) AS wall, CAST(TO_TIMESTAMP_LTZ(ms, 3) AS DATE) AS d, "
          "CAST(TO_TIMESTAMP_LTZ(ms, 3) AS TIME(3)) AS tm, "
          "TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(0, 0), "
          "CAST(CAST(x AS TIMESTAMP(3)) AS TIMESTAMP_LTZ(3))) AS ts_instant, "
          "TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(0, 0), CAST(x AS TIMESTAMP_LTZ(3))) AS text_instant, "
          "CAST(CAST(x AS TIMESTAMP_LTZ(0)) AS STRING) AS round_trip, "
          "DATE_FORMAT(TO_TIMESTAMP_LTZ(ms, 3), 'yyyy-MM-dd HH:mm') AS formatted, "
          "EXTRACT(HOUR FROM TO_TIMESTAMP_LTZ(ms, 3)) AS h, "
          "TO_TIMESTAMP_LTZ(ms, 3) > CAST(x AS TIMESTAMP(3)) AS later FROM e")

_FUNCTIONS = ("SELECT id, FROM_UNIXTIME(ms / 1000) AS from_unix, "
              "FROM_UNIXTIME(ms / 1000, 'yyyy-MM-dd HH:mm') AS from_unix_fmt, UNIX_TIMESTAMP(x) AS unix_ts, "
              "UNIX_TIMESTAMP(SUBSTRING(x, 1, 16), 'yyyy-MM-dd HH:mm') AS unix_ts_fmt, "
              "TO_TIMESTAMP(x) AS parsed FROM e")


def _e(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "e", E_ROWS, ("id", D.INT()), ("ms", D.BIGINT()), ("x", D.STRING()))


@case("time_zone_casts_shanghai", config={"table.local-time-zone": "Asia/Shanghai"})
def time_zone_casts_shanghai(t_env, E):
    """TIMESTAMP_LTZ cast to STRING, TIMESTAMP, DATE and TIME in Asia/Shanghai, TIMESTAMP and text
    cast to TIMESTAMP_LTZ (read as Shanghai wall clocks), DATE_FORMAT, EXTRACT and a comparison
    of a TIMESTAMP_LTZ with a TIMESTAMP, in streaming mode."""
    _e(t_env, E)
    return t_env.sql_query(_CASTS)


@case("time_zone_casts_los_angeles", mode="batch", config={"table.local-time-zone": "America/Los_Angeles"})
def time_zone_casts_los_angeles(t_env, E):
    """The same casts in America/Los_Angeles, in batch mode: a wall clock in the spring gap moves
    forward by an hour, one in the autumn overlap takes the earlier (daylight) offset."""
    _e(t_env, E)
    return t_env.sql_query(_CASTS)


@case("time_zone_functions_los_angeles", config={"table.local-time-zone": "America/Los_Angeles"})
def time_zone_functions_los_angeles(t_env, E):
    """FROM_UNIXTIME prints and UNIX_TIMESTAMP parses in the session zone (in the autumn overlap
    UNIX_TIMESTAMP takes the later, standard-time offset); TO_TIMESTAMP does not depend on it."""
    _e(t_env, E)
    return t_env.sql_query(_FUNCTIONS)


@case("time_zone_functions_gmt_offset", mode="batch", config={"table.local-time-zone": "GMT+08:00"})
def time_zone_functions_gmt_offset(t_env, E):
    """The time functions under a fixed offset written as Flink takes it (``GMT+08:00``), in batch mode."""
    _e(t_env, E)
    return t_env.sql_query(_FUNCTIONS)


@case("time_zone_current_time_shanghai", mode="batch", config={"table.local-time-zone": "Asia/Shanghai"})
def time_zone_current_time_shanghai(t_env, E):
    """LOCALTIMESTAMP and CURRENT_DATE are CURRENT_TIMESTAMP's wall clock and date in the session
    zone (the deterministic part of the current-time functions: how they relate)."""
    _e(t_env, E)
    return t_env.sql_query(
        "SELECT id, LOCALTIMESTAMP = CAST(CURRENT_TIMESTAMP AS TIMESTAMP(3)) AS local_ts, "
        "CURRENT_DATE = CAST(CURRENT_TIMESTAMP AS DATE) AS local_date FROM e WHERE id = 1")


# --- windows over a TIMESTAMP time attribute: wall clocks, whatever the zone -----------------------

@case("time_zone_tumble_timestamp_late_rows", compare="multiset", why=WHY_WINDOW,
      config={"table.local-time-zone": "Asia/Shanghai"})
def time_zone_tumble_timestamp_late_rows(t_env, E):
    """TUMBLE 10 s per key over a TIMESTAMP(3) row time with out-of-order and late rows in
    Asia/Shanghai: the windows, their bounds and the dropped late row are those of UTC (the zone
    aligns only windows over a TIMESTAMP_LTZ)."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(
        "SELECT window_start, window_end, window_time, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, "
        "window_time, k")


@case("time_zone_day_window_across_dst", compare="multiset", why=WHY_WINDOW,
      config={"table.local-time-zone": "America/Los_Angeles"})
def time_zone_day_window_across_dst(t_env, E):
    """A 1-day TUMBLE and a 12-hour HOP over a TIMESTAMP(3) row time across Los Angeles' spring
    change (2024-03-10): the windows are wall-clock days of 24 hours, the zone plays no part."""
    rows = ["2024-03-09 23:00:00,a,1", "2024-03-10 01:59:59,a,2", "2024-03-10 03:00:00,b,3",
            "2024-03-10 02:30:00,a,4", "2024-03-10 23:59:59,b,5", "2024-03-11 00:00:00,a,6",
            "2024-03-12 00:00:00,a,7", "2024-03-10 12:00:00,b,8"]  # 02:30 out of order; the last row late
    path = _write(E, "days", "".join(r + "\n" for r in rows))
    t_env.execute_sql(
        "CREATE TABLE days (ts TIMESTAMP(3), k STRING, v INT, WATERMARK FOR ts AS ts - INTERVAL '1' HOUR) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s FROM TABLE(TUMBLE(TABLE days, "
        "DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end, k "
        "UNION ALL SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s FROM TABLE(HOP(TABLE days, "
        "DESCRIPTOR(ts), INTERVAL '12' HOUR, INTERVAL '1' DAY)) GROUP BY window_start, window_end, k")
