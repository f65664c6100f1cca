"""The filesystem sink's files read back in the order they were written, across restarts (no Spark).

A sink's file is ``part-<sequence>-<writer>-<batch>``; the source reads a directory in
sequence order, and a micro-batch a resumed job runs again replaces its own file.
"""

from __future__ import annotations

import os

import pytest

from changeflow.common.row_kind import RowKind
from changeflow.connectors import create_sink, create_source
from changeflow.connectors.sink_job import SinkJob
from changeflow.runtime.changes import Change
from changeflow.table import EnvironmentSettings, TableEnvironment


@pytest.fixture
def t_env(tmp_path):
    out = tmp_path / "out"  # the jobs' directories are beside it, in tmp_path
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    columns = "op STRING, k STRING, total BIGINT"
    env.execute_sql(f"CREATE TABLE totals (k STRING, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
                    f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv', "
                    f"'sink.changelog-mode' = 'upsert')")
    env.execute_sql(f"CREATE TABLE totals_log ({columns}) WITH ("
                    f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')")
    return env


def sink(t_env):
    return create_sink(t_env._catalog.get("totals"), streaming=True)


def replayed(t_env) -> dict:
    """The table the changelog files give, replayed by primary key in the order the source reads them."""
    table: dict = {}
    for op, k, total in create_source(t_env._catalog.get("totals_log"), streaming=False).rows():
        if op in ("+I", "+U"):
            table[k] = total
        else:
            table.pop(k, None)
    return table


def running_sums(n: int) -> list[list[Change]]:
    """``n`` micro-batches of one key's running sum 1 + 2 + ... (+I, then one +U per batch)."""
    batches, total = [], 0
    for i in range(1, n + 1):
        total += i
        batches.append([Change(RowKind.INSERT if i == 1 else RowKind.UPDATE_AFTER, ("a", total))])
    return batches


def test_twelve_micro_batches_of_one_key_read_back_as_the_last(t_env):
    # Unpadded numbering read "-10" before "-2": the table read back 55 instead of 78.
    out = sink(t_env)
    out.open(SinkJob.fresh())
    for batch_id, changes in enumerate(running_sums(12)):
        out.write(changes, batch_id)
    assert replayed(t_env) == {"a": 78}


def test_a_restarted_job_continues_the_sequence_and_replaces_its_repeated_batch(t_env, tmp_path):
    workdir = tmp_path / "job"
    workdir.mkdir()
    batches = running_sums(15)
    first = sink(t_env)
    first.open(SinkJob.in_directory(str(workdir), resumed=False))
    for batch_id in range(8):
        first.write(batches[batch_id], batch_id)
    # Stopped after writing batch 7 but before Spark committed it: the resumed job runs 7 again.
    resumed = sink(t_env)
    resumed.open(SinkJob.in_directory(str(workdir), resumed=True))
    for batch_id in range(7, 15):
        resumed.write(batches[batch_id], batch_id)
    files = sorted(n for n in os.listdir(tmp_path / "out") if n.startswith("part-"))
    assert len(files) == 15  # batch 7 once
    assert replayed(t_env) == {"a": 120}


def test_a_repeated_batch_with_other_changes_replaces_the_first_attempt(t_env, tmp_path):
    job = SinkJob.in_directory(str(tmp_path), resumed=False)
    out = sink(t_env)
    out.open(job)
    out.write([Change(RowKind.INSERT, ("a", 1))], 0)
    out.write([Change(RowKind.UPDATE_AFTER, ("a", 5))], 1)
    again = sink(t_env)
    again.open(SinkJob(job.writer, resumed=True))
    again.write([Change(RowKind.UPDATE_AFTER, ("a", 7))], 1)
    assert replayed(t_env) == {"a": 7}
    again.write([], 1)  # and a repeat that writes nothing removes it
    assert replayed(t_env) == {"a": 1}


def test_two_jobs_writing_one_directory_interleave_in_write_order(t_env):
    one, two = sink(t_env), sink(t_env)
    one.open(SinkJob.fresh())
    two.open(SinkJob.fresh())
    one.write([Change(RowKind.INSERT, ("a", 1))], 0)
    two.write([Change(RowKind.UPDATE_AFTER, ("a", 2))], 0)
    one.write([Change(RowKind.UPDATE_AFTER, ("a", 3))], 1)
    two.write([Change(RowKind.DELETE, ("a", 3))], 1)
    two.write([Change(RowKind.INSERT, ("b", 9))], 2)
    assert replayed(t_env) == {"b": 9}


def test_writes_without_batch_ids_are_each_a_new_file(t_env, tmp_path):
    out = sink(t_env)
    for changes in running_sums(11):
        out.write(changes)
    assert len([n for n in os.listdir(tmp_path / "out") if n.startswith("part-")]) == 11
    assert replayed(t_env) == {"a": 66}


def test_append_sink_repeated_batch_is_not_duplicated(tmp_path):
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(f"CREATE TABLE log (k STRING, v BIGINT) WITH ("
                    f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json')")
    job = SinkJob.fresh()
    for attempt in range(2):  # the same micro-batch, written before and after a restart
        out = create_sink(env._catalog.get("log"), streaming=True)
        out.open(SinkJob(job.writer, resumed=attempt > 0))
        out.write([Change(RowKind.INSERT, ("a", 1)), Change(RowKind.INSERT, ("b", 2))], 3)
    assert create_source(env._catalog.get("log"), streaming=False).rows() == [("a", 1), ("b", 2)]


def test_a_materialized_table_refuses_a_job_resumed_in_another_process(tmp_path):
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("CREATE TABLE m (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
                    "WITH ('connector' = 'materialized')")
    out = create_sink(env._catalog.get("m"), streaming=True)
    with pytest.raises(ValueError, match=r"Table 'm' \(connector 'materialized'\) is held in this process's memory"):
        out.open(SinkJob("0123456789ab", resumed=True))


def test_a_materialized_table_applies_a_repeated_batch_once(tmp_path):
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("CREATE TABLE m (k STRING, v BIGINT) WITH ('connector' = 'materialized')")
    job = SinkJob.fresh()
    first = create_sink(env._catalog.get("m"), streaming=True)
    first.open(job)
    first.write([Change(RowKind.INSERT, ("a", 1))], 0)
    again = create_sink(env._catalog.get("m"), streaming=True)
    again.open(SinkJob(job.writer, resumed=True))  # the same process: the table holds the first run's rows
    again.write([Change(RowKind.INSERT, ("a", 1))], 0)
    again.write([Change(RowKind.INSERT, ("b", 2))], 1)
    assert env._resolve("m").payload.rows() == [("a", 1), ("b", 2)]


def test_files_written_in_one_millisecond_have_increasing_modification_times(t_env, tmp_path):
    # A monitored directory is read oldest first by modification time (Spark's file stream).
    out = sink(t_env)
    for batch_id, changes in enumerate(running_sums(20)):
        out.write(changes, batch_id)
    names = sorted(n for n in os.listdir(tmp_path / "out") if n.startswith("part-"))
    times = [os.stat(tmp_path / "out" / n).st_mtime_ns // 1_000_000 for n in names]
    assert times == sorted(set(times))
