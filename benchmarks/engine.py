"""Engine benchmarks: keyed aggregation vs Spark's own, and mini-batch on the daily-UV query.

Usage: .venv/bin/python benchmarks/engine.py [--rows 16000000] [--keys 400000] [--uv-rows 10000000]

1. Keyed aggregation: ``rows`` rows in 4 Parquet files over ``keys`` distinct keys,
   SUM and COUNT per key, streaming with one micro-batch per file. Baseline: Spark's
   own streaming aggregation (update mode) over the same files in the same run. The
   figure is the steady per-batch time (the mean of every batch but the first, which
   includes query start-up).
2. Daily UV (the mini-batch seed's two-level query) over ``uv-rows`` rows: mini-batch
   on vs off, rows/s and records emitted by the query.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import functions as F  # noqa: E402

from changeflow.runtime.spark import session  # noqa: E402
from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402
from changeflow.table.expressions import col  # noqa: E402


def write_keyed_files(directory: str, rows: int, keys: int, files: int = 4) -> None:
    rng = np.random.default_rng(7)
    per_file = rows // files
    for i in range(files):
        table = pa.table({"key": rng.integers(0, keys, per_file, dtype=np.int64),
                          "value": rng.integers(0, 1000, per_file, dtype=np.int64)})
        path = os.path.join(directory, f"part-{i}.parquet")
        pq.write_table(table, path)
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))


def batch_times(query) -> list[float]:
    return [p["durationMs"]["triggerExecution"] / 1000 for p in query.recentProgress
            if p.get("numInputRows", 0) > 0]


def run_to_end(frame, checkpoint: str, mode: str) -> list[float]:
    query = (frame.writeStream.format("noop").outputMode(mode)
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    query.awaitTermination()
    return batch_times(query)


def keyed_aggregation(spark, workdir: str, rows: int, keys: int) -> dict:
    data = os.path.join(workdir, "keyed")
    os.makedirs(data)
    write_keyed_files(data, rows, keys)
    stream = spark.readStream.schema("key long, value long").option("maxFilesPerTrigger", 1).parquet(data)

    spark_times = run_to_end(stream.groupBy("key").agg(F.sum("value"), F.count("value")),
                             os.path.join(workdir, "ck-spark"), "update")

    steady = lambda times: sum(times[1:]) / max(1, len(times) - 1)  # noqa: E731
    report = {"rows": rows, "keys": keys, "files": 4,
              "spark_batch_s": [round(t, 2) for t in spark_times],
              "spark_steady_s": round(steady(spark_times), 2)}
    # Mini-batch on is the like-for-like comparison: like Spark's update mode it emits
    # one change per updated key per micro-batch. Off, it emits -U/+U for every row.
    for mini_batch in (True, False):
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
        if mini_batch:
            t_env.get_config().set("table.exec.mini-batch.enabled", "true")
            t_env.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
            t_env.get_config().set("table.exec.mini-batch.size", str(rows))
        table = t_env.from_spark(stream).group_by(col("key")).select(
            col("key"), col("value").sum.alias("s"), col("value").count.alias("c"))
        name = "mini_batch" if mini_batch else "per_row"
        ours = run_to_end(table.to_spark(), os.path.join(workdir, f"ck-{name}"), "append")
        report[f"changeflow_{name}_batch_s"] = [round(t, 2) for t in ours]
        report[f"changeflow_{name}_steady_s"] = round(steady(ours), 2)
        report[f"ratio_{name}"] = round(steady(ours) / steady(spark_times), 2)
    return report


def daily_uv(spark, rows: int) -> dict:
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"user_id": rng.integers(0, 1_000_000, rows, dtype=np.int64),
                          "day": rng.choice([f"2023-12-{d:02d}" for d in range(1, 11)], rows)})
    results = {}
    for mini_batch in (False, True):
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
        t_env.get_config().set("changeflow.source.rows-per-batch", "1000000")
        if mini_batch:
            t_env.get_config().set("table.exec.mini-batch.enabled", "true")
            t_env.get_config().set("table.exec.mini-batch.allow-latency", "5 s")
            t_env.get_config().set("table.exec.mini-batch.size", "1000000")
        src = t_env.from_pandas(frame)
        inner = (src.add_columns((col("user_id") % 10).alias("b")).group_by(col("day"), col("b"))
                 .select(col("day"), col("b"), col("user_id").count.distinct.alias("cnt")))
        result = inner.group_by(col("day")).select(col("day"), col("cnt").sum.alias("total"))
        emitted = []
        checkpoint = tempfile.mkdtemp(prefix="uv-ck-")
        start = time.perf_counter()
        query = (result.to_spark().writeStream
                 .foreachBatch(lambda df, _, emitted=emitted: emitted.append(df.count()))
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        query.awaitTermination()
        elapsed = time.perf_counter() - start
        shutil.rmtree(checkpoint, ignore_errors=True)
        results["on" if mini_batch else "off"] = {
            "seconds": round(elapsed, 1), "rows_per_s": round(rows / elapsed),
            "records_emitted": int(sum(emitted))}
    results["rows"] = rows
    results["speedup"] = round(results["off"]["seconds"] / results["on"]["seconds"], 2)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=16_000_000)
    parser.add_argument("--keys", type=int, default=400_000)
    parser.add_argument("--uv-rows", type=int, default=10_000_000)
    parser.add_argument("--skip", choices=["keyed", "uv"], action="append", default=[])
    args = parser.parse_args()
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2",
                                               "spark.driver.memory": "8g"})
    workdir = tempfile.mkdtemp(prefix="changeflow-bench-")
    try:
        report = {}
        if "keyed" not in args.skip:
            report["keyed_aggregation"] = keyed_aggregation(spark, workdir, args.rows, args.keys)
            print(json.dumps(report["keyed_aggregation"]), flush=True)
        if "uv" not in args.skip:
            report["daily_uv"] = daily_uv(spark, args.uv_rows)
            print(json.dumps(report["daily_uv"]), flush=True)
        # Keep the figures of the parts not rerun (--skip), replace the others.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "engine.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        previous = {}
        if os.path.exists(path):
            with open(path) as f:
                previous = json.load(f)
        with open(path, "w") as f:
            json.dump({**previous, **report}, f, indent=1)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
