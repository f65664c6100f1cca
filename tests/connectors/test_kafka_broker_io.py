"""The Kafka sinks and the source's start positions against a real broker, without Spark."""

from __future__ import annotations

import json
import uuid

import pytest

from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors import ConnectorError, create_sink, create_source
from changeflow.connectors.sink_job import SinkJob
from changeflow.sql.ddl import parse_create_table

I, UB, UA, D = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE


def _sink(broker, topic: str, guarantee: str = "at-least-once"):
    table, _ = parse_create_table(
        f"CREATE TABLE t (k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
        f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{broker.bootstrap}', 'key.format' = 'json', "
        f"'value.format' = 'json', 'sink.delivery-guarantee' = '{guarantee}')")
    return create_sink(table, streaming=True)


def _values(records):
    return [(json.loads(k)["k"], None if v is None else json.loads(v)["v"]) for k, v in records]


def test_upsert_kafka_writes_the_latest_row_per_key_and_a_tombstone_for_a_delete(kafka_broker):
    topic = kafka_broker.create_topic(f"upsert-{uuid.uuid4().hex[:8]}")
    sink = _sink(kafka_broker, topic)
    sink.open(SinkJob.fresh())
    sink.write([Change(I, ("a", 1)), Change(UB, ("a", 1)), Change(UA, ("a", 2)), Change(I, ("b", 5)),
                Change(D, ("b", 5))], 0)
    sink.close()
    assert _values(kafka_broker.consume(topic)) == [("a", 1), ("a", 2), ("b", 5), ("b", None)]


def test_exactly_once_writes_a_replayed_micro_batch_once_and_aborts_what_a_crash_left_open(kafka_broker):
    topic = kafka_broker.create_topic(f"eo-{uuid.uuid4().hex[:8]}")
    job = SinkJob("writer1")
    sink = _sink(kafka_broker, topic, "exactly-once")
    sink.open(job)
    sink.write([Change(I, ("a", 1))], 0)
    sink.write([Change(UB, ("a", 1)), Change(UA, ("a", 2))], 1)
    # A crash in micro-batch 2: its transaction holds records but never commits.
    producer = sink._producer
    producer.begin_transaction()
    producer.produce(topic, key=b'{"k":"lost"}', value=b'{"k":"lost","v":0}')
    producer.flush(10)
    sink._producer = None  # the process died: nothing closes it

    restarted = _sink(kafka_broker, topic, "exactly-once")
    restarted.open(job)  # same job, same transactional id: the open transaction is aborted
    restarted.write([Change(UB, ("a", 1)), Change(UA, ("a", 2))], 1)  # replayed after Kafka's commit: skipped
    restarted.write([Change(I, ("b", 3))], 2)
    restarted.close()
    assert _values(kafka_broker.consume(topic)) == [("a", 1), ("a", 2), ("b", 3)]
    assert ("lost", 0) in _values(kafka_broker.consume(topic, isolation="read_uncommitted"))


def _source(broker, topic: str, options: str):
    table, _ = parse_create_table(
        f"CREATE TABLE s (k STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{broker.bootstrap}', 'value.format' = 'raw', {options})")
    return create_source(table, streaming=True)


def test_start_positions_become_sparks_starting_offsets(kafka_broker):
    from confluent_kafka import Consumer, TopicPartition

    from changeflow.runtime.spark.connectors.kafka_source import _start_options

    topic = kafka_broker.create_topic(f"start-{uuid.uuid4().hex[:8]}", 2)
    kafka_broker.produce(topic, [(None, b"x")] * 6, partition=0)
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer = Consumer(kafka_broker.client_config(**{"group.id": group}))
    consumer.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    consumer.close()

    with pytest.raises(ConnectorError, match=f"no committed offset for partition 1 of topic '{topic}'"):
        _start_options(_source(kafka_broker, topic, f"'properties.group.id' = '{group}'"))
    source = _source(kafka_broker, topic, f"'properties.group.id' = '{group}', "
                                          "'properties.auto.offset.reset' = 'earliest'")
    assert json.loads(_start_options(source)["startingOffsets"]) == {topic: {"0": 4, "1": -2}}
    source = _source(kafka_broker, topic, "'scan.startup.mode' = 'specific-offsets', "
                                          "'scan.startup.specific-offsets' = 'partition:1,offset:0'")
    assert json.loads(_start_options(source)["startingOffsets"]) == {topic: {"0": -2, "1": 0}}
    source = _source(kafka_broker, topic, "'scan.startup.mode' = 'timestamp', "
                                          "'scan.startup.timestamp-millis' = '1700000000000'")
    assert _start_options(source) == {"startingTimestamp": "1700000000000"}
