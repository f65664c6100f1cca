"""Python aggregate functions (udaf, udtaf) on changeflow against PyFlink 2.3's goldens.

PyFlink folds a Python aggregate's input per bundle, so its changelogs depend on
bundle boundaries: results are compared materialized (and the result types). A
golden with ``error`` is a refusal: changeflow must refuse too, with Flink's reason,
except where changeflow goes beyond Flink (``BEYOND_FLINK``: general udafs and
table aggregates in batch mode, which Flink's planner cannot plan; compared with
the streaming result of the same case instead).
"""

from __future__ import annotations

import json
import pathlib
import sys
import types

import pytest

from changeflow.common import Row
from changeflow.common.types import DataType, DataTypes
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit
from changeflow.table.udf import AggregateFunction, TableAggregateFunction, udaf, udtaf
from conformance.udaf_cases import CASES
from tests.conformance.test_table_conformance import materialize, row_key

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "udaf"


class _Types(DataTypes):
    """DataTypes with MAP when changeflow's own lacks it (only an accumulator type here, never used)."""

    @staticmethod
    def MAP(key: DataType, value: DataType, nullable: bool = True) -> DataType:
        factory = getattr(DataTypes, "MAP", None)
        return factory(key, value, nullable) if factory else DataType("MAP", nullable, (key, value))


# Spark's workers cannot import this test module: ship what the cases' functions reference by value.
cloudpickle = pytest.importorskip("pyspark.cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])

E = types.SimpleNamespace(col=col, lit=lit, DataTypes=_Types, Row=Row, udaf=udaf, udtaf=udtaf,
                          AggregateFunction=AggregateFunction, TableAggregateFunction=TableAggregateFunction)

# Flink refuses these in batch mode; changeflow runs them (docs/differences.md).
BEYOND_FLINK = {"batch_udaf_group_by": "udaf_two_phase", "batch_udtaf_top2": "udtaf_top2"}


def _env(spark, mode):
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    if not hasattr(t_env, "create_temporary_function"):
        # Registered through the catalog directly until the environment has the method.
        def create_temporary_function(name, function):
            t_env._catalog.functions.create(name, function.function, system=False)
        t_env.create_temporary_function = create_temporary_function  # type: ignore[attr-defined]
    return t_env


def _collect(table):
    with table.execute().collect() as rows:
        return [row_key(str(r.get_row_kind()), list(r)) for r in rows]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_flink(name, spark):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    case = CASES[name]
    t_env = _env(spark, case.mode)
    for key, value in case.config.items():
        t_env.get_config().set(key, value)
    if name in BEYOND_FLINK:
        assert "error" in golden  # Flink refuses it
        reference = json.loads((GOLDENS / f"{BEYOND_FLINK[name]}.json").read_text())
        table = case.build(t_env, E)
        ours = _collect(table)
        theirs = [row_key(kind, values) for kind, values in reference["changes"]]
        assert materialize(ours) == materialize(theirs)
        return
    if "error" in golden:
        reason = golden["error"].split(": ", 1)[1] if ": " in golden["error"] else golden["error"]
        with pytest.raises(Exception, match=reason.split(" currently")[0].rstrip(".")):
            _collect(case.build(t_env, E))
        return
    table = case.build(t_env, E)
    schema = table.get_schema()
    assert schema.get_field_names() == golden["columns"]
    assert [str(t) for t in schema.get_field_data_types()] == golden["types"]
    ours = _collect(table)
    theirs = [row_key(kind, values) for kind, values in golden["changes"]]
    assert materialize(ours) == materialize(theirs)
