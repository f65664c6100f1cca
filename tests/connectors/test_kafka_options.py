"""The Kafka connectors' options, checked when a table is read or written (no Spark, no broker)."""

from __future__ import annotations

import pytest

from changeflow.connectors import ConnectorError, create_sink, create_source
from changeflow.sql.ddl import parse_create_table

_BASE = "'properties.bootstrap.servers' = 'localhost:9092', 'topic' = 't'"


def _table(options: str, columns: str = "k STRING, v INT"):
    table, _ = parse_create_table(f"CREATE TABLE t ({columns}) WITH ({options})")
    return table


def test_a_source_takes_flinks_options():
    source = create_source(_table(f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', "
                                  "'scan.startup.mode' = 'specific-offsets', "
                                  "'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:300', "
                                  "'key.format' = 'raw', 'key.fields' = 'k', 'value.fields-include' = 'EXCEPT_KEY', "
                                  "'properties.client.id' = 'me'",
                                  "k STRING, v INT, off BIGINT METADATA FROM 'offset' VIRTUAL, "
                                  "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'"), streaming=True)
    assert source.specific_offsets == {0: 42, 1: 300}
    assert source.properties == {"bootstrap.servers": "localhost:9092", "client.id": "me"}
    assert source.metadata == {"off": "offset", "ts": "timestamp"}
    assert [n for n, _ in source.key_schema] == ["k"] and [n for n, _ in source.value_schema] == ["v"]
    assert source.decode_record(b"a", b'{"v": 3}', "r") == ("a", 3)


@pytest.mark.parametrize(("options", "message"), [
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
     "'sink.nonsense' = 'x'", "(?s)Unsupported options found for 'kafka'.*sink.nonsense"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json'", "properties.group.id"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'protobuf', 'scan.startup.mode' = 'earliest-offset'",
     "format factory for identifier 'protobuf'"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
     "'scan.bounded.mode' = 'earliest-offset'", "Invalid value for option 'scan.bounded.mode'"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
     "'scan.bounded.mode' = 'specific-offsets'", "'scan.bounded.specific-offsets' is required"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'debezium-json', 'scan.startup.mode' = 'earliest-offset', "
     "'scan.bounded.mode' = 'latest-offset'", "'scan.bounded.mode' with the changelog format 'debezium-json'"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'scan.startup.mode' = 'timestamp'",
     "scan.startup.timestamp-millis"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'scan.startup.mode' = 'specific-offsets', "
     "'scan.startup.specific-offsets' = 'p0:1'", "Expected format is 'partition:0,offset:42"),
    (f"'connector' = 'upsert-kafka', {_BASE}, 'key.format' = 'json', 'value.format' = 'json'",
     "require to define a PRIMARY KEY"),
])
def test_a_bad_source_is_refused_naming_the_option(options, message):
    with pytest.raises(ConnectorError, match=message):
        create_source(_table(options), streaming=True)


def test_a_kafka_table_in_batch_mode_is_refused():
    with pytest.raises(ConnectorError, match="unbounded"):
        create_source(_table(f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', "
                             "'scan.startup.mode' = 'earliest-offset'"), streaming=False)


@pytest.mark.parametrize(("options", "columns", "message"), [
    (f"'connector' = 'upsert-kafka', {_BASE}, 'key.format' = 'json', 'value.format' = 'json'", "k STRING, v INT",
     "require to define a PRIMARY KEY"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'sink.partitioner' = 'round-robin'",
     "k STRING, v INT", "'sink.partitioner' = 'round-robin' is not supported"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'sink.delivery-guarantee' = 'twice'",
     "k STRING, v INT", "Invalid value for option 'sink.delivery-guarantee'"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'sink.transactional-id-prefix' = 'x'",
     "k STRING, v INT", "'sink.transactional-id-prefix' is not supported"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json'", "k STRING, o BIGINT METADATA FROM 'offset'",
     r"Metadata columns \(o\) are not supported"),
    (f"'connector' = 'kafka', {_BASE}, 'value.format' = 'json', 'key.fields' = 'k'", "k STRING, v INT",
     "key.format"),
    (f"'connector' = 'upsert-kafka', {_BASE}, 'key.format' = 'json', 'value.format' = 'json', 'key.fields' = 'k'",
     "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED", "'key.fields' is not allowed for 'upsert-kafka'"),
])
def test_a_bad_sink_is_refused_naming_the_option(options, columns, message):
    with pytest.raises(ConnectorError, match=message):
        create_sink(_table(options, columns), streaming=True)


def test_metadata_columns_belong_to_kafka_tables_only():
    with pytest.raises(ConnectorError, match=r"METADATA columns \(o\) are supported by the Kafka connectors only"):
        create_source(_table("'connector' = 'datagen'", "k STRING, o BIGINT METADATA FROM 'offset'"), streaming=True)


def test_describe_shows_a_metadata_column():
    table = _table(f"'connector' = 'kafka', {_BASE}", "k STRING, o BIGINT METADATA FROM 'offset' VIRTUAL")
    assert table.schema.describe_rows()[1][4] == "METADATA FROM 'offset' VIRTUAL"


_UPSERT = f"'connector' = 'upsert-kafka', {_BASE}, 'key.format' = 'json', 'value.format' = 'json'"
_KEYED = "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED"


def test_an_upsert_kafka_source_reads_upserts_and_tombstones():
    source = create_source(_table(_UPSERT, _KEYED), streaming=True)
    assert source.changelog_mode == "upsert" and source.startup_mode == "earliest-offset"
    assert source.decode_record(b'{"k": "a"}', b'{"k": "a", "v": 3}', "r") == ("a", 3)
    assert source.decode_record(b'{"k": "a"}', None, "r") == ("a", None)  # a tombstone: its key, -D
    with pytest.raises(Exception, match="without a key and without a value"):
        source.decode_record(None, None, "r")


@pytest.mark.parametrize(("extra", "message"), [
    ("'scan.bounded.mode' = 'latest-offset'", "'scan.bounded.mode' is not supported"),
    ("'scan.startup.mode' = 'latest-offset'", "(?s)Unsupported options found for 'upsert-kafka'.*scan.startup.mode"),
    ("'topic-pattern' = 'x.*'", "(?s)Unsupported options found for 'upsert-kafka'.*topic-pattern"),
])
def test_an_upsert_kafka_source_refuses_what_flink_refuses(extra, message):
    with pytest.raises(ConnectorError, match=message):
        create_source(_table(f"{_UPSERT}, {extra}", _KEYED), streaming=True)


def test_an_upsert_kafka_table_in_batch_mode_is_refused():
    with pytest.raises(ConnectorError, match="'upsert-kafka' table is unbounded"):
        create_source(_table(_UPSERT, _KEYED), streaming=False)
