"""How large a streaming GROUP BY job's checkpoint grows against its live RocksDB state.

Usage: .venv/bin/python benchmarks/checkpoint_size.py [--seconds 120] [--keys 20000] [--rows-per-file 20000]
       [--configs spark-defaults,changeflow] [--out benchmarks/results/checkpoint_size.json]

A named INSERT job (``changeflow.checkpoint-dir`` set) runs
``SELECT k, COUNT(*), SUM(v) GROUP BY k`` over a monitored CSV directory into
which a thread writes one file per second (``rows-per-file`` rows over
``keys`` keys, every key updated again and again), for ``seconds`` seconds per
configuration, one configuration after the other in one process:

- ``spark-defaults``: the query starts with Spark's own checkpoint settings
  (changeflow's per-query settings switched off);
- ``changeflow``: with the settings :mod:`changeflow.runtime.spark.query_start`
  gives every changeflow query.

Every 10 s it records the checkpoint directory's size and file count, its
``state`` part, and the live RocksDB size Spark reports for the operators
(``rocksdbSstFileSize`` of the last progress, summed over operators: the SST
files the stores hold now). Ratio = checkpoint size / live size at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.runtime.spark import query_start, session  # noqa: E402
from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402


def du(path: str) -> tuple[int, int]:
    size = files = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                size += os.path.getsize(os.path.join(folder, name))
                files += 1
            except OSError:
                pass
    return size, files


def live_state_bytes(query) -> int | None:
    progress = query.lastProgress if query is not None else None
    if not progress:
        return None
    return sum(int(op.get("customMetrics", {}).get("rocksdbSstFileSize", 0)) for op in progress["stateOperators"])


def run(spark, config: str, seconds: float, keys: int, rows_per_file: int, keep: bool = False) -> dict:
    workdir = tempfile.mkdtemp(prefix=f"changeflow-ckpt-bench-{config}-")
    incoming, checkpoints = os.path.join(workdir, "in"), os.path.join(workdir, "checkpoints")
    os.makedirs(incoming)
    saved = dict(query_start.CHECKPOINT_SETTINGS)
    if config == "spark-defaults":
        query_start.CHECKPOINT_SETTINGS.clear()
    stop = threading.Event()

    def produce() -> None:
        n = 0
        while not stop.is_set():
            name = f"{n:06d}.csv"
            with open(os.path.join(incoming, "." + name), "w") as f:
                f.writelines(f"k{(n * rows_per_file + i) * 7919 % keys},{i}\n" for i in range(rows_per_file))
            os.replace(os.path.join(incoming, "." + name), os.path.join(incoming, name))
            n += 1
            stop.wait(1.0)

    samples = []
    try:
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
        t_env.get_config().set("changeflow.checkpoint-dir", checkpoints)
        t_env.get_config().set("changeflow.state.buckets", "2")
        t_env.execute_sql(f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{incoming}', 'format' = 'csv', 'source.monitor-interval' = '1 s')")
        t_env.execute_sql("CREATE TABLE totals (k STRING, c BIGINT, s INT, PRIMARY KEY (k) NOT ENFORCED) "
                          "WITH ('connector' = 'blackhole')")
        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        job = t_env.execute_sql("INSERT INTO totals SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k").get_job_client()
        checkpoint = os.path.join(checkpoints, "insert-into_default_catalog.default_database.totals", "checkpoint")
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            time.sleep(10)
            if job.get_job_status() == "FAILED":
                job.wait()
            size, files = du(checkpoint)
            state, _ = du(os.path.join(checkpoint, "state"))
            batches = job.query.lastProgress["batchId"] if job.query is not None and job.query.lastProgress else None
            samples.append({"t_s": round(time.monotonic() - start), "batch": batches, "checkpoint_bytes": size,
                            "files": files, "state_bytes": state, "live_sst_bytes": live_state_bytes(job.query)})
            print(config, json.dumps(samples[-1]), flush=True)
        stop.set()
        job.cancel()
    finally:
        stop.set()
        query_start.CHECKPOINT_SETTINGS.clear()
        query_start.CHECKPOINT_SETTINGS.update(saved)
        if keep:
            print("kept", workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    last = samples[-1]
    live = last["live_sst_bytes"] or 0
    return {"samples": samples, "checkpoint_mb": round(last["checkpoint_bytes"] / 2**20, 1),
            "live_sst_mb": round(live / 2**20, 1), "files": last["files"],
            "ratio": round(last["checkpoint_bytes"] / live, 1) if live else None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--keys", type=int, default=20000)
    parser.add_argument("--rows-per-file", type=int, default=20000)
    parser.add_argument("--configs", default="spark-defaults,changeflow")
    parser.add_argument("--set", action="append", default=[], help="key=value: a changed changeflow setting")
    parser.add_argument("--keep", action="store_true", help="keep the checkpoints to look into")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                      "checkpoint_size.json"))
    args = parser.parse_args()
    configs = args.configs.split(",")
    if len(configs) > 1:
        # One process per configuration: Spark's state maintenance runs per executor at the interval of
        # the first stateful query it ran, so configurations sharing a JVM would share that interval.
        result = {}
        for config in configs:
            out = f"{args.out}.{config}.json"
            command = [sys.executable, os.path.abspath(__file__), "--configs", config, "--out", out,
                       "--seconds", str(args.seconds), "--keys", str(args.keys),
                       "--rows-per-file", str(args.rows_per_file)] + [f"--set={s}" for s in args.set]
            subprocess.run(command, check=True)
            with open(out) as f:
                part = json.load(f)
            os.remove(out)
            result.update({k: v for k, v in part.items() if k not in result})
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        return
    for setting in args.set:
        key, value = setting.split("=", 1)
        query_start.CHECKPOINT_SETTINGS[key] = value
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    result = {"seconds": args.seconds, "keys": args.keys, "rows_per_file": args.rows_per_file,
              "changeflow_settings": dict(query_start.CHECKPOINT_SETTINGS), "load_1min": os.getloadavg()[0]}
    for config in configs:
        result[config] = run(spark, config, args.seconds, args.keys, args.rows_per_file, args.keep)
        print(config, {k: v for k, v in result[config].items() if k != "samples"}, flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
