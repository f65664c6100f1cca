"""Deduplication and Top-N on Spark: the streaming changelog, materialized, equals batch mode.

The nodes are built directly on a Table's plan (``table._plan``), as the SQL
planner builds them from ``ROW_NUMBER() OVER (...)`` queries. One streaming job per
mode for the four queries (tagged), one batch job per query; small data in several
micro-batches (two, so state carries over) and, for Top-N, a retracting input made by a
GROUP BY below it.
"""

from __future__ import annotations

import pytest

from changeflow.common import DataTypes
from changeflow.plan.nodes import Deduplicate, Rank
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col
from changeflow.table.table import Table
from changeflow.testing import materialize_table

pytestmark = pytest.mark.spark

SCHEMA = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.BIGINT()), DataTypes.FIELD("item", DataTypes.STRING()),
                        DataTypes.FIELD("x", DataTypes.BIGINT())])
DATA = [(1, "p", 5), (1, "q", 3), (2, "p", 2), (1, "r", 4), (1, "s", None), (1, "q", 4), (2, "q", 7),
        (1, "p", -4), (1, "t", 6), (2, "p", 1), (1, "r", -4), (1, "s", 9), (2, "r", 2), (1, "t", -6)]


def queries(t_env):
    src = t_env.from_elements(DATA, SCHEMA)
    sums = src.group_by(col("k"), col("item")).select(col("k"), col("item"), col("x").sum.alias("total"))
    total_type = dict(sums._plan.schema)["total"]
    rank_schema = sums._plan.schema + (("rn", DataTypes.BIGINT().with_nullable(False)),)
    return {
        "dedup_keep_last": Table(Deduplicate(src._plan, ("k",), keep_last=True), t_env),
        "dedup_keep_first": Table(Deduplicate(src._plan, ("item",), keep_last=False), t_env),
        "top2_over_retracting_input": Table(
            Rank(sums._plan, ("k",), (("total", False, False),), 1, 2, "rn", rank_schema), t_env),
        "ranks_2_to_3_insert_only": Table(
            Rank(src._plan, ("k",), (("x", True, True),), 2, 3, None, src._plan.schema), t_env),
    }, total_type




def tagged_union(tables: dict, total_type):
    """The streaming queries as cases of one query: each row tagged with its query's name, in the columns
    (q, k, item, v, rn) every query fits (v: x or total; rn: the row number or NULL)."""
    from changeflow.table.expressions import lit

    union = None
    for name, table in tables.items():
        columns = table._plan.field_names
        value = col("total") if "total" in columns else col("x")
        rn = col("rn") if "rn" in columns else lit(None, DataTypes.BIGINT())
        tagged = table.select(lit(name).alias("q"), col("k"), col("item"), value.cast(total_type).alias("v"),
                              rn.cast(DataTypes.BIGINT()).alias("rn"))
        union = tagged if union is None else union.union_all(tagged)
    return union


@pytest.mark.parametrize("mini_batch", [False, True], ids=["per-row", "mini-batch"])
def test_streaming_materializes_to_batch(spark, mini_batch):
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    stream.get_config().set("changeflow.state.buckets", "2")
    stream.get_config().set("changeflow.source.rows-per-batch", "7")  # two micro-batches
    if mini_batch:
        stream.get_config().set("table.exec.mini-batch.enabled", "true")
        stream.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
        stream.get_config().set("table.exec.mini-batch.size", "7")
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    streaming_queries, total_type = queries(stream)
    batch_queries, _ = queries(batch)
    expected = {
        "dedup_keep_last": [(1, "t", -6), (2, "r", 2)],
        "dedup_keep_first": [(1, "p", 5), (1, "q", 3), (1, "r", 4), (1, "s", None), (1, "t", 6)],
    }
    # The four queries are independent operators over the same rows: one streaming query runs them all
    # (one query start instead of four), each tagged with its name.
    streamed = materialize_table(tagged_union(streaming_queries, total_type))
    for name in streaming_queries:
        batch_result = materialize_table(batch_queries[name])
        ours = [r[1:] if "rn" in batch_queries[name]._plan.field_names else r[1:4] for r in streamed if r[0] == name]
        assert sorted(ours, key=repr) == sorted(map(tuple, batch_result), key=repr), name
        if name in expected:
            assert sorted(map(tuple, batch_result), key=repr) == sorted(expected[name], key=repr), name
