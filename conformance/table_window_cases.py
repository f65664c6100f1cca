"""Table API conformance cases of event-time windows (issue 18): the group windows
``Tumble``/``Slide``/``Session`` (``t.window(...).group_by(...).select(...)``) and ``Over``
windows (``t.over_window(...).select(...)``).

Registered into :data:`conformance.table_api_cases.CASES` (imported at the end of that
module). ``E`` has, besides ``col``/``lit``/``DataTypes``/``x``, ``window`` (PyFlink's
``pyflink.table.window`` or ``changeflow.table.window``), ``table`` (``pyflink.table`` or
``changeflow.table``: ``Schema``, ``TableDescriptor``) and ``tmp`` (a directory for the
case's CSV files). The input is the SQL window cases' ``bids`` rows
(:mod:`conformance.sql_window_cases`: up to 1.5 s out of order under a 2 s watermark delay,
NULL values, three keys), plus, where the case says so, two rows behind the watermark: one
whose window has fired (dropped) and one whose window is still open. One table is a DDL
table read with ``from_path``, the other a ``TableDescriptor`` whose ``Schema`` declares
the watermark. The window aggregates' rows are compared as a multiset (the keys of one
window come in the order of Flink's timer queue), as the OVER windows' (rows of
different keys come in the order of Flink's timers too).
"""

from __future__ import annotations

import os

from conformance import sql_cases  # noqa: F401  (first: sql_window_cases is imported by it)
from conformance.sql_window_cases import BID_ROWS, LATE_BID_ROWS, _csv
from conformance.table_api_cases import case

_WATERMARK = "ts - INTERVAL '2' SECOND"


def _write(E, name, rows):
    directory = os.path.join(E.tmp, name)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "data.csv"), "w", encoding="utf-8") as f:
        f.write(_csv(rows))
    return directory


def _ddl_bids(t_env, E, rows=LATE_BID_ROWS):
    """A DDL table with a WATERMARK, read with from_path."""
    path = _write(E, "bids", rows)
    t_env.execute_sql(
        f"CREATE TABLE bids (ts TIMESTAMP(3), k STRING, v INT, WATERMARK FOR ts AS {_WATERMARK}) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = '')")
    return t_env.from_path("bids")


def _descriptor_bids(t_env, E, rows=BID_ROWS):
    """A TableDescriptor table whose Schema declares the watermark."""
    path = _write(E, "bids_d", rows)
    T = E.table
    schema = (T.Schema.new_builder()
              .column("ts", E.DataTypes.TIMESTAMP(3)).column("k", E.DataTypes.STRING())
              .column("v", E.DataTypes.INT()).watermark("ts", _WATERMARK).build())
    t_env.create_temporary_table("bids_d", T.TableDescriptor.for_connector("filesystem").schema(schema)
                                 .option("path", path).option("csv.null-literal", "")
                                 .format("csv").build())
    return t_env.from_path("bids_d")


# --- group windows --------------------------------------------------------------------------

@case("window_tumble_per_key_late", ordered=False)
def _(t_env, E):
    """Tumble 10 s per key over a DDL table with two late rows: start, end, rowtime (unaliased:
    Flink's names), COUNT and SUM; the row of a fired window is dropped, the other counts."""
    col, lit, W = E.col, E.lit, E.window
    return (_ddl_bids(t_env, E).window(W.Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
            .group_by(col("w"), col("k"))
            .select(col("k"), col("w").start, col("w").end, col("w").rowtime, col("v").count, col("v").sum))


@case("window_slide_descriptor", ordered=False)
def _(t_env, E):
    """Slide 10 s every 5 s per key over a TableDescriptor table (Schema watermark), aliased
    window properties."""
    col, lit, W = E.col, E.lit, E.window
    return (_descriptor_bids(t_env, E).window(W.Slide.over(lit(10).seconds).every(lit(5).seconds)
                                              .on(col("ts")).alias("w"))
            .group_by(col("k"), col("w"))
            .select(col("k"), col("w").start.alias("ws"), col("w").end.alias("we"),
                    col("v").sum.alias("s"), col("v").max.alias("mx")))


@case("window_session_per_key", ordered=False)
def _(t_env, E):
    """Session with a 5 s gap per key, with the window's rowtime and an expression over an
    aggregate."""
    col, lit, W = E.col, E.lit, E.window
    return (_ddl_bids(t_env, E).window(W.Session.with_gap(lit(5).seconds).on(col("ts")).alias("w"))
            .group_by(col("w"), col("k"))
            .select(col("k"), col("w").start.alias("ws"), col("w").end.alias("we"),
                    col("w").rowtime.alias("rt"), (col("v").sum + 1).alias("s1")))


@case("window_tumble_global_cascade", ordered=False)
def _(t_env, E):
    """A global window: Tumble 5 s per key, then Tumble 20 s without a key over the first
    window's rowtime (which stays a time attribute)."""
    col, lit, W = E.col, E.lit, E.window
    five = (_descriptor_bids(t_env, E).window(W.Tumble.over(lit(5).seconds).on(col("ts")).alias("w"))
            .group_by(col("w"), col("k"))
            .select(col("k"), col("w").rowtime.alias("rt"), col("v").count.alias("c")))
    return (five.window(W.Tumble.over(lit(20).seconds).on(col("rt")).alias("w2")).group_by(col("w2"))
            .select(col("w2").start.alias("ws"), col("c").sum.alias("n"), col("k").count.alias("keys")))


@case("window_tumble_proctime_of_rowtime_window", ordered=False)
def _(t_env, E):
    """``col('w').proctime`` of a row-time Tumble: Flink's PROCTIME_MATERIALIZE(proctime('w')), the wall
    clock when the window's row is emitted (TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*). Its value is the run's
    time and PyFlink cannot collect a TIMESTAMP_LTZ, so the case keeps whether it is set."""
    col, lit, W = E.col, E.lit, E.window
    windowed = (_ddl_bids(t_env, E).window(W.Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
                .group_by(col("w"), col("k"))
                .select(col("k"), col("w").start.alias("ws"), col("w").proctime.alias("pt"), col("v").sum.alias("s")))
    return windowed.select(col("k"), col("ws"), col("s"), col("pt").is_not_null.alias("has_pt"))


@case("window_tumble_ltz_shanghai", ordered=False)
def _(t_env, E):
    """Tumble 1 hour per key over a TIMESTAMP_LTZ(3) row time (TO_TIMESTAMP_LTZ of epoch ms) in the session
    zone Asia/Shanghai, with late rows: start and end are Shanghai wall clocks (the SQL cases'
    ltz_window_tumble_shanghai_streaming, through the Table API)."""
    from conformance.sql_ltz_window_cases import SHANGHAI_ROWS, _epoch_ms

    col, lit, W = E.col, E.lit, E.window
    t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
    directory = os.path.join(E.tmp, "events")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "data.csv"), "w", encoding="utf-8") as f:
        f.write("".join(f"{_epoch_ms(t)},{k},{v}\n" for t, k, v in SHANGHAI_ROWS))
    t_env.execute_sql(
        "CREATE TABLE events (ms BIGINT, k STRING, v INT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' HOUR) "
        f"WITH ('connector' = 'filesystem', 'path' = '{directory}', 'format' = 'csv')")
    return (t_env.from_path("events").window(W.Tumble.over(lit(1).hours).on(col("ts")).alias("w"))
            .group_by(col("w"), col("k"))
            .select(col("k"), col("w").start.alias("ws"), col("w").end.alias("we"), col("v").count.alias("c"),
                    col("v").sum.alias("s")))


# --- over windows ---------------------------------------------------------------------------

@case("over_rows_preceding_late", ordered=False)
def _(t_env, E):
    """ROWS: the row and the two rows before it per key (row_interval(2)), with late rows
    (dropped by the OVER operator)."""
    col, W = E.col, E.window
    return (_ddl_bids(t_env, E)
            .over_window(W.Over.partition_by(col("k")).order_by(col("ts")).preceding(E.x.row_interval(2))
                         .alias("w"))
            .select(col("k"), col("ts"), col("v"), col("v").sum.over(col("w")).alias("s"),
                    col("v").count.over(col("w")).alias("c")))


@case("over_range_interval", ordered=False)
def _(t_env, E):
    """RANGE: the rows of the last 3 s per key (preceding(lit(3).seconds)), min and max."""
    col, lit, W = E.col, E.lit, E.window
    return (_descriptor_bids(t_env, E)
            .over_window(W.Over.partition_by(col("k")).order_by(col("ts")).preceding(lit(3).seconds).alias("w"))
            .select(col("k"), col("ts"), col("v").min.over(col("w")).alias("mn"),
                    col("v").max.over(col("w")).alias("mx")))


@case("over_unbounded_range_global", ordered=False)
def _(t_env, E):
    """UNBOUNDED_RANGE without a partition, following CURRENT_RANGE: a running SUM and
    AVG over every row so far, in time order (unaliased: Flink's names)."""
    col, W = E.col, E.window
    return (_descriptor_bids(t_env, E)
            .over_window(W.Over.order_by(col("ts")).preceding(E.x.UNBOUNDED_RANGE)
                         .following(E.x.CURRENT_RANGE).alias("w"))
            .select(col("ts"), col("k"), col("v").sum.over(col("w")), col("v").avg.over(col("w"))))


@case("over_unbounded_row_expression", ordered=False)
def _(t_env, E):
    """UNBOUNDED_ROW per key over an expression argument (v * 2), and the row count."""
    col, W = E.col, E.window
    return (_ddl_bids(t_env, E)
            .over_window(W.Over.partition_by(col("k")).order_by(col("ts")).preceding(E.x.UNBOUNDED_ROW)
                         .alias("w"))
            .select(col("k"), col("ts"), (col("v") * 2).sum.over(col("w")).alias("s2"),
                    col("k").count.over(col("w")).alias("n")))


# --- current_watermark ----------------------------------------------------------------------

@case("current_watermark_filters_late_rows")
def _(t_env, E):
    """``current_watermark(ts)`` in a select and a filter, as SQL's CURRENT_WATERMARK: the
    watermark that reached the Calc before each row (NULL before the first); the two rows
    behind it are filtered out."""
    col, wm = E.col, E.x.current_watermark
    return (_ddl_bids(t_env, E).where((col("ts") > wm(col("ts"))) | wm(col("ts")).is_null)
            .select(col("ts"), col("k"), col("v"), wm(col("ts")).alias("wm")))


@case("current_watermark_not_rowtime", error=True)
def _(t_env, E):
    """``current_watermark`` of a column that is no rowtime attribute: Flink's validation error."""
    col = E.col
    return _ddl_bids(t_env, E).select(E.x.current_watermark(col("v")).alias("wm"))
