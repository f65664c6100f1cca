"""The ``avro`` format end to end on Spark: Avro records from a real Kafka topic to Avro files.

One Spark query: schemaless Avro values (as Flink's Kafka serializer writes them) read by
a ``kafka`` source, filtered, written by a ``filesystem`` sink as Avro container files,
which must read back as the rows. Encoding and decoding against Flink 2.3's files is
tested without Spark in ``test_avro_format.py``.
"""

from __future__ import annotations

import decimal
import uuid

import pytest

from changeflow.connectors.avro_format import AvroFormat
from changeflow.sql.ddl import parse_create_table
from tests.connectors.test_job_resume import wait_until

COLUMNS = "id INT NOT NULL, name STRING, price DECIMAL(10, 2)"


@pytest.mark.spark
def test_avro_records_from_kafka_to_avro_files(stream_env, kafka_broker, tmp_path):
    pytest.importorskip("fastavro")
    table, _ = parse_create_table(f"CREATE TABLE t ({COLUMNS}) WITH ('connector' = 'x')")
    schema = tuple((c.name, c.data_type) for c in table.schema.physical_columns())
    rows = [(1, "a", decimal.Decimal("1.50")), (2, None, decimal.Decimal("20.00")), (3, "c", None)]
    topic = kafka_broker.create_topic(f"avro-{uuid.uuid4().hex[:8]}")
    kafka_broker.produce(topic, [(None, AvroFormat().encode_record(r, schema)) for r in rows])
    stream_env.execute_sql(f"CREATE TABLE src ({COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
                           f"'properties.bootstrap.servers' = '{kafka_broker.bootstrap}', "
                           f"'scan.startup.mode' = 'earliest-offset', 'value.format' = 'avro')")
    out = tmp_path / "out"
    stream_env.execute_sql(f"CREATE TABLE snk ({COLUMNS}) WITH ('connector' = 'filesystem', 'path' = '{out}', "
                           f"'format' = 'avro', 'avro.codec' = 'deflate')")

    def written() -> list:
        fmt = AvroFormat()
        files = sorted(out.glob("part-*")) if out.exists() else []
        return [row for f in files for row in fmt.decode_bytes(f.read_bytes(), str(f), schema)]

    job = stream_env.execute_sql("INSERT INTO snk SELECT * FROM src WHERE id > 1").get_job_client()
    try:
        wait_until(lambda: len(written()) == 2, job)
    finally:
        job.cancel()
    assert written() == rows[1:]
