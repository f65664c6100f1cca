"""Sink upsert materializer end to end on Spark Structured Streaming (FLIP-558's benchmark shape).

Usage: python benchmarks/materializer_spark.py [--records 10000] [--batch 1000] [--delays 1,10,...]

The workload of ``benchmarks/materializer_kernel.py`` (``records`` changes under
one primary key, payload 250 bytes, each insert from ``delay`` on followed by
the retraction of the row inserted ``delay`` records earlier, with and without
an upsert key, every strategy) is written as a changelog stream of one Parquet
file per ``batch`` records and materialized by a streaming query (the
runtime's ``UpsertMaterialize`` translation, RocksDB state store, ``local[2]``).

Figures per configuration:

- ``ops_per_ms``: records / the sum of the micro-batches' ``triggerExecution``
  durations (Spark's query progress), i.e. excluding the query's start-up;
- ``operator_ms``: time inside the operator's Python worker (the kernel with
  its state reads and writes), summed over micro-batches, measured by a
  timing wrapper around the kernel; the rest of ``batches_ms`` is Spark's
  per-micro-batch overhead (planning, two stages, shuffle, state store commit);
- the baseline, measured in the same run: a query that reads the same stream
  and passes it through a stateless projection (Spark's cost of the
  micro-batches themselves, no state).

Results go to ``benchmarks/results/materializer_spark.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from materializer_kernel import DELAYS, workload  # noqa: E402

from changeflow.common import DataTypes  # noqa: E402
from changeflow.kernels.changelog import KIND, SEQ, SUB  # noqa: E402
from changeflow.kernels.materializer import STRATEGIES  # noqa: E402
from changeflow.plan.nodes import Source, UpsertMaterialize  # noqa: E402

SCHEMA = (("id", DataTypes.BIGINT()), ("uk", DataTypes.BIGINT()), ("payload", DataTypes.STRING()))


class TimedKernel:
    """Wraps a kernel: appends each call's seconds (kernel, state reads and the state commit) to ``log``.

    It commits the state itself so that the page writes are timed too; the
    processor's own commit then finds nothing left to write.
    """

    def __init__(self, kernel, log: str) -> None:
        self.kernel = kernel
        self.log = log

    def process(self, batch, state):
        start = time.perf_counter()
        out = self.kernel.process(batch, state)
        state.commit()
        with open(self.log, "a") as fh:
            fh.write(f"{time.perf_counter() - start}\n")
        return out


def write_stream(directory: str, records: list, batch: int) -> None:
    os.makedirs(directory)
    for b, start in enumerate(range(0, len(records), batch)):
        part = records[start:start + batch]
        table = pa.table({
            "id": pa.array([r[0] for r in part], pa.int64()), "uk": pa.array([r[1] for r in part], pa.int64()),
            "payload": pa.array([r[2] for r in part], pa.string()),
            KIND: pa.array([int(r.get_row_kind().value) for r in part], pa.int8()),
            SEQ: pa.array(range(start, start + len(part)), pa.int64()), SUB: pa.array([0] * len(part), pa.int64())})
        path = os.path.join(directory, f"part-{b:05d}.parquet")
        pq.write_table(table, path)
        os.utime(path, (1_000_000_000 + b, 1_000_000_000 + b))  # the file source takes the oldest first


def read_stream(spark, directory: str):
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("uk", T.LongType()),
                           T.StructField("payload", T.StringType()), T.StructField(KIND, T.ByteType()),
                           T.StructField(SEQ, T.LongType()), T.StructField(SUB, T.LongType())])
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(directory)


def run_query(frame, checkpoint: str) -> tuple[float, float, int, int]:
    """(sum of micro-batch durations ms, wall ms with start-up, micro-batches, output rows)."""
    emitted = [0]

    def count(batch, _):
        emitted[0] += batch.count()

    start = time.perf_counter()
    query = (frame.writeStream.foreachBatch(count).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination()
    wall = (time.perf_counter() - start) * 1000
    progress = [p for p in query.recentProgress if p.get("numInputRows", 0) > 0]
    batches_ms = sum(p["durationMs"]["triggerExecution"] for p in progress)
    return batches_ms, wall, len(progress), emitted[0]


def materializer_run(spark, stream_dir: str, work: str, strategy: str, with_uk: bool, records: int):
    from changeflow.runtime.spark.materializer import materialize_changes, materializer_kernel
    from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator

    translator = StreamingTranslator(spark, StreamingSettings(mini_batch=False, rows_per_batch=records, buckets=2,
                                                              pages=64), work)
    translator.control = False
    node = UpsertMaterialize(Source("changes", SCHEMA, "elements", []), ("id",), ("uk",) if with_uk else None,
                             strategy=strategy)
    log = os.path.join(work, "operator.log")
    frame = materialize_changes(translator, node, read_stream(spark, stream_dir),
                                TimedKernel(materializer_kernel(node), log))
    batches_ms, wall, n, emitted = run_query(frame, os.path.join(work, "checkpoint"))
    with open(log) as fh:
        operator_ms = sum(float(line) for line in fh) * 1000
    return batches_ms, wall, n, emitted, operator_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--delays", default=",".join(map(str, DELAYS)))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                  "materializer_spark.json"))
    args = ap.parse_args()
    from changeflow.runtime.spark import session

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    root = tempfile.mkdtemp(prefix="materializer-bench-")
    results, baselines = [], {}
    try:
        for delay in [int(d) for d in args.delays.split(",")]:
            rows = workload(args.records, delay, "p" * 245)
            stream_dir = os.path.join(root, f"stream-{delay}")
            write_stream(stream_dir, rows, args.batch)
            base_work = tempfile.mkdtemp(dir=root)
            batches_ms, wall, n, _ = run_query(read_stream(spark, stream_dir).select("id", "uk", "payload", KIND),
                                               os.path.join(base_work, "checkpoint"))
            baselines[delay] = {"ops_per_ms": round(args.records / batches_ms, 3), "batches_ms": round(batches_ms),
                                "micro_batches": n}
            print(f"delay={delay:5} pass-through {args.records / batches_ms:8.3f} ops/ms", flush=True)
            for with_uk in (False, True):
                for strategy in args.strategies.split(","):
                    work = tempfile.mkdtemp(dir=root)
                    batches_ms, wall, n, emitted, operator_ms = materializer_run(
                        spark, stream_dir, work, strategy, with_uk, args.records)
                    r = {"strategy": strategy, "has_upsert_key": with_uk, "retract_delay": delay,
                         "ops_per_ms": round(args.records / batches_ms, 3),
                         "ops_per_ms_with_startup": round(args.records / wall, 3),
                         "batches_ms": round(batches_ms), "operator_ms": round(operator_ms),
                         "operator_share": round(operator_ms / batches_ms, 3), "micro_batches": n,
                         "emitted": emitted,
                         "vs_pass_through": round(args.records / batches_ms / baselines[delay]["ops_per_ms"], 3)}
                    results.append(r)
                    print(f"upsert_key={with_uk!s:5} {strategy:8} delay={delay:5} {r['ops_per_ms']:8.3f} ops/ms "
                          f"(operator {operator_ms:7.0f} of {batches_ms:7.0f} ms)", flush=True)
                    shutil.rmtree(work, ignore_errors=True)
                    save(args, baselines, results)  # after every figure: a long run keeps what it measured
    finally:
        shutil.rmtree(root, ignore_errors=True)


def save(args, baselines: dict, results: list) -> None:
    doc = {"records": args.records, "batch": args.batch, "payload_bytes": 250, "master": "local[2]",
           "note": "machine shared with other jobs; ops_per_ms excludes query start-up",
           "pass_through_baseline": baselines, "results": results}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main()
