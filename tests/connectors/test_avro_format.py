"""The ``avro`` format against Flink 2.3's Avro files (``goldens/avro``), without Spark.

Flink's files are decoded by changeflow; changeflow's files must hold Flink's writer schema,
codec and records (read back with fastavro: the sync marker is random); a Kafka record is
the schemaless binary of Flink's (non-nullable) row record. Bad input fails naming the file
and record, or the Kafka record.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
import pathlib

import pytest

fastavro = pytest.importorskip("fastavro")

from changeflow.connectors import BadRecordError, ConnectorError, create_sink, create_source  # noqa: E402
from changeflow.common.types import DataTypes  # noqa: E402
from changeflow.connectors.avro_format import AvroFormat, AvroSchemaError, avro_type, record_schema  # noqa: E402
from changeflow.sql.ddl import parse_create_table  # noqa: E402
from conformance.record_flink_avro import AVRO_COLUMNS, CASES  # noqa: E402

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "avro"
ROWS = [
    (1, 2, 3, "x", decimal.Decimal("1.50"), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5, 123000),
     True, 1.5, 2.5, b"\x01\x02", datetime.time(1, 2, 3), [1, 2], {"k": 1}, (7, "y")),
    (None, 5, None, None, None, None, None, None, None, None, None, None, None, None, None),
]


def _golden(name: str) -> dict:
    return json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))


def _flink_file(name: str) -> bytes:
    return base64.b64decode(_golden(name)["file_base64"])


def _table(columns: str, options: str):
    table, _ = parse_create_table(f"CREATE TABLE t ({columns}) WITH ({options})")
    return table


def _columns(columns: str = AVRO_COLUMNS) -> tuple:
    return tuple((c.name, c.data_type) for c in _table(columns, "'connector' = 'x'").schema.physical_columns())


def _read(data: bytes):
    reader = fastavro.reader(io.BytesIO(data))
    return reader.codec, json.loads(reader.metadata["avro.schema"]), list(reader)


@pytest.mark.parametrize("name", ["avro_types_snappy", "avro_types_deflate"])
def test_flinks_file_reads_as_the_rows_it_wrote(name, tmp_path):
    (tmp_path / "part-0").write_bytes(_flink_file(name))
    source = create_source(_table(AVRO_COLUMNS, f"'connector' = 'filesystem', 'path' = '{tmp_path}', "
                                                "'format' = 'avro'"), streaming=False)
    assert source.rows() == ROWS


@pytest.mark.parametrize(("name", "codec"), [("avro_types_snappy", None), ("avro_types_deflate", "deflate")])
def test_a_written_file_has_flinks_schema_codec_and_records(name, codec, tmp_path):
    options = f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'avro'"
    sink = create_sink(_table(AVRO_COLUMNS, options + (f", 'avro.codec' = '{codec}'" if codec else "")), True)
    ours = sink.format.encode(ROWS, _columns())
    flink_codec, flink_schema, flink_records = _read(_flink_file(name))
    codec, schema, records = _read(ours)
    assert (codec, records) == (flink_codec, flink_records)
    canonical = fastavro.schema.to_parsing_canonical_form
    assert canonical(fastavro.parse_schema(schema)) == canonical(fastavro.parse_schema(flink_schema))
    assert flink_schema == ["null", record_schema(_columns())]


def test_a_kafka_record_is_the_schemaless_binary_of_flinks_row_record():
    _, schema, records = _read(_flink_file("avro_types_snappy"))
    record = fastavro.parse_schema(schema[1])  # the row record, not nullable, as Flink's Kafka serializer
    fmt = AvroFormat()
    for row, flink_record in zip(ROWS, records, strict=True):
        expected = io.BytesIO()
        fastavro.schemaless_writer(expected, record, flink_record)
        assert fmt.encode_record(row, _columns()) == expected.getvalue()
        assert fmt.decode_record(expected.getvalue(), "r", _columns()) == row


def test_a_type_flink_cannot_derive_is_refused_with_flinks_message(tmp_path):
    message = _golden("avro_timestamp_6")["error"].split("Exception: ", 1)[1]
    with pytest.raises(ConnectorError) as info:
        create_sink(_table("ts TIMESTAMP(6)", f"'connector' = 'filesystem', 'path' = '{tmp_path}', "
                                              "'format' = 'avro'"), True)
    assert message in str(info.value)
    # TIMESTAMP_LTZ (DDL gives TIMESTAMP for it today, so the type itself)
    with pytest.raises(AvroSchemaError) as info:
        avro_type(DataTypes.TIMESTAMP_LTZ(3), "record")
    assert _golden("avro_timestamp_ltz")["error"].split("Exception: ", 1)[1] == str(info.value)
    assert {"avro_timestamp_6", "avro_timestamp_ltz"} <= set(CASES)


def test_a_truncated_file_fails_naming_the_file_and_record(tmp_path):
    data = AvroFormat("null").encode(ROWS * 50, _columns())
    (tmp_path / "part-0").write_bytes(data[: len(data) - 40])
    source = create_source(_table(AVRO_COLUMNS, f"'connector' = 'filesystem', 'path' = '{tmp_path}', "
                                                "'format' = 'avro'"), streaming=False)
    with pytest.raises(BadRecordError, match=r"Failed to deserialize Avro record 1 of file .*part-0: "):
        source.rows()


def test_a_file_of_another_type_fails_naming_the_file(tmp_path):
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "string"}]}
    out = io.BytesIO()
    fastavro.writer(out, schema, [{"id": "one"}])
    (tmp_path / "f.avro").write_bytes(out.getvalue())
    source = create_source(_table("id INT", f"'connector' = 'filesystem', 'path' = '{tmp_path}', "
                                            "'format' = 'avro'"), streaming=False)
    with pytest.raises(BadRecordError, match=r"Avro record 1 of file .*f.avro: the file's schema does not resolve"):
        source.rows()


def test_a_truncated_kafka_record_fails_naming_it():
    columns = _columns("id INT NOT NULL, s STRING")
    data = AvroFormat().encode_record((1, "hello"), columns)
    with pytest.raises(BadRecordError, match=r"Avro record \(Kafka record of topic 't', partition 0, offset 9\): "
                                             r"it ends too early"):
        AvroFormat().decode_record(data[:-2], "Kafka record of topic 't', partition 0, offset 9", columns)


def test_a_kafka_value_of_a_wrong_type_fails_naming_it():
    columns = _columns("id INT NOT NULL, s STRING")
    # a union index (of ["null", "string"]) that is neither 0 nor 1
    with pytest.raises(BadRecordError, match=r"Avro record \(r\)"):
        AvroFormat().decode_record(b"\x02\x08", "r", columns)


@pytest.mark.parametrize(("option", "message"), [
    ("'avro.codec' = 'lz4'", "Unsupported value 'lz4' for option 'avro.codec'"),
    ("'avro.encoding' = 'json'", "'avro.encoding' = 'json' is not supported by changeflow"),
    ("'avro.bogus' = '1'", "(?s)Unsupported options found for 'filesystem'.*avro.bogus"),
])
def test_bad_options_are_refused_by_name(option, message, tmp_path):
    with pytest.raises(ConnectorError, match=message):
        create_sink(_table("id INT", f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'avro', "
                                     f"{option}"), True)


def test_kafka_tables_take_avro_keys_and_values():
    options = ("'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = "
               "'avro', 'key.fields' = 'k', 'value.format' = 'avro', 'value.avro.codec' = 'null'")
    sink = create_sink(_table("k STRING, v INT", options), True)
    from changeflow.common.change import Change
    from changeflow.common.row_kind import RowKind

    key, value = sink.record(Change(RowKind.INSERT, ("a", 3)))
    source = create_source(_table("k STRING, v INT", options + ", 'scan.startup.mode' = 'earliest-offset'"),
                           streaming=True)
    assert source.decode_record(key, value, "r") == ("a", 3)
