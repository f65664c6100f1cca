"""Output flush interval (FLIP-365): hot keys through a chain of two aggregations, 5 s interval vs none.

Usage: .venv/bin/python benchmarks/flush_interval.py [--rows 1000000] [--keys 1000] [--seconds 60]
       [--interval "5 s"] [--out benchmarks/results/flush_interval.json]

Input: ``rows`` updates over ``keys`` keys (uniform: every key is hot), written
as one Parquet file per second for ``seconds`` seconds into a directory that a
Structured Streaming file source reads (a micro-batch takes every file present).
Each row carries the wall-clock time its file was written. Files land half-way
between whole seconds: Spark's processing-time triggers fire on multiples of
their interval, so no micro-batch races a file being written. The trigger is
the one changeflow picks (:func:`changeflow.plan.rules.buffering.micro_batch_interval_ms`)
for a source read every second that takes all its available input (this one
does; a monitored directory, one file per micro-batch, would keep its pace):
every second without an interval; with one,
once per interval, since every row reaching the sink passes a flush buffer.

Query (Table API): ``SELECT k, SUM(v) AS s, MAX(t) AS mt GROUP BY k`` feeding
``SELECT k % 10 AS g, SUM(s), MAX(mt) GROUP BY g``. Both configurations run in the
same process, one after the other, on the same input schedule:

- records emitted by the first aggregation (observed on its output stream);
- throughput, two ways: (1) input rows per second of micro-batch processing
  time in the timed run above (the sum of every micro-batch's duration, so the
  no-data batches that flush count too): how much more input the same
  machine could take at this pace; (2) capacity: the same input all present
  at the start, read ``files_per_batch`` files per micro-batch back to back
  (no trigger interval), rows per second until the sink holds the complete
  result (:func:`capacity`);
- latency from input to sink: for each input file, the time from writing it to
  the first sink output reflecting it (a row whose ``MAX(t)`` reaches the file's
  time); p50 and p99 over the files, and the difference from the unbuffered run.

The run ends when the sink's materialized result equals the expected one
(computed with pandas from the input). A warm-up query runs first, so that
neither configuration pays for the JVM's and the Python workers' first use.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import functions as F  # noqa: E402

from changeflow.kernels.changelog import KIND  # noqa: E402
from changeflow.plan.rules.buffering import micro_batch_interval_ms  # noqa: E402
from changeflow.plan.nodes import Aggregate  # noqa: E402
from changeflow.runtime.spark import session  # noqa: E402
from changeflow.runtime.spark.control_rows import CONTROL  # noqa: E402
from changeflow.plan.flush_policy import flush_policy  # noqa: E402
from changeflow.runtime.spark.streaming import StreamingTranslator  # noqa: E402
from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402
from changeflow.table.expressions import col  # noqa: E402

FIRST = "first_operator"


class ObservedTranslator(StreamingTranslator):
    """Counts the records the first aggregation emits (Spark's ``observe`` on its output)."""

    def _aggregate(self, node: Aggregate):
        out = super()._aggregate(node)
        if not any(isinstance(n, Aggregate) for n in _below(node.input)):
            out = out.observe(FIRST, F.sum((F.col(KIND) != CONTROL).cast("long")).alias("records"))
        return out


def _below(node):
    yield node
    for child in node.inputs:
        yield from _below(child)


def plan(t_env, source):
    first = t_env.from_spark(source).group_by(col("k")).select(
        col("k"), col("v").sum.alias("s"), col("t").max.alias("mt"))
    grouped = first.add_columns((col("k") % 10).alias("g"))
    return grouped.group_by(col("g")).select(col("g"), col("s").sum.alias("total"), col("mt").max.alias("newest"))


def schedule(rows: int, keys: int, seconds: int) -> list[pd.DataFrame]:
    rng = np.random.default_rng(11)
    per_file = rows // seconds
    return [pd.DataFrame({"k": rng.integers(0, keys, per_file).astype(np.int64),
                          "v": rng.integers(1, 100, per_file).astype(np.int64)}) for _ in range(seconds)]


def expected(files: list[pd.DataFrame]) -> dict[int, int]:
    data = pd.concat(files, ignore_index=True)
    per_key = data.groupby("k")["v"].sum()
    return {int(g): int(v) for g, v in per_key.groupby(per_key.index % 10).sum().items()}


SOURCE_PACE_MS = 1000  # the file source is read every second


def run(spark, t_env, files, interval: str | None, workdir: str, files_per_batch: int | None = None) -> dict:
    """One configuration; ``files_per_batch`` puts every file in place first (see :func:`capacity`)."""
    inbox = os.path.join(workdir, "inbox")
    os.makedirs(inbox)
    reader = spark.readStream.schema("k bigint, v bigint, t bigint")
    if files_per_batch:
        reader = reader.option("maxFilesPerTrigger", files_per_batch)
        for i, rows in enumerate(files):
            rows.assign(t=0).to_parquet(os.path.join(inbox, f"part-{i:05d}.parquet"))
    source = reader.parquet(inbox)
    settings = dataclasses.replace(t_env._engine().streaming_settings(), flush=None)
    if interval is not None:
        t_env.get_config().set("execution.max-flush-interval", interval)
        settings = dataclasses.replace(settings, flush=flush_policy(t_env.get_config().get_configuration()))
    query_plan = plan(t_env, source)._plan
    frame = ObservedTranslator(spark, settings, workdir).translate(query_plan)
    arrivals: list[tuple[float, pd.DataFrame]] = []
    lock = threading.Lock()

    def collect(batch, batch_id):
        pdf = batch.toPandas()
        with lock:
            arrivals.append((time.time() * 1000, pdf))

    writer = frame.writeStream.foreachBatch(collect).option("checkpointLocation", os.path.join(workdir, "cp"))
    want = expected(files)
    if files_per_batch:
        return capacity(writer, arrivals, lock, want, sum(len(f) for f in files), interval, files_per_batch)
    flush_ms = settings.flush.interval_ms if settings.flush else None
    trigger_ms = micro_batch_interval_ms(query_plan, SOURCE_PACE_MS, flush_ms)
    query = writer.trigger(processingTime=f"{trigger_ms} milliseconds").start()
    written = []
    try:
        start = float(int(time.time()) + 1) + 0.5  # half-way between two whole seconds
        for i, rows in enumerate(files):
            due = start + i
            if time.time() < due:
                time.sleep(due - time.time())
            stamp = int(time.time() * 1000)
            tmp = os.path.join(workdir, f".part-{i:05d}.parquet")
            rows.assign(t=stamp).to_parquet(tmp)
            os.rename(tmp, os.path.join(inbox, f"part-{i:05d}.parquet"))
            written.append(stamp)
        deadline = time.time() + 900
        while _materialize(arrivals, lock) != want:
            if query.exception() is not None:
                raise query.exception()
            if time.time() > deadline:
                raise RuntimeError("the query did not reach the expected result in 15 minutes")
            time.sleep(0.5)
        drained_s = time.time() - start - len(files)
        # Progress is posted after a micro-batch's sink ran: wait until it covers all input.
        total = sum(len(f) for f in files)
        while sum(p["numInputRows"] for p in query.recentProgress) < total:
            if time.time() > deadline:
                raise RuntimeError("the query's progress never covered the whole input")
            time.sleep(0.5)
        progress = list(query.recentProgress)
    finally:
        query.stop()
    busy_ms = sum(p["durationMs"].get("triggerExecution", 0) for p in progress)
    input_rows = sum(p["numInputRows"] for p in progress)
    first_records = sum(_observed(p) for p in progress)
    latencies = _latencies(written, arrivals)
    return {
        "interval": interval or "none",
        "trigger_ms": trigger_ms,
        "input_rows": int(input_rows),
        "micro_batches": len(progress),
        "first_operator_records": first_records,
        "sink_records": int(sum(len(pdf) for _, pdf in arrivals)),
        "processing_s": round(busy_ms / 1000, 2),
        "throughput_rows_per_s": round(input_rows / (busy_ms / 1000), 1) if busy_ms else None,
        "drain_after_last_file_s": round(drained_s, 1),
        "latency_ms_p50": round(float(np.percentile(latencies, 50)), 1),
        "latency_ms_p99": round(float(np.percentile(latencies, 99)), 1),
    }


CAPACITY_FILES_PER_BATCH = (5, 15)


def capacity(writer, arrivals, lock, want, rows: int, interval: str | None, files_per_batch: int) -> dict:
    """Throughput when input is not the bottleneck: every file is there from the start.

    With input arriving at a fixed rate, a pipeline that keeps up processes
    exactly that rate, so the capacity is measured apart: micro-batches of
    ``files_per_batch`` files back to back, from the query's start until the
    sink holds the complete result (including the final flush). The query's
    start (about 3 s of planning in its first micro-batch) is included.
    """
    start = time.time()
    query = writer.start()
    try:
        deadline = start + 900
        while _materialize(arrivals, lock) != want:
            if query.exception() is not None:
                raise query.exception()
            if time.time() > deadline:
                raise RuntimeError("the query did not reach the expected result in 15 minutes")
            time.sleep(0.2)
        elapsed = time.time() - start
    finally:
        query.stop()
    return {"interval": interval or "none", "input_rows": rows, "files_per_micro_batch": files_per_batch,
            "seconds_to_complete_result": round(elapsed, 2), "throughput_rows_per_s": round(rows / elapsed, 1)}


def _observed(progress: dict) -> int:
    """The first operator's records in one micro-batch (observed metrics are Rows)."""
    row = (progress.get("observedMetrics") or {}).get(FIRST)
    return int(row["records"] or 0) if row is not None else 0


def _materialize(arrivals, lock) -> dict[int, int]:
    table: dict[int, int] = {}
    with lock:
        frames = [pdf for _, pdf in arrivals if len(pdf)]
    for pdf in frames:
        for g, total, kind in zip(pdf["g"], pdf["total"], pdf[KIND], strict=True):
            if kind in (0, 2):
                table[int(g)] = int(total)
            elif kind == 3:
                table.pop(int(g), None)
    return table


def _latencies(written: list[int], arrivals) -> np.ndarray:
    """Per input file: ms from writing it to the first sink output whose newest input time reaches it."""
    reached = []  # (arrival ms, newest input time reflected so far)
    newest = -1
    for at, pdf in sorted(arrivals, key=lambda a: a[0]):
        live = pdf[pdf[KIND].isin([0, 2])] if len(pdf) else pdf
        if len(live):
            newest = max(newest, int(live["newest"].max()))
        reached.append((at, newest))
    out = []
    for stamp in written:
        first = next((at for at, seen in reached if seen >= stamp), None)
        if first is not None:
            out.append(first - stamp)
    return np.asarray(out, dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--interval", default="5 s")
    parser.add_argument("--machine", default="2 cores, quiet", help="how loaded the machine was, for the record")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "flush_interval.json"))
    args = parser.parse_args()

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "4")
    # Flushes on idle input need micro-batches without data (runtime/spark/flush.py).
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "100000")
    files = schedule(args.rows, args.keys, args.seconds)
    results = {}
    runs = [("warm_up", None, len(files))] + [
        (f"{'buffered' if interval else 'unbuffered'}{f'_capacity_{n}' if n else ''}", interval, n)
        for n in (None, *CAPACITY_FILES_PER_BATCH) for interval in (None, args.interval)]
    for name, interval, files_per_batch in runs:
        workdir = tempfile.mkdtemp(prefix="changeflow-flush-bench-")
        try:
            results[name] = run(spark, t_env, files, interval, workdir, files_per_batch)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        print(json.dumps(results[name]), flush=True)
    plain, buffered = results["unbuffered"], results["buffered"]
    interval_s = float(args.interval.split()[0]) if args.interval.split()[-1] in ("s", "sec") else None
    updates_per_key_interval = (args.rows / args.keys) / args.seconds * interval_s if interval_s else None
    results["comparison"] = {
        "first_operator_records_ratio":
            round(plain["first_operator_records"] / max(1, buffered["first_operator_records"]), 1),
        "target_ratio": round(0.9 * updates_per_key_interval, 1) if updates_per_key_interval else None,
        "busy_time_throughput_ratio": round(buffered["throughput_rows_per_s"] / plain["throughput_rows_per_s"], 2),
        **{f"capacity_throughput_ratio_{n}_files_per_batch": round(
            results[f"buffered_capacity_{n}"]["throughput_rows_per_s"]
            / results[f"unbuffered_capacity_{n}"]["throughput_rows_per_s"], 2) for n in CAPACITY_FILES_PER_BATCH},
        "added_latency_ms_p50": round(buffered["latency_ms_p50"] - plain["latency_ms_p50"], 1),
        "added_latency_ms_p99": round(buffered["latency_ms_p99"] - plain["latency_ms_p99"], 1),
        "config": {"rows": args.rows, "keys": args.keys, "seconds": args.seconds, "interval": args.interval,
                   "buckets": 4, "source_pace_ms": SOURCE_PACE_MS, "machine": args.machine},
    }
    print(json.dumps(results["comparison"], indent=2))
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
