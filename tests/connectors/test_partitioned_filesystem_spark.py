"""A streaming INSERT into a ``PARTITIONED BY`` filesystem table on Spark, stopped and resumed.

One job over a monitored directory with a watermark writes ``dt``/``hm`` partitions with
the partition-time trigger; it is cancelled once a partition has committed and run again
from its checkpoint with more input. Every row is in the table exactly once, and the
success files are where Flink writes them: in the partitions whose time plus the delay
the watermark has passed, not in the last one (the job is unbounded: no end of input).
The layout and the files are compared with Flink 2.3's without Spark in
``test_partitioned_filesystem.py``.
"""

from __future__ import annotations

import os

from tests.connectors.test_job_resume import committed_batches, wait_until
from tests.connectors.test_unbounded_sources import put


def _rows(out) -> list[tuple]:
    found = []
    for directory, _dirs, files in os.walk(out):
        rel = os.path.relpath(directory, out)
        for f in files:
            if not f.startswith((".", "_")):
                with open(os.path.join(directory, f), encoding="utf-8") as fh:
                    found += [(rel, line) for line in fh.read().splitlines()]
    return sorted(found)


def _committed(out) -> list[str]:
    return sorted(os.path.relpath(d, out) for d, _dirs, files in os.walk(out) if "_SUCCESS" in files)


def test_a_resumed_partitioned_insert_writes_every_row_once_and_commits_by_watermark(stream_env, tmp_path):
    incoming, out, checkpoints = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoints"
    incoming.mkdir()
    stream_env.get_config().set("changeflow.checkpoint-dir", str(checkpoints))
    stream_env.execute_sql(f"CREATE TABLE src (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
                           f"'connector' = 'filesystem', 'path' = '{incoming}', 'format' = 'csv', "
                           f"'source.monitor-interval' = '200 ms')")
    stream_env.execute_sql(f"CREATE TABLE snk (id INT, ts TIMESTAMP(3), dt STRING, hm STRING) PARTITIONED BY (dt, hm) "
                           f"WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv', "
                           f"'sink.partition-commit.trigger' = 'partition-time', "
                           f"'sink.partition-commit.delay' = '1 min', "
                           f"'sink.partition-commit.policy.kind' = 'success-file', "
                           f"'partition.time-extractor.timestamp-pattern' = '$dt $hm:00')")
    insert = ("INSERT INTO snk SELECT id, ts, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm') FROM src")
    job_directory = checkpoints / "insert-into_default_catalog.default_database.snk"

    put(incoming, "1.csv", "1,2024-01-01 10:00:05\n2,2024-01-01 10:00:50\n3,2024-01-01 10:01:30\n")
    job = stream_env.execute_sql(insert).get_job_client()
    try:  # the watermark 10:01:30 is past 10:00 + 1 min: that partition commits, 10:01 does not
        wait_until(lambda: _committed(out) == ["dt=2024-01-01/hm=10%3A00"], job)
        wait_until(lambda: committed_batches(job_directory), job)
    finally:
        job.cancel()

    put(incoming, "2.csv", "4,2024-01-01 10:01:45\n5,2024-01-01 10:03:00\n")
    job = stream_env.execute_sql(insert).get_job_client()
    try:  # 10:03:00 is past 10:01 + 1 min (the partition pending since the first run); not 10:02 + 1 min
        wait_until(lambda: len(_committed(out)) == 2, job)
        wait_until(lambda: len(_rows(out)) >= 5, job)
    finally:
        job.cancel()
    assert _committed(out) == ["dt=2024-01-01/hm=10%3A00", "dt=2024-01-01/hm=10%3A01"]
    assert _rows(out) == [("dt=2024-01-01/hm=10%3A00", '1,"2024-01-01 10:00:05"'),
                          ("dt=2024-01-01/hm=10%3A00", '2,"2024-01-01 10:00:50"'),
                          ("dt=2024-01-01/hm=10%3A01", '3,"2024-01-01 10:01:30"'),
                          ("dt=2024-01-01/hm=10%3A01", '4,"2024-01-01 10:01:45"'),
                          ("dt=2024-01-01/hm=10%3A03", '5,"2024-01-01 10:03:00"')]
    read = stream_env.execute_sql(f"CREATE TABLE back (id INT, ts TIMESTAMP(3), dt STRING, hm STRING) "
                                  f"PARTITIONED BY (dt, hm) WITH ('connector' = 'filesystem', 'path' = '{out}', "
                                  f"'format' = 'csv')")
    assert read is not None
    with stream_env.execute_sql("SELECT id, hm FROM back").collect() as rows:
        assert sorted(tuple(r) for r in rows) == [(1, "10:00"), (2, "10:00"), (3, "10:01"), (4, "10:01"),
                                                  (5, "10:03")]


def _golden(name: str) -> dict:
    import json
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    return json.loads((root / "conformance" / "goldens" / "partitions" / f"{name}.json").read_text(encoding="utf-8"))


def test_inserts_write_flinks_layout_and_success_files(stream_env, batch_env, tmp_path):
    """A bounded streaming INSERT and a batch one through the runtime: Flink 2.3's directories and files."""
    from conformance.partition_cases import PARTITION_CASES, sink_ddl, snapshot

    for env, name in ((stream_env, "csv_streaming_partition_time"), (batch_env, "csv_batch_success_file")):
        case = PARTITION_CASES[name]
        out = tmp_path / name
        env.execute_sql(sink_ddl(case, str(out), name))
        env.execute_sql(f"INSERT INTO {name} {case.query}").wait()
        assert snapshot(str(out)) == _golden(name)["directories"]


def test_a_monitored_partitioned_directory_reads_partition_values_from_the_path(stream_env, tmp_path):
    """Spark's file stream gives each file's path as a URI: escaped partition values still read back."""
    part = tmp_path / "dt=2024-01-01" / "hm=10%3A15"
    part.mkdir(parents=True)
    put(part, "part-0", "1,a\n")
    stream_env.execute_sql(f"CREATE TABLE mon (id INT, name STRING, dt STRING, hm STRING) PARTITIONED BY (dt, hm) "
                           f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv', "
                           f"'source.monitor-interval' = '200 ms')")
    rows = stream_env.from_path("mon").execute().collect()
    try:
        assert tuple(next(rows)) == (1, "a", "2024-01-01", "10:15")
    finally:
        rows.close()
