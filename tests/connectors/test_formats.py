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
    printed = [flink_string(v, t) for v, (_, t) in zip(ROW, SCHEMA, strict=True)]
    assert flink_string(0.10000000149011612, DataTypes.FLOAT()) == "0.1"  # a FLOAT prints its float digits
    assert printed == ["1", "x,y", "1.50", "2024-01-02T03:04:05.123", "true", "2024-01-02"]
    assert [java_double(v) for v in (1.0, 1e10, 1.5e-5, 0.001, 123.25)] == ["1.0", "1.0E10", "1.5E-5", "0.001",
                                                                            "123.25"]


def test_an_instant_prints_as_javas_instant_to_string():
    utc = datetime.timezone.utc
    shanghai = datetime.timezone(datetime.timedelta(hours=8))
    ltz = DataTypes.TIMESTAMP_LTZ(3)
    assert flink_string(datetime.datetime(1970, 1, 1, 0, 0, 5, tzinfo=utc), ltz) == "1970-01-01T00:00:05Z"
    assert flink_string(datetime.datetime(1970, 1, 1, 8, 0, 0, 120000, tzinfo=shanghai), ltz) == \
        "1970-01-01T00:00:00.120Z"
    assert flink_string(datetime.datetime(1969, 12, 31, 23, 59, 58, 1, tzinfo=utc), ltz) == \
        "1969-12-31T23:59:58.000001Z"


# --- bad input: nothing lost, nothing wrong -------------------------------------------------

def test_csv_unterminated_quote_skips_only_its_record():
    # Each record after the bad one is read; the record whose quote never closes is skipped.
    assert CsvFormat(True).decode('1,a\n2,"b\n3,c\n4,d\n', "f", SCHEMA[:2]) == [(1, "a"), (3, "c"), (4, "d")]
    assert CsvFormat(True).decode('1,a\n2,"b"x\n3,c\n', "f", SCHEMA[:2]) == [(1, "a"), (3, "c")]
    # A quoted field closed on a later line is one field, as in Jackson's parser.
    assert CsvFormat(True).decode('1,"a\nb"\n2,c\n', "f", SCHEMA[:2]) == [(1, "a\nb"), (2, "c")]
    with pytest.raises(BadRecordError, match=r"""CSV row '2,"b' \(file f, line 2\): a quoted field never closes"""):
        CsvFormat(False).decode('1,a\n2,"b\n3,c\n4,d\n', "f", SCHEMA[:2])


def test_csv_fields_have_no_size_limit():
    big = "x" * 300_000  # over Python csv's default 131,072-character limit
    text = f'1,{big}\n2,"{big}"\n3,c\n'
    for fmt in (CsvFormat(False), CsvFormat(True)):
        assert fmt.decode(text, "f", SCHEMA[:2]) == [(1, big), (2, big), (3, "c")]


@pytest.mark.parametrize("fmt", [CsvFormat, JsonFormat], ids=["csv", "json"])
def test_invalid_utf8_names_file_line_and_offset_or_skips_the_record(fmt):
    lines = ([b"1,a\n", b"2,\xffb\n", b"3,c\n"] if fmt is CsvFormat
             else [b'{"a": 1, "s": "a"}\n', b'{"a": 2, "s": "\xff"}\n', b'{"a": 3, "s": "c"}\n'])
    data = b"".join(lines)
    offset = len(lines[0]) + lines[1].index(b"\xff")
    with pytest.raises(BadRecordError, match=rf"Invalid UTF-8 in file p/f, line 2, byte offset {offset}: byte 0xff"):
        fmt(False).decode_bytes(data, "p/f", SCHEMA[:2])
    assert fmt(True).decode_bytes(data, "p/f", SCHEMA[:2]) == [(1, "a"), (3, "c")]


def test_json_non_numbers_and_huge_numbers_into_decimal_and_integers():
    schema = (("a", DataTypes.BIGINT()), ("d", DataTypes.DECIMAL(10, 2)))
    with pytest.raises(BadRecordError, match=r"""'\{"a": 1, "d": NaN\}' \(file p/f, line 1\): column 'd' of type """
                                             r"DECIMAL\(10, 2\): NaN is not a decimal number"):
        JsonFormat(False).decode_bytes(b'{"a": 1, "d": NaN}\n', "p/f", schema)
    # With ignore-parse-errors a value that does not fit is null, as Flink's JSON converters make it.
    assert JsonFormat(True).decode('{"a": 1, "d": NaN}\n{"a": 2, "d": Infinity}\n', "f", schema) == [
        (1, None), (2, None)]
    huge = "9" * 5000  # over Python's 4300-digit int() limit: a DECIMAL overflow (null), out of BIGINT's range
    assert JsonFormat(False).decode(f'{{"a": 1, "d": {huge}}}\n', "f", schema) == [(1, None)]
    with pytest.raises(BadRecordError, match=r"column 'a' of type BIGINT: a 16610-bit number is out of the range"
                                             ) as error:
        JsonFormat(False).decode(f'{{"a": {huge}}}\n', "f", schema)
    assert len(str(error.value)) < 1000  # the record is cut in the message
    decoded = JsonFormat(False).decode('{"a": 1, "d": 12345678.125}\n', "f", schema)
    assert decoded == [(1, decimal.Decimal("12345678.13"))]
    wide = DataTypes.DECIMAL(38, 2)  # wider than Python's default 28-digit decimal context
    assert JsonFormat(False).decode(f'{{"d": "{"1" * 36}"}}\n', "f", (("d", wide),)) == [
        (decimal.Decimal("1" * 36 + ".00"),)]


def test_json_lines_end_at_newline_only():
    # U+2028 is a line separator to str.splitlines() but legal inside a JSON string.
    text = '{"a": 1, "s": "x\u2028y"}\r\n{"a": 2}\n'
    assert JsonFormat(False).decode_bytes(text.encode(), "f", SCHEMA[:2]) == [(1, "x\u2028y"), (2, None)]


def test_corrupt_parquet_file_names_the_file():
    data = ParquetFormat().encode([ROW], SCHEMA)
    for bad in (b"not parquet at all", data[:len(data) // 2]):
        with pytest.raises(BadRecordError, match="Failed to read Parquet file p/f.parquet: "):
            ParquetFormat().decode_bytes(bad, "p/f.parquet", SCHEMA)


def test_json_reads_a_row_column_by_field_name_as_flink():
    row_type = DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()), DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3)),
                              DataTypes.FIELD("s", DataTypes.STRING())])
    schema = (("k", DataTypes.INT()), ("r", row_type))
    text = ('{"k": 1, "r": {"s": "x", "id": 7, "ts": "2024-01-02 03:04:05.120", "other": 1}}\n'
            '{"k": 2, "r": null}\n{"k": 3, "r": {"id": 8}}\n')
    assert JsonFormat(False).decode(text, "f.json", schema) == [
        (1, (7, datetime.datetime(2024, 1, 2, 3, 4, 5, 120000), "x")), (2, None), (3, (8, None, None))]
    with pytest.raises(BadRecordError, match="column 'r' of type .*: 5 is not an object"):
        JsonFormat(False).decode('{"k": 1, "r": 5}\n', "f.json", schema)


# What Flink 2.3's csv format wrote for these strings (PyFlink 2.3, a batch INSERT into a filesystem
# table, delimiters ',', '|' and tab): Jackson quotes a string with a character below one past the
# largest of the delimiter, the quote and the line feed, or longer than 24 characters; numbers are
# never quoted.
_QUOTING = ["+I", "a b", "x#y", "a|b", "plain", "", "-D", "a,b", 'q"q', "1.5E+3", "~t", " lead"]
_FLINK_QUOTED = {
    ",": ['"+I"', '"a b"', '"x#y"', "a|b", "plain", "", "-D", '"a,b"', '"q""q"', '"1.5E+3"', "~t", '" lead"'],
    "|": ['"+I"', '"a b"', '"x#y"', '"a|b"', '"plain"', "", '"-D"', '"a,b"', '"q""q"', '"1.5E+3"', '"~t"',
          '" lead"'],
    "\t": ["+I", '"a b"', "x#y", "a|b", "plain", "", "-D", "a,b", '"q""q"', "1.5E+3", "~t", '" lead"'],
}
_LENGTHS = ["a" * 23, "a" * 24, "a" * 25, "a" * 26, "a" * 40, "b" * 24 + "-", "abc|"]
_FLINK_LENGTHS = ["a" * 23, "a" * 24, '"' + "a" * 25 + '"', '"' + "a" * 26 + '"', '"' + "a" * 40 + '"',
                  '"' + "b" * 24 + '-"', "abc|"]


def test_csv_quotes_text_longer_than_24_characters_as_flinks_writer_does():
    fmt = CsvFormat(False)
    schema = (("id", DataTypes.INT()), ("s", DataTypes.STRING()))
    lines = fmt.encode(list(enumerate(_LENGTHS)), schema).decode().splitlines()
    assert lines == [f"{i},{q}" for i, q in enumerate(_FLINK_LENGTHS)]


@pytest.mark.parametrize("delimiter", sorted(_FLINK_QUOTED))
def test_csv_quotes_text_as_flinks_writer_does(delimiter):
    fmt = CsvFormat(False, delimiter)
    schema = (("id", DataTypes.INT()), ("s", DataTypes.STRING()), ("x", DataTypes.DOUBLE()))
    lines = fmt.encode([(i, s, 1.5e10) for i, s in enumerate(_QUOTING)], schema).decode().splitlines()
    assert lines == [delimiter.join([str(i), q, "1.5E10"]) for i, q in enumerate(_FLINK_QUOTED[delimiter])]
    assert [r[1] if r[1] is not None else "" for r in fmt.decode("\n".join(lines) + "\n", "f", schema)] == \
        [s for s in _QUOTING]


def _parquet(table) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def test_parquet_read_as_arrow_holds_the_values_rows_give():
    import pyarrow as pa

    schema = (("ts", DataTypes.TIMESTAMP(3)), ("k", DataTypes.BIGINT()), ("ok", DataTypes.BOOLEAN()),
              ("x", DataTypes.DOUBLE()), ("s", DataTypes.STRING()), ("gone", DataTypes.INT()))
    stamps = [datetime.datetime(2024, 1, 1, 0, 0, 1, 234000), None, datetime.datetime(1969, 12, 31, 23, 59, 59)]
    data = _parquet(pa.table({"ts": pa.array(stamps, pa.timestamp("ms")), "k": pa.array([1, None, -(1 << 62)]),
                              "ok": [True, None, False], "x": [0.5, float("nan"), None], "s": ["a", None, "é"]}))
    fmt = ParquetFormat()
    table = fmt.decode_arrow(data, "f.parquet", schema)
    assert table is not None and table.column_names == [n for n, _ in schema]
    rows = fmt.decode_bytes(data, "f.parquet", schema)
    got = list(zip(*[table.column(n).to_pylist() for n, _ in schema], strict=True))
    assert [[str(v) for v in r] for r in got] == [[str(v) for v in r] for r in rows]   # str: NaN != NaN


def test_parquet_needing_a_conversion_is_not_read_as_arrow():
    import pyarrow as pa

    fmt = ParquetFormat()
    narrow = _parquet(pa.table({"k": pa.array([1, 2], pa.int64())}))
    assert fmt.decode_arrow(narrow, "f", (("k", DataTypes.INT()),)) is None   # a range check per value
    text = _parquet(pa.table({"ts": ["2024-01-01 00:00:00"]}))
    assert fmt.decode_arrow(text, "f", (("ts", DataTypes.TIMESTAMP(3)),)) is None   # parsed per value
    nanos = _parquet(pa.table({"ts": pa.array([1], pa.timestamp("ns"))}))
    assert fmt.decode_arrow(nanos, "f", (("ts", DataTypes.TIMESTAMP(3)),)) is None
    assert fmt.decode_arrow(narrow, "f", (("k", DataTypes.DECIMAL(10, 0)),)) is None
