"""The Table API cases of ``conformance/table_api_cases.py`` on changeflow, against PyFlink 2.3's goldens.

Ordered cases compare the changelog in order (a batch sort's row order is its
result); the others compare the materialized rows. Column names and types are
compared as Flink reports them; an error case compares Flink's message; a
statement-set case compares each sink's rows, read back after the one job.
"""

from __future__ import annotations

import json
import pathlib
import types
from collections import Counter

import pytest

from changeflow.common import DataTypes
import changeflow.table as table_module
from changeflow.table import EnvironmentSettings, TableEnvironment, expressions, window
from conformance.table_api_cases import CASES

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "table_api"
E = types.SimpleNamespace(col=expressions.col, lit=expressions.lit, DataTypes=DataTypes, x=expressions,
                          window=window, table=table_module)

# Flink's Table API types TO_DATE / TO_TIMESTAMP / DATE_FORMAT of NOT NULL arguments NOT NULL,
# its SQL always nullable (two function definitions); changeflow has one, typed as SQL.
NULLABILITY_ONLY = {"batch_time_functions": {"d", "ts", "d2", "fmt"}}


def _value(v):
    if isinstance(v, float):
        return float(f"{v:.12g}")
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def _changes(table) -> list:
    with table.execute().collect() as results:
        return [[str(r.get_row_kind()), [_value(v) for v in r]] for r in results]


def _materialized(changes) -> Counter:
    rows: Counter = Counter()
    for kind, values in changes:
        rows[json.dumps(values)] += -1 if kind in ("-U", "-D") else 1
    return +rows


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_flink(name, spark, tmp_path):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    c = CASES[name]
    settings = EnvironmentSettings.in_batch_mode() if c.mode == "batch" else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    E.tmp = str(tmp_path)
    if c.statement_set:
        sinks = c.build(t_env, E, str(tmp_path))
        got = {n: sorted(v for _, v in _changes(t_env.from_path(n))) for n in sinks}
        assert got == golden["sinks"]
        return
    if c.error and "columns" not in golden:   # Flink refused the program while it was built
        with pytest.raises(Exception, match=golden["error"].replace(".", r"\.")):
            c.build(t_env, E)
        return
    table = c.build(t_env, E)
    schema = table.get_schema()
    assert schema.get_field_names() == golden["columns"]
    loose = NULLABILITY_ONLY.get(name, set())
    got_types = [str(t.with_nullable(True)) if n in loose else str(t)
                 for n, t in zip(golden["columns"], schema.get_field_data_types(), strict=True)]
    assert got_types == [t.replace(" NOT NULL", "") if n in loose else t
                         for n, t in zip(golden["columns"], golden["types"], strict=True)]
    if c.error:
        with pytest.raises(Exception, match=golden["error"].replace(".", r"\.")):
            _changes(table)
        return
    expected = [[k, [_value(v) for v in values]] for k, values in golden["changes"]]
    got = _changes(table)
    if c.ordered:
        assert got == expected
    else:
        assert _materialized(got) == _materialized(expected)
