"""DDL tables on Spark: filesystem round trips, datagen into print and blackhole, bad records."""

import pytest

from changeflow.connectors import BadRecordError


def insert(t_env, sink: str, table) -> None:
    """INSERT INTO sink of a Table (what ``INSERT INTO sink SELECT ...`` plans to)."""
    result = t_env._execute_insert(t_env._insert_plan(sink, table.plan))
    result.wait()
    assert [tuple(r) for r in result.collect()] == [(-1,)]
    assert result.get_job_client().get_job_status() == "FINISHED"


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_filesystem_round_trip_in_batch_mode(batch_env, tmp_path, fmt):
    batch_env.execute_sql(f"CREATE TABLE fs (id INT, name STRING, price DECIMAL(10, 2)) WITH ("
                          f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = '{fmt}')")
    import decimal

    rows = [(1, "a", decimal.Decimal("1.50")), (2, None, None), (3, "c,d", decimal.Decimal("-2.00"))]
    from changeflow.common.types import DataTypes

    schema = DataTypes.ROW([DataTypes.FIELD("id", DataTypes.INT()), DataTypes.FIELD("name", DataTypes.STRING()),
                            DataTypes.FIELD("price", DataTypes.DECIMAL(10, 2))])
    insert(batch_env, "fs", batch_env.from_elements(rows, schema))
    files = [p.name for p in tmp_path.iterdir()]
    assert len(files) == 1 and files[0].startswith("part-")
    read = sorted(tuple(r) for r in batch_env.from_path("fs").execute().collect())
    if fmt == "csv":
        # As in Flink, CSV without 'csv.null-literal' writes a null as an empty field: a string reads back ''.
        rows[1] = (2, "", None)
    assert read == rows


def test_datagen_sequence_into_print_in_streaming_mode(stream_env, capsys):
    stream_env.execute_sql("CREATE TABLE gen (id INT, s STRING, pt AS PROCTIME()) WITH ('connector' = 'datagen', "
                           "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4', "
                           "'fields.s.length' = '3', 'number-of-rows' = '10')")
    stream_env.execute_sql("CREATE TABLE out (id INT, s STRING) WITH ('connector' = 'print', "
                           "'print-identifier' = 'gen')")
    gen = stream_env.from_path("gen")
    assert gen.get_schema().get_field_names() == ["id", "s", "pt"]
    insert(stream_env, "out", gen.select("id, s"))
    lines = capsys.readouterr().out.splitlines()
    assert [line[:len("gen> +I[1, ")] for line in lines] == [f"gen> +I[{i}, " for i in range(1, 5)]
    assert all(len(line) == len("gen> +I[1, abc]") for line in lines)


def test_datagen_random_into_blackhole_finishes(stream_env):
    stream_env.execute_sql("CREATE TABLE gen (a BIGINT, b DOUBLE) WITH ('connector' = 'datagen', "
                           "'number-of-rows' = '50', 'fields.a.min' = '5', 'fields.a.max' = '7')")
    stream_env.execute_sql("CREATE TABLE nothing (a BIGINT, b DOUBLE) WITH ('connector' = 'blackhole')")
    insert(stream_env, "nothing", stream_env.from_path("gen"))


def test_bad_record_fails_the_read_naming_file_and_column(batch_env, tmp_path):
    (tmp_path / "p1.json").write_text('{"a": 1, "s": "x"}\n{"a": "zz", "s": "y"}\n')
    (tmp_path / ".hidden").write_text("not read")
    batch_env.execute_sql(f"CREATE TABLE badj (a INT, s STRING) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}', 'format' = 'json')")
    with pytest.raises(BadRecordError, match=f"""'{{"a": "zz", "s": "y"}}' \\(file {tmp_path}/p1.json, line 2\\): """
                                             "column 'a' of type INT"):
        batch_env.from_path("badj").execute()


def test_a_json_table_scanned_twice_in_a_streaming_query_is_read_once(stream_env, tmp_path, monkeypatch):
    from changeflow.connectors.filesystem import FileSystemSource

    (tmp_path / "t.json").write_text('{"k": 1, "v": "a"}\n{"k": 2, "v": "b"}\n{"k": 1, "v": "c"}\n')
    stream_env.execute_sql(f"CREATE TABLE t (k BIGINT, v STRING) WITH ('connector' = 'filesystem', "
                           f"'path' = '{tmp_path}', 'format' = 'json')")
    reads = []
    arrow_rows = FileSystemSource.arrow_rows

    def counted(self):
        table = arrow_rows(self)
        reads.append(table is not None)   # True: Arrow's reader read it
        return table

    monkeypatch.setattr(FileSystemSource, "arrow_rows", counted)
    rows = stream_env.sql_query("SELECT a.v, b.v FROM t a JOIN t b ON a.k = b.k AND a.v < b.v").execute().collect()
    with rows:
        assert sorted(tuple(r) for r in rows) == [("a", "c")]
    assert reads == [True]   # both scans read the files staged once
