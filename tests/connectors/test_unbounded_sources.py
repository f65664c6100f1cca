"""Unbounded DDL sources in streaming mode: a monitored directory fed while the query runs, endless datagen."""

import os


def put(directory, name: str, text: str) -> None:
    """Write a file the way a producer should: under a hidden name, then renamed into place."""
    hidden = directory / f".{name}.tmp"
    hidden.write_text(text)
    os.replace(hidden, directory / name)


def test_monitored_directory_yields_rows_of_files_added_while_running(stream_env, tmp_path):
    put(tmp_path, "1.json", '{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n')
    stream_env.execute_sql(f"CREATE TABLE mon (id INT, name STRING) WITH ('connector' = 'filesystem', "
                           f"'path' = '{tmp_path}', 'format' = 'json', 'source.monitor-interval' = '200 ms')")
    rows = stream_env.from_path("mon").execute().collect()
    try:
        assert [tuple(next(rows)) for _ in range(2)] == [(1, "a"), (2, "b")]
        put(tmp_path, "2.json", '{"id": 3, "name": "c"}\n')
        row = next(rows)
        assert (str(row.get_row_kind()), tuple(row)) == ("+I", (3, "c"))
    finally:
        rows.close()


def test_datagen_without_row_count_is_unbounded(stream_env):
    stream_env.execute_sql("CREATE TABLE endless (v INT, s STRING) WITH ('connector' = 'datagen', "
                           "'rows-per-second' = '20', 'fields.v.min' = '1', 'fields.v.max' = '3', "
                           "'fields.s.length' = '5')")
    with stream_env.from_path("endless").execute().collect() as rows:
        first = [tuple(next(rows)) for _ in range(30)]  # more than one second of rows: the source keeps going
    assert all(1 <= v <= 3 and len(s) == 5 for v, s in first)


def test_insert_from_a_monitored_directory_runs_until_cancelled(stream_env, tmp_path):
    import time

    incoming, written = tmp_path / "in", tmp_path / "out"
    incoming.mkdir()
    put(incoming, "1.csv", "1,a\n2,b\n")
    stream_env.execute_sql(f"CREATE TABLE inbox (id INT, name STRING) WITH ('connector' = 'filesystem', "
                           f"'path' = '{incoming}', 'format' = 'csv', 'source.monitor-interval' = '200 ms')")
    stream_env.execute_sql(f"CREATE TABLE archive (id INT, name STRING) WITH ('connector' = 'filesystem', "
                           f"'path' = '{written}', 'format' = 'json')")
    job = stream_env.execute_sql("INSERT INTO archive SELECT id * 10, name FROM inbox WHERE id > 1").get_job_client()

    def archived() -> list[str]:
        files = sorted(written.glob("part-*")) if written.exists() else []
        return [line for f in files for line in f.read_text().splitlines()]

    try:
        put(incoming, "2.csv", "3,c\n")
        deadline = time.monotonic() + 120  # a guard against a hung job, not a timing assertion
        while len(archived()) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert job.get_job_status() == "RUNNING"
    finally:
        job.cancel()
    assert sorted(archived()) == ['{"id":20,"name":"b"}', '{"id":30,"name":"c"}']
    assert job.get_job_status() == "CANCELED"
