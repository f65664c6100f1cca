"""INSERT INTO end to end on Spark: a changelog into print as Flink prints it, files written then queried."""


def test_streaming_insert_prints_the_changelog_as_flink(stream_env, tmp_path, capsys):
    (tmp_path / "in.json").write_text('{"k": "a"}\n{"k": "b"}\n{"k": "a"}\n')
    stream_env.execute_sql(f"CREATE TABLE src (k STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
                           "'format' = 'json')")
    stream_env.execute_sql("CREATE TABLE out (k STRING, c BIGINT) WITH ('connector' = 'print', "
                           "'print-identifier' = 'id')")
    result = stream_env.execute_sql("INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k")
    result.wait()
    # PyFlink 2.3 prints exactly these lines for this statement.
    assert capsys.readouterr().out == "id> +I[a, 1]\nid> +I[b, 1]\nid> -U[a, 1]\nid> +U[a, 2]\n"
    result.print()
    assert capsys.readouterr().out == "-1\n"


def test_batch_insert_into_files_then_select(batch_env, tmp_path, capsys):
    batch_env.execute_sql("CREATE TABLE gen (id INT, v DOUBLE) WITH ('connector' = 'datagen', "
                          "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5', "
                          "'fields.v.min' = '0', 'fields.v.max' = '1')")
    batch_env.execute_sql(f"CREATE TABLE files (id INT, big BOOLEAN) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}', 'format' = 'csv')")
    batch_env.execute_sql("INSERT INTO files SELECT id, id > 3 FROM gen WHERE v >= 0").wait()
    rows = sorted(tuple(r) for r in batch_env.execute_sql("SELECT id, big FROM files").collect())
    assert rows == [(1, False), (2, False), (3, False), (4, True), (5, True)]
