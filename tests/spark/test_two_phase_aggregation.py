"""End to end: the two-phase (local/global) plan emits the one-phase changelog exactly."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit

pytestmark = pytest.mark.spark


def changelog(spark, directory, strategy):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    for key, value in {"changeflow.state.buckets": "2", "table.exec.mini-batch.enabled": "true",
                       "table.exec.mini-batch.allow-latency": "1 s", "table.exec.mini-batch.size": "1000",
                       "table.optimizer.agg-phase-strategy": strategy}.items():
        t_env.get_config().set(key, value)
    stream = spark.readStream.schema("k long, v long, s string").option("maxFilesPerTrigger", 1).parquet(directory)
    table = t_env.from_spark(stream).group_by(col("k")).select(
        col("k"), col("v").sum.alias("total"), lit(1).count.alias("n"), col("v").avg.alias("mean"),
        col("s").min.alias("first_s"), col("v").max.alias("top"))
    with table.execute().collect() as rows:
        return table.explain(), [(str(r.get_row_kind()), tuple(r)) for r in rows]


def test_two_phase_plan_emits_the_one_phase_changelog(spark, tmp_path):
    # Two files, one micro-batch each. Row groups of three rows and small splits give
    # each micro-batch several partitions, so a key's partials come from several of them.
    for i, count in enumerate((12, 9)):
        rows = range(i * 100, i * 100 + count)
        pq.write_table(pa.table({
            "k": pa.array([r % 4 if r % 7 else None for r in rows], pa.int64()),
            "v": pa.array([r * 37 % 11 if r % 5 else None for r in rows], pa.int64()),
            "s": pa.array([f"s{r % 3}" for r in rows], pa.string()),
        }), str(tmp_path / f"part-{i}.parquet"), row_group_size=3)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "400")
    try:
        two_plan, two = changelog(spark, str(tmp_path), "TWO_PHASE")
        one_plan, one = changelog(spark, str(tmp_path), "ONE_PHASE")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert "LocalGroupAggregate" in two_plan and "LocalGroupAggregate" not in one_plan
    assert {kind for kind, _ in two} == {"+I", "-U", "+U"}
    assert two == one
