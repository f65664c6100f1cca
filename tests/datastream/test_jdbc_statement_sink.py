"""PyFlink's DataStream JdbcSink against a real PostgreSQL (tests/postgres_server.py).

Driven without Spark as the runtime drives a DataStream sink (``open_job``, ``write_batch``), then in
DataStream jobs on Spark in both modes.
"""

from __future__ import annotations

import pytest

from changeflow.common import Row, Types
from changeflow.connectors.jdbc import JdbcError
from changeflow.connectors.sink_job import SinkJob
from changeflow.datastream.connectors.jdbc import JdbcConnectionOptions, JdbcExecutionOptions, JdbcSink
from tests.postgres_server import PASSWORD, USER

UPSERT = "INSERT INTO books (id, title) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title"
ROW = Types.ROW([Types.INT(), Types.STRING()])


def options(server, **changes):
    builder = (JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(server.url)
               .with_driver_name("org.postgresql.Driver").with_user_name(USER).with_password(PASSWORD))
    for name, value in changes.items():
        builder = getattr(builder, f"with_{name}")(value)
    return builder.build()


@pytest.fixture
def books(postgres):
    postgres.execute("DROP TABLE IF EXISTS books")
    postgres.execute("CREATE TABLE books (id INT PRIMARY KEY, title TEXT NOT NULL)")
    return postgres


def test_each_record_runs_the_statement_and_a_replayed_micro_batch_runs_once(books):
    sink = JdbcSink.sink(UPSERT, ROW, options(books), JdbcExecutionOptions.builder().with_batch_size(2).build())
    job = SinkJob.fresh()
    sink.open_job(job)
    sink.write_batch([Row(1, "a"), Row(2, "b"), Row(1, "a2")], 0)  # three statements in batches of two
    sink.write_batch([Row(3, "c")], 1)
    assert sorted(books.execute("SELECT id, title FROM books")) == [(1, "a2"), (2, "b"), (3, "c")]
    # The job restarted from its checkpoint runs micro-batch 1 again, with what it read again: nothing runs.
    again = JdbcSink.sink(UPSERT, ROW, options(books))
    again.open_job(SinkJob(job.writer, resumed=True))
    again.write_batch([Row(3, "c-again")], 1)
    again.write_batch([Row(4, "d")], 2)
    assert sorted(books.execute("SELECT id, title FROM books")) == [(1, "a2"), (2, "b"), (3, "c"), (4, "d")]


def test_two_sinks_with_one_statement_keep_their_own_record(books):
    job = SinkJob.fresh()
    first, second = JdbcSink.sink(UPSERT, ROW, options(books)), JdbcSink.sink(UPSERT, ROW, options(books))
    first.open_job(job)
    second.open_job(job)
    first.write_batch([Row(1, "a")], 0)
    second.write_batch([Row(2, "b")], 0)  # the same batch id: not a replay of the first sink's
    assert sorted(books.execute("SELECT id FROM books")) == [(1,), (2,)]


def test_a_failing_statement_fails_naming_the_record_and_writes_nothing(books):
    sink = JdbcSink.sink("INSERT INTO books (id, title) VALUES (?, ?)", ROW, options(books))
    sink.open_job(SinkJob.fresh())
    with pytest.raises(JdbcError, match=r"JdbcSink \('url' = .* on record \(2, None\): .*null value"):
        sink.write_batch([Row(1, "a"), Row(2, None), Row(3, "c")], 0)
    assert books.execute("SELECT count(*) FROM books") == [(0,)]  # the micro-batch is one transaction


def test_flinks_option_checks_and_what_changeflow_refuses():
    with pytest.raises(ValueError, match="jdbc url is empty"):
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder().build()
    with pytest.raises(ValueError, match="max retries must be non-negative"):
        JdbcExecutionOptions.builder().with_max_retries(-1).build()
    defaults = JdbcExecutionOptions.defaults()
    assert (defaults.get_batch_size(), defaults.get_batch_interval_ms(), defaults.get_max_retries()) == (5000, 0, 3)
    mysql = (JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url("jdbc:postgresql://h/db")
             .with_driver_name("com.mysql.cj.jdbc.Driver").build())
    with pytest.raises(NotImplementedError, match="com.mysql.cj.jdbc.Driver.*PostgreSQL only"):
        JdbcSink.sink(UPSERT, ROW, mysql)
    with pytest.raises(ValueError, match="JdbcSink: url 'jdbc:mysql://h/db'"):
        JdbcSink.sink(UPSERT, ROW, JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
                      .with_url("jdbc:mysql://h/db").build())


@pytest.mark.parametrize("mode", ["STREAMING", "BATCH"])
def test_a_datastream_job_upserts_through_the_statement(books, spark, mode):
    from changeflow.common import Configuration
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

    config = Configuration().set_string("changeflow.source.rows-per-batch", "2")  # streaming: several micro-batches
    env = StreamExecutionEnvironment.get_execution_environment(config, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode[mode])
    edits = [(1, "a"), (2, "b"), (1, "a2"), (3, "c"), (2, "b2")]
    env.from_collection(edits, Types.TUPLE([Types.INT(), Types.STRING()])) \
        .map(lambda e: Row(e[0], e[1].upper()), output_type=ROW) \
        .add_sink(JdbcSink.sink(UPSERT, ROW, options(books)))
    env.execute(f"books-{mode}")
    assert sorted(books.execute("SELECT id, title FROM books")) == [(1, "A2"), (2, "B2"), (3, "C")]
