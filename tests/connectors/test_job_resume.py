"""Stopping a streaming job and running it again resumes from its checkpoint (``changeflow.checkpoint-dir``).

Each test removes the first run's input before the second run: a resumed job
continues from the state its checkpoint holds (a key's sum includes the first
run's rows), where a job started afresh would see only the new rows.
"""

import os
import time

from tests.connectors.test_unbounded_sources import put


def wait_until(condition, job, limit_s: float = 180.0) -> None:
    """A guard against a hung job on a busy machine, not a timing assertion."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if job.get_job_status() == "FAILED":
            job.wait()  # raises the job's error
        assert time.monotonic() < deadline, "the INSERT job produced no output in time"
        time.sleep(0.2)


def committed_batches(job_directory) -> list[str]:
    """The micro-batches Spark has committed in a job's checkpoint (its ``commits`` log)."""
    commits = job_directory / "checkpoint" / "commits"
    return [n for n in os.listdir(commits) if not n.startswith(".")] if commits.is_dir() else []


def test_an_insert_job_run_again_resumes_its_sums_from_the_checkpoint(stream_env, tmp_path):
    incoming, checkpoints = tmp_path / "in", tmp_path / "checkpoints"
    incoming.mkdir()
    stream_env.get_config().set("changeflow.checkpoint-dir", str(checkpoints))
    stream_env.execute_sql(f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', "
                           f"'path' = '{incoming}', 'format' = 'csv', 'source.monitor-interval' = '200 ms')")
    stream_env.execute_sql("CREATE TABLE totals (k STRING, s INT, PRIMARY KEY (k) NOT ENFORCED) "
                           "WITH ('connector' = 'materialized')")
    totals = stream_env._resolve("totals").payload
    insert = "INSERT INTO totals SELECT k, SUM(v) FROM src GROUP BY k"

    put(incoming, "1.csv", "a,1\nb,2\na,3\n")
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: sorted(totals.rows()) == [("a", 4), ("b", 2)], job)
        # The sink sees a micro-batch before Spark commits it: cancelled in between, the batch
        # would run again on resume, over an input file this test then has removed.
        job_directory = checkpoints / "insert-into_default_catalog.default_database.totals"
        wait_until(lambda: committed_batches(job_directory), job)
    finally:
        job.cancel()

    os.remove(incoming / "1.csv")
    put(incoming, "2.csv", "a,10\nc,5\n")
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: ("c", 5) in totals.rows(), job)  # c and a come in one micro-batch
    finally:
        job.cancel()
    # a = 4 + 10: its first-run sum came back from the checkpoint (afresh it would be 10).
    assert sorted(totals.rows()) == [("a", 14), ("b", 2), ("c", 5)]
    # Flink's name for the job names its checkpoint.
    assert os.listdir(checkpoints) == ["insert-into_default_catalog.default_database.totals"]


def test_a_named_datastream_job_run_again_resumes_its_keyed_state(spark, tmp_path, capsys):
    from pyspark.sql import types as T

    from changeflow.common import Configuration
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

    incoming, checkpoints = tmp_path / "in", tmp_path / "checkpoints"
    incoming.mkdir()
    schema = T.StructType([T.StructField("k", T.StringType()), T.StructField("v", T.IntegerType())])

    def run_job() -> list[str]:
        conf = Configuration()
        conf.set_string("changeflow.checkpoint-dir", str(checkpoints))
        conf.set_string("changeflow.state.buckets", "2")
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
        clicks = spark.readStream.schema(schema).csv(str(incoming))
        env.from_source(clicks).map(lambda r: (r.k, r.v)).key_by(lambda r: r[0]).sum(1).print()
        capsys.readouterr()
        env.execute("click-totals")
        return capsys.readouterr().out.splitlines()

    put(incoming, "1.csv", "a,1\nb,2\na,3\n")
    first = run_job()
    assert sorted(first) == sorted(["('a', 1)", "('b', 2)", "('a', 4)"]), first
    os.remove(incoming / "1.csv")
    put(incoming, "2.csv", "a,10\n")
    # The running sum goes on from the checkpoint's 4; the first run's rows are not read again.
    assert run_job() == ["('a', 14)"]
    assert os.listdir(checkpoints) == ["click-totals"]


def test_upsert_files_of_two_jobs_read_back_in_the_order_they_were_written(stream_env, tmp_path):
    # Twelve micro-batches of one key (file names once sorted "-10" before "-2"), then a second
    # job into the same directory: the changelog files, read back by changeflow's own filesystem
    # source and replayed by key, give the last job's sums.
    incoming, written, checkpoints = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoints"
    incoming.mkdir()
    stream_env.get_config().set("changeflow.checkpoint-dir", str(checkpoints))
    stream_env.get_config().set("changeflow.source.rows-per-batch", "1")
    stream_env.execute_sql(f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', "
                           f"'path' = '{incoming}', 'format' = 'csv')")
    stream_env.execute_sql(f"CREATE TABLE totals (k STRING, s INT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
                           f"'connector' = 'filesystem', 'path' = '{written}', 'format' = 'csv', "
                           f"'sink.changelog-mode' = 'upsert')")
    stream_env.execute_sql(f"CREATE TABLE totals_log (op STRING, k STRING, s INT) WITH ("
                           f"'connector' = 'filesystem', 'path' = '{written}', 'format' = 'csv')")
    insert = "INSERT INTO totals SELECT k, SUM(v) FROM src GROUP BY k"
    put(incoming, "1.csv", "".join(f"a,{i}\n" for i in range(1, 13)))
    stream_env.execute_sql(insert).wait()
    # A new job name starts afresh (the first job's bounded source was fixed at its first run). Its 14 rows
    # in one micro-batch: one file, numbered after the first job's twelve (fourteen micro-batches of one row
    # each took as long as the rest of the test).
    put(incoming, "2.csv", "a,100\nb,1\n")
    stream_env.get_config().set("pipeline.name", "second")
    stream_env.get_config().set("changeflow.source.rows-per-batch", "100")
    stream_env.execute_sql(insert).wait()

    def replay() -> dict:
        table: dict = {}
        with stream_env.sql_query("SELECT op, k, s FROM totals_log").execute().collect() as rows:
            for op, k, s in (tuple(r) for r in rows):
                if op in ("+I", "+U"):
                    table[k] = s
                else:
                    table.pop(k, None)
        return table

    # The second job read both files afresh and wrote after the first job's 12 files.
    assert replay() == {"a": 178, "b": 1}
    first_job = [n for n in os.listdir(written) if n.startswith("part-")]
    assert len(first_job) >= 13
