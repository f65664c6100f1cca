"""The Python UDF conformance cases (conformance/udf_cases.py) on changeflow, compared with
Flink 2.3's goldens (conformance/goldens/udf, recorded by conformance/record_flink_udf.py):
names and types of the result, and the changelog (exact in streaming, as a table in batch)."""

from __future__ import annotations

import json
import pathlib
import types

import pytest

from changeflow.common import DataTypes
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import call, col, lit
from changeflow.table.udf import ScalarFunction, udf
from conformance.udf_cases import CASES
from tests.conformance.test_table_conformance import materialize, row_key

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "udf"
E = types.SimpleNamespace(col=col, lit=lit, call=call, DataTypes=DataTypes, udf=udf, ScalarFunction=ScalarFunction)


@pytest.mark.parametrize("name", sorted(CASES))
def test_udf_case_matches_flink(name, spark):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    case = CASES[name]
    settings = EnvironmentSettings.in_streaming_mode() if case.mode == "streaming" \
        else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    for key, value in case.config.items():
        t_env.get_config().set(key, value)
    table = case.build(t_env, E)

    schema = table.get_schema()
    assert schema.get_field_names() == golden["columns"]
    assert [str(t) for t in schema.get_field_data_types()] == golden["types"]
    with table.execute().collect() as rows:
        ours = [row_key(str(r.get_row_kind()), list(r)) for r in rows]
    theirs = [row_key(kind, values) for kind, values in golden["changes"]]
    if case.mode == "batch":
        assert materialize(ours) == materialize(theirs)
    else:
        assert ours == theirs
