"""A Python aggregate function (udaf) against the built-in SUM, same data, same run.

Usage: .venv/bin/python benchmarks/udaf.py [--rows 2000000] [--keys 100000]

``rows`` rows over ``keys`` keys in 2 Parquet files; per key SUM(value) and COUNT(value),
once with the built-in SUM and once with a sum written as an AggregateFunction (with
retract and merge). Streaming (mini-batch, one micro-batch per file; the steady figure is
the second batch) and batch mode. Each figure is a ratio udaf / built-in of the same run.
Results go to benchmarks/results/udaf.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.common import DataTypes  # noqa: E402
from changeflow.functions import AggregateFunction  # noqa: E402
from changeflow.runtime.spark import session  # noqa: E402
from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402
from changeflow.table.expressions import col  # noqa: E402
from changeflow.table.udf import udaf  # noqa: E402


class PySum(AggregateFunction):
    """SUM as a udaf: [sum, non-null count]."""

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


def write_files(directory: str, rows: int, keys: int, files: int = 2) -> None:
    rng = np.random.default_rng(7)
    for i in range(files):
        table = pa.table({"key": rng.integers(0, keys, rows // files, dtype=np.int64),
                          "value": rng.integers(0, 1000, rows // files, dtype=np.int64)})
        path = os.path.join(directory, f"part-{i}.parquet")
        pq.write_table(table, path)
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))


def query(t_env, source, python: bool):
    total = udaf(PySum(), result_type=DataTypes.BIGINT(), name="py_sum")(col("value")) if python \
        else col("value").sum
    return source.group_by(col("key")).select(col("key"), total.alias("s"), col("value").count.alias("c"))


def streaming(spark, data: str, workdir: str, python: bool, rows: int) -> list[float]:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("table.exec.mini-batch.enabled", "true")
    t_env.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
    t_env.get_config().set("table.exec.mini-batch.size", str(rows))
    stream = spark.readStream.schema("key long, value long").option("maxFilesPerTrigger", 1).parquet(data)
    frame = query(t_env, t_env.from_spark(stream), python).to_spark()
    checkpoint = os.path.join(workdir, f"ck-{python}")
    q = (frame.writeStream.format("noop").outputMode("append").option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
    q.awaitTermination()
    return [p["durationMs"]["triggerExecution"] / 1000 for p in q.recentProgress if p.get("numInputRows", 0) > 0]


def batch(spark, data: str, python: bool) -> float:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    frame = query(t_env, t_env.from_spark(spark.read.parquet(data)), python).to_spark()
    start = time.perf_counter()
    frame.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    args = parser.parse_args()
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    workdir = tempfile.mkdtemp(prefix="udaf-bench-")
    data = os.path.join(workdir, "data")
    os.makedirs(data)
    write_files(data, args.rows, args.keys)
    report: dict = {"rows": args.rows, "keys": args.keys, "files": 2, "cores": os.cpu_count(),
                    "load_average": os.getloadavg()[0]}
    for python in (False, True):
        name = "udaf" if python else "builtin"
        times = streaming(spark, data, workdir, python, args.rows)
        report[f"streaming_{name}_batch_s"] = [round(t, 2) for t in times]
        report[f"batch_{name}_s"] = round(batch(spark, data, python), 2)
    report["ratio_streaming_steady"] = round(report["streaming_udaf_batch_s"][-1] /
                                             report["streaming_builtin_batch_s"][-1], 2)
    report["ratio_batch"] = round(report["batch_udaf_s"] / report["batch_builtin_s"], 2)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "udaf.json")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
