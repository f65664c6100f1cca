"""execute().print() writes Flink's tableau text, checked against text PyFlink printed."""

from __future__ import annotations

import json
import pathlib

from changeflow.common import RowKind
from changeflow.common.types import DataType
from changeflow.runtime.changes import Change
from changeflow.table.result import format_tableau

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "table"


def _type(text: str) -> DataType:
    nullable = not text.endswith(" NOT NULL")
    return DataType(text.replace(" NOT NULL", "").split("<")[0], nullable)


def _value(value, type_text: str):
    # The goldens keep a MULTISET as [value, count] pairs; PyFlink hands it over as a dict.
    return dict(map(tuple, value)) if type_text.startswith("MULTISET") else value


def tableau_of(case: str, streaming: bool) -> str:
    golden = json.loads((GOLDENS / f"{case}.json").read_text())
    schema = [(n, _type(t)) for n, t in zip(golden["columns"], golden["types"], strict=True)]
    changes = [Change(RowKind.from_short_string(k),
                      tuple(_value(x, t) for x, t in zip(v, golden["types"], strict=True)))
               for k, v in golden["changes"]]
    return format_tableau(schema, changes, streaming)


def test_streaming_print_matches_pyflink():
    expected = (GOLDENS / "print_example.txt").read_text().rstrip("\n")
    assert tableau_of("daily_uv_minibatch_off", streaming=True) == expected


def test_batch_print_has_no_op_column():
    expected = (GOLDENS / "print_example_batch.txt").read_text().rstrip("\n")
    assert tableau_of("batch_daily_uv", streaming=False) == expected


def test_nulls_and_multisets_print_as_pyflink():
    expected = (GOLDENS / "print_example_nulls.txt").read_text().rstrip("\n")
    assert tableau_of("nulls_insert_only_aggregates", streaming=True) == expected


def test_empty_result_prints_empty_set():
    assert format_tableau([("a", DataType("BIGINT"))], [], streaming=True) == "Empty set"
