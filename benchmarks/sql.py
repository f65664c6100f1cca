"""The SQL benchmark of issue 3 on changeflow: a join of two streams with retraction
followed by an aggregation, and Top-10 per group over 5M rows.

Usage (from the repository root)::

    .venv/bin/python benchmarks/sql.py [--data DIR] [--workloads join topn]
        [--modes streaming streaming-minibatch batch] [--format parquet|csv] [--runs 1]

Data and SQL are ``sql_workload.py``'s (the same rows and text ``flink_sql.py`` runs on
Flink 2.3), generated once per ``--data`` directory (default: a temporary directory,
removed afterwards).  Per workload and mode a fresh TableEnvironment creates the
filesystem source tables (Parquet by default), a blackhole sink, and the clock times
``t_env.execute_sql("INSERT INTO sink ...").wait()``: planning, the Spark job(s) and
the end of input, i.e. rows/s including job time (the SparkSession start is before the
clock).  Modes:

* ``streaming``: streaming mode, mini-batch off (Flink's default; every input row's
  changes are processed in order);
* ``streaming-minibatch``: mini-batch on (allow-latency 1 s, size 100,000 rows);
* ``batch``: batch mode (Spark's own batch operators).

Writes ``benchmarks/results/sql.json``: sizes, seconds, rows/s, CPU seconds (the process tree:
driver, JVM, Python workers) and rows per CPU-second per workload and mode,
and ratios: changeflow streaming vs changeflow batch, and changeflow vs Flink 2.3 for
the same workload and mode when ``benchmarks/results/sql_flink.json`` (written by
``flink_sql.py``) has that figure (ratio = changeflow rows/s / Flink rows/s).  A
measurement that fails is recorded with its error class and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import sql_workload as W  # noqa: E402
from benchmarks.nexmark_workload import load_average, tree_cpu_seconds  # noqa: E402

RESULTS = os.path.join(ROOT, "benchmarks", "results")
RESULT = os.path.join(RESULTS, "sql.json")
FLINK_RESULT = os.path.join(RESULTS, "sql_flink.json")

MODES = W.MODES


def run(spark, paths, workload: str, mode: str, fmt: str) -> tuple[float, float]:
    """Seconds and CPU seconds (this process tree: driver, JVM, Python workers) of one
    ``INSERT INTO sink <query>`` on changeflow, job time included."""
    from changeflow.table import EnvironmentSettings, TableEnvironment

    settings = (EnvironmentSettings.in_batch_mode() if mode == "batch"
                else EnvironmentSettings.in_streaming_mode())
    t_env = TableEnvironment.create(settings, spark_session=spark)
    for key, value in MODES[mode].items():
        t_env.get_config().set(key, value)
    for name in W.WORKLOADS[workload]["inputs"]:
        t_env.execute_sql(W.create_table_sql(name, paths[name][fmt], fmt))
    t_env.execute_sql(W.create_sink_sql(workload))
    cpu, start = tree_cpu_seconds(), time.perf_counter()
    t_env.execute_sql(W.insert_sql(workload)).wait()
    return time.perf_counter() - start, tree_cpu_seconds() - cpu


def ratios(results: dict, flink: dict) -> dict:
    """changeflow streaming vs batch, and changeflow vs Flink (rows/s over rows/s)."""
    out = {}
    for workload in W.WORKLOADS:
        batch = results.get(f"{workload}/batch", {}).get("rows_per_s")
        for mode in MODES:
            ours = results.get(f"{workload}/{mode}", {}).get("rows_per_s")
            if not ours:
                continue
            if batch and mode != "batch":
                out[f"{workload}/{mode}_vs_changeflow_batch"] = round(ours / batch, 3)
            theirs = flink.get("results", {}).get(f"{workload}/{mode}", {}).get("rows_per_s")
            if theirs:
                out[f"{workload}/{mode}_vs_flink"] = round(ours / theirs, 3)
            ours_cpu = results.get(f"{workload}/{mode}", {}).get("rows_per_cpu_s")
            theirs_cpu = flink.get("results", {}).get(f"{workload}/{mode}", {}).get("rows_per_cpu_s")
            if ours_cpu and theirs_cpu:
                out[f"{workload}/{mode}_vs_flink_per_cpu_s"] = round(ours_cpu / theirs_cpu, 3)
    return out


def write_report(results: dict, fmt: str) -> dict:
    """Write ``sql.json`` with ``results`` and the ratios they give; return the report."""
    flink = {}
    if os.path.exists(FLINK_RESULT):
        with open(FLINK_RESULT) as f:
            flink = json.load(f)
    report = {"engine": "changeflow on Spark local[2]", "source_format": fmt,
              "sink": "blackhole", "seed": W.SEED, "sizes": dict(W.SIZES),
              "users_distinct": W.users_layout()[0],
              "users_later_versions": W.users_layout()[1],
              "groups": W.GROUPS, "top_n": W.TOP_N, "modes": MODES,
              "queries": {w: W.WORKLOADS[w]["query"] for w in W.WORKLOADS},
              "results": results, "ratios": ratios(results, flink)}
    os.makedirs(RESULTS, exist_ok=True)
    with open(RESULT, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="data directory (kept; default: temporary)")
    parser.add_argument("--workloads", nargs="+", default=list(W.WORKLOADS), choices=list(W.WORKLOADS))
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--format", default="parquet", choices=["parquet", "csv"])
    parser.add_argument("--runs", type=int, default=1, help="runs per measurement (the best is reported)")
    args = parser.parse_args(argv)

    from changeflow.runtime.spark import session

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2",
                                               "spark.driver.memory": "8g"})
    data = args.data or tempfile.mkdtemp(prefix="changeflow-sql-bench-")
    try:
        paths = W.write(data)
        previous = {}
        if os.path.exists(RESULT):
            with open(RESULT) as f:
                previous = json.load(f)
        results = dict(previous.get("results", {}))
        for workload in args.workloads:
            rows = W.input_rows(workload)
            for mode in args.modes:
                key = f"{workload}/{mode}"
                try:
                    runs = [run(spark, paths, workload, mode, args.format) for _ in range(args.runs)]
                except Exception as e:  # record, keep going with the other measurements
                    results[key] = {"input_rows": rows,
                                    "failed": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
                    print(f"{key}: FAILED {results[key]['failed']}", flush=True)
                else:
                    best, cpu = min(runs)
                    results[key] = {"input_rows": rows, "seconds": round(best, 2),
                                    "runs_seconds": [round(s, 2) for s, _ in runs],
                                    "rows_per_s": round(rows / best), "cpu_seconds": round(cpu, 2),
                                    "rows_per_cpu_s": round(rows / cpu) if cpu > 0 else None,
                                    "load_average": load_average()}
                    print(f"{key}: {best:.1f} s, {rows / best:,.0f} rows/s", flush=True)
                write_report(results, args.format)  # after every measurement: a long run can stop
    finally:
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
