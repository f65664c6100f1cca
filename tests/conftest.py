"""Shared fixtures: one SparkSession for every end-to-end test (a session costs ~5 s)."""

from __future__ import annotations

import pytest


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
