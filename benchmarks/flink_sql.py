"""The SQL benchmark on Flink 2.3: the reference figures for ``benchmarks/sql.py``.

Usage (with PyFlink 2.3's python first on PATH, from the repository root)::

    python benchmarks/flink_sql.py [--data DIR] [--workloads join topn] [--modes streaming streaming-minibatch batch]
                                   [--parallelism 2] [--runs 1]

Generates the data of ``sql_workload.py`` once (Parquet and CSV, deterministic seed) into
``--data`` (default: a temporary directory, removed afterwards), then, per workload and
runtime mode, creates the filesystem source tables over the CSV copy (Flink 2.3's Python
distribution has no Parquet format), a blackhole sink, and times
``execute_sql("INSERT INTO sink ...").wait()``: job submission, reading, processing and
finishing, i.e. rows/s including job time (the JVM start is before the clock).
Writes ``benchmarks/results/sql_flink.json`` with sizes, seconds, rows/s, CPU seconds (the
process tree: the Python client and its JVM) and rows per CPU-second; results already in the
file for the workloads and modes not rerun are kept.
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

RESULT = os.path.join(ROOT, "benchmarks", "results", "sql_flink.json")


def run(paths, workload: str, mode: str, parallelism: int) -> tuple[float, float]:
    """Seconds and CPU seconds (this process tree: the Python client and its JVM) of one run."""
    from pyflink.table import EnvironmentSettings, TableEnvironment

    settings = (EnvironmentSettings.in_batch_mode() if mode == "batch"
                else EnvironmentSettings.in_streaming_mode())
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    for key, value in W.MODES[mode].items():
        t_env.get_config().set(key, value)
    for name in W.WORKLOADS[workload]["inputs"]:
        t_env.execute_sql(W.create_table_sql(name, paths[name]["csv"], "csv"))
    t_env.execute_sql(W.create_sink_sql(workload))
    cpu, start = tree_cpu_seconds(), time.perf_counter()
    t_env.execute_sql(W.insert_sql(workload)).wait()
    return time.perf_counter() - start, tree_cpu_seconds() - cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="data directory (kept; default: temporary)")
    parser.add_argument("--workloads", nargs="+", default=list(W.WORKLOADS), choices=list(W.WORKLOADS))
    parser.add_argument("--modes", nargs="+", default=list(W.MODES), choices=list(W.MODES))
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1, help="runs per measurement (the best is reported)")
    args = parser.parse_args(argv)

    data = args.data or tempfile.mkdtemp(prefix="changeflow-sql-bench-")
    try:
        t0 = time.perf_counter()
        paths = W.write(data)
        print(f"data ready in {time.perf_counter() - t0:.1f} s", flush=True)
        report = {"engine": "Flink 2.3.0 (PyFlink, local MiniCluster)",
                  "parallelism": args.parallelism, "source_format": "csv",
                  "sink": "blackhole", "seed": W.SEED, "sizes": dict(W.SIZES),
                  "users_distinct": W.users_layout()[0], "users_later_versions": W.users_layout()[1],
                  "groups": W.GROUPS, "top_n": W.TOP_N, "modes": W.MODES,
                  "queries": {}, "results": {}}
        if os.path.exists(RESULT):  # the measurements not rerun are kept
            with open(RESULT, encoding="utf-8") as f:
                previous = json.load(f)
            report["queries"].update(previous.get("queries", {}))
            report["results"].update(previous.get("results", {}))
        for workload in args.workloads:
            report["queries"][workload] = W.WORKLOADS[workload]["query"]
            for mode in args.modes:
                runs = [run(paths, workload, mode, args.parallelism) for _ in range(args.runs)]
                best, cpu = min(runs)
                rows = W.input_rows(workload)
                report["results"][f"{workload}/{mode}"] = {
                    "input_rows": rows, "seconds": round(best, 2),
                    "runs_seconds": [round(s, 2) for s, _ in runs],
                    "rows_per_s": round(rows / best), "cpu_seconds": round(cpu, 2),
                    "rows_per_cpu_s": round(rows / cpu) if cpu > 0 else None,
                    "load_average": load_average()}
                print(f"{workload} {mode}: {best:.1f} s, {rows / best:,.0f} rows/s", flush=True)
        os.makedirs(os.path.dirname(RESULT), exist_ok=True)
        with open(RESULT, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        print(f"wrote {os.path.relpath(RESULT, ROOT)}")
    finally:
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
