"""A bounded ``kafka`` table (``scan.bounded.mode``) and a bounded DataStream KafkaSource against a real broker.

Each bounded mode's stop offsets in batch mode (one topic, records with known
timestamps, a group with committed offsets); a streaming job over a bounded table
ends by itself; records produced after the read started are not read.
"""

from __future__ import annotations

import time
import uuid

import pytest

from changeflow.common import Configuration, SimpleStringSchema, WatermarkStrategy
from changeflow.datastream import StreamExecutionEnvironment
from changeflow.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource, KafkaTopicPartition


def _produce_at(broker, topic: str, values: list[str], timestamps: list[int]) -> None:
    """Values to partition 0 of ``topic``, each with its record timestamp (epoch ms)."""
    from confluent_kafka import Producer

    producer = Producer(broker.client_config())
    for value, ts in zip(values, timestamps, strict=True):
        producer.produce(topic, value=value, partition=0, timestamp=ts)
    assert producer.flush(60) == 0


def _commit(broker, topic: str, group: str, offset: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(broker.client_config(**{"group.id": group, "enable.auto.commit": False}))
    consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    consumer.close()


def _ddl(name: str, topic: str, bootstrap: str, options: str) -> str:
    return (f"CREATE TABLE {name} (v STRING, off BIGINT METADATA FROM 'offset' VIRTUAL) WITH ("
            f"'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', "
            f"'value.format' = 'raw', 'properties.group.id' = 'bounded-g', {options})")


def test_each_bounded_mode_stops_where_flink_stops_in_batch_mode(batch_env, kafka_broker):
    topic = kafka_broker.create_topic(f"bounded-{uuid.uuid4().hex[:8]}")
    base = int(time.time() * 1000) - 60_000  # recent: the broker's retention deletes records of 1970 at once
    _produce_at(kafka_broker, topic, ["a", "b", "c", "d", "e"], [base + 1000 * i for i in range(1, 6)])
    _commit(kafka_broker, topic, "bounded-g", 2)
    modes = {
        "latest": "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'",
        # stops before the first record at or after the timestamp
        "timestamp": "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'timestamp', "
                     f"'scan.bounded.timestamp-millis' = '{base + 3000}'",
        "specific": "'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = "
                    "'partition:0,offset:1', 'scan.bounded.mode' = 'specific-offsets', "
                    "'scan.bounded.specific-offsets' = 'partition:0,offset:4'",
        "group": "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'group-offsets'",
        "from_group": "'scan.startup.mode' = 'group-offsets', 'scan.bounded.mode' = 'latest-offset'",
        "past_the_end": f"'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '{base + 9000}', "
                        "'scan.bounded.mode' = 'latest-offset'",
    }
    got = {}
    for name, options in modes.items():
        batch_env.execute_sql(_ddl(name, topic, kafka_broker.bootstrap, options))
        got[name] = sorted(tuple(r) for r in batch_env.sql_query(f"SELECT v, off FROM {name}").execute().collect())
    assert got == {"latest": [("a", 0), ("b", 1), ("c", 2), ("d", 3), ("e", 4)],
                   "timestamp": [("a", 0), ("b", 1)],
                   "specific": [("b", 1), ("c", 2), ("d", 3)],
                   "group": [("a", 0), ("b", 1)],
                   "from_group": [("c", 2), ("d", 3), ("e", 4)],
                   "past_the_end": []}


def test_a_bounded_table_ends_a_streaming_job_with_what_was_there_when_it_started(stream_env, kafka_broker):
    topic = kafka_broker.create_topic(f"bounded-{uuid.uuid4().hex[:8]}", 2)
    kafka_broker.produce(topic, [(f"k{i}", f"v{i}") for i in range(9)])
    stream_env.get_config().set("changeflow.source.rows-per-batch", "4")  # several micro-batches
    stream_env.execute_sql(_ddl("src", topic, kafka_broker.bootstrap,
                                "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"))
    with stream_env.sql_query("SELECT COUNT(*) AS n, COUNT(DISTINCT v) AS d FROM src").execute().collect() as rows:
        changes = [tuple(r) for r in rows]  # the job ends by itself: the iterator is exhausted
    assert changes[-1] == (9, 9)


def test_an_unbounded_table_in_batch_mode_and_bad_bounded_options_are_refused(batch_env):
    batch_env.execute_sql(_ddl("u", "t", "h:1", "'scan.startup.mode' = 'earliest-offset'"))
    with pytest.raises(Exception, match="unbounded table 'u' in batch mode is not allowed.*scan.bounded.mode"):
        batch_env.sql_query("SELECT * FROM u").execute()
    batch_env.execute_sql(_ddl("t1", "t", "h:1", "'scan.bounded.mode' = 'timestamp'"))
    with pytest.raises(Exception, match="'scan.bounded.timestamp-millis' is required in 'timestamp' bounded mode"):
        batch_env.sql_query("SELECT * FROM t1").execute()
    batch_env.execute_sql(_ddl("t2", "t", "h:1", "'scan.bounded.mode' = 'earliest-offset'"))
    with pytest.raises(Exception, match="Invalid value for option 'scan.bounded.mode'"):
        batch_env.sql_query("SELECT * FROM t2").execute()


def test_a_bounded_datastream_kafka_source_runs_as_a_batch_job(spark, kafka_broker):
    topic = kafka_broker.create_topic(f"bounded-{uuid.uuid4().hex[:8]}")
    kafka_broker.produce(topic, [(None, w) for w in ["to", "be", "or", "not"]])
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(), spark_session=spark)
    source = (KafkaSource.builder().set_bootstrap_servers(kafka_broker.bootstrap).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.offsets({KafkaTopicPartition(topic, 0): 1}))
              .set_bounded(KafkaOffsetsInitializer.latest())
              .set_value_only_deserializer(SimpleStringSchema()).build())
    words = env.from_source(source, WatermarkStrategy.no_watermarks(), "words")
    assert list(words.execute_and_collect()) == ["be", "or", "not"]  # AUTOMATIC: every source bounded, a batch job
