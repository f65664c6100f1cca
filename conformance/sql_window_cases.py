"""SQL conformance cases of event-time windows: Flink's window table-valued functions
(issue 18).

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py`` like every SQL case.  The cases pin down:

* the window TVFs ``TUMBLE``, ``HOP``, ``CUMULATE`` and ``SESSION`` over a CSV table whose
  ``ts TIMESTAMP(3)`` column is the rowtime attribute (``WATERMARK FOR ts AS ts - INTERVAL
  '2' SECOND``); the rows come up to 1.5 s out of order, so every row is in a 10 s window
  that is still open when it arrives;
* window aggregations ``GROUP BY window_start, window_end[, k]``: which windows exist,
  their ``window_start`` / ``window_end`` (``TIMESTAMP(3) NOT NULL``) and ``window_time``
  (``window_end`` - 1 ms, still a rowtime attribute: ``TIMESTAMP(3) NOT NULL *ROWTIME*``),
  the aggregate functions over a window (COUNT(DISTINCT), MIN, MAX, AVG, SUM over a column
  with NULLs), named arguments, a global window aggregation, HAVING, a cascade of two
  tumbling windows (the second over the first one's ``window_time``), mini-batch, batch;
* lateness: a window aggregation drops a row whose window has fired (the watermark passed
  the window's end), however recent the row is, and counts a row behind the watermark whose
  window is still open; the TVF alone drops nothing;
* the TVF alone (no aggregation): every row as it arrives with its window columns added,
  a HOP row once per window it falls in, the rowtime column keeping its ``*ROWTIME*`` type;
* SESSION with and without ``PARTITION BY``, and a window over an updating input (a
  rowtime deduplication), which Flink 2.3 accepts;
* what Flink refuses: a window over a TIMESTAMP column that is not a time attribute (a
  table without a WATERMARK, or the MAX(ts) of an ordinary GROUP BY).

When Flink's watermarks move: the planner puts a ``WatermarkAssigner`` after the filesystem
source, which emits a watermark right after a record whenever the watermark has advanced by
more than ``pipeline.auto-watermark-interval`` (200 ms) since the last one it emitted.  The
newest timestamp here advances in steps of at least 1 s, so every record's watermark
reaches the windows before the next record: which rows are late is deterministic.  At the
end of the input the source emits the watermark ``Long.MAX_VALUE``, which fires every
window still open.  A window aggregation emits insert-only rows (``+I``), one per window and
key; the windows one watermark fires come in window-end order but the keys in the order of
the operator's timer queue (a, c, b in one window, c, a, b in the next), hence ``multiset``.
"""

from __future__ import annotations

from conformance.sql_cases import MINIBATCH, _write, case, case_in_both_modes

WHY_WINDOW = ("window aggregation: the windows one watermark fires come by window end, but the keys of a "
              "window in the order of the operator's timer queue (a, c, b), not a natural order")
WHY_GLOBAL_WINDOW = "global window aggregation: one row per window, fired in window-end order (checked over 3 runs)"

# bids(ts, k, v): (seconds after 2024-01-01 00:00:00 as text, key, value or None).
# Out of order by at most 1.5 s (the watermark delay is 2 s); v is NULL in two rows.
# TUMBLE 10 s per key: [0,10) a 1,3,3  b 2,4,7  c 5;  [10,20) a 6,-,2  b 9,-  c 8;
# [20,30) a 13,13  b 14  c 11;  [30,40) c 16,17.  c's last two rows are exactly one
# session gap (5 s) apart.
BID_ROWS = [
    ("01.000", "a", 1),
    ("02.000", "b", 2),
    ("04.000", "a", 3),
    ("03.000", "b", 4),     # 1 s late
    ("08.000", "a", 3),
    ("07.500", "c", 5),     # 0.5 s late
    ("11.000", "a", 6),
    ("09.500", "b", 7),     # 1.5 s late, in the window before the newest row's
    ("13.000", "c", 8),
    ("15.000", "a", None),
    ("14.000", "b", 9),     # 1 s late
    ("18.000", "a", 2),
    ("21.000", "c", 11),
    ("19.999", "b", None),  # 1.001 s late, the last millisecond of [10,20)
    ("25.000", "a", 13),
    ("27.000", "b", 14),
    ("24.000", "a", 13),    # 1 s late
    ("32.000", "c", 16),
    ("37.000", "c", 17),
]

# BID_ROWS and then two rows behind the watermark (35 s after the last row): one whose
# window [0,10) has fired long ago, one whose window [30,40) has not fired yet.
LATE_BID_ROWS = BID_ROWS + [("05.000", "a", 100), ("31.000", "a", 200)]


def _csv(rows):
    return "".join(f"2024-01-01 00:00:{ts},{k},{'' if v is None else v}\n" for ts, k, v in rows)


def _bids(t_env, E, *, name="bids", rows=BID_ROWS, watermark="ts - INTERVAL '2' SECOND"):
    """CREATE TABLE ``name`` (ts TIMESTAMP(3), k STRING, v INT[, WATERMARK ...]) over a CSV
    file of ``rows``; ``watermark=None`` declares no watermark (ts is then a plain column).
    An empty field is NULL through ``'csv.null-literal' = ''``: without it Flink 2.3 fails
    the job on an empty INT field (NumberFormatException: For input string: "")."""
    path = _write(E, name, _csv(rows))
    wm = f", WATERMARK FOR ts AS {watermark}" if watermark else ""
    t_env.execute_sql(
        f"CREATE TABLE {name} (ts TIMESTAMP(3), k STRING, v INT{wm}) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = '')")


_TUMBLE = "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
_TUMBLE_AGG = (f"SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s FROM {_TUMBLE} "
               "GROUP BY window_start, window_end, k")


# --- window aggregations ---------------------------------------------------------------------

@case("window_tumble_agg", compare="multiset", why=WHY_WINDOW)
def window_tumble_agg(t_env, E):
    """TUMBLE 10 s, COUNT(*) and SUM(v) per window and key: one +I per (window, key) when the
    watermark passes the window's end; the out-of-order rows (each in a window still open
    when it arrives) count in their window."""
    _bids(t_env, E)
    return t_env.sql_query(_TUMBLE_AGG)


@case("window_tumble_agg_window_time", compare="multiset", why=WHY_WINDOW)
def window_tumble_agg_window_time(t_env, E):
    """TUMBLE 10 s per key with window_time selected (window_end - 1 ms, a rowtime
    attribute: TIMESTAMP(3) *ROWTIME*)."""
    _bids(t_env, E)
    return t_env.sql_query(
        f"SELECT window_start, window_end, window_time, k, COUNT(*) AS cnt, SUM(v) AS s FROM {_TUMBLE} "
        "GROUP BY window_start, window_end, window_time, k")


@case("window_tumble_global", compare="changelog", why=WHY_GLOBAL_WINDOW)
def window_tumble_global(t_env, E):
    """TUMBLE 10 s without a key (GROUP BY window_start, window_end): one +I per window."""
    _bids(t_env, E)
    return t_env.sql_query(
        f"SELECT window_start, window_end, COUNT(*) AS cnt, SUM(v) AS s FROM {_TUMBLE} "
        "GROUP BY window_start, window_end")


@case("window_hop_agg", compare="multiset", why=WHY_WINDOW)
def window_hop_agg(t_env, E):
    """HOP (slide 5 s, size 10 s) per key: every row counts in two overlapping windows,
    including the window starting 5 s before the first row."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, k")


@case("window_cumulate_agg", compare="multiset", why=WHY_WINDOW)
def window_cumulate_agg(t_env, E):
    """CUMULATE (step 5 s, max size 15 s) per key: windows [0,5), [0,10), [0,15), [15,20), ...
    each a running total from its cycle's start."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) "
        "GROUP BY window_start, window_end, k")


@case("window_session_agg", compare="multiset", why=WHY_WINDOW)
def window_session_agg(t_env, E):
    """SESSION (gap 5 s) partitioned by k: a session ends 5 s after its last row; rows that
    come out of order merge into the session they fall in."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(SESSION(TABLE bids PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY window_start, window_end, k")


@case("window_tumble_aggregate_functions", compare="multiset", why=WHY_WINDOW)
def window_tumble_aggregate_functions(t_env, E):
    """COUNT(*), COUNT(v), COUNT(DISTINCT v), MIN, MAX, AVG (INT: truncated) and SUM over a
    column with NULLs per 10 s window and key."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS n, COUNT(v) AS nv, COUNT(DISTINCT v) AS nd, "
        f"MIN(v) AS lo, MAX(v) AS hi, AVG(v) AS av, SUM(v) AS s FROM {_TUMBLE} "
        "GROUP BY window_start, window_end, k")


@case("window_tumble_named_arguments", compare="multiset", why=WHY_WINDOW)
def window_tumble_named_arguments(t_env, E):
    """TUMBLE with named arguments (DATA =>, TIMECOL =>, SIZE =>): the same windows as
    positional arguments."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(TUMBLE(DATA => TABLE bids, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, k")


@case("window_session_unpartitioned_grouped_by_key", compare="multiset", why=(
    "the session TVF releases a session's rows in the order of its merged window state (input order "
    "here), which the ordinary GROUP BY after it turns into updates"))
def window_session_unpartitioned_grouped_by_key(t_env, E):
    """SESSION without PARTITION BY, grouped by window and k: the sessions span all keys
    (one session here: no gap over 5 s, and rows exactly 5 s apart merge), and Flink plans
    the session TVF followed by an ordinary GROUP BY, so the result is an updating
    changelog (+I, then -U/+U per row) rather than one +I per window."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(SESSION(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY window_start, window_end, k")


@case("window_tumble_over_updating_input", compare="changelog", why=WHY_GLOBAL_WINDOW)
def window_tumble_over_updating_input(t_env, E):
    """TUMBLE over an updating input that keeps its rowtime (deduplication keeping each
    key's newest row by ts): Flink accepts it; the window aggregation adds +I/+U rows and
    subtracts -U rows, and a retraction that arrives after its window fired is dropped
    (b at 9.5 s stays in [0,10), b at 19.999 s in [10,20))."""
    _bids(t_env, E)
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW newest AS SELECT ts, k, v FROM (SELECT *, ROW_NUMBER() OVER "
        "(PARTITION BY k ORDER BY ts DESC) AS rn FROM bids) WHERE rn = 1")
    return t_env.sql_query(
        "SELECT window_start, window_end, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(TUMBLE(TABLE newest, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end")


@case("window_tumble_agg_having", compare="multiset", why=WHY_WINDOW)
def window_tumble_agg_having(t_env, E):
    """A window aggregation followed by HAVING and an expression over its results: only
    windows with at least two rows, insert-only."""
    _bids(t_env, E)
    return t_env.sql_query(
        f"SELECT window_end, k, COUNT(*) AS cnt, SUM(v) * 10 AS s10 FROM {_TUMBLE} "
        "GROUP BY window_start, window_end, k HAVING COUNT(*) >= 2")


@case("window_cascade_tumble", compare="multiset", why=WHY_WINDOW)
def window_cascade_tumble(t_env, E):
    """Cascading windows: a 5 s tumble aggregation per key (in a view) whose window_time
    (a rowtime attribute) feeds a 10 s tumble window summing the 5 s results.  The row a at
    24 s, 1 s out of order, is dropped by the 5 s level: its window [20,25) fired when the
    watermark reached 25 s.  (The subquery form TUMBLE(TABLE (SELECT ...), ...) does not parse
    in Flink 2.3, hence the view.)"""
    _bids(t_env, E)
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW per5 AS SELECT window_time AS wt, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY window_start, window_end, window_time, k")
    return t_env.sql_query(
        "SELECT window_start, window_end, window_time, k, SUM(cnt) AS cnt, SUM(s) AS s, COUNT(*) AS parts "
        "FROM TABLE(TUMBLE(TABLE per5, DESCRIPTOR(wt), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, window_time, k")


@case("window_tumble_watermark_no_delay", compare="multiset", why=WHY_WINDOW)
def window_tumble_watermark_no_delay(t_env, E):
    """WATERMARK FOR ts AS ts (no delay): an out-of-order row still counts while its window
    is open (b at 3 s after a at 4 s), but the rows that arrive after a newer row closed
    their window (b at 9.5 s after 11 s, b at 19.999 s after 21 s) are dropped."""
    _bids(t_env, E, watermark="ts")
    return t_env.sql_query(_TUMBLE_AGG)


@case("window_tumble_late_rows", compare="multiset", why=WHY_WINDOW)
def window_tumble_late_rows(t_env, E):
    """Two rows behind the watermark at the end of the input: the one whose window has
    fired (a at 5 s) is dropped, the one whose window is still open (a at 31 s, window
    [30,40)) counts."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(_TUMBLE_AGG)


@case("window_tumble_agg_minibatch", config=MINIBATCH, compare="multiset", why=WHY_WINDOW)
def window_tumble_agg_minibatch(t_env, E):
    """window_tumble_agg with mini-batch on: the same +I rows (a window aggregation emits
    final results only)."""
    _bids(t_env, E)
    return t_env.sql_query(_TUMBLE_AGG)


# Rows for the row-time mini-batch filter: 05.000 arrives after the watermark (10 s) has passed
# the end of its window [0,10).  Without mini-batch the watermark 10 s fires [0,10) and the row
# is dropped; under a row-time MiniBatchAssigner with a 20 s allow-latency only the watermarks
# that end a 20 s interval pass (1 s, the first, then 23 s), so [0,10) is still open when
# 05.000 arrives and counts it.
MINIBATCH_FILTER_ROWS = [("03.000", "a", 1), ("12.000", "a", 2), ("05.000", "a", 3), ("25.000", "a", 4)]
MINIBATCH_20S = {**MINIBATCH, "table.exec.mini-batch.allow-latency": "20 s"}


@case("window_tumble_minibatch_filters_watermarks", config=MINIBATCH_20S, compare="changelog")
def window_tumble_minibatch_filters_watermarks(t_env, E):
    """A window aggregation under a row-time MiniBatchAssigner (allow-latency 20 s): only the
    watermarks that end a 20 s interval reach it, so a row behind a filtered watermark whose
    window has not fired is counted (EXPLAIN: MiniBatchAssigner(interval=[20000ms], mode=[RowTime])
    above the WatermarkAssigner). One key, windows fired in end order: a changelog. Flink
    without mini-batch, recorded once: [0,10) fires at the watermark 10 s and drops 05.000
    (count 1, sum 1); changeflow's lateness without mini-batch is tested on Spark
    (tests/spark/test_event_time_windows.py)."""
    _bids(t_env, E, rows=MINIBATCH_FILTER_ROWS)
    return t_env.sql_query(_TUMBLE_AGG)


@case("window_tumble_agg_batch", mode="batch")
def window_tumble_agg_batch(t_env, E):
    """window_tumble_agg in batch mode: the same rows (the watermark plays no part)."""
    _bids(t_env, E)
    return t_env.sql_query(_TUMBLE_AGG)


# --- the TVF alone ---------------------------------------------------------------------------

@case("window_tumble_tvf_select_star")
def window_tumble_tvf_select_star(t_env, E):
    """SELECT * FROM TABLE(TUMBLE(...)): every row, in input order, with window_start,
    window_end and window_time appended; ts keeps its rowtime type."""
    _bids(t_env, E)
    return t_env.sql_query(f"SELECT * FROM {_TUMBLE}")


@case("window_tumble_tvf_projection_where")
def window_tumble_tvf_projection_where(t_env, E):
    """A projection of the TUMBLE TVF with a WHERE on the data and on window_start."""
    _bids(t_env, E)
    return t_env.sql_query(
        f"SELECT k, ts, v, window_start, window_end FROM {_TUMBLE} "
        "WHERE v > 2 AND window_start >= TIMESTAMP '2024-01-01 00:00:10'")


@case("window_tumble_tvf_keeps_late_rows")
def window_tumble_tvf_keeps_late_rows(t_env, E):
    """The TUMBLE TVF alone over rows behind the watermark: it drops nothing (both late rows
    come out with their windows); only window aggregations drop late rows."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(f"SELECT * FROM {_TUMBLE}")


@case("window_hop_tvf", compare="multiset", why=(
    "HOP TVF: rows come in input order, but each row's windows latest first (the window assigner's "
    "order), not a natural order"))
def window_hop_tvf(t_env, E):
    """HOP (slide 5 s, size 10 s) alone: each row once per window it falls in (twice), as
    soon as it arrives."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT ts, k, v, window_start, window_end, window_time "
        "FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))")


# --- refusals --------------------------------------------------------------------------------

@case("window_error_not_time_attribute", compare="error", error_mentions=("TUMBLE", "time attribute"))
def window_error_not_time_attribute(t_env, E):
    """TUMBLE over a TIMESTAMP(3) column of a table without a WATERMARK (not a time
    attribute)."""
    _bids(t_env, E, watermark=None)
    return t_env.sql_query(_TUMBLE_AGG)


@case("window_error_over_group_by_result", compare="error", error_mentions=("TUMBLE", "time attribute"))
def window_error_over_group_by_result(t_env, E):
    """TUMBLE over a GROUP BY result (an updating view whose ts is MAX(ts)): an ordinary
    aggregation's result is no time attribute, so Flink refuses the window (when the job
    is planned, at execute) with the same message as for a table without a watermark."""
    _bids(t_env, E)
    t_env.execute_sql("CREATE TEMPORARY VIEW latest AS SELECT k, MAX(ts) AS ts, SUM(v) AS v FROM bids GROUP BY k")
    return t_env.sql_query(
        "SELECT window_start, window_end, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(TUMBLE(TABLE latest, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end")


# --- a TIMESTAMP_LTZ row time (epoch milliseconds through TO_TIMESTAMP_LTZ, the usual Flink DDL) ---------

_EPOCH_2024 = 1704067200000  # 2024-01-01 00:00:00 UTC in epoch milliseconds


def _ltz_bids(t_env, E, rows=LATE_BID_ROWS):
    """bids_ltz(ms BIGINT, k, v, ts AS TO_TIMESTAMP_LTZ(ms, 3)) with ts the rowtime (a TIMESTAMP_LTZ(3))."""
    text = "".join(f"{_EPOCH_2024 + round(float(ts) * 1000)},{k},{'' if v is None else v}\n" for ts, k, v in rows)
    path = _write(E, "bids_ltz", text)
    t_env.execute_sql(
        "CREATE TABLE bids_ltz (ms BIGINT, k STRING, v INT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
        "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = '')")


@case_in_both_modes("window_tumble_ltz_rowtime", compare="multiset", why=WHY_WINDOW)
def window_tumble_ltz_rowtime(t_env, E):
    """TUMBLE 10 s per key over a TIMESTAMP_LTZ(3) row time (TO_TIMESTAMP_LTZ of epoch ms), late rows
    included: window_start/window_end TIMESTAMP(3), window_time a TIMESTAMP_LTZ(3) (shown as a string:
    PyFlink 2.3's collect() cannot pickle a TIMESTAMP_LTZ value)."""
    _ltz_bids(t_env, E)
    return t_env.sql_query(
        "SELECT window_start, window_end, CAST(window_time AS STRING) AS wt, k, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM TABLE(TUMBLE(TABLE bids_ltz, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, window_time, k")


@case("group_window_tumble_ltz_rowtime", compare="multiset", why=WHY_WINDOW)
def group_window_tumble_ltz_rowtime(t_env, E):
    """The legacy GROUP BY TUMBLE over a TIMESTAMP_LTZ(3) row time: TUMBLE_START/END TIMESTAMP(3); late rows
    dropped. (TUMBLE_ROWTIME left out: PyFlink cannot collect it, and Flink types a CAST of it nullable where
    changeflow keeps the window column's NOT NULL inside an expression: docs/differences.md.)"""
    _ltz_bids(t_env, E)
    return t_env.sql_query(
        "SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, TUMBLE_END(ts, INTERVAL '10' SECOND) AS we, "
        "COUNT(*) AS cnt FROM bids_ltz "
        "GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)")
