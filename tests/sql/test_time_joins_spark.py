"""Interval and temporal joins on Spark over several micro-batches, against Flink's recorded results.

The conformance cases read each CSV file in one micro-batch; here every source
gives four rows a micro-batch (``changeflow.source.rows-per-batch``: three
micro-batches of 10-14 rows), so the watermark moves between the rows and the
joins keep, match and drop state across micro-batches. The inputs are out of order by less than their watermark delay,
so no row is late and the result must be Flink's (and the batch join's); the
``interval_join_where_*`` inputs add late rows without a partner, which add no row.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import types
from collections import Counter

import pytest

from changeflow.common.types import DataTypes
from conformance.sql_cases import CASES

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "sql"


def _value(v):
    return v.isoformat() if isinstance(v, datetime.datetime) else v


def _materialized(changes) -> Counter:
    table: Counter = Counter()
    for kind, values in changes:
        table[tuple(values)] += -1 if kind in ("-U", "-D") else 1
        assert table[tuple(values)] >= 0, f"{kind} of a row not in the table: {values}"
    return +table


@pytest.mark.parametrize("name", ["interval_join_left_between_streaming", "interval_join_full_flipped_with_condition_"
                                  "streaming", "temporal_join_left", "interval_join_then_tumble",
                                  "interval_join_where_comma_streaming", "interval_join_where_left_join_streaming"])
def test_join_over_several_micro_batches_gives_flinks_rows(stream_env, tmp_path, name):
    stream_env.get_config().set("changeflow.source.rows-per-batch", "4")
    table = CASES[name].build(stream_env, types.SimpleNamespace(DataTypes=DataTypes, tmp=str(tmp_path)))
    with table.execute().collect() as rows:
        ours = [(str(r.get_row_kind()), [_value(v) for v in r]) for r in rows]
    golden = json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))
    assert {kind for kind, _ in ours} == {"+I"}  # insert-only, as Flink's
    assert _materialized(ours) == _materialized(golden["changes"])
