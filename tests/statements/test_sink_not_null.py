"""A NULL written into a sink's NOT NULL column (a PRIMARY KEY column is NOT NULL) fails the INSERT,
or is dropped with ``table.exec.sink.not-null-enforcer`` = DROP, in streaming and batch mode (Flink's
ConstraintEnforcer). The INSERT used to write the NULL key."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark  # its env fixture asks for the Spark envs by name

ROWS = '{"k": "a", "v": 1}\n{"k": null, "v": 2}\n{"k": "c", "v": null}\n'


@pytest.fixture(params=["stream_env", "batch_env"])
def env(request, tmp_path):
    t_env = request.getfixturevalue(request.param)
    (tmp_path / "in.json").write_text(ROWS)
    t_env.execute_sql(f"CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = 'json')")
    t_env.execute_sql("CREATE TABLE out (k STRING, v BIGINT NOT NULL, PRIMARY KEY (k) NOT ENFORCED) "
                      "WITH ('connector' = 'print', 'print-identifier' = 'o')")
    yield t_env
    t_env.get_config().set("table.exec.sink.not-null-enforcer", "ERROR")


def test_null_primary_key_fails_the_insert_naming_column_and_row(env, capsys):
    with pytest.raises(Exception, match=r"Column 'k' is NOT NULL, however, a null value is being written into "
                                        r"it\. You can set job configuration 'table.exec.sink.not-null-enforcer'="
                                        r"'DROP' .*change \+I\[k=NULL, v=2\]"):
        env.execute_sql("INSERT INTO out SELECT k, COALESCE(v, 0) FROM src").wait()


def test_null_in_a_declared_not_null_column_fails(env):
    with pytest.raises(Exception, match=r"Column 'v' is NOT NULL.*change \+I\[k=c, v=NULL\]"):
        env.execute_sql("INSERT INTO out SELECT COALESCE(k, 'z'), v FROM src").wait()


def test_a_literal_null_fails_at_run_time_as_in_flink(env):
    # Flink plans it and its ConstraintEnforcer fails the job on the first row.
    with pytest.raises(Exception, match=r"Column 'k' is NOT NULL"):
        env.execute_sql("INSERT INTO out SELECT CAST(NULL AS STRING), 1 FROM src").wait()


def test_drop_drops_the_changes_with_nulls(env, capsys):
    env.get_config().set("table.exec.sink.not-null-enforcer", "DROP")
    env.execute_sql("INSERT INTO out SELECT k, v FROM src").wait()
    assert capsys.readouterr().out == "o> +I[a, 1]\n"


def test_the_option_takes_error_or_drop_only(env):
    with pytest.raises(ValueError, match=r"table.exec.sink.not-null-enforcer.*expected one of ERROR, DROP"):
        env.get_config().set("table.exec.sink.not-null-enforcer", "IGNORE")
