"""Table.cache() in batch mode (beyond PyFlink): reuse across jobs, invalidate_cache, close; streaming refuses."""

import os
import uuid

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col

N = 40


def counted_frame(spark, directory):
    """A Spark DataFrame of (k, v) whose rows each leave a file in ``directory`` when computed."""
    def produce(frames):
        for f in frames:
            for _ in range(len(f)):
                open(os.path.join(directory, uuid.uuid4().hex), "w").close()
            yield f.assign(k=f["id"] % 4, v=f["id"] * 10)[["k", "v"]]

    return spark.range(N).mapInPandas(produce, "k long, v long")


def test_cached_table_is_computed_once_then_read(spark, tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    calls = lambda: len(os.listdir(tmp_path))  # noqa: E731
    cached = t_env.from_spark(counted_frame(spark, str(tmp_path))).where(col("v") >= 100).cache()
    assert calls() == 0  # lazy: cache() computes nothing

    def totals():
        with cached.group_by(col("k")).select(col("k"), col("v").sum.alias("s")).execute().collect() as rows:
            return sorted(tuple(r) for r in rows)

    expected = sorted((k, sum(10 * x for x in range(10, N) if x % 4 == k)) for k in range(4))
    assert totals() == expected and calls() == N
    assert totals() == expected and calls() == N  # the second job reads the cache
    cached.invalidate_cache()
    assert totals() == expected and calls() == 2 * N  # recomputed and cached again
    assert totals() == expected and calls() == 2 * N
    t_env.close()
    assert totals() == expected and calls() == 3 * N  # released: recomputed, not cached


def test_streaming_table_cache_is_refused():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    table = t_env.from_elements([(1, "a")], ["id", "s"])
    with pytest.raises(RuntimeError, match=r"Table.cache\(\) is supported in batch mode only"):
        table.cache()
