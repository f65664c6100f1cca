"""Regular joins on Spark: the streaming changelog, materialized, equals the batch result.

Both inputs are group aggregations, so the join sees -U/+U (and the key's rows move)
on both sides. Every join type runs in streaming (two sources of several micro-batches each; the four
join types as cases of one query, tagged) and as a batch query over the same data.
"""

from __future__ import annotations

import pytest

from changeflow.common import DataTypes, Row
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit
from changeflow.testing import materialize_table

# One test process runs the module (--dist loadgroup): its fixture's streaming query runs once.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("join_spark")]

LEFT_SCHEMA = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.INT()), DataTypes.FIELD("v", DataTypes.BIGINT())])
RIGHT_SCHEMA = DataTypes.ROW([DataTypes.FIELD("rk", DataTypes.BIGINT()), DataTypes.FIELD("w", DataTypes.STRING())])
LEFT = [(1, 10), (2, 20), (1, 5), (3, 7), (None, 4), (2, -20), (4, 1), (3, 8), (1, 1)]
RIGHT = [(1, "a"), (3, "c"), (5, "e"), (1, "b"), (None, "n"), (3, "d"), (2, "x")]


def query(t_env, join_type):
    left = t_env.from_elements(LEFT, LEFT_SCHEMA).group_by(col("k")).select(
        col("k"), col("v").sum.alias("s"), col("v").count.alias("n"))
    right = t_env.from_elements(RIGHT, RIGHT_SCHEMA).group_by(col("rk")).select(
        col("rk"), col("w").max.alias("w"), col("w").count.alias("m"))
    predicate = (col("k") == col("rk")) & (col("s") > col("m"))
    if join_type == "INNER":
        return left.join(right, predicate)
    if join_type == "LEFT":
        return left.left_outer_join(right, predicate)
    if join_type == "RIGHT":
        return left.right_outer_join(right, predicate)
    return left.full_outer_join(right, predicate)




JOIN_TYPES = ("INNER", "LEFT", "RIGHT", "FULL")


@pytest.fixture(scope="module")
def streamed(spark):
    """Every join type's streaming changelog, materialized: one streaming query for all four.

    The four joins (each over its own two sources and aggregations, tagged with its
    join type) are independent operators, so the union runs each one as its own query
    would; one query start instead of four.
    """
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    stream.get_config().set("changeflow.state.buckets", "2")
    stream.get_config().set("changeflow.source.rows-per-batch", "5")  # two micro-batches a source
    tagged = [query(stream, join_type).select(lit(join_type).alias("join_type"), col("*"))
              for join_type in JOIN_TYPES]
    union = tagged[0]
    for table in tagged[1:]:
        union = union.union_all(table)
    rows = materialize_table(union)
    return {join_type: sorted((Row(*r[1:]) for r in rows if r[0] == join_type), key=repr)
            for join_type in JOIN_TYPES}


@pytest.mark.parametrize("join_type", JOIN_TYPES)
def test_streaming_join_materializes_to_the_batch_result(spark, streamed, join_type):
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    expected = materialize_table(query(batch, join_type))
    assert expected  # the case has rows in every join type
    assert sorted(expected, key=repr) == streamed[join_type]


def test_mini_batch_streaming_join_materializes_to_the_batch_result(spark):
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    stream.get_config().set("changeflow.state.buckets", "2")
    stream.get_config().set("table.exec.mini-batch.enabled", "true")
    stream.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
    stream.get_config().set("table.exec.mini-batch.size", "5")
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    assert materialize_table(query(stream, "FULL")) == materialize_table(query(batch, "FULL"))


def test_batch_join_rows(batch_env):
    # Batch mode is Spark's own join: check the rows themselves once (NULL keys never match).
    rows = sorted((tuple(r) for r in query(batch_env, "FULL").execute().collect()), key=repr)
    assert rows == sorted([
        (1, 16, 3, 1, "b", 2), (2, 0, 2, None, None, None), (3, 15, 2, 3, "d", 2), (4, 1, 1, None, None, None),
        (None, 4, 1, None, None, None), (None, None, None, 5, "e", 1), (None, None, None, None, "n", 1),
        (None, None, None, 2, "x", 1),
    ], key=repr)
