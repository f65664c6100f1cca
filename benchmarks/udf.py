"""Scalar Python UDFs: changeflow's against the same function as Spark's own ``pandas_udf``.

Usage: .venv/bin/python benchmarks/udf.py [--rows 4000000] [--repeats 3]
       [--out benchmarks/results/udf.json]

Input: ``rows`` rows ``(a BIGINT, b DOUBLE)`` from ``spark.range``, cached and counted
first so every timed job reads the same in-memory rows. Each timed job computes one
expression over every row and sums it on Spark (``SUM(result)``, checked equal across
the variants), so the UDF runs over every row and nothing else differs:

- ``changeflow general``: ``udf(lambda a, b: a * 2 + b, result_type=DOUBLE)``, called per
  row inside each Arrow batch (``t_env.from_spark(...).select(f(...)).to_spark()``, batch mode);
- ``spark pandas_udf, same row function``: Spark's ``pandas_udf`` (Series in, Series out)
  calling the same lambda per row over the batch's values: the baseline for the general UDF;
- ``changeflow pandas``: ``udf(lambda a, b: a * 2 + b, func_type="pandas")``;
- ``spark pandas_udf, vectorised``: Spark's ``pandas_udf`` of the same lambda over Series:
  the baseline for the pandas UDF;
- ``spark builtin``: the expression in Spark's JVM (no Python), for scale.

Each figure is the median of ``repeats`` runs after one warm-up run of each variant
(Python workers started). Ratios are against the baseline of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pandas as pd  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.functions import pandas_udf  # noqa: E402

from changeflow.runtime.spark import session  # noqa: E402
from changeflow.table import DataTypes, EnvironmentSettings, TableEnvironment  # noqa: E402
from changeflow.table.expressions import col  # noqa: E402
from changeflow.table.udf import udf  # noqa: E402


def row_function(a, b):
    return a * 2 + b


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "udf.json"))
    args = parser.parse_args()

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    data = spark.range(args.rows, numPartitions=2).select(
        F.col("id").alias("a"), ((F.col("id") % 1000) / 10.0).alias("b")).cache()
    data.count()
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    table = t_env.from_spark(data)

    general = udf(row_function, result_type=DataTypes.DOUBLE())
    vectorised = udf(row_function, result_type=DataTypes.DOUBLE(), func_type="pandas")

    @pandas_udf("double")  # type: ignore[call-overload]
    def spark_rows(a: pd.Series, b: pd.Series) -> pd.Series:
        return pd.Series([row_function(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)])

    @pandas_udf("double")  # type: ignore[call-overload]
    def spark_vectorised(a: pd.Series, b: pd.Series) -> pd.Series:
        return row_function(a, b)

    variants = {
        "changeflow general": lambda: table.select(general(col("a"), col("b")).alias("r")).to_spark(),
        "spark pandas_udf, same row function": lambda: data.select(spark_rows("a", "b").alias("r")),
        "changeflow pandas": lambda: table.select(vectorised(col("a"), col("b")).alias("r")).to_spark(),
        "spark pandas_udf, vectorised": lambda: data.select(spark_vectorised("a", "b").alias("r")),
        "spark builtin": lambda: data.select((F.col("a") * 2 + F.col("b")).alias("r")),
    }
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    sums: dict[str, float] = {}
    for run in range(args.repeats + 1):
        for name, frame in variants.items():
            start = time.perf_counter()
            total = frame().agg(F.sum("r")).collect()[0][0]
            elapsed = time.perf_counter() - start
            sums[name] = total
            if run > 0:  # run 0 warms up the Python workers
                seconds[name].append(elapsed)
            print(f"run {run} {name}: {elapsed:.2f} s", flush=True)
    assert len({round(v, 3) for v in sums.values()}) == 1, sums
    median = {name: statistics.median(v) for name, v in seconds.items()}
    result = {
        "rows": args.rows, "repeats": args.repeats, "cores": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "median_seconds": median, "runs": seconds,
        "ratios": {
            "changeflow general / spark pandas_udf same row function":
                median["changeflow general"] / median["spark pandas_udf, same row function"],
            "changeflow pandas / spark pandas_udf vectorised":
                median["changeflow pandas"] / median["spark pandas_udf, vectorised"],
        },
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
