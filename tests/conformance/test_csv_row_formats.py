"""changeflow's CSV row formats against Flink 2.3's, text by text (goldens of
conformance/record_flink_csv_rows.py; no Spark, no Flink)."""

from __future__ import annotations

import decimal
import json
import pathlib
import sys

import pytest

from changeflow.common import Types
from changeflow.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema

ROOT = pathlib.Path(__file__).resolve().parents[2] / "conformance"
sys.path.insert(0, str(ROOT))
from csv_row_cases import CASES  # noqa: E402
from json_row_cases import row_type  # noqa: E402

from tests.conformance.test_json_row_formats import _as_golden, check_results  # noqa: E402


def _ours(value):
    if isinstance(value, list):
        return [_ours(v) for v in value]
    # py4j hands a BigDecimal over as its plain text (100 for 1E+2).
    return format(value, "f") if isinstance(value, decimal.Decimal) else _as_golden(value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_text_reads_and_writes_as_in_flink(name):
    golden = json.loads((ROOT / "goldens" / "formats" / f"{name}.json").read_text(encoding="utf-8"))
    case = golden["case"]
    assert case == json.loads(json.dumps(CASES[name])), "the golden was recorded from these cases"
    reading = CsvRowDeserializationSchema.Builder(row_type(Types, case["fields"]))
    for option, *args in case["read"]:
        reading = getattr(reading, option)(*args)
    writing = CsvRowSerializationSchema.Builder(row_type(Types, case["fields"]))
    for option, *args in case["write"]:
        writing = getattr(writing, option)(*args)
    check_results(golden["results"], reading.build(), writing.build(), "Failed to deserialize CSV row", _ours, "csv")


def test_a_type_the_format_does_not_convert_is_refused_naming_it():
    with pytest.raises(NotImplementedError, match=r"Types.SQL_TIME\(\)"):
        CsvRowDeserializationSchema.Builder(Types.ROW_NAMED(["t"], [Types.SQL_TIME()]))
    with pytest.raises(TypeError, match="must not be None"):
        CsvRowSerializationSchema.Builder(None)
    with pytest.raises(TypeError, match="row type"):
        CsvRowSerializationSchema.Builder(Types.STRING())
