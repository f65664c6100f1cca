"""Shared fixtures: one SparkSession for every end-to-end test (a session costs ~5 s)."""

from __future__ import annotations

import os

import pytest

# Every JVM the tests start runs HotSpot's quick (C1) JIT compiler only. The tests run many small,
# different queries: Spark generates and loads new classes for each plan, and the optimising (C2)
# compiler spent about as much CPU compiling them as the JVM spent running them (JIT threads: 77 s
# of a test file's 158 s JVM CPU), which the tests' tiny data never earns back. With C1 alone the
# same file took 0.64 of the CPU time and of the wall time (docs/development.md, "suite time").
# Only the test run: a user's long job on real data wants C2. Set in the environment, so that
# the Spark drivers of child processes (the SQL client, the examples, the cluster cases) inherit
# it: spark-submit adds SPARK_SUBMIT_OPTS to the driver JVM's options, and the standalone
# cluster's Master and Workers take SPARK_DAEMON_JAVA_OPTS.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
for _variable in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
    if TEST_JVM_OPTIONS not in os.environ.get(_variable, ""):
        os.environ[_variable] = f"{os.environ.get(_variable, '')} {TEST_JVM_OPTIONS}".strip()


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from changeflow.runtime.spark import session

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    yield spark


@pytest.fixture
def stream_env(spark):
    """A streaming TableEnvironment on the shared session, with small state layouts."""
    from changeflow.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    return t_env


@pytest.fixture
def batch_env(spark):
    from changeflow.table import EnvironmentSettings, TableEnvironment

    return TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL cluster (tests/postgres_server.py), one per test process, stopped after."""
    pytest.importorskip("psycopg")
    from tests import postgres_server

    server = postgres_server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def kafka_broker():
    """A KRaft single-node Apache Kafka broker on a free loopback port (tests/kafka_broker.py): started by the
    first test that asks for it, stopped after the session."""
    pytest.importorskip("confluent_kafka")
    from tests.kafka_broker import KafkaBroker

    broker = KafkaBroker().start()
    try:
        yield broker
    finally:
        broker.stop()
