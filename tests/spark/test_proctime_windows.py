"""Window TVFs over a PROCTIME() attribute on Spark: every row counted once per window, windows by the wall clock.

Which window a row falls in depends on when it is processed, so these tests check what
holds whatever the timing (as Flink's own processing-time tests do): the windows are
aligned and of the declared size, they lie within the wall-clock span of the run, each
(key, window) is emitted once and insert-only, and over all windows every input row is
counted exactly once per window it belongs to (TUMBLE once, HOP size/slide times); none
is dropped as late.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.xdist_group("proctime_windows")

ROWS = [("abcd"[i * 7 % 4], i % 5 + 1) for i in range(240)]


def _env(spark, tmp_path, streaming: bool = True, **settings: str) -> TableEnvironment:
    mode = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(mode, spark_session=spark)
    config = t_env.get_config()
    config.set("changeflow.state.buckets", "2")
    config.set("changeflow.source.rows-per-batch", "40")   # six micro-batches
    config.set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    for key, value in settings.items():
        config.set(key, value)
    (tmp_path / "bids").mkdir(exist_ok=True)
    (tmp_path / "bids" / "part-0.csv").write_text("".join(f"{k},{v}\n" for k, v in ROWS))
    t_env.execute_sql(f"CREATE TABLE bid (bidder STRING, price INT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path / 'bids'}', 'format' = 'csv')")
    # Nexmark q12's shape: the processing-time attribute comes from a view.
    t_env.execute_sql("CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid")
    return t_env


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _check_windows(rows, size: dt.timedelta, began: dt.datetime, ended: dt.datetime) -> None:
    for _kind, _key, start, end, _count, _total in rows:
        assert end - start == size and start.timestamp() * 1000 % 1000 == 0, (start, end)
        # The windows are the wall clock's while the query ran (PROCTIME() is UTC here).
        assert began - size <= start <= ended, (began, start, ended)


# The window TVFs' checks hold whatever the timing and batching: three micro-batches of 80 rows carry windows
# across micro-batches as six did (the legacy windows below need six: a window closed before the last one).
THREE_BATCHES = {"changeflow.source.rows-per-batch": "80"}


def test_tumble_over_proctime_counts_every_row_once_in_one_aligned_window(spark, tmp_path):
    t_env = _env(spark, tmp_path, **THREE_BATCHES)
    began = _utc_now()
    table = t_env.sql_query(
        "SELECT bidder, window_start, window_end, COUNT(*) AS bid_count, SUM(price) AS total "
        "FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '1' SECOND)) "
        "GROUP BY bidder, window_start, window_end")
    with table.execute().collect() as it:
        rows = [(str(r.get_row_kind()),) + tuple(r) for r in it]
    ended = _utc_now()
    assert {r[0] for r in rows} == {"+I"}
    assert len({(r[1], r[2]) for r in rows}) == len(rows)   # one result per key and window
    _check_windows(rows, dt.timedelta(seconds=1), began, ended)
    counts, totals = Counter(), Counter()
    for _kind, key, _start, _end, count, total in rows:
        counts[key] += count
        totals[key] += total
    assert counts == Counter(k for k, _ in ROWS)
    assert totals == Counter({k: sum(v for kk, v in ROWS if kk == k) for k, _ in ROWS})


def test_hop_over_proctime_with_mini_batch_counts_every_row_in_each_of_its_windows(spark, tmp_path):
    t_env = _env(spark, tmp_path, **{"table.exec.mini-batch.enabled": "true",
                                     "table.exec.mini-batch.allow-latency": "1 s",
                                     "table.exec.mini-batch.size": "1000"})
    query = ("SELECT bidder, window_start, window_end, COUNT(*) AS bid_count, SUM(price) AS total "
             "FROM TABLE(HOP(TABLE B, DESCRIPTOR(p_time), INTERVAL '1' SECOND, INTERVAL '2' SECOND)) "
             "GROUP BY bidder, window_start, window_end")
    assert "MiniBatchAssigner(interval=[1000ms], mode=[ProcTime]" in t_env.explain_sql(query)
    began = _utc_now()
    with t_env.sql_query(query).execute().collect() as it:
        rows = [(str(r.get_row_kind()),) + tuple(r) for r in it]
    ended = _utc_now()
    assert {r[0] for r in rows} == {"+I"}
    _check_windows(rows, dt.timedelta(seconds=2), began, ended)
    counts = Counter()
    for _kind, key, _start, _end, count, _total in rows:
        counts[key] += count
    assert counts == Counter({k: 2 * n for k, n in Counter(k for k, _ in ROWS).items()})


def test_batch_mode_refuses_a_proctime_window_as_flink_does(spark, tmp_path):
    t_env = _env(spark, tmp_path, streaming=False)
    with pytest.raises(PlanError, match="Processing time Window TableFunction is not supported yet"):
        t_env.sql_query("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), "
                        "INTERVAL '1' SECOND)) GROUP BY window_start, window_end").execute()


# --- legacy group windows over processing time (GROUP BY TUMBLE(p_time, ...), Table API window(...)) -----------

# The rows of the last micro-batch (and any earlier one in its window) are in a window still open when the
# input ends, which Flink's legacy GroupWindowAggregate never fires (unlike the window TVF above).
LAST_BATCH = 40


def _check_legacy(rows, size: dt.timedelta, began: dt.datetime, ended: dt.datetime) -> Counter:
    """What holds whatever the timing; returns the rows counted per key."""
    assert {r[0] for r in rows} == {"+I"}
    assert len({(r[1], r[2]) for r in rows}) == len(rows)   # one result per key and window
    _check_windows(rows, size, began, ended)
    # Every window emitted closed while the query ran (none fired by the end of input).
    assert all(end <= ended for _kind, _key, _start, end, _count, _total in rows)
    counts = Counter()
    for _kind, key, _start, _end, count, _total in rows:
        counts[key] += count
    assert all(counts[k] <= n for k, n in Counter(k for k, _ in ROWS).items())   # each row counted at most once
    assert sum(counts.values()) <= len(ROWS) - LAST_BATCH
    return counts


def test_legacy_tumble_over_proctime_fires_the_windows_closed_before_the_end_only(spark, tmp_path):
    t_env = _env(spark, tmp_path)
    query = ("SELECT bidder, TUMBLE_START(p_time, INTERVAL '1' SECOND) AS ws, "
             "TUMBLE_END(p_time, INTERVAL '1' SECOND) AS we, COUNT(*) AS bid_count, SUM(price) AS total, "
             "TUMBLE_PROCTIME(p_time, INTERVAL '1' SECOND) AS pt "
             "FROM B GROUP BY bidder, TUMBLE(p_time, INTERVAL '1' SECOND)")
    began = _utc_now()
    with t_env.sql_query(query).execute().collect() as it:
        rows = [(str(r.get_row_kind()),) + tuple(r) for r in it]
    ended = _utc_now()
    # TUMBLE_PROCTIME: changeflow gives the window's last millisecond (Flink the emission's wall clock).
    assert all(pt.replace(tzinfo=None) == we - dt.timedelta(milliseconds=1) for *_, we, _c, _t, pt in rows)
    counts = _check_legacy([r[:6] for r in rows], dt.timedelta(seconds=1), began, ended)
    # Six micro-batches take well over a second here: the first one's window closed before the last began.
    assert sum(counts.values()) > 0


def test_table_api_slide_over_proctime_counts_rows_only_in_windows_closed_before_the_end(spark, tmp_path):
    from changeflow.table.expressions import col, lit
    from changeflow.table.window import Slide
    t_env = _env(spark, tmp_path)
    table = (t_env.from_path("B").window(Slide.over(lit(2).seconds).every(lit(1).seconds).on(col("p_time")).alias("w"))
             .group_by(col("w"), col("bidder"))
             .select(col("bidder"), col("w").start, col("w").end, col("price").count, col("price").sum))
    began = _utc_now()
    with table.execute().collect() as it:
        rows = [(str(r.get_row_kind()),) + tuple(r) for r in it]
    ended = _utc_now()
    assert {r[0] for r in rows} == {"+I"}
    assert len({(r[1], r[2]) for r in rows}) == len(rows)
    _check_windows(rows, dt.timedelta(seconds=2), began, ended)
    assert all(end <= ended for _kind, _key, _start, end, _count, _total in rows)
    counts = Counter()
    for _kind, key, _start, _end, count, _total in rows:
        counts[key] += count
    # Each row is in two windows; the last micro-batch's rows in none that fired.
    assert all(counts[k] <= 2 * n for k, n in Counter(k for k, _ in ROWS).items())
    assert sum(counts.values()) <= 2 * (len(ROWS) - LAST_BATCH) + LAST_BATCH


def test_batch_mode_refuses_a_legacy_proctime_group_window_with_flinks_message(spark, tmp_path):
    t_env = _env(spark, tmp_path, streaming=False)
    with pytest.raises(PlanError, match="Window can not be defined over a proctime attribute column for batch mode"):
        t_env.sql_query("SELECT bidder, COUNT(*) AS n FROM B GROUP BY bidder, "
                        "TUMBLE(p_time, INTERVAL '1' SECOND)").execute()


@pytest.mark.parametrize("window", ["SESSION(p_time, INTERVAL '1' HOUR)",
                                    "HOP(p_time, INTERVAL '30' MINUTE, INTERVAL '1' HOUR)"])
def test_legacy_proctime_windows_open_at_the_end_of_input_never_fire(spark, tmp_path, window):
    # An hour-long window (or session gap) cannot close during the run: Flink 2.3 emits nothing either.
    t_env = _env(spark, tmp_path)
    query = f"SELECT bidder, COUNT(*) AS bid_count FROM B GROUP BY bidder, {window}"
    with t_env.sql_query(query).execute().collect() as it:
        assert list(it) == []


def test_a_proctime_window_in_a_session_zone_is_aligned_to_the_zones_wall_clock(spark, tmp_path):
    """PROCTIME() is a TIMESTAMP_LTZ: in Asia/Kolkata (UTC+05:30) an hour window starts on a Kolkata hour (a
    UTC half hour), and window_start/window_end are Kolkata wall clocks, as Flink aligns them."""
    zone = "Asia/Kolkata"
    t_env = _env(spark, tmp_path, **THREE_BATCHES, **{"table.local-time-zone": zone})
    from zoneinfo import ZoneInfo

    def local_now() -> dt.datetime:
        return dt.datetime.now(ZoneInfo(zone)).replace(tzinfo=None)

    began = local_now()
    table = t_env.sql_query(
        "SELECT bidder, window_start, window_end, COUNT(*) AS bid_count, SUM(price) AS total "
        "FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '1' HOUR)) GROUP BY bidder, window_start, window_end")
    with table.execute().collect() as it:
        rows = [(str(r.get_row_kind()),) + tuple(r) for r in it]
    ended = local_now()
    assert {r[0] for r in rows} == {"+I"} and rows
    _check_windows(rows, dt.timedelta(hours=1), began, ended)
    assert all(start.minute == 0 and start.second == 0 for _k, _b, start, _e, _c, _t in rows)
    assert sum(r[4] for r in rows) == len(ROWS)
