"""State TTL soak: a streaming GROUP BY over ever-new keys, with ``table.exec.state.ttl`` and without.

Usage: .venv/bin/python benchmarks/ttl_soak.py [--rate 2000] [--seconds 150] [--ttl "20 s"]
       [--sample-every 15] [--trigger-ms 2000] [--out benchmarks/results/ttl_soak.json]

The input is Spark's ``rate`` source (``rate`` rows per second, the datagen-like
shape of the user's report): ``k`` is the row's sequence number, so every row is
a new key. The query, ``SELECT k, COUNT(*) AS n FROM events GROUP BY k``, runs
through changeflow (``from_spark`` then ``to_spark``) into Spark's ``noop`` sink
with a processing-time trigger, once with ``table.exec.state.ttl`` = ``ttl`` and
once with no TTL (0 ms), each for ``seconds``, one after the other (the machine is
shared: two at once would share its cores).

Every ``sample-every`` seconds it records, for the running query:

- ``live_keys``: the keys the aggregation's state holds (rows of its ``acc``
  table, summed over every page of every bucket), read back from the checkpoint
  with Spark's state data source reader (``spark.read.format("statestore")``);
- ``state_bytes``: the size of those pages (the pickled blobs the kernel stores);
- Spark's state store metrics of the operator from the query's last progress
  (``memoryUsedBytes``, the RocksDB custom metrics ``rocksdbSstFileSize`` and
  ``rocksdbBytesCopied`` where present);
- the input and processed rows per second of the last micro-batch, and the
  input rows so far.

With the TTL the live keys should level off at about one to two TTLs of input
(a key expires a TTL after its last write; a bucket is swept at most once per
TTL); without it they grow with the input. Figures go to ``--out`` as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.runtime.spark import session  # noqa: E402
from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402


def state_sample(spark, checkpoint: str) -> dict:
    """Live keys and page bytes of the aggregation (operator 0), read from the checkpoint's latest version."""
    try:
        pages = (spark.read.format("statestore").option("path", checkpoint).option("operatorId", 0)
                 .option("stateVarName", "pages").load().select("user_map_value.blob").collect())
    except Exception as e:  # no committed batch yet
        return {"live_keys": None, "state_bytes": None, "error": str(e).splitlines()[0][:200]}
    keys = stamped = size = 0
    for (blob,) in pages:
        size += len(blob)
        page = pickle.loads(blob)
        keys += len(page.get("acc", ()))
        stamped += len(page.get("_ttl", ()))
    return {"live_keys": keys, "ttl_stamps": stamped, "state_bytes": size}


def directory_bytes(path: str) -> int:
    """What the checkpoint directory holds on disk (offsets, commits, state store files)."""
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


def progress_sample(query) -> dict:
    p = query.lastProgress or {}
    ops = p.get("stateOperators") or [{}]
    op = ops[0]
    custom = op.get("customMetrics") or {}
    return {
        "batch_id": p.get("batchId"),
        "input_rows_per_second": p.get("inputRowsPerSecond"),
        "processed_rows_per_second": p.get("processedRowsPerSecond"),
        "batch_ms": (p.get("durationMs") or {}).get("triggerExecution"),
        "state_memory_used_bytes": op.get("memoryUsedBytes"),
        "state_rows_total": op.get("numRowsTotal"),
        "rocksdb_sst_file_size": custom.get("rocksdbSstFileSize"),
        "rocksdb_bytes_copied": custom.get("rocksdbBytesCopied"),
    }


def run(spark, ttl: str, rate: int, seconds: float, sample_every: float, trigger_ms: int, workdir: str) -> dict:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("table.exec.state.ttl", ttl)
    t_env.get_config().set("changeflow.state.buckets", "4")
    events = spark.readStream.format("rate").option("rowsPerSecond", rate).load().selectExpr("value AS k")
    t_env.create_temporary_view("events", t_env.from_spark(events))
    table = t_env.sql_query("SELECT k, COUNT(*) AS n FROM events GROUP BY k")
    plan = t_env.explain_sql("SELECT k, COUNT(*) AS n FROM events GROUP BY k")
    checkpoint = os.path.join(workdir, "checkpoint")
    query = (table.to_spark().writeStream.format("noop").option("checkpointLocation", checkpoint)
             .trigger(processingTime=f"{trigger_ms} milliseconds").start())
    samples = []
    started = time.time()
    total_rows = 0
    last_batch = None
    try:
        while time.time() - started < seconds:
            time.sleep(sample_every)
            if query.exception() is not None:
                raise RuntimeError(f"the query failed: {query.exception()}")
            for p in query.recentProgress:
                if last_batch is None or p["batchId"] > last_batch:
                    total_rows += p.get("numInputRows") or 0
                    last_batch = p["batchId"]
            sample = {"t_s": round(time.time() - started, 1), "input_rows_so_far": total_rows}
            sample.update(progress_sample(query))
            sample.update(state_sample(spark, checkpoint))
            sample["checkpoint_bytes"] = directory_bytes(checkpoint)
            samples.append(sample)
            print(json.dumps(sample), flush=True)
    finally:
        query.stop()
    return {"ttl": ttl, "explain": plan, "samples": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=150)
    parser.add_argument("--ttl", default="20 s")
    parser.add_argument("--sample-every", type=float, default=15)
    parser.add_argument("--trigger-ms", type=int, default=2000)
    parser.add_argument("--without-ttl-run", action=argparse.BooleanOptionalAction, default=True,
                        help="also run the query without TTL after the TTL run "
                             "(--no-without-ttl-run: only the TTL run)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "ttl_soak.json"))
    args = parser.parse_args()
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    results = {"rate_rows_per_second": args.rate, "seconds_per_run": args.seconds, "trigger_ms": args.trigger_ms,
               "query": "SELECT k, COUNT(*) AS n FROM events GROUP BY k  (every row a new key)", "runs": []}
    for ttl in (args.ttl, "0 ms") if args.without_ttl_run else (args.ttl,):
        workdir = tempfile.mkdtemp(prefix="ttl-soak-")
        try:
            print(f"--- table.exec.state.ttl = {ttl}", flush=True)
            results["runs"].append(run(spark, ttl, args.rate, args.seconds, args.sample_every, args.trigger_ms,
                                       workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    for r in results["runs"]:
        live = [s["live_keys"] for s in r["samples"] if s.get("live_keys") is not None]
        r["summary"] = {"live_keys_last": live[-1] if live else None, "live_keys_max": max(live) if live else None,
                        "state_bytes_last": next((s["state_bytes"] for s in reversed(r["samples"])
                                                  if s.get("state_bytes") is not None), None),
                        "input_rows": r["samples"][-1]["input_rows_so_far"] if r["samples"] else 0,
                        "checkpoint_bytes": [s["checkpoint_bytes"] for s in r["samples"]][-1:] or None}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps([{"ttl": r["ttl"], **r["summary"]} for r in results["runs"]], indent=1))


if __name__ == "__main__":
    main()
