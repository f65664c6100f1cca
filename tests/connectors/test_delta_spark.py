"""The ``delta`` connector in Spark jobs, against real Delta tables (delta-rs) in a temporary directory.

Few queries (each costs seconds): a two-level count from a Delta snapshot into upsert Delta tables, streaming
and batch; an append job whose second run replays a micro-batch the table already has; the change data feed
through a retracting aggregation, resumed from its checkpoint; jobs failing at their start.
"""

from __future__ import annotations

import os
import random

import pytest

from tests.connectors.test_job_resume import committed_batches, wait_until
from tests.connectors.test_unbounded_sources import put

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")


def rows_of(path) -> list[tuple]:
    return sorted(tuple(r.values()) for r in deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist())


def two_level_counts(rows) -> list[tuple]:
    per_user: dict = {}
    for _, usr, _ in rows:
        per_user[usr] = per_user.get(usr, 0) + 1
    counts: dict = {}
    for n in per_user.values():
        counts[n] = counts.get(n, 0) + 1
    return sorted(counts.items())


def test_streaming_upserts_and_deletes_from_a_snapshot_equal_the_batch_result(stream_env, batch_env, tmp_path):
    rng = random.Random(7)
    rows = [(i, f"u{rng.randrange(8)}", rng.randrange(-5, 20)) for i in range(120)]
    clicks = tmp_path / "clicks"
    schema = pa.schema([("id", pa.int32()), ("usr", pa.string()), ("amount", pa.int64())])
    def part(rows_: list) -> pa.Table:
        return pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows_], schema=schema)

    deltalake.write_deltalake(str(clicks), part(rows[:60]))  # version 0
    deltalake.write_deltalake(str(clicks), part(rows[60:]), mode="append")  # version 1
    # Small micro-batches: users' counts move between micro-batches, so the second level deletes rows.
    stream_env.get_config().set("changeflow.source.rows-per-batch", "40")
    for env, mode in ((stream_env, "s"), (batch_env, "b")):
        env.execute_sql(f"CREATE TABLE clicks (id INT, usr STRING, amount BIGINT) WITH ('connector' = 'delta', "
                        f"'table-path' = '{clicks}')")
        env.execute_sql(f"CREATE TABLE by_count (n BIGINT, users BIGINT, PRIMARY KEY (n) NOT ENFORCED) "
                        f"WITH ('connector' = 'delta', 'table-path' = '{tmp_path / f'by_count_{mode}'}')")
        env.execute_sql("INSERT INTO by_count SELECT n, COUNT(*) FROM "
                        "(SELECT usr, COUNT(*) AS n FROM clicks GROUP BY usr) GROUP BY n").wait()
        env.execute_sql(f"CREATE TABLE first_version (id INT, usr STRING, amount BIGINT) WITH ("
                        f"'connector' = 'delta', 'table-path' = '{clicks}', 'versionAsOf' = '0')")
    expected = two_level_counts(rows)
    assert rows_of(tmp_path / "by_count_s") == expected
    assert rows_of(tmp_path / "by_count_b") == expected
    # Every streaming micro-batch committed with its batch id (120 rows, 40 a micro-batch), one commit each.
    history = deltalake.DeltaTable(str(tmp_path / "by_count_s")).history()
    assert len([h for h in history if h["operation"] == "MERGE"]) >= 2
    # The snapshot at a version (Flink's versionAsOf), read by a batch query.
    result = batch_env.sql_query("SELECT COUNT(*), MAX(id) FROM first_version").execute().collect()
    assert [tuple(r) for r in result] == [(60, 59)]


def test_an_append_job_replaying_a_micro_batch_after_a_restart_writes_it_once(stream_env, tmp_path):
    """The job stops after the Delta commit of a micro-batch but before Spark's: the resumed job runs that
    micro-batch again, and the batch id recorded in the Delta log with the commit makes the replay write nothing."""
    incoming, checkpoints, events = tmp_path / "in", tmp_path / "checkpoints", tmp_path / "events"
    incoming.mkdir()
    stream_env.get_config().set("changeflow.checkpoint-dir", str(checkpoints))
    stream_env.execute_sql(f"CREATE TABLE src (id INT, v STRING) WITH ('connector' = 'filesystem', "
                           f"'path' = '{incoming}', 'format' = 'csv', 'source.monitor-interval' = '200 ms')")
    stream_env.execute_sql(f"CREATE TABLE events (id INT, v STRING) WITH ('connector' = 'delta', "
                           f"'table-path' = '{events}')")
    insert = "INSERT INTO events SELECT id, UPPER(v) FROM src WHERE id > 0"
    count = lambda: len(rows_of(events)) if deltalake.DeltaTable.is_deltatable(str(events)) else 0  # noqa: E731

    put(incoming, "1.csv", "1,a\n2,b\n0,skipped\n")
    job = stream_env.execute_sql(insert).get_job_client()
    directory = checkpoints / "insert-into_default_catalog.default_database.events"
    try:
        wait_until(lambda: count() == 2 and committed_batches(directory), job)
        put(incoming, "2.csv", "3,c\n")
        wait_until(lambda: count() == 3 and len(committed_batches(directory)) >= 2, job)
    finally:
        job.cancel()
    # Undo Spark's commit of the last micro-batch and changeflow's record of delivering it: as if the job had
    # been killed right after the Delta commit.
    last = max(int(n) for n in committed_batches(directory))
    for name in (str(last), f".{last}.crc"):
        if (directory / "checkpoint" / "commits" / name).exists():
            os.remove(directory / "checkpoint" / "commits" / name)
    (directory / "sink-delivered").write_text(str(last - 1))
    versions = deltalake.DeltaTable(str(events)).version()

    put(incoming, "3.csv", "4,d\n5,e\n")
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: count() >= 5, job)
    finally:
        job.cancel()
    assert rows_of(events) == [(1, "A"), (2, "B"), (3, "C"), (4, "D"), (5, "E")]
    delta_table = deltalake.DeltaTable(str(events))
    assert delta_table.version() == versions + 1  # the replay committed nothing, the new file one commit
    writer = (directory / "sink-writer").read_text().strip()
    assert delta_table.transaction_version(f"changeflow-{writer}") > last


def test_the_change_feed_through_a_retracting_aggregation_equals_batch_over_the_final_table(
        stream_env, batch_env, tmp_path):
    """Versions of inserts, updates and deletes read as +I/-U/+U/-D by a two-level count; a job stopped and run
    again resumes from the version its checkpoint committed (a replay from 0 would count rows twice)."""
    source, checkpoints = tmp_path / "accounts", tmp_path / "checkpoints"
    schema = pa.schema([("id", pa.int32()), ("usr", pa.string())])
    deltalake.DeltaTable.create(str(source), schema, configuration={"delta.enableChangeDataFeed": "true"})
    rng = random.Random(3)
    state: dict = {}

    def commit_version() -> None:  # one Delta commit: a few inserts, updates and deletes by id
        upserts = {i: f"u{rng.randrange(5)}" for i in rng.sample(range(40), 12)}
        deletes = [i for i in rng.sample(range(40), 4) if i not in upserts]
        src = pa.table({"id": pa.array(list(upserts) + deletes, pa.int32()),
                        "usr": list(upserts.values()) + [None] * len(deletes),
                        "up": [True] * len(upserts) + [False] * len(deletes)})
        (deltalake.DeltaTable(str(source)).merge(src, "t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_delete("NOT s.up").when_matched_update({"usr": "s.usr"}, "s.up")
         .when_not_matched_insert({"id": "s.id", "usr": "s.usr"}, "s.up").execute())
        state.update(upserts)
        for i in deletes:
            state.pop(i, None)

    for _ in range(3):
        commit_version()
    stream_env.get_config().set("changeflow.checkpoint-dir", str(checkpoints))
    stream_env.execute_sql(f"CREATE TABLE accounts (id INT, usr STRING) WITH ('connector' = 'delta', "
                           f"'table-path' = '{source}', 'mode' = 'streaming', 'startingVersion' = '0', "
                           f"'updateCheckIntervalMillis' = '200')")
    stream_env.execute_sql(f"CREATE TABLE by_size (n BIGINT, users BIGINT, PRIMARY KEY (n) NOT ENFORCED) WITH ("
                           f"'connector' = 'delta', 'table-path' = '{tmp_path / 'by_size'}')")
    insert = ("INSERT INTO by_size SELECT n, COUNT(*) FROM (SELECT usr, COUNT(*) AS n FROM accounts GROUP BY usr) "
              "GROUP BY n")

    def expected() -> list[tuple]:
        return two_level_counts([(i, usr, 0) for i, usr in state.items()])

    def current() -> list[tuple]:
        path = tmp_path / "by_size"
        return rows_of(path) if deltalake.DeltaTable.is_deltatable(str(path)) else []

    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: current() == expected(), job, limit_s=600)
        commit_version()  # a version while the job runs
        wait_until(lambda: current() == expected(), job, limit_s=600)
    finally:
        job.cancel()
    commit_version()  # a version while the job is stopped: the resumed job reads it, and only it
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: current() == expected(), job, limit_s=600)
    finally:
        job.cancel()

    batch_env.execute_sql(f"CREATE TABLE accounts (id INT, usr STRING) WITH ('connector' = 'delta', "
                          f"'table-path' = '{source}')")
    batch = batch_env.sql_query("SELECT n, COUNT(*) FROM (SELECT usr, COUNT(*) AS n FROM accounts GROUP BY usr) "
                                "GROUP BY n").execute().collect()
    assert current() == sorted(tuple(r) for r in batch) == expected()


def test_jobs_fail_at_their_start_naming_the_path_the_column_or_the_missing_key(stream_env, tmp_path):
    stream_env.execute_sql(f"CREATE TABLE missing (k INT) WITH ('connector' = 'delta', "
                           f"'table-path' = '{tmp_path / 'nowhere'}')")
    stream_env.execute_sql("CREATE TABLE out (k INT) WITH ('connector' = 'blackhole')")
    with pytest.raises(Exception, match="Connector 'delta' of table .*missing.*no Delta table at option 'table-path'"):
        stream_env.execute_sql("INSERT INTO out SELECT k FROM missing").wait()

    other = tmp_path / "other"
    deltalake.write_deltalake(str(other), pa.table({"k": pa.array([1], pa.int64()), "v": ["x"]}))
    stream_env.execute_sql("CREATE TABLE numbers (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    stream_env.execute_sql(f"CREATE TABLE other (k INT, v STRING) WITH ('connector' = 'delta', "
                           f"'table-path' = '{other}')")
    with pytest.raises(Exception, match="column 'k' is declared INT but the Delta table's column is int64"):
        stream_env.execute_sql("INSERT INTO other SELECT k, 'x' FROM numbers").wait()

    stream_env.execute_sql(f"CREATE TABLE keyless (k INT, n BIGINT) WITH ('connector' = 'delta', "
                           f"'table-path' = '{tmp_path / 'keyless'}')")
    with pytest.raises(Exception, match="Table sink '.*keyless' doesn't support consuming update changes"):
        stream_env.execute_sql("INSERT INTO keyless SELECT k, COUNT(*) FROM numbers GROUP BY k").wait()
