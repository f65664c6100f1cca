"""The Python table function cases (lateral joins, flat_map, map, SQL LATERAL TABLE) against Flink 2.3's goldens.

Streaming cases compare the exact changelog in order (the rows a function emits keep
their order and their input row's kind); batch cases the materialized result.
SQL cases register their function in the environment's function catalog directly
(``create_temporary_function`` is another part of the issue).
"""

from __future__ import annotations

import json
import pathlib
import types

import pytest

from changeflow.common import DataTypes, Row
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit
from changeflow.table.udf import ScalarFunction, TableFunction, udf, udtf
from conformance.lateral_cases import CASES
from tests.conformance.test_table_conformance import materialize, row_key

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "lateral"


def _register(t_env, name, function):
    t_env._planning.catalog.functions.create(name, function.function, system=False)


E = types.SimpleNamespace(col=col, lit=lit, DataTypes=DataTypes, udf=udf, udtf=udtf, Row=Row,
                          TableFunction=TableFunction, ScalarFunction=ScalarFunction, register=_register)


def test_every_case_has_a_golden():
    assert sorted(p.stem for p in GOLDENS.glob("*.json")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_flink(name, spark):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    case = CASES[name]
    settings = EnvironmentSettings.in_streaming_mode() if case.mode == "streaming" \
        else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    table = case.build(t_env, E)

    schema = table.get_schema()
    assert schema.get_field_names() == golden["columns"]
    assert [str(t) for t in schema.get_field_data_types()] == golden["types"]
    with table.execute().collect() as rows:
        ours = [row_key(str(r.get_row_kind()), list(r)) for r in rows]
    theirs = [row_key(kind, values) for kind, values in golden["changes"]]
    if case.mode == "batch" or not golden["deterministic"]:
        assert materialize(ours) == materialize(theirs)
    else:
        assert ours == theirs
