"""DESIGN.md's invariant for Python aggregate functions on Spark: streaming, materialized, equals batch.

Random rows go through a group aggregation whose output (updates) feeds a second
level, so the udaf there (with retract) and the table aggregate (top 2) receive
retractions. Per row, with mini-batch, and two-phase (mini-batch + TWO_PHASE: the
first level's udaf has merge, so it is split into local and global phases).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from changeflow.common import DataTypes, Row
from changeflow.functions import AggregateFunction, TableAggregateFunction
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col
from changeflow.table.udf import udaf, udtaf
from changeflow.testing import materialize_table

pytestmark = pytest.mark.spark

cloudpickle = pytest.importorskip("pyspark.cloudpickle")
cloudpickle.register_pickle_by_value(__import__(__name__))  # Spark's workers cannot import this module

SCHEMA = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.BIGINT()), DataTypes.FIELD("v", DataTypes.BIGINT())])
rows = st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(-20, 20))), min_size=1, max_size=30)


class PySum(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]

    def accumulate(self, acc, value):
        if value is not None:
            acc[0] += value
            acc[1] += 1

    def retract(self, acc, value):
        if value is not None:
            acc[0] -= value
            acc[1] -= 1

    def merge(self, acc, others):
        for other in others:
            acc[0] += other[0]
            acc[1] += other[1]

    def get_value(self, acc):
        return acc[0] if acc[1] else None


class Top2(TableAggregateFunction):
    def create_accumulator(self):
        return {}

    def accumulate(self, acc, value):
        if value is not None:
            acc[value] = acc.get(value, 0) + 1

    def retract(self, acc, value):
        if value is not None:
            acc[value] -= 1
            if not acc[value]:
                del acc[value]

    def emit_value(self, acc):
        values = sorted((v for v, n in acc.items() for _ in range(n)), reverse=True)
        for rank, v in enumerate(values[:2], start=1):
            yield Row(v, rank)


my_sum = udaf(PySum(), result_type=DataTypes.BIGINT(), name="my_sum")
top2 = udtaf(Top2(), result_type=DataTypes.ROW([DataTypes.FIELD("t", DataTypes.BIGINT()),
                                                DataTypes.FIELD("r", DataTypes.BIGINT())]), name="top2")


def inner(t_env, data):
    src = t_env.from_elements(data, SCHEMA)
    return src.group_by(col("k")).select(col("k"), my_sum(col("v")).alias("s"), col("v").count.alias("c")) \
        .add_columns((col("k") % 2).alias("b"))


def aggregate_query(t_env, data):
    return inner(t_env, data).group_by(col("b")).select(col("b"), my_sum(col("s")).alias("ss"),
                                                        col("c").sum0.alias("cc"))


def table_aggregate_query(t_env, data):
    return inner(t_env, data).group_by(col("b")).flat_aggregate(top2(col("s"))).select(col("b"), col("t"), col("r"))


# At most three micro-batches of up to 30 rows (state carried from one to the next): a streaming test costs its
# stateful operators times its micro-batches; bundles of 4-5 rows made up to eight of them.
CONFIGS = {
    "per-row": {"changeflow.source.rows-per-batch": "10"},
    "mini-batch": {"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": "1 s",
                   "table.exec.mini-batch.size": "10"},
    "two-phase": {"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": "1 s",
                  "table.exec.mini-batch.size": "10", "table.optimizer.agg-phase-strategy": "TWO_PHASE"},
}


def envs(spark, config):
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    stream.get_config().set("changeflow.state.buckets", "2")
    for key, value in config.items():
        stream.get_config().set(key, value)
    return stream, TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows)
def test_udaf_streaming_materializes_to_batch(spark, data, config):
    stream, batch = envs(spark, CONFIGS[config])
    assert materialize_table(aggregate_query(stream, data)) == materialize_table(aggregate_query(batch, data))


@pytest.mark.parametrize("config", ["per-row", "mini-batch"])
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows)
def test_udtaf_streaming_materializes_to_batch(spark, data, config):
    stream, batch = envs(spark, CONFIGS[config])
    assert materialize_table(table_aggregate_query(stream, data)) == \
        materialize_table(table_aggregate_query(batch, data))


def test_two_phase_splits_a_udaf_with_merge(spark):
    stream, _ = envs(spark, CONFIGS["two-phase"])
    plan = aggregate_query(stream, [(1, 2)]).explain()
    assert "LocalGroupAggregate" in plan and "my_sum(v)" in plan, plan
