"""The ``kafka`` and ``upsert-kafka`` connectors against a real Apache Kafka broker (tests/kafka_broker.py).

Few Spark queries (each costs seconds): a keyed aggregation from a Kafka topic into an
upsert-kafka topic, stopped and run again from its checkpoint; a record that does not parse;
a broker that is not there.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.connectors.test_job_resume import wait_until
from tests.kafka_broker import upsert_table


def _materialized(records: list[tuple[bytes | None, bytes | None]]) -> dict:
    """An upsert topic applied in order, keyed and valued by its JSON."""
    return {json.loads(k)["k"]: json.loads(v) for k, v in upsert_table(records).items()}


def _expected(rows: list[tuple[str, int]]) -> dict:
    """The batch result of the query below over ``rows``."""
    out: dict = {}
    for k, v in rows:
        s, c = out.get(k, (0, 0))
        out[k] = (s + v, c + 1)
    return {k: {"k": k, "total": s, "n": c} for k, (s, c) in out.items()}


def _source_ddl(topic: str, bootstrap: str, extra: str = "") -> str:
    return (f"CREATE TABLE src (k STRING, v INT, part INT METADATA FROM 'partition' VIRTUAL, "
            f"off BIGINT METADATA FROM 'offset' VIRTUAL) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', "
            f"'value.format' = 'json'{extra})")


def test_a_keyed_aggregation_into_upsert_kafka_resumes_from_its_checkpoint(stream_env, kafka_broker, tmp_path):
    source, sink = kafka_broker.create_topic(f"in-{uuid.uuid4().hex[:8]}", 2), f"out-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(sink, 2)
    stream_env.get_config().set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    stream_env.get_config().set("changeflow.source.rows-per-batch", "5")  # two micro-batches in the first run
    stream_env.execute_sql(_source_ddl(source, kafka_broker.bootstrap))
    stream_env.execute_sql(f"CREATE TABLE totals (k STRING, total INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
                           f"WITH ('connector' = 'upsert-kafka', 'topic' = '{sink}', "
                           f"'properties.bootstrap.servers' = '{kafka_broker.bootstrap}', "
                           f"'key.format' = 'json', 'value.format' = 'json', "
                           f"'sink.delivery-guarantee' = 'exactly-once')")
    insert = "INSERT INTO totals SELECT k, SUM(v) AS total, COUNT(*) AS n FROM src GROUP BY k"

    def produce(rows):
        kafka_broker.produce(source, [(k.encode(), json.dumps({"k": k, "v": v})) for k, v in rows])

    first = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5), ("a", 6), ("d", 7), ("c", 8), ("e", 9)]
    produce(first)
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: _materialized(kafka_broker.consume(sink)) == _expected(first), job)
    finally:
        job.cancel()

    # Stopped mid-stream: more input arrives while the job is down; the restarted job reads
    # from its checkpointed offsets (a repeat would double sums and counts, a skip lose them).
    second = [("a", 10), ("f", 11), ("b", 12), ("e", -9), ("g", 13)]
    produce(second)
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: _materialized(kafka_broker.consume(sink)) == _expected(first + second), job)
    finally:
        job.cancel()
    assert _materialized(kafka_broker.consume(sink)) == _expected(first + second)
    # Every change is a keyed JSON record; no -U reaches the topic (the +U after it replaces the value).
    # Exactly once: a key's records (read_committed) are its values in order, none repeated.
    written = [(json.loads(k), json.loads(v)) for k, v in kafka_broker.consume(sink)]
    assert all(k.keys() == {"k"} for k, _ in written)
    a = [v["total"] for k, v in written if k["k"] == "a"]
    assert a == sorted(set(a))


def test_key_and_value_formats_and_metadata_columns(stream_env, kafka_broker):
    topic = kafka_broker.create_topic(f"meta-{uuid.uuid4().hex[:8]}")
    kafka_broker.produce(topic, [(b"a", "1,x"), (b"b", "2,y")])
    stream_env.execute_sql(
        f"CREATE TABLE src (k STRING, v INT, s STRING, tp STRING METADATA FROM 'topic' VIRTUAL, "
        f"part INT METADATA FROM 'partition' VIRTUAL, off BIGINT METADATA FROM 'offset' VIRTUAL, "
        f"ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL, hs MAP<STRING, BYTES> METADATA FROM 'headers') "
        f"WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = "
        f"'{kafka_broker.bootstrap}', 'scan.startup.mode' = 'earliest-offset', 'key.format' = 'raw', "
        f"'key.fields' = 'k', 'value.format' = 'csv', 'value.fields-include' = 'EXCEPT_KEY')")
    with stream_env.sql_query("SELECT k, v, s, tp, part, off, ts IS NOT NULL, hs FROM src").execute().collect() as rows:
        got = [tuple(next(rows)) for _ in range(2)]
    assert got == [("a", 1, "x", topic, 0, 0, True, {}), ("b", 2, "y", topic, 0, 1, True, {})]


def test_a_record_that_is_not_json_fails_the_job_naming_it(stream_env, kafka_broker):
    topic = kafka_broker.create_topic(f"bad-{uuid.uuid4().hex[:8]}")
    kafka_broker.produce(topic, [(None, '{"k": "a", "v": 1}'), (None, '{"k": "b", "v": oops}')])
    stream_env.execute_sql(_source_ddl(topic, kafka_broker.bootstrap))
    stream_env.execute_sql("CREATE TABLE out (k STRING, v INT) WITH ('connector' = 'blackhole')")
    job = stream_env.execute_sql("INSERT INTO out SELECT k, v FROM src").get_job_client()
    try:
        with pytest.raises(Exception, match=rf"""Failed to deserialize JSON '{{"k": "b", "v": oops}}' \(Kafka record """
                                            rf"of topic '{topic}', partition 0, offset 1\)"):
            wait_until(lambda: False, job)
    finally:
        job.cancel()


def test_a_wrong_bootstrap_server_names_the_option(stream_env):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stream_env.execute_sql(_source_ddl("nowhere", f"127.0.0.1:{port}"))
    with pytest.raises(Exception, match=rf"no Kafka broker answered at 'properties.bootstrap.servers' = "
                                        rf"'127.0.0.1:{port}'"):
        stream_env.sql_query("SELECT k, v FROM src").execute().collect()
