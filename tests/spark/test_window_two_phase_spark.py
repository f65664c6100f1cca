"""A window aggregation in two phases on Spark over a Parquet filesystem table staged from Arrow columns.

The rows of test_event_time_windows.py's late-rows test, as a Parquet file: the table is
staged column by column (``ParquetFormat.decode_arrow``) and the window aggregation runs
its local phase before the shuffle; the windows written and the rows dropped as late are
Flink's, whatever the micro-batches, also when a micro-batch is read in two partitions.
"""

from __future__ import annotations

import csv
import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from changeflow.runtime.spark import source_files
from changeflow.table import EnvironmentSettings, TableEnvironment

EPOCH = dt.datetime(2024, 1, 1)


@pytest.mark.parametrize("rows_per_batch, split", [("3", False), ("1000", False), ("1000", True)])
def test_two_phase_windows_over_parquet_drop_and_count_flink_s_late_rows(spark, tmp_path, monkeypatch,
                                                                         rows_per_batch, split):
    if split:   # the micro-batch's 8 rows staged as two files of 4, read by two tasks (source_files.split_count)
        monkeypatch.setattr(source_files, "MIN_ROWS_PER_SPLIT", 4)
    # After (12 s, a) the watermark is 10 s: [0, 10 s) fires and (9 s, a) is late; after (22 s, a),
    # 20 s: (19 s, b) is late.
    rows = [(1_000, "a", 1), (3_000, "b", 2), (12_000, "a", 3), (9_000, "a", 4),
            (15_000, "b", 5), (22_000, "a", 6), (19_000, "b", 7), (31_000, "a", 8)]
    (tmp_path / "bids").mkdir()
    pq.write_table(pa.table({"ts": pa.array([EPOCH + dt.timedelta(milliseconds=ms) for ms, _, _ in rows],
                                            pa.timestamp("ms")),
                             "k": [k for _, k, _ in rows], "v": pa.array([v for _, _, v in rows], pa.int64())}),
                   tmp_path / "bids" / "part-0.parquet")
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    config = t_env.get_config()
    config.set("changeflow.state.buckets", "2")
    config.set("changeflow.source.rows-per-batch", rows_per_batch)
    config.set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    t_env.execute_sql("CREATE TABLE bids (ts TIMESTAMP(3), k STRING, v BIGINT, "
                      "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'bids'}', 'format' = 'parquet')")
    t_env.execute_sql("CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), k STRING, cnt BIGINT, s BIGINT) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'csv')")
    job = t_env.execute_sql("INSERT INTO out SELECT window_start, window_end, k, COUNT(*), SUM(v) "
                            "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                            "GROUP BY window_start, window_end, k").get_job_client()
    job.wait()
    # csv.reader: the writer quotes a timestamp (it has a space), as Flink's does.
    written = sorted(row for f in (tmp_path / "out").rglob("*") if f.is_file()
                     and not f.name.startswith((".", "_")) for row in csv.reader(f.read_text().splitlines()))
    assert [(int((dt.datetime.fromisoformat(w[0]) - EPOCH).total_seconds()), w[2], int(w[3]), int(w[4]))
            for w in written] == [(0, "a", 1, 1), (0, "b", 1, 2), (10, "a", 1, 3), (10, "b", 1, 5),
                                  (20, "a", 1, 6), (30, "a", 1, 8)]
    staged = sorted(f.name for f in (tmp_path / "checkpoints").rglob("part-*.parquet"))
    assert staged == (["part-00000000-000.parquet", "part-00000000-001.parquet"] if split else
                      [f"part-{i:08d}.parquet" for i in range(-(-len(rows) // int(rows_per_batch)))]), staged
    metrics = job.get_state_metrics()
    assert [m["late_records_dropped"] for m in metrics if m["operator"] == "WindowAggregate"] == [2], metrics
    # The end of input (which fired [30 s, 40 s)) rode in the last data micro-batch: no micro-batch of its own.
    batches = [p["numInputRows"] for p in job.query.recentProgress]
    per_batch = int(rows_per_batch)
    assert batches == [min(per_batch, len(rows) - i) for i in range(0, len(rows), per_batch)][:-1] + [
        len(rows) - per_batch * ((len(rows) - 1) // per_batch) + 1], batches
