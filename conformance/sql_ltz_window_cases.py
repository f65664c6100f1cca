"""Windows over a TIMESTAMP_LTZ time attribute in a session zone other than UTC.

Registered into :data:`conformance.sql_cases.CASES`, recorded by ``conformance/record_flink_sql.py``.
Flink aligns such windows to the zone's wall clock: a 1-day TUMBLE in Asia/Shanghai covers a
Shanghai day (16:00 UTC to 16:00 UTC), window_start/window_end are TIMESTAMP wall clocks and
window_time is the TIMESTAMP_LTZ instant of window_end - 1 ms. A window fires when the watermark
(an instant) reaches the instant of its end - 1 ms, which Flink's TimeWindowUtil moves in a
daylight-saving change: to the start of the gap when the end falls in a spring gap, to the second
occurrence when it falls in an autumn overlap. PyFlink 2.3 cannot collect a TIMESTAMP_LTZ (its
pickler fails on java.time.Instant): window_time is shown through a CAST to STRING, and its instant
through TIMESTAMPDIFF from the epoch.
"""

from __future__ import annotations

import datetime

from conformance.sql_cases import _write, case
from conformance.sql_window_cases import WHY_WINDOW

_SHANGHAI = {"table.local-time-zone": "Asia/Shanghai"}
# Flink 2.3's streaming window aggregation (one- and two-phase alike) loses rows of a window longer than the
# zone's offset in a zone without daylight saving time (recorded: a 1-day TUMBLE in Asia/Shanghai emitted only
# the window the end of input fired): it moves buffered rows into its window state only when the watermark
# passes a window end aligned to UTC (TimeWindowUtil.getNextTriggerWatermark), so the zone's window fires
# before its rows reach it, and the rows that come later find the window fired. Its batch mode, its legacy
# group windows and zones with daylight saving time are not affected. So the streaming cases in Asia/Shanghai
# window by hours (UTC's and Shanghai's hours coincide) and the 1-day windows run in batch mode;
# docs/differences.md.
_LOS_ANGELES = {"table.local-time-zone": "America/Los_Angeles"}

# (instant in UTC, key, value). Shanghai is UTC+8: its midnight is 16:00 UTC. Watermark: ts - 1 hour.
SHANGHAI_ROWS = [
    ("2024-01-01 10:00:00", "a", 1),     # 18:00 on 1 Jan in Shanghai
    ("2024-01-01 15:30:00", "b", 2),     # 23:30
    ("2024-01-01 16:30:00", "a", 3),     # 00:30 on 2 Jan; watermark 15:30 UTC (Shanghai's 1 Jan still open)
    ("2024-01-01 15:54:00", "a", 4),     # 23:54 on 1 Jan, out of order, on time
    ("2024-01-01 18:00:00", "b", 5),     # watermark 17:00 UTC: past Shanghai's midnight, 1 Jan fires
    ("2024-01-01 15:48:00", "a", 100),   # late in Shanghai's 1 Jan (on time in UTC's 1 Jan)
    ("2024-01-02 06:00:00", "c", 6),     # 14:00 on 2 Jan
    ("2024-01-02 16:00:00", "a", 7),     # 00:00 on 3 Jan exactly
    ("2024-01-02 15:30:00", "b", 8),     # 23:30 on 2 Jan: on time (watermark 15:00 UTC)
    ("2024-01-02 17:00:00", "c", 9),     # watermark 16:00 UTC: 2 Jan fires
    ("2024-01-02 14:00:00", "c", 200),   # late
]

# Los Angeles in 2026: 8 March 02:00 PST -> 03:00 PDT (10:00 UTC, a 23-hour day); 1 November
# 02:00 PDT -> 01:00 PST (09:00 UTC, a 25-hour day whose 01:00-02:00 happens twice).
# Watermark: ts - 1 minute.
LOS_ANGELES_ROWS = [
    ("2026-03-08 07:30:00", "a", 1),     # 23:30 PST on 7 March
    ("2026-03-08 09:45:00", "a", 2),     # 01:45 PST
    ("2026-03-08 10:05:00", "a", 3),     # 03:05 PDT; watermark 10:04 UTC, past the gap's instant (10:00)
    ("2026-03-08 09:50:00", "a", 4),     # 01:50 PST: late for [01:00, 02:00) and for [01:30, 02:30)
    ("2026-03-08 10:40:00", "a", 5),     # 03:40 PDT
    ("2026-03-09 06:30:00", "a", 6),     # 23:30 PDT on 8 March
    ("2026-03-09 08:00:00", "a", 7),     # 01:00 PDT on 9 March: 8 March (ends 07:00 UTC) fires
    ("2026-11-01 06:30:00", "b", 8),     # 23:30 PDT on 31 October
    ("2026-11-01 08:30:00", "b", 9),     # 01:30 PDT, the first 01:30
    ("2026-11-01 09:10:00", "b", 10),    # 01:10 PST, the second 01:10: [01:00, 02:00) is still open
    ("2026-11-01 09:30:00", "b", 11),    # 01:30 PST
    ("2026-11-01 10:30:00", "b", 12),    # 02:30 PST; watermark 10:29 UTC fires [01:00, 02:00)
    ("2026-11-01 09:45:00", "b", 13),    # late
    ("2026-11-02 07:30:00", "b", 14),    # 23:30 PST on 1 November
    ("2026-11-02 09:00:00", "b", 15),    # 01:00 PST on 2 November: 1 November (ends 08:00 UTC) fires
]


def _epoch_ms(utc: str) -> int:
    instant = datetime.datetime.strptime(utc, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(instant.timestamp() * 1000)


def _events(t_env, E, rows, delay, name="events"):
    """name(ms BIGINT, k, v, ts AS TO_TIMESTAMP_LTZ(ms, 3)): ts the rowtime, watermark ts - delay."""
    path = _write(E, name, "".join(f"{_epoch_ms(t)},{k},{v}\n" for t, k, v in rows))
    t_env.execute_sql(
        f"CREATE TABLE {name} (ms BIGINT, k STRING, v INT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
        f"WATERMARK FOR ts AS ts - INTERVAL {delay}) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")


# window_time as the wall clock Flink shows and as the instant (seconds since the epoch). NULLIF (never
# NULL here) types the instant nullable in both engines: Flink types the TIMESTAMPDIFF nullable where
# changeflow keeps it NOT NULL (the NOT NULL of window_time inside an expression: docs/differences.md).
_WINDOW_TIME = ("CAST(window_time AS STRING) AS wt, "
                "NULLIF(TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(0, 0), window_time), -1) AS wt_epoch")


def _window_agg(tvf: str) -> str:
    return (f"SELECT window_start, window_end, {_WINDOW_TIME}, k, COUNT(*) AS cnt, SUM(v) AS s "
            f"FROM TABLE({tvf}) GROUP BY window_start, window_end, window_time, k")


@case("ltz_window_tumble_day_shanghai_batch", mode="batch", compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
def ltz_window_tumble_day_shanghai_batch(t_env, E):
    """TUMBLE 1 day per key over a TIMESTAMP_LTZ(3) row time in Asia/Shanghai, batch mode: the days are
    Shanghai's (16:00 to 16:00 UTC), window_time the instant of 23:59:59.999 there."""
    _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
    return t_env.sql_query(_window_agg("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY)"))


@case("ltz_window_hop_day_shanghai_batch", mode="batch", compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
def ltz_window_hop_day_shanghai_batch(t_env, E):
    """HOP (slide 12 hours, size 1 day) per key in Asia/Shanghai, batch mode: windows start at Shanghai's
    midnight and noon."""
    _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
    return t_env.sql_query(_window_agg("HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '12' HOUR, INTERVAL '1' DAY)"))


for _mode in ("streaming", "batch"):
    @case(f"ltz_window_tumble_shanghai_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
    def _ltz_window_tumble_shanghai(t_env, E):
        """TUMBLE 1 hour per key over a TIMESTAMP_LTZ(3) row time in Asia/Shanghai with out-of-order and late
        rows: window_start/window_end Shanghai wall clocks, window_time the instant of the end - 1 ms; a row
        arriving after the watermark passed its window's end is dropped in streaming mode."""
        _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
        return t_env.sql_query(_window_agg("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR)"))

    @case(f"ltz_window_hop_shanghai_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
    def _ltz_window_hop_shanghai(t_env, E):
        """HOP (slide 30 minutes, size 1 hour) per key in Asia/Shanghai with late rows: a late row is dropped
        from the window already fired and counted in the one still open."""
        _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
        return t_env.sql_query(_window_agg(
            "HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '30' MINUTE, INTERVAL '1' HOUR)"))


@case("ltz_window_cumulate_shanghai", compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
def ltz_window_cumulate_shanghai(t_env, E):
    """CUMULATE (step 1 hour, max size 4 hours) per key in Asia/Shanghai: running totals over Shanghai's
    4-hour cycles; late rows dropped."""
    _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
    return t_env.sql_query(_window_agg(
        "CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '4' HOUR)"))


@case("ltz_window_session_shanghai", compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
def ltz_window_session_shanghai(t_env, E):
    """SESSION (gap 2 hours) partitioned by key in Asia/Shanghai: window_start/window_end Shanghai wall
    clocks, window_time the instant of the end - 1 ms; late rows dropped."""
    _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
    return t_env.sql_query(_window_agg(
        "SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' HOUR)"))


@case("ltz_group_window_tumble_shanghai", compare="multiset", why=WHY_WINDOW, config=_SHANGHAI)
def ltz_group_window_tumble_shanghai(t_env, E):
    """The legacy GROUP BY TUMBLE(ts, INTERVAL '1' DAY) in Asia/Shanghai with TUMBLE_START, TUMBLE_END
    (Shanghai wall clocks) and TUMBLE_ROWTIME (an instant, shown as a string; NULLIF types it nullable in
    both engines, as Flink types the CAST); late rows dropped."""
    _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
    return t_env.sql_query(
        "SELECT k, TUMBLE_START(ts, INTERVAL '1' DAY) AS ws, TUMBLE_END(ts, INTERVAL '1' DAY) AS we, "
        "NULLIF(CAST(TUMBLE_ROWTIME(ts, INTERVAL '1' DAY) AS STRING), '') AS wt, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM events GROUP BY k, TUMBLE(ts, INTERVAL '1' DAY)")


for _mode in ("streaming", "batch"):
    @case(f"ltz_window_day_los_angeles_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW,
          config=_LOS_ANGELES)
    def _ltz_window_day_los_angeles(t_env, E):
        """TUMBLE 1 day per key in America/Los_Angeles across both 2026 daylight-saving changes: a 23-hour
        and a 25-hour day, each fired when the watermark passes its local midnight."""
        _events(t_env, E, LOS_ANGELES_ROWS, "'1' MINUTE")
        return t_env.sql_query(_window_agg("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY)"))


@case("ltz_window_hours_los_angeles", compare="multiset", why=WHY_WINDOW, config=_LOS_ANGELES)
def ltz_window_hours_los_angeles(t_env, E):
    """TUMBLE 1 hour and HOP (slide 30 minutes, size 1 hour) in America/Los_Angeles across both 2026
    changes: the autumn's repeated hour is one window fired after its second occurrence, and a window
    ending inside the spring gap fires at the gap's instant (Flink's TimeWindowUtil), so a row arriving
    after it is late."""
    _events(t_env, E, LOS_ANGELES_ROWS, "'1' MINUTE")
    return t_env.sql_query(
        _window_agg("TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' HOUR)") + " UNION ALL "
        + _window_agg("HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '30' MINUTE, INTERVAL '1' HOUR)"))


# Window Top-N, window deduplication and window join over the same TIMESTAMP_LTZ row time: each emits a
# window's rows when the watermark reaches the window's end as the window aggregation does (the zone's wall
# clock, Flink's TimeWindowUtil across a daylight-saving change) and drops the rows of fired windows. ts is
# an instant: shown as a string, as window_time is.
_RANK_COLUMNS = f"window_start, window_end, {_WINDOW_TIME}, k, v, CAST(ts AS STRING) AS ts_s"


def _ranked(name: str, tvf: str, partition: str, order: str, keep: str) -> str:
    return (f"SELECT '{name}' AS q, {_RANK_COLUMNS}, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
            f"window_start, window_end{partition} ORDER BY {order}) AS rn FROM TABLE({tvf})) WHERE {keep}")


def _top_and_dedup(size: str) -> str:
    """Top-2 by v of each TUMBLE window (all keys), and per key and window the first row by ts (TUMBLE)
    and the last (HOP, slide half the size)."""
    half = {"'1' HOUR": "'30' MINUTE", "'1' DAY": "'12' HOUR"}[size]
    tumble = f"TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL {size})"
    hop = f"HOP(TABLE events, DESCRIPTOR(ts), INTERVAL {half}, INTERVAL {size})"
    return " UNION ALL ".join((
        _ranked("top2", tumble, "", "v DESC", "rn <= 2"),
        _ranked("first", tumble, ", k", "ts ASC", "rn = 1"),
        _ranked("last", hop, ", k", "ts DESC", "rn = 1")))


for _mode in ("streaming", "batch"):
    @case(f"ltz_window_topn_dedup_shanghai_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW,
          config=_SHANGHAI)
    def _ltz_window_topn_dedup_shanghai(t_env, E):
        """Window Top-N (the two largest v per TUMBLE 1 hour window) and window deduplication (each key's
        first row per TUMBLE hour, its last per HOP hour) over a TIMESTAMP_LTZ row time in Asia/Shanghai,
        with out-of-order and late rows: windows on Shanghai's wall clock, a row behind the watermark of its
        fired window dropped in streaming mode."""
        _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
        return t_env.sql_query(_top_and_dedup("'1' HOUR"))

    @case(f"ltz_window_topn_dedup_day_shanghai_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW,
          config=_SHANGHAI)
    def _ltz_window_topn_dedup_day_shanghai(t_env, E):
        """Window Top-N and deduplication over Shanghai's days (16:00 to 16:00 UTC; HOP by 12 hours) with
        late rows."""
        _events(t_env, E, SHANGHAI_ROWS, "'1' HOUR")
        return t_env.sql_query(_top_and_dedup("'1' DAY"))

    @case(f"ltz_window_topn_dedup_los_angeles_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW,
          config=_LOS_ANGELES)
    def _ltz_window_topn_dedup_los_angeles(t_env, E):
        """Window Top-N and deduplication in America/Los_Angeles across both 2026 changes, by days (a
        23-hour and a 25-hour day) and by hours (a window ending in the spring gap fires at the gap's
        instant, the autumn's repeated hour is one window): late rows dropped."""
        _events(t_env, E, LOS_ANGELES_ROWS, "'1' MINUTE")
        return t_env.sql_query(_top_and_dedup("'1' DAY") + " UNION ALL " + _top_and_dedup("'1' HOUR"))


# The other side of the window joins. No row of either side is behind its own table's watermark: a window
# join's watermark is the least of its inputs', so whether such a row is late would depend on how Flink
# interleaves the two sources (the joins' lateness is tested on the kernel).
SHANGHAI_ASK_ROWS = [
    ("2024-01-01 10:20:00", "a", 5),     # 18:20 on 1 Jan in Shanghai
    ("2024-01-01 15:40:00", "b", 1),     # 23:40
    ("2024-01-01 15:50:00", "a", 9),     # 23:50
    ("2024-01-01 16:10:00", "a", 2),     # 00:10 on 2 Jan
    ("2024-01-02 06:30:00", "c", 3),     # 14:30 on 2 Jan
    ("2024-01-02 15:45:00", "b", 4),     # 23:45 on 2 Jan
    ("2024-01-02 16:20:00", "d", 7),     # 00:20 on 3 Jan
]
LOS_ANGELES_ASK_ROWS = [
    ("2026-03-08 07:40:00", "a", 1),     # 23:40 PST on 7 March
    ("2026-03-08 09:55:00", "a", 2),     # 01:55 PST, the last hour before the gap
    ("2026-03-08 10:10:00", "a", 3),     # 03:10 PDT
    ("2026-03-09 06:00:00", "a", 4),     # 23:00 PDT on 8 March
    ("2026-11-01 08:40:00", "b", 5),     # 01:40 PDT, the first 01:40
    ("2026-11-01 09:20:00", "b", 6),     # 01:20 PST, the second 01:20
    ("2026-11-02 08:30:00", "b", 7),     # 00:30 PST on 2 November
    ("2026-11-02 09:05:00", "e", 8),     # 01:05 PST
]
_JOIN_COLUMNS = ("L.window_start, L.window_end, CAST(L.window_time AS STRING) AS wt, L.k AS lk, L.v AS lv, "
                 "CAST(L.ts AS STRING) AS lts, R.k AS rk, R.v AS rv, CAST(R.ts AS STRING) AS rts")


def _window_join(kind: str, size: str) -> str:
    left = f"TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL {size}))"
    right = f"TABLE(TUMBLE(TABLE asks, DESCRIPTOR(ts), INTERVAL {size}))"
    label = f"{kind} {size.split()[1].lower()}"
    return (f"SELECT '{label}' AS q, {_JOIN_COLUMNS} FROM (SELECT * FROM {left}) L {kind} JOIN "
            f"(SELECT * FROM {right}) R ON L.window_start = R.window_start AND L.window_end = R.window_end "
            "AND L.k = R.k")


for _mode in ("streaming", "batch"):
    @case(f"ltz_window_join_shanghai_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW,
          config=_SHANGHAI)
    def _ltz_window_join_shanghai(t_env, E):
        """INNER and LEFT window joins of two TUMBLE TVFs over TIMESTAMP_LTZ row times in Asia/Shanghai,
        by Shanghai's days and hours: pairs of the same key in the same wall-clock window; a left row with
        no partner padded with nulls when the window fires."""
        _events(t_env, E, [r for r in SHANGHAI_ROWS if r[2] < 100], "'1' HOUR")
        _events(t_env, E, SHANGHAI_ASK_ROWS, "'1' HOUR", name="asks")
        return t_env.sql_query(" UNION ALL ".join(
            _window_join(kind, size) for kind in ("INNER", "LEFT") for size in ("'1' DAY", "'1' HOUR")))

    @case(f"ltz_window_join_los_angeles_{_mode}", mode=_mode, compare="multiset", why=WHY_WINDOW,
          config=_LOS_ANGELES)
    def _ltz_window_join_los_angeles(t_env, E):
        """INNER and FULL window joins in America/Los_Angeles across both 2026 changes, by days (23 and 25
        hours) and hours (the hour before the spring gap; the autumn's repeated hour, one window for both
        occurrences)."""
        _events(t_env, E, [r for r in LOS_ANGELES_ROWS if r[2] not in (4, 13)], "'1' MINUTE")
        _events(t_env, E, LOS_ANGELES_ASK_ROWS, "'1' MINUTE", name="asks")
        return t_env.sql_query(" UNION ALL ".join(
            _window_join(kind, size) for kind in ("INNER", "FULL") for size in ("'1' DAY", "'1' HOUR")))
