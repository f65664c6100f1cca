"""changeflow's JSON row formats against Flink 2.3's, text by text (goldens of
conformance/record_flink_json_rows.py; no Spark, no Flink)."""

from __future__ import annotations

import datetime
import json
import math
import pathlib
import sys

import pytest

from changeflow.common import Types
from changeflow.common.typeinfo import to_float32
from changeflow.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

ROOT = pathlib.Path(__file__).resolve().parents[2] / "conformance"
sys.path.insert(0, str(ROOT))
from json_row_cases import CASES, row_type  # noqa: E402


def _as_golden(value):
    """A changeflow value as the golden writes Flink's (dates and timestamps as Java's toString)."""
    if isinstance(value, (list, tuple)):
        return [_as_golden(v) for v in value]
    if isinstance(value, datetime.datetime):
        fraction = f"{value.microsecond:06d}".rstrip("0") or "0"
        return value.strftime("%Y-%m-%d %H:%M:%S.") + fraction
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def _golden_row(row):
    """Flink's row, with a nanosecond fraction cut to microseconds as changeflow's timestamps hold them."""
    def cut(v):
        if isinstance(v, list):
            return [cut(x) for x in v]
        if isinstance(v, str) and len(v) > 26 and v[10] == " " and v[19] == ".":
            return v[:26].rstrip("0")
        return v
    return cut(row)


def _same(ours, flinks):
    """Equal values; a FLOAT as the same single-precision number (py4j hands Flink's Java float over by its
    shortest digits, changeflow holds the float32 value itself)."""
    if isinstance(ours, list) and isinstance(flinks, list):
        return len(ours) == len(flinks) and all(_same(a, b) for a, b in zip(ours, flinks, strict=True))
    if isinstance(ours, float) and isinstance(flinks, float):
        return ours == flinks or to_float32(ours) == to_float32(flinks)
    return ours == flinks and type(ours) is type(flinks)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_text_reads_and_writes_as_in_flink(name):
    golden = json.loads((ROOT / "goldens" / "formats" / f"{name}.json").read_text(encoding="utf-8"))
    case = golden["case"]
    assert case == json.loads(json.dumps(CASES[name])), "the golden was recorded from these cases"
    builder = JsonRowDeserializationSchema.builder().type_info(row_type(Types, case["fields"]))
    for option in case["options"]:
        builder = getattr(builder, option)()
    reader = builder.build()
    writer = JsonRowSerializationSchema.builder().with_type_info(reader.get_produced_type()).build()
    check_results(golden["results"], reader, writer, "Failed to deserialize JSON", _as_golden, "json")


def check_results(results, reader, writer, error, ours, written):
    """Each golden text read by changeflow's ``reader`` as Flink read it (the row as ``ours`` shows it; an
    error whose message has ``error``; no record), and the row written back as Flink wrote it (key ``written``)."""
    for entry in results:
        text = entry["text"]
        if "error" in entry:
            with pytest.raises(ValueError, match=error):
                reader.deserialize(text.encode())
            continue
        row = reader.deserialize(text.encode())
        if entry.get("skipped"):
            assert row is None, text
            continue
        assert _same(ours(list(row)), _golden_row(entry["row"])), (text, list(row), entry["row"])
        if "123456789" not in text:  # changeflow's timestamps hold microseconds
            assert writer.serialize(row).decode() == entry[written], text


def test_a_type_the_format_does_not_convert_is_refused_naming_it():
    with pytest.raises(NotImplementedError, match=r"Types.BIG_DEC\(\)"):
        JsonRowDeserializationSchema.builder().type_info(Types.ROW_NAMED(["p"], [Types.BIG_DEC()])).build()
    with pytest.raises(TypeError, match="Typeinfo should be set."):
        JsonRowSerializationSchema.builder().build()
    with pytest.raises(TypeError, match="row type"):
        JsonRowSerializationSchema.builder().with_type_info(Types.STRING()).build()
