"""What a restarted streaming INSERT job spends before its first commit.

Usage: .venv/bin/python benchmarks/restart.py [--restarts 3] [--keys 2000] [--out benchmarks/results/restart.json]

A named INSERT job (``changeflow.checkpoint-dir`` set: it resumes from its
checkpoint, :mod:`changeflow.runtime.spark.job_directory`) runs
``SELECT k, SUM(v) GROUP BY k`` over a monitored CSV directory. Each run is a
fresh Python process, as a restarted application is: the first run creates the
checkpoint, every later run adds one input file and resumes. Each run records,
from the process's start:

- ``import_s``: importing changeflow and pyspark;
- ``session_s``: the SparkSession (JVM start);
- ``submit_s``: planning the DDL and the INSERT up to the job's thread starting;
- ``query_started_s``: ``writeStream.start()`` returned (the checkpoint's
  offset and commit logs are read here); of that, ``translate_s`` (changeflow
  builds the query's DataFrame) and ``writer_start_s`` (Spark's ``start()``);
- ``first_commit_s``: the first micro-batch of this run committed (its
  ``commits`` entry written), which includes loading the state store;
- Spark's own split of that first micro-batch (``durationMs`` of its progress:
  ``latestOffset``, ``queryPlanning``, ``addBatch`` (operators, state load,
  sink), ``walCommit``, ``commitOffsets``).

The machine's load is noted (``os.getloadavg``): the run shares two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(owner, name: str, marks: dict, key: str) -> None:
    """Wrap ``owner.name`` to add its run time to ``marks[key]``."""
    function = getattr(owner, name)

    def wrapper(*args, **kwargs):
        began = time.monotonic()
        try:
            return function(*args, **kwargs)
        finally:
            marks[key] = marks.get(key, 0.0) + time.monotonic() - began

    setattr(owner, name, wrapper)


def child(workdir: str, keys: int, run: int) -> dict:
    start = time.monotonic()
    marks: dict = {}
    sys.path.insert(0, ROOT)
    from changeflow.runtime.spark import session  # noqa: E402
    from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402
    from changeflow.runtime.spark import jobs  # noqa: E402
    marks["import_s"] = time.monotonic() - start
    timed(jobs.SparkJobs, "_translate", marks, "translate_s")  # the plan to a streaming DataFrame
    timed(jobs, "start_query", marks, "writer_start_s")  # Spark's writeStream.start()
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    marks["session_s"] = time.monotonic() - start
    incoming, checkpoints = os.path.join(workdir, "in"), os.path.join(workdir, "checkpoints")
    name = f"{run}.csv"
    with open(os.path.join(incoming, "." + name), "w") as f:
        f.writelines(f"k{i % keys},{run}\n" for i in range(keys * 5))
    os.replace(os.path.join(incoming, "." + name), os.path.join(incoming, name))

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.checkpoint-dir", checkpoints)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.execute_sql(f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{incoming}', "
                      "'format' = 'csv', 'source.monitor-interval' = '200 ms')")
    t_env.execute_sql("CREATE TABLE totals (k STRING, s INT, PRIMARY KEY (k) NOT ENFORCED) "
                      "WITH ('connector' = 'materialized')")
    commits = os.path.join(checkpoints, "insert-into_default_catalog.default_database.totals", "checkpoint", "commits")
    before = set(os.listdir(commits)) if os.path.isdir(commits) else set()
    job = t_env.execute_sql("INSERT INTO totals SELECT k, SUM(v) FROM src GROUP BY k").get_job_client()
    marks["submit_s"] = time.monotonic() - start
    while job.query is None:
        if job.get_job_status() == "FAILED":
            job.wait()
        time.sleep(0.01)
    marks["query_started_s"] = time.monotonic() - start
    while not (os.path.isdir(commits) and {n for n in os.listdir(commits) if not n.startswith(".")} - before):
        if job.get_job_status() == "FAILED":
            job.wait()
        time.sleep(0.02)
    marks["first_commit_s"] = time.monotonic() - start
    progress = None
    for _ in range(100):
        recent = job.query.recentProgress
        if recent:
            progress = recent[0]
            break
        time.sleep(0.05)
    job.cancel()
    marks["first_batch_durations_ms"] = dict(progress.durationMs) if progress is not None else None
    marks["state_rows"] = ([op.numRowsTotal for op in progress.stateOperators] if progress is not None else None)
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in marks.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "restart.json"))
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.keys, int(args.child[1]))))
        return
    workdir = tempfile.mkdtemp(prefix="changeflow-restart-bench-")
    os.makedirs(os.path.join(workdir, "in"))
    runs = []
    try:
        for run in range(args.restarts + 1):
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--keys", str(args.keys),
                                  "--child", workdir, str(run)], capture_output=True, text=True, cwd=ROOT)
            if out.returncode != 0:
                raise SystemExit(out.stderr[-3000:])
            marks = json.loads(out.stdout.strip().splitlines()[-1])
            marks["kind"] = "first run" if run == 0 else "restart"
            marks["load_1min"] = round(load, 2)
            runs.append(marks)
            print(json.dumps(marks), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    restarts = sorted(r["first_commit_s"] for r in runs[1:])
    result = {"keys": args.keys, "runs": runs,
              "restart_first_commit_median_s": restarts[len(restarts) // 2] if restarts else None}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}))


if __name__ == "__main__":
    main()
