"""JSON/CSV/Parquet records and values as Flink's formats read and write them (no Spark)."""

import datetime
import decimal

import pytest

from changeflow.common.types import DataTypes
from changeflow.connectors.formats import BadRecordError, CsvFormat, JsonFormat, ParquetFormat
from changeflow.connectors.values import flink_string, java_double

SCHEMA = (("a", DataTypes.INT()), ("s", DataTypes.STRING()), ("d", DataTypes.DECIMAL(10, 2)),
          ("ts", DataTypes.TIMESTAMP(3)), ("b", DataTypes.BOOLEAN()), ("dt", DataTypes.DATE()))
ROW = (1, "x,y", decimal.Decimal("1.50"), datetime.datetime(2024, 1, 2, 3, 4, 5, 123000), True,
       datetime.date(2024, 1, 2))


def test_json_written_as_flink_writes_it():
    text = JsonFormat(False).encode([ROW, (2, None, None, None, False, None)], SCHEMA).decode()
    assert text == ('{"a":1,"s":"x,y","d":1.5,"ts":"2024-01-02 03:04:05.123","b":true,"dt":"2024-01-02"}\n'
                    '{"a":2,"s":null,"d":null,"ts":null,"b":false,"dt":null}\n')


@pytest.mark.parametrize("fmt", [JsonFormat(False), CsvFormat(False)], ids=["json", "csv"])
def test_text_formats_round_trip(fmt):
    rows = [ROW, (2, "", None, None, False, None)]
    assert fmt.decode(fmt.encode(rows, SCHEMA).decode(), "f", SCHEMA) == rows


def test_parquet_round_trip():
    fmt = ParquetFormat()
    assert fmt.decode_bytes(fmt.encode([ROW], SCHEMA), "f", SCHEMA) == [ROW]


def test_json_converts_like_flink_and_fills_missing_fields_with_null():
    rows = JsonFormat(False).decode('{"a": "7", "s": 5, "extra": 1}\n{"b": "TRUE"}\n', "f", SCHEMA)
    assert rows == [(7, "5", None, None, None, None), (None, None, None, None, True, None)]


def test_bad_json_record_names_file_line_record_and_column():
    with pytest.raises(BadRecordError, match=r"""Failed to deserialize JSON '\{"a": 2, "s": ' \(file p/f1, line 2\)"""):
        JsonFormat(False).decode('{"a": 1}\n{"a": 2, "s": \n', "p/f1", SCHEMA)
    with pytest.raises(BadRecordError, match=r"\(file f, line 1\): column 'ts' of type TIMESTAMP\(3\): \"x\" is not"):
        JsonFormat(False).decode('{"ts": "x"}\n', "f", SCHEMA)


def test_ignore_parse_errors_skips_unreadable_records_and_nulls_bad_values():
    rows = JsonFormat(True).decode('{"a": 1}\n{"a": \n{"a": "zz", "s": "y"}\n', "f", SCHEMA[:2])
    assert rows == [(1, None), (None, "y")]
    rows = CsvFormat(True).decode("1,x\nzz,y\n3\n", "f", SCHEMA[:2])
    assert rows == [(1, "x"), (None, "y"), (3, None)]


def test_bad_csv_record_names_the_column():
    with pytest.raises(BadRecordError, match=r"CSV row 'zz,y' \(file f, line 2\): column 'a' of type INT: "
                                             r"For input string: \"zz\""):
        CsvFormat(False).decode("1,x\nzz,y\n", "f", SCHEMA[:2])
    with pytest.raises(BadRecordError, match="it has 1 fields, the table has 2 columns"):
        CsvFormat(False).decode("3\n", "f", SCHEMA[:2])


def test_values_print_as_flink_row_to_string():
    printed = [flink_string(v, t) for v, (_, t) in zip(ROW, SCHEMA)]
    assert flink_string(0.10000000149011612, DataTypes.FLOAT()) == "0.1"  # a FLOAT prints its float digits
    assert printed == ["1", "x,y", "1.50", "2024-01-02T03:04:05.123", "true", "2024-01-02"]
    assert [java_double(v) for v in (1.0, 1e10, 1.5e-5, 0.001, 123.25)] == ["1.0", "1.0E10", "1.5E-5", "0.001",
                                                                            "123.25"]
