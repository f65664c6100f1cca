"""Window TVF aggregations on Spark: watermarks across micro-batches, late rows, streaming equals batch."""

from __future__ import annotations

import csv
import datetime as dt
import random
from collections import Counter

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment

EPOCH = dt.datetime(2024, 1, 1)

# One test process runs the module (--dist loadgroup): the out-of-order bids' streaming query runs once.
pytestmark = pytest.mark.xdist_group("event_time_windows")


def write_bids(directory, rows) -> None:
    """``(second, key, value)`` rows as a CSV file: ``ts`` is 2024-01-01 00:00:<second>."""
    directory.mkdir(exist_ok=True)
    text = "".join(f"{(EPOCH + dt.timedelta(milliseconds=int(ms))).isoformat(sep=' ', timespec='milliseconds')},"
                   f"{k},{v}\n" for ms, k, v in rows)
    (directory / "part-0.csv").write_text(text)


def bids_table(t_env, directory, delay_s: int = 2) -> None:
    t_env.execute_sql(
        f"CREATE TABLE bids (ts TIMESTAMP(3), k STRING, v INT, "
        f"WATERMARK FOR ts AS ts - INTERVAL '{delay_s}' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{directory}', 'format' = 'csv')")


TUMBLE_BY_KEY = ("SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s "
                 "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                 "GROUP BY window_start, window_end, k")


def changes(table) -> list[tuple]:
    with table.execute().collect() as rows:
        return [(str(r.get_row_kind()),) + tuple(r) for r in rows]


def second(ts: dt.datetime) -> int:
    return int((ts - EPOCH).total_seconds())


@pytest.mark.parametrize("rows_per_batch", ["2", "1000"])
def test_late_rows_are_dropped_and_counted_as_flink_does_whatever_the_micro_batches(spark, tmp_path, rows_per_batch):
    # The watermark follows each row that moves it (ts - 2 s): after (12 s, a) it is 10 s and window
    # [0, 10 s) fires, so (9 s, a) is late; after (22 s, a) it is 20 s, so (19 s, b) is late. Flink's
    # WatermarkAssignerOperator emits a watermark after each of these rows too, so it drops the same two.
    rows = [(1_000, "a", 1), (3_000, "b", 2), (12_000, "a", 3), (9_000, "a", 4),
            (15_000, "b", 5), (22_000, "a", 6), (19_000, "b", 7), (31_000, "a", 8)]
    write_bids(tmp_path / "bids", rows)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    config = t_env.get_config()
    config.set("changeflow.state.buckets", "2")
    config.set("changeflow.source.rows-per-batch", rows_per_batch)
    config.set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    bids_table(t_env, tmp_path / "bids")
    t_env.execute_sql("CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), k STRING, cnt BIGINT, s INT) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'csv')")
    job = t_env.execute_sql(f"INSERT INTO out {TUMBLE_BY_KEY}").get_job_client()
    job.wait()
    # csv.reader: a timestamp has a space, so Flink's CSV writer (and changeflow's) quotes it.
    written = sorted(row for f in (tmp_path / "out").rglob("*") if f.is_file()
                     and not f.name.startswith((".", "_")) for row in csv.reader(f.read_text().splitlines()))
    assert [(second(dt.datetime.fromisoformat(w[0])), w[2], int(w[3]), int(w[4])) for w in written] == [
        (0, "a", 1, 1), (0, "b", 1, 2), (10, "a", 1, 3), (10, "b", 1, 5), (20, "a", 1, 6), (30, "a", 1, 8)]
    metrics = job.get_state_metrics()
    assert [m["late_records_dropped"] for m in metrics if m["operator"] == "WindowAggregate"] == [2], metrics


WINDOWS = {
    "tumble": "TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
    "hop": "HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)",
    "cumulate": "CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND)",
}


def window_query(window: str) -> str:
    return (f"SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s, MAX(v) AS mx "
            f"FROM TABLE({window}) GROUP BY window_start, window_end, k")


def out_of_order_env(spark, directory, streaming: bool):
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", "40")  # three micro-batches of the 120 rows
    bids_table(t_env, directory, delay_s=3)
    return t_env


@pytest.fixture(scope="module")
def out_of_order_bids(spark, tmp_path_factory):
    """120 rows, each less than 3 s behind the latest (a 3 s watermark delay drops none), and the
    streaming changes of every window of WINDOWS over them: one streaming query runs the three window
    aggregations (independent operators over the same rows), each one's rows tagged with its name."""
    rng = random.Random(7)
    rows, latest = [], 0
    for _ in range(120):
        latest += rng.randrange(0, 1_500)
        rows.append((max(0, latest - rng.randrange(0, 2_999)), rng.choice("abcd"), rng.randrange(-5, 20)))
    directory = tmp_path_factory.mktemp("out-of-order") / "bids"
    write_bids(directory, rows)
    t_env = out_of_order_env(spark, directory, streaming=True)
    union = " UNION ALL ".join(f"SELECT '{name}' AS w, * FROM ({window_query(window)})"
                               for name, window in WINDOWS.items())
    streamed = changes(t_env.sql_query(union))
    return directory, {name: [(kind, *values) for kind, tag, *values in streamed if tag == name] for name in WINDOWS}


@pytest.mark.parametrize("window", sorted(WINDOWS))
def test_streaming_over_rows_out_of_order_within_the_delay_equals_batch(spark, out_of_order_bids, window):
    directory, streamed = out_of_order_bids
    streaming = streamed[window]
    batch = changes(out_of_order_env(spark, directory, streaming=False).sql_query(window_query(WINDOWS[window])))
    assert {c[0] for c in streaming} == {"+I"}   # insert-only: each window once
    assert Counter(streaming) == Counter(batch)
    assert len(batch) > 10


def test_a_window_over_the_window_time_of_another_cascades(spark, tmp_path):
    rows = [(ms, "k", 1) for ms in range(0, 40_000, 700)]
    write_bids(tmp_path / "bids", rows)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", "20")  # three micro-batches of the 58 rows
    bids_table(t_env, tmp_path / "bids")
    t_env.create_temporary_view("five", t_env.sql_query(
        "SELECT window_start AS ws, window_end AS we, window_time AS rowtime, COUNT(*) AS n "
        "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY window_start, window_end, window_time"))
    result = changes(t_env.sql_query(
        "SELECT window_start, SUM(n) AS n, COUNT(*) AS windows "
        "FROM TABLE(TUMBLE(TABLE five, DESCRIPTOR(rowtime), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end"))
    per_window = Counter(ms // 10_000 for ms, _, _ in rows)
    assert sorted((second(r[1]), r[2], r[3]) for r in result) == [
        (w * 10, n, 2) for w, n in sorted(per_window.items())]


def test_row_time_mini_batch_filters_watermarks_across_micro_batches(spark, tmp_path):
    # Under a row-time MiniBatchAssigner (allow-latency 20 s) only the watermarks that end a 20 s
    # interval reach the window aggregation: 1 s (the first) and 23 s, not 10 s. So (5 s, a) arrives
    # while [0, 10 s) is still open and counts, as in Flink (the SQL golden
    # window_tumble_minibatch_filters_watermarks). mini-batch.size 1 puts every row in a micro-batch
    # of its own: the filter's last passed watermark comes from the operator's state.
    write_bids(tmp_path / "bids", [(3_000, "a", 1), (12_000, "a", 2), (5_000, "a", 3), (25_000, "a", 4)])
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    config = t_env.get_config()
    for key, value in {"changeflow.state.buckets": "2", "table.exec.mini-batch.enabled": "true",
                       "table.exec.mini-batch.allow-latency": "20 s", "table.exec.mini-batch.size": "1"}.items():
        config.set(key, value)
    bids_table(t_env, tmp_path / "bids")
    query = t_env.sql_query(TUMBLE_BY_KEY)
    assert "MiniBatchAssigner(interval=[20000ms], mode=[RowTime], changelogMode=[I])" in query.explain()
    assert [(kind, second(ws), second(we), k, cnt, s) for kind, ws, we, k, cnt, s in changes(query)] == [
        ("+I", 0, 10, "a", 2, 4), ("+I", 10, 20, "a", 1, 2), ("+I", 20, 30, "a", 1, 4)]
