"""Spark interop: tables from pandas and Spark DataFrames, views, and results as DataFrames."""

from __future__ import annotations

import pandas as pd
import pytest

from changeflow.table.expressions import col

pytestmark = pytest.mark.spark


def test_from_pandas_view_and_to_spark_in_batch_mode(batch_env):
    pdf = pd.DataFrame({"k": ["a", "b", "a"], "v": [1, 2, 3]})
    batch_env.create_temporary_view("src", batch_env.from_pandas(pdf))
    result = batch_env.from_path("src").group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    rows = sorted(tuple(r) for r in result.to_spark().collect())
    assert rows == [("a", 4), ("b", 2)]


def test_from_spark_and_to_spark_stream_of_changes(stream_env, spark, tmp_path):
    df = spark.createDataFrame([(1, 10), (1, 5), (2, 7)], "k long, v long")
    table = stream_env.from_spark(df).group_by(col("k")).select(col("k"), col("v").max.alias("m"))
    changes = []
    query = (table.to_spark().writeStream
             .foreachBatch(lambda batch, _: changes.extend(
                 (r["op"], r["k"], r["m"]) for r in batch.orderBy("_seq", "_sub").collect()))
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start())
    query.awaitTermination()
    # MAX of k=1 stays 10 when 5 arrives: an unchanged row emits nothing.
    assert changes == [("+I", 1, 10), ("+I", 2, 7)]
