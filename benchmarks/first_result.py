"""Time from ``execute()`` to the first result of a one-operator streaming query: changeflow against PyFlink 2.3.

Usage (PyFlink 2.3's ``python`` first on ``PATH``, or ``--flink-python``)::

    .venv/bin/python benchmarks/first_result.py [--runs 3] [--rows 1000] [--out benchmarks/results/first_result.json]
        [--without-warm-python]

Two queries, each over ``--rows`` rows of ``(k STRING, v BIGINT)`` in 10 keys, parallelism 2
(changeflow: ``local[2]``, 2 shuffle partitions, 2 state buckets):

- ``sql_group_by``: a streaming ``SELECT k, COUNT(*) FROM t GROUP BY k`` over
  ``from_elements``, its changelog collected (``execute_sql(...).collect()``);
- ``datastream_reduce``: ``from_collection(...).key_by(k).reduce(sum)`` collected
  (``execute_and_collect()``).

Each engine runs in a process of its own (changeflow under this interpreter, Flink under
PyFlink's), the two one after the other in the same run. An engine's environment (the
SparkSession's JVM; PyFlink's gateway), a query's table environment and its source are made
before the clock, as an application would have them; every query is then run ``--runs``
times in that process: the first run is
``cold`` (the first query the process runs: Flink starts its mini-cluster, Spark loads its
classes and starts Python workers), the later ones ``warm``. Per run: seconds from the call
that starts the job to the first result row and to the last, and CPU seconds (user + system)
of the process and its descendants (the JVM and Python workers) over the same span: CPU
seconds are what a loaded machine stretches least. For changeflow, Spark's split of each
micro-batch (``durationMs`` of its progress: ``queryPlanning`` includes the Python process
Spark starts on the driver per stateful operator to learn its state variables; ``addBatch``
the tasks, state store and sink). The machine's 1-minute load average is recorded at
each run. ``--without-warm-python`` also runs changeflow with ``changeflow.spark.warm-python``
off (Spark's Python processes started afresh, as before that setting), in the same run:
``changeflow_cold_python`` in the results.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULT = os.path.join(ROOT, "benchmarks", "results", "first_result.json")
QUERIES = ("sql_group_by", "datastream_reduce")
SQL = "SELECT k, COUNT(*) AS c FROM t GROUP BY k"


def rows(n: int) -> list[tuple[str, int]]:
    return [(f"k{i % 10}", i) for i in range(n)]


def cpu_seconds() -> float:
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from nexmark_workload import tree_cpu_seconds

    return tree_cpu_seconds()


def timed(prepare) -> tuple[float, float, int]:
    """Seconds to the first and to the last item of the iterator ``start()`` returns, and the count, where
    ``start = prepare()`` (the query's environment and source, made before the clock)."""
    start_job = prepare()
    start = time.perf_counter()
    iterator = iter(start_job())
    count, first = 0, None
    for _ in iterator:
        if first is None:
            first = time.perf_counter() - start
        count += 1
    return first if first is not None else float("nan"), time.perf_counter() - start, count


# --- changeflow ----------------------------------------------------------------------------------------
def changeflow_child(args) -> dict:
    sys.path.insert(0, ROOT)
    from pyspark.sql.streaming import StreamingQueryListener

    from changeflow.common import Configuration, DataTypes, Types
    from changeflow.datastream import StreamExecutionEnvironment
    from changeflow.runtime.spark import session
    from changeflow.table import EnvironmentSettings, TableEnvironment

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"}, warm=not args.no_warm_python)
    progress: list[dict] = []

    class Progress(StreamingQueryListener):
        def onQueryStarted(self, event): pass
        def onQueryIdle(self, event): pass
        def onQueryTerminated(self, event): pass

        def onQueryProgress(self, event):
            progress.append({"batch": event.progress.batchId, "rows": event.progress.numInputRows,
                             "durationMs": dict(event.progress.durationMs)})

    spark.streams.addListener(Progress())
    data = rows(args.rows)
    schema = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.STRING()), DataTypes.FIELD("v", DataTypes.BIGINT())])

    def sql_group_by():
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
        t_env.get_config().set("changeflow.state.buckets", "2")
        t_env.create_temporary_view("t", t_env.from_elements(data, schema))
        return lambda: t_env.execute_sql(SQL).collect()

    def datastream_reduce():
        conf = Configuration()
        conf.set_string("changeflow.state.buckets", "2")
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        ds = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
        reduced = ds.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
        return lambda: reduced.execute_and_collect()

    return run_all(args, {"sql_group_by": sql_group_by, "datastream_reduce": datastream_reduce}, progress)


# --- Flink ---------------------------------------------------------------------------------------------
def flink_child(args) -> dict:
    from pyflink.common import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment

    data = rows(args.rows)
    schema = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.STRING()), DataTypes.FIELD("v", DataTypes.BIGINT())])
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    def sql_group_by():
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("parallelism.default", "2")
        t_env.create_temporary_view("t", t_env.from_elements(data, schema))
        return lambda: _closing(t_env.execute_sql(SQL).collect())

    def datastream_reduce():
        ds = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
        reduced = ds.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
        return lambda: _closing(reduced.execute_and_collect())

    return run_all(args, {"sql_group_by": sql_group_by, "datastream_reduce": datastream_reduce}, None)


def _closing(results):
    with results as rows_:
        yield from rows_


def run_all(args, queries: dict, progress: list | None) -> dict:
    out: dict = {}
    for name, query in queries.items():
        runs = []
        for run in range(args.runs):
            if progress is not None:
                progress.clear()
            cpu = cpu_seconds()
            first, last, count = timed(query)
            entry = {"run": "cold" if run == 0 else "warm", "first_s": round(first, 3), "last_s": round(last, 3),
                     "rows": count, "cpu_s": round(cpu_seconds() - cpu, 2), "load_1min": os.getloadavg()[0]}
            if progress is not None:
                time.sleep(0.5)  # the listener's last event is delivered asynchronously
                entry["micro_batches"] = list(progress)
            runs.append(entry)
            print(f"{name} {entry['run']}: first {first:.2f} s, last {last:.2f} s, {count} rows, "
                  f"cpu {entry['cpu_s']} s, load {entry['load_1min']:.1f}", file=sys.stderr, flush=True)
        out[name] = runs
    return out


# --- the parent ----------------------------------------------------------------------------------------
def child(command: list[str]) -> dict:
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:2]} exited with {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(runs: list[dict]) -> dict:
    warm = [r for r in runs if r["run"] == "warm"] or runs
    return {"cold_first_s": runs[0]["first_s"], "warm_first_s_median": statistics.median(r["first_s"] for r in warm),
            "warm_last_s_median": statistics.median(r["last_s"] for r in warm),
            "warm_cpu_s_median": statistics.median(r["cpu_s"] for r in warm)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--flink-python", default=shutil.which("python") or "python",
                        help="PyFlink 2.3's interpreter (default: the first python on PATH)")
    parser.add_argument("--engine", choices=["both", "changeflow", "flink"], default="both")
    parser.add_argument("--without-warm-python", action="store_true",
                        help="also run changeflow with changeflow.spark.warm-python off (a baseline in the same run)")
    parser.add_argument("--no-warm-python", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=["changeflow", "flink"], help=argparse.SUPPRESS)
    parser.add_argument("--out", default=RESULT)
    args = parser.parse_args(argv)
    if args.child:
        result = changeflow_child(args) if args.child == "changeflow" else flink_child(args)
        print(json.dumps(result))
        return 0
    # An installed package has its modules compiled (pip compiles them, as it did PyFlink's); a source
    # checkout under PYTHONDONTWRITEBYTECODE recompiles every changeflow module in every process it starts
    # (about 0.5 s of a cold query's driver time at load 8, by cProfile), which no installed changeflow pays.
    compileall.compile_dir(os.path.join(ROOT, "changeflow"), quiet=1)
    common = [os.path.abspath(__file__), "--runs", str(args.runs), "--rows", str(args.rows)]
    result: dict = {"rows": args.rows, "runs": args.runs, "load_1min_start": os.getloadavg()[0]}
    if args.engine in ("both", "changeflow") and args.without_warm_python:
        result["changeflow_cold_python"] = child([sys.executable, *common, "--child", "changeflow", "--no-warm-python"])
    if args.engine in ("both", "changeflow"):
        result["changeflow"] = child([sys.executable, *common, "--child", "changeflow"])
    if args.engine in ("both", "flink"):
        result["flink"] = child([args.flink_python, *common, "--child", "flink"])
    result["load_1min_end"] = os.getloadavg()[0]
    result["summary"] = {engine: {q: summary(result[engine][q]) for q in QUERIES}
                         for engine in ("changeflow_cold_python", "changeflow", "flink") if engine in result}
    if "changeflow" in result and "flink" in result:
        result["ratio_warm_first"] = {q: round(result["summary"]["changeflow"][q]["warm_first_s_median"]
                                               / result["summary"]["flink"][q]["warm_first_s_median"], 2)
                                      for q in QUERIES}
        result["ratio_cold_first"] = {q: round(result["summary"]["changeflow"][q]["cold_first_s"]
                                               / result["summary"]["flink"][q]["cold_first_s"], 2) for q in QUERIES}
    if "changeflow_cold_python" in result and "flink" in result:
        result["ratio_warm_first_cold_python"] = {
            q: round(result["summary"]["changeflow_cold_python"][q]["warm_first_s_median"]
                     / result["summary"]["flink"][q]["warm_first_s_median"], 2) for q in QUERIES}
    print(json.dumps(result["summary"], indent=1))
    if "ratio_warm_first" in result:
        print("changeflow / Flink, warm first result:", result["ratio_warm_first"])
        print("changeflow / Flink, cold first result:", result["ratio_cold_first"])
    if "ratio_warm_first_cold_python" in result:
        print("changeflow without warm Python / Flink:", result["ratio_warm_first_cold_python"])
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
