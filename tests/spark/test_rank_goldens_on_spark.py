"""One Flink 2.3 Top-N golden replayed end to end on Spark Structured Streaming, exactly.

``topn_retract_rownum`` is a GROUP BY (the retracting input) below a Top-2 with
the row number: two chained stateful operators, and input rows that emit up to
four changes each. The collected changelog must equal Flink's in order, which
checks that the kernels' ``(_seq, _sub)`` stamps survive Spark's shuffles.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from changeflow.common import DataTypes
from changeflow.plan.nodes import Rank
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col
from changeflow.table.table import Table

pytestmark = pytest.mark.spark

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "ranks" / "topn_retract_rownum.json"
TYPES = {"STRING": DataTypes.STRING(), "INT": DataTypes.INT()}


def test_top_n_over_retracting_input_matches_flink_exactly(spark):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    op = golden["operator"]
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", "4")
    fields = [part.split() for part in golden["input"]["schema"].split(",")]
    schema = DataTypes.ROW([DataTypes.FIELD(name, TYPES[t]) for name, t in fields])
    src = t_env.from_elements([tuple(r) for r in golden["input"]["rows"]], schema)
    agg = op["aggregate"]
    sums = src.group_by(*[col(k) for k in agg["keys"]]).select(
        *[col(k) for k in agg["keys"]], col(agg["sum"]).sum.alias(agg["as"]))
    out_schema = sums._plan.schema + ((op["rank_column"], DataTypes.BIGINT().with_nullable(False)),)
    node = Rank(sums._plan, tuple(op["partition"]), tuple(tuple(o) for o in op["order"]), op["start"], op["end"],
                op["rank_column"], out_schema)
    with Table(node, t_env).execute().collect() as changes:
        actual = [[str(r.get_row_kind()), list(r)] for r in changes]
    assert actual == golden["changes"]
