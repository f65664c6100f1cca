"""Bad input and huge sources on Spark: nothing lost, nothing wrong (filesystem files, bounded datagen)."""

import pytest

from changeflow.connectors import BadRecordError


def _csv_table(t_env, name: str, path, ignore: bool) -> None:
    t_env.execute_sql(f"CREATE TABLE {name} (a INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                      f"'format' = 'csv', 'csv.ignore-parse-errors' = '{str(ignore).lower()}')")


def test_filesystem_read_names_the_file_of_an_invalid_utf8_byte_or_skips_its_record(batch_env, tmp_path):
    (tmp_path / "f1.csv").write_bytes(b'1,a\n2,"b\n3,c\n')  # an unclosed quote: only record 2 is skipped
    (tmp_path / "f2.csv").write_bytes(b"4,d\n5,\xfee\n6,f\n")
    _csv_table(batch_env, "strict_csv", tmp_path, ignore=False)
    with pytest.raises(BadRecordError, match=f"file {tmp_path}/f1.csv, line 2"):
        batch_env.from_path("strict_csv").execute()
    (tmp_path / "f1.csv").write_bytes(b"1,a\n3,c\n")
    with pytest.raises(BadRecordError, match=f"Invalid UTF-8 in file {tmp_path}/f2.csv, line 2, byte offset 6"):
        batch_env.from_path("strict_csv").execute()
    (tmp_path / "f1.csv").write_bytes(b'1,a\n2,"b\n3,c\n')
    _csv_table(batch_env, "lenient_csv", tmp_path, ignore=True)
    rows = sorted(tuple(r) for r in batch_env.from_path("lenient_csv").execute().collect())
    assert rows == [(1, "a"), (3, "c"), (4, "d"), (6, "f")]


BIG = ("CREATE TABLE big (id BIGINT, s STRING, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '{rows}', "
       "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000000000', "
       "'fields.s.length' = '5')")


def _driver_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_billion_row_datagen_is_planned_and_read_without_materializing(batch_env):
    from changeflow.connectors.datagen import DataGenSource
    from changeflow.sql.ddl import parse_create_table

    batch_env.execute_sql(BIG.format(rows=10**9))
    before = _driver_rss_mb()
    first = [tuple(r) for r in batch_env.from_path("big").to_spark().limit(3).collect()]
    # Generated on the executors by row index: the same rows as the connector's own generator.
    table, _ = parse_create_table(BIG.format(rows=10**9))
    assert first == DataGenSource(table, streaming=False).generate(0, 3)
    assert [r[0] for r in first] == [1, 2, 3]
    # 10^9 rows in driver memory would take tens of GB (it used to fail with MemoryError).
    assert _driver_rss_mb() - before < 300


def test_bounded_datagen_stream_takes_rows_per_batch_rows_per_micro_batch(stream_env, batch_env):
    # Mini-batch folds a micro-batch per key: the changelog shows the micro-batch boundaries.
    for key, value in (("table.exec.mini-batch.enabled", "true"), ("table.exec.mini-batch.allow-latency", "5 s"),
                       ("table.exec.mini-batch.size", "4")):
        stream_env.get_config().set(key, value)
    stream_env.execute_sql(BIG.format(rows=10))
    with stream_env.sql_query("SELECT COUNT(*) AS c, SUM(id) AS total FROM big").execute().collect() as rows:
        changes = [(str(r.get_row_kind()), tuple(r)) for r in rows]
    assert changes == [("+I", (4, 10)), ("-U", (4, 10)), ("+U", (8, 36)), ("-U", (8, 36)), ("+U", (10, 55))]
    # Streaming and batch generate the same rows (a row's values depend on its index only).
    batch_env.execute_sql(BIG.format(rows=10))
    streamed = stream_env.sql_query("SELECT * FROM big").execute()
    with streamed.collect() as rows:
        streamed_rows = sorted(tuple(r) for r in rows)
    assert streamed_rows == sorted(tuple(r) for r in batch_env.from_path("big").execute().collect())
