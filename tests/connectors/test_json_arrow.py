"""JSON lines read by Arrow's reader (connectors/json_arrow.py): exactly the record reader's rows, or None."""

import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes
from changeflow.connectors.formats import BadRecordError, JsonFormat
from changeflow.connectors.json_arrow import read_json_lines
from changeflow.plan.nodes import Source
from changeflow.runtime.spark.sources import arrow_table

ROW = DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()), DataTypes.FIELD("at", DataTypes.TIMESTAMP(3)),
                     DataTypes.FIELD("name", DataTypes.STRING())])
SCHEMA = (("n", DataTypes.INT()), ("x", DataTypes.DOUBLE()), ("ok", DataTypes.BOOLEAN()),
          ("s", DataTypes.STRING()), ("t", DataTypes.TIMESTAMP(3)), ("r", ROW))


def by_records(data: bytes, schema=SCHEMA) -> pa.Table:
    """The record reader's rows as the table the engine stages."""
    return arrow_table(Source("t", schema, "elements", JsonFormat(False).decode_bytes(data, "f.json", schema)))


def lines(*records: str) -> bytes:
    return "".join(r + "\n" for r in records).encode()


def test_nexmark_shaped_rows_read_by_arrow_equal_the_record_readers():
    data = lines('{"n": 1, "x": 2.5, "ok": true, "s": "a", "t": "2026-01-01 00:00:00.123", '
                 '"r": {"id": 7, "at": "2026-01-01T00:00:01", "name": "x", "extra": 1}, "unknown": [1]}',
                 '{"n": null, "r": null}', "   ", '{"x": 3, "r": {}, "t": "2024-02-29 23:59"}\r')
    fast = read_json_lines(data, SCHEMA)
    assert fast is not None and fast.num_rows == 3
    assert fast.equals(by_records(data))
    assert fast.column("r").to_pylist()[1:] == [None, {"id": None, "at": None, "name": None}]


@pytest.mark.parametrize("record", [
    '{"n": "12"}',                 # a number in a string: the record reader parses it
    '{"n": 2.0}',                  # truncated by the record reader
    '{"n": 2147483648}',           # out of INT's range: the record reader's error
    '{"n": 1, "n": 2}',            # a key twice: the record reader takes the last
    '{"n": 1} {"n": 2}',           # two objects on a line: an error to the record reader
    '{"s": 5}',                    # a number for a string: its JSON text
    '{"t": " 2026-01-01 00:00:00"}',   # stripped by the record reader
    '{"t": "2026-01-01 00:00:00.1234567"}',   # nanoseconds, truncated by the record reader
    '{"t": "2026-01-01"}',         # no time: an error to the record reader, a timestamp to Arrow
    '{"t": "2026-01-01 24:00:00"}',
    '{"t": "0000-01-01 00:00:00"}',
    '{"t": "2026-02-29 00:00:00"}',
    '{"r": [1]}',
    '[1, 2]',
    '{"n": 1,\n"x": 2}',          # an object over two lines
])
def test_what_the_record_reader_would_read_differently_is_left_to_it(record):
    assert read_json_lines(lines('{"n": 1}', record), SCHEMA) is None


def test_invalid_utf8_and_unsupported_types_are_left_to_the_record_reader():
    assert read_json_lines(b'{"s": "\xff"}\n', SCHEMA) is None
    assert read_json_lines(lines('{"d": 1}'), (("d", DataTypes.DECIMAL(10, 2)),)) is None
    with pytest.raises(BadRecordError, match="Invalid UTF-8"):
        by_records(b'{"s": "\xff"}\n')


def test_blank_input_is_an_empty_table_and_a_missing_field_check_reads_records():
    assert read_json_lines(b"\n \n", SCHEMA).num_rows == 0
    assert JsonFormat(False, fail_on_missing_field=True).decode_arrow(lines('{"n": 1}'), "f", SCHEMA) is None


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_values = {
    "n": st.one_of(st.none(), st.integers(-2**31, 2**31 - 1), st.integers(2**31, 2**40), st.just("7"), st.just(1.5)),
    "x": st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-2**60, 2**60)),
    "ok": st.one_of(st.none(), st.booleans(), st.just("true")),
    "s": st.one_of(st.none(), _text, st.integers(0, 9)),
    "t": st.one_of(st.none(), st.sampled_from(["2026-01-01 00:00:00", "2026-01-01T12:30", "1999-12-31 23:59:59.5",
                                                "2026-01-01 00:00:00.123456", "2026-01-01", "2026-1-01 00:00"])),
    "r": st.one_of(st.none(), st.fixed_dictionaries({}, optional={
        "id": st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
        "at": st.sampled_from(["2026-06-30 10:00:00.001", "2026-06-31 10:00:00"]), "name": _text})),
}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional=_values), min_size=1, max_size=8))
def test_arrow_read_is_the_record_readers_rows_or_none(records):
    data = lines(*(json.dumps(r) for r in records))
    fast = read_json_lines(data, SCHEMA)
    try:
        slow = by_records(data)
    except BadRecordError:
        assert fast is None   # the record reader's error stays its own
        return
    assert fast is None or fast.equals(slow)
