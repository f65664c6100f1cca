"""The blackhole sink in a streaming job: its micro-batches run in full on the executors, their rows never
reach the driver, and every guarantee of a job holds (state, failures, the NOT NULL enforcer)."""

from __future__ import annotations

import pytest

from changeflow.connectors import BadRecordError
from changeflow.connectors.blackhole import BlackholeSink
from changeflow.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.spark


@pytest.fixture
def t_env(spark, tmp_path, monkeypatch):
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    env.get_config().set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    written = []
    monkeypatch.setattr(BlackholeSink, "write", lambda self, changes, batch_id=None: written.append(len(changes)))
    env.written = written   # what reached the sink's write() on the driver
    return env


def test_a_stateful_job_into_a_blackhole_runs_and_commits_its_state_without_the_driver(t_env):
    rows = [(i % 50, i % 7, i) for i in range(400)]
    t_env.create_temporary_view("src", t_env.from_elements(rows, ["k", "g", "v"]))
    t_env.execute_sql("CREATE TABLE out (k BIGINT, total BIGINT) WITH ('connector' = 'blackhole')")
    job = t_env.execute_sql("INSERT INTO out SELECT k, SUM(v) FROM src GROUP BY k").get_job_client()
    job.wait()
    assert job.get_job_status() == "FINISHED"
    # The aggregation ran over every row and committed its 50 keys, though no change came to the driver.
    assert [(m["key_columns"], m["keys"]) for m in job.get_state_metrics()] == [(["k"], 50)]
    assert t_env.written == []


def test_a_bad_record_still_fails_a_job_into_a_blackhole(t_env, tmp_path):
    (tmp_path / "in.json").write_text('{"a": 1}\n{"a": "zz"}\n')
    t_env.execute_sql(f"CREATE TABLE src (a INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
                      "'format' = 'json')")
    t_env.execute_sql("CREATE TABLE out (a INT, n BIGINT) WITH ('connector' = 'blackhole')")
    with pytest.raises(BadRecordError, match="column 'a' of type INT"):
        t_env.execute_sql("INSERT INTO out SELECT a, COUNT(*) FROM src GROUP BY a").wait()


def test_a_not_null_column_of_a_blackhole_is_still_enforced(t_env):
    t_env.create_temporary_view("src", t_env.from_elements([(1, 2), (None, 3)], ["a", "b"]))
    t_env.execute_sql("CREATE TABLE out (a BIGINT NOT NULL, b BIGINT) WITH ('connector' = 'blackhole')")
    with pytest.raises(Exception, match=r"Column 'a' is NOT NULL.*change \+I\[a=NULL, b=3\]"):
        t_env.execute_sql("INSERT INTO out SELECT a, b FROM src").wait()
    # With DROP a dropped change and a discarded one are alike: the rows stay on the executors.
    t_env.get_config().set("table.exec.sink.not-null-enforcer", "DROP")
    t_env.execute_sql("INSERT INTO out SELECT a, b FROM src").wait()
    assert t_env.written == []
