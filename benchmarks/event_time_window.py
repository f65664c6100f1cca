"""Event-time window benchmark: a 10 s tumbling COUNT/SUM per key, changeflow against Spark's own.

Usage: .venv/bin/python benchmarks/event_time_window.py [--rows 4000000] [--keys 1000] [--files 4]
    [--flink-python PYFLINK_VENV/bin/python]

1. **Throughput.** ``rows`` rows in ``files`` Parquet files (event time advancing
   1 ms a row with up to 1 s of disorder, ``keys`` keys), streamed a file per
   micro-batch. changeflow runs Flink's SQL
   ``SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE t,
   DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k`` with
   ``WATERMARK FOR ts AS ts - INTERVAL '2' SECOND``; the baseline, in the same run over
   the same files, is Spark's ``withWatermark("ts", "2 seconds")`` then
   ``groupBy(window("ts", "10 seconds"), "k")`` in append mode. Both write to a no-op
   sink; the figure is the wall time from query start to end of input, and the ratio
   changeflow / Spark, with the CPU seconds each query's processes used (the driver, the JVM
   and the Python workers: the figure a shared machine's load moves least), with Spark's
   state rows after each micro-batch and the rows its watermark evicted (its progress
   reports), and each query's stages (``spark_stages``: the median wall and JVM CPU ms of its
   stages by task count, the first micro-batch left out). With ``--flink-python`` Flink 2.3
   runs the same query over CSV copies of the same rows (``event_time_window_flink.py``) in the same run.
2. **One micro-batch in the kernel** (``--kernel``, no Spark): what a window
   aggregation's buckets get from one micro-batch of ``--kernel-rows`` rows: the
   rows (the dtypes the packing stage gives) and the watermarks the assigner
   emits among them (``pipeline.auto-watermark-interval`` 200 ms: one per 200
   rows here, as on Spark), over paged state; the seconds per bucket of the
   kernel contract's ``process_with_watermarks`` (the window aggregation's one
   pass), and of its default, segment by segment (``process`` and
   ``on_watermark`` per watermark, as every micro-batch ran before), for the
   first ``--segment-buckets`` buckets; and the one pass again with the time
   keys as pandas ``Timestamp`` objects (as the packing stage gave them before
   they stayed ``datetime64``), for the first ``--object-buckets`` buckets.
3. **State stays bounded.** The window kernel alone (no Spark) over the same kind of
   input in batches of 100k rows, the watermark after each: the state rows it keeps
   after each batch (``pending`` and ``acc``: open windows x keys), against the
   windows it has closed so far.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
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

EPOCH = np.datetime64("2024-01-01T00:00:00", "ms")
WINDOW_MS = 10_000


def event_times(rng: np.random.Generator, start: int, n: int) -> np.ndarray:
    """``n`` event times (ms) from ``start``: one ms a row, each up to 1 s late."""
    return start + np.arange(n, dtype=np.int64) - rng.integers(0, 1_000, n)


def write_files(directory: str, rows: int, keys: int, files: int) -> None:
    rng = np.random.default_rng(7)
    per_file = rows // files
    for i in range(files):
        ms = event_times(rng, 1_000 + i * per_file, per_file)
        table = pa.table({"ts": pa.array((EPOCH + ms.astype("timedelta64[ms]")), pa.timestamp("ms")),
                          "k": rng.integers(0, keys, per_file, dtype=np.int64),
                          "v": rng.integers(0, 1000, per_file, dtype=np.int64)})
        path = os.path.join(directory, f"part-{i:03d}.parquet")
        pq.write_table(table, path)
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))


def write_csv_copies(directory: str, csv_directory: str) -> None:
    """The Parquet files' rows as CSV files (``ts,k,v``) for Flink, whose PyFlink ships no Parquet format."""
    for name in sorted(os.listdir(directory)):
        frame = pq.read_table(os.path.join(directory, name)).to_pandas()
        frame["ts"] = frame["ts"].dt.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3]
        frame.to_csv(os.path.join(csv_directory, name.replace(".parquet", ".csv")), header=False, index=False)


def flink_run(flink_python: str, csv_directory: str) -> float:
    """The same query on PyFlink 2.3 (``event_time_window_flink.py`` under ``flink_python``): its seconds."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "event_time_window_flink.py")
    env = dict(os.environ, PATH=os.path.dirname(flink_python) + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run([flink_python, script, "--data", csv_directory], stdout=subprocess.PIPE, text=True,
                          check=True, env=env)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def tree_cpu_seconds() -> float | None:
    """CPU seconds used so far by this process and its descendants (the JVM, Python workers; Linux /proc).

    Reaped children count through their parent's ``cutime``/``cstime``. On a shared
    machine the CPU an engine uses moves far less with the load than its wall time.
    """
    try:
        parents, times = {}, {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                parents[int(entry)] = int(fields[1])
                times[int(entry)] = sum(int(x) for x in fields[11:15])   # utime stime cutime cstime
    except OSError:
        return None
    tree, frontier = {os.getpid()}, [os.getpid()]
    while frontier:
        pid = frontier.pop()
        children = [c for c, parent in parents.items() if parent == pid and c not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(times.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def timed(run) -> tuple:
    """``run()``'s result, and the CPU seconds the process tree used meanwhile (None without /proc)."""
    before = tree_cpu_seconds()
    result = run()
    after = tree_cpu_seconds()
    return result, None if before is None or after is None else round(after - before, 1)


def spark_baseline(spark, data: str, workdir: str) -> tuple[float, list[dict]]:
    """Spark's own query over the files: its wall time, and per micro-batch its state rows and the rows
    (windows x keys) its watermark evicted (Spark's progress reports)."""
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    stream = (spark.readStream.schema("ts timestamp_ntz, k long, v long").option("maxFilesPerTrigger", 1)
              .parquet(data).withColumn("ts", F.col("ts").cast("timestamp")))
    query = (stream.withWatermark("ts", "2 seconds").groupBy(F.window("ts", "10 seconds"), "k")
             .agg(F.count(F.lit(1)).alias("cnt"), F.sum("v").alias("s"))
             .writeStream.format("noop").outputMode("append")
             .option("checkpointLocation", os.path.join(workdir, "ck-spark")).trigger(availableNow=True))
    start = time.perf_counter()
    running = query.start()
    running.awaitTermination()
    seconds = time.perf_counter() - start
    batches = [{"batch": p["batchId"], "rows_in": p["numInputRows"],
                "state_rows": sum(int(o.get("numRowsTotal") or 0) for o in p.get("stateOperators") or []),
                "state_rows_removed": sum(int(o.get("numRowsRemoved") or 0) for o in p.get("stateOperators") or [])}
               for p in running.recentProgress]
    return seconds, batches, batch_durations(running)


def batch_durations(query) -> list[dict]:
    """Per micro-batch: its input rows and Spark's ``durationMs`` (addBatch, queryPlanning, getBatch,
    walCommit, commit, triggerExecution), from the query's progress reports (Spark keeps the last 100)."""
    kept = ("triggerExecution", "addBatch", "queryPlanning", "getBatch", "walCommit", "commit")
    return [{"batch": p["batchId"], "rows_in": p["numInputRows"],
             **{k: p["durationMs"].get(k) for k in kept}} for p in query.recentProgress]


def spark_stages(spark, after: int = -1) -> list[dict]:
    """Spark's completed stages with an id above ``after`` (from the JVM's status store, kept with the UI off):
    per stage its tasks, wall ms (submission to completion) and the executors' run and JVM CPU ms.

    A micro-batch of changeflow's window query is two stages: the read and packing stage (its tasks:
    the partitions of the micro-batch's files) and the window kernel's ``transformWithStateInPandas``.
    """
    store = spark.sparkContext._jsc.sc().statusStore()
    stages = store.stageList(None, False, False, getattr(store, "stageList$default$4")(),
                             getattr(store, "stageList$default$5")())
    out, it = [], stages.iterator()
    while it.hasNext():
        s = it.next()
        submitted, completed = s.submissionTime(), s.completionTime()
        if s.stageId() <= after or not submitted.isDefined() or not completed.isDefined():
            continue
        out.append({"stage": s.stageId(), "tasks": s.numTasks(),
                    "wall_ms": completed.get().getTime() - submitted.get().getTime(),
                    "run_ms": s.executorRunTime(), "jvm_cpu_ms": s.executorCpuTime() // 1_000_000})
    return sorted(out, key=lambda d: d["stage"])


def stage_medians(stages: list[dict]) -> dict:
    """The median wall ms and JVM CPU ms of a query's stages, by their task count (its first micro-batch left out)."""
    by_tasks: dict[int, list[dict]] = {}
    for s in stages[2:]:
        by_tasks.setdefault(s["tasks"], []).append(s)
    return {f"{n}_tasks": {"stages": len(v), "wall_ms": float(np.median([s["wall_ms"] for s in v])),
                           "jvm_cpu_ms": float(np.median([s["jvm_cpu_ms"] for s in v]))}
            for n, v in sorted(by_tasks.items())}


def changeflow_run(spark, data: str, rows: int, files: int) -> tuple[float, list[dict]]:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.source.rows-per-batch", str(rows // files))
    t_env.execute_sql("CREATE TABLE t (ts TIMESTAMP(3), k BIGINT, v BIGINT, "
                      "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{data}', 'format' = 'parquet')")
    t_env.execute_sql("CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), k BIGINT, cnt BIGINT, s BIGINT) "
                      "WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    job = t_env.execute_sql("INSERT INTO out SELECT window_start, window_end, k, COUNT(*), SUM(v) "
                            "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                            "GROUP BY window_start, window_end, k").get_job_client()
    job.wait()
    seconds = time.perf_counter() - start
    query = getattr(job, "query", None)   # the InsertJob's streaming query (its progress reports)
    return seconds, [] if query is None else batch_durations(query)


def state_growth(rows: int, keys: int, batch: int = 100_000) -> list[dict]:
    """The window kernel's state rows after each batch (no Spark): bounded by the open windows."""
    from changeflow.common.types import DataTypes as T
    from changeflow.kernels.aggregate.functions import AggCall
    from changeflow.kernels.aggregate.window_agg import WindowAggregate
    from changeflow.kernels.state import InMemoryKeyedState

    kernel = WindowAggregate(["ws", "we", "k"], [AggCall("count_star", None, T.BIGINT(False), "cnt"),
                                                  AggCall("sum", "v", T.BIGINT(), "s")], "we")
    state = InMemoryKeyedState()
    rng = np.random.default_rng(11)
    closed, seen, out = 0, None, []
    for start in range(0, rows, batch):
        ms = event_times(rng, 1_000 + start, batch)
        window = ms - ms % WINDOW_MS
        frame = pd.DataFrame({"ws": pd.Series(EPOCH + window.astype("timedelta64[ms]")).astype("datetime64[ns]"),
                              "we": pd.Series(EPOCH + (window + WINDOW_MS).astype("timedelta64[ms]"))
                              .astype("datetime64[ns]"),
                              "k": pd.array(rng.integers(0, keys, batch), dtype="Int64"),
                              "v": pd.array(rng.integers(0, 1000, batch), dtype="Int64"),
                              "_kind": np.zeros(batch, dtype=np.int8),
                              "_seq": np.arange(start, start + batch, dtype=np.int64),
                              "_sub": np.zeros(batch, dtype=np.int64)})
        kernel.process(frame, state)
        seen = int(ms.max()) if seen is None else max(seen, int(ms.max()))
        watermark = seen - 2_000 + int((EPOCH - np.datetime64("1970-01-01T00:00:00", "ms")).astype(np.int64))
        if watermark > kernel.current_watermark:
            fired = kernel.on_watermark(watermark, state)
            closed += 0 if fired is None else len(fired)
            kernel.current_watermark = watermark
        out.append({"rows_in": start + batch, "windows_closed": closed,
                    "state_rows": state.row_count("pending") + state.row_count("acc")})
    return out


def kernel_micro_batch(rows: int, keys: int, buckets: int = 8, segment_buckets: int = 1,
                       object_buckets: int = 0) -> dict:
    """One micro-batch through the window kernel, bucket by bucket (no Spark): see the module docstring."""
    from changeflow.common.types import DataTypes as T
    from changeflow.kernels.aggregate.functions import AggCall
    from changeflow.kernels.aggregate.window_agg import WindowAggregate
    from changeflow.kernels.contract import KernelBase
    from changeflow.kernels.watermark_emissions import emitted_watermarks
    from changeflow.runtime.spark.event_time import WINDOW_ROWS_PER_PAGE
    from changeflow.runtime.spark.packing import bucket_index
    from changeflow.state.paged import DictPageStore, PagedKeyedState

    names = ["window_start", "window_end", "k"]
    rng = np.random.default_rng(7)
    ms = event_times(rng, 1_000, rows)
    window = ms - ms % WINDOW_MS

    def stamps(values: np.ndarray) -> pd.Series:   # TIMESTAMP keys reach the window kernel as datetime64[ns]
        return pd.Series(EPOCH + values.astype("timedelta64[ms]")).astype("datetime64[ns]")

    frame = pd.DataFrame({"window_start": stamps(window), "window_end": stamps(window + WINDOW_MS),
                          "k": pd.array(rng.integers(0, keys, rows), dtype="Int64"),
                          "v": pd.array(rng.integers(0, 1000, rows), dtype="Int64"),
                          "_kind": np.zeros(rows, dtype=np.int8), "_seq": np.arange(rows, dtype=np.int64),
                          "_sub": np.zeros(rows, dtype=np.int64)})
    offset = int((EPOCH - np.datetime64("1970-01-01T00:00:00", "ms")).astype(np.int64))
    marks, _, pending = emitted_watermarks((ms + offset - 2_000).astype(float), np.arange(rows), None, None, 200)
    marks += [pending] if pending is not None else []
    bucket = bucket_index(frame, names, buckets)

    def run(b: int, one_pass: bool, object_keys: bool = False) -> tuple[float, int]:
        kernel = WindowAggregate(names, [AggCall("count_star", None, T.BIGINT(False), "cnt"),
                                         AggCall("sum", "v", T.BIGINT(), "s")], "window_end")
        state = PagedKeyedState(DictPageStore(), names, 1, WINDOW_ROWS_PER_PAGE)   # the runtime's layout
        rows_b = frame.loc[bucket == b].reset_index(drop=True)
        if object_keys:   # as before time keys stayed datetime64: pandas Timestamp objects
            rows_b = rows_b.astype({"window_start": object, "window_end": object})
        start = time.perf_counter()
        out = (kernel.process_with_watermarks([rows_b], list(marks), state) if one_pass else
               KernelBase.process_with_watermarks(kernel, [rows_b], list(marks), state))
        state.commit()
        return time.perf_counter() - start, 0 if out is None else len(out)

    one_pass = [run(b, True) for b in range(buckets)]
    segmented = [run(b, False) for b in range(min(segment_buckets, buckets))]
    objects = [run(b, True, object_keys=True) for b in range(min(object_buckets, buckets))]
    assert all(a[1] == b[1] for a, b in zip(one_pass, segmented, strict=False)), "the two paths fired differently"
    assert all(a[1] == b[1] for a, b in zip(one_pass, objects, strict=False)), "object keys fired differently"
    return {"rows": rows, "keys": keys, "buckets": buckets, "watermarks": len(marks),
            "one_pass_s_per_bucket": [round(t, 2) for t, _ in one_pass],
            "one_pass_object_time_keys_s_per_bucket": [round(t, 2) for t, _ in objects],
            "segment_by_segment_s_per_bucket": [round(t, 1) for t, _ in segmented],
            "windows_fired": sum(n for _, n in one_pass)}


def staging_profile(rows: int, keys: int) -> dict:
    """CPU seconds to stage ``rows`` rows of the filesystem table (one Parquet file) for the stream:
    as Python rows then Arrow arrays (before), and as Arrow columns (``ParquetFormat.decode_arrow``)."""
    from changeflow.common.types import DataTypes as T
    from changeflow.connectors.formats import ParquetFormat

    schema = (("ts", T.TIMESTAMP(3)), ("k", T.BIGINT()), ("v", T.BIGINT()))
    with tempfile.TemporaryDirectory() as directory:
        write_files(directory, rows, keys, 1)
        with open(os.path.join(directory, os.listdir(directory)[0]), "rb") as f:
            data = f.read()
    start = time.process_time()
    columns = list(zip(*ParquetFormat().decode_bytes(data, "f", schema), strict=True))
    by_rows = pa.Table.from_arrays([pa.array(list(c)) for c in columns], names=[n for n, _ in schema])
    rows_s = time.process_time() - start
    start = time.process_time()
    by_columns = ParquetFormat().decode_arrow(data, "f", schema)
    columns_s = time.process_time() - start
    assert by_columns is not None and by_columns.equals(by_rows.cast(by_columns.schema)), "the two reads differ"
    return {"python_rows": round(rows_s, 3), "arrow_columns": round(columns_s, 3)}


def stage_profile(rows: int, keys: int, buckets: int = 8) -> dict:
    """The Python stages of one micro-batch of ``rows`` rows (no Spark), CPU seconds each, one phase and two.

    What each stage does on Spark: the watermark assigner's ``mapInArrow`` (the Arrow
    batch in, the watermarks found, the rows and watermark rows out), the packing
    stage's ``mapInPandas`` (Arrow to pandas, dtypes normalised, the local window phase
    when there is one, each bucket's rows pickled) and, after the shuffle, every
    bucket's unpickling and window kernel over paged state. The rest of a micro-batch
    is the JVM's (reading, the window columns, Arrow, the shuffle, state store commits).
    """
    import pickle

    from changeflow.common.types import DataTypes as T
    from changeflow.kernels.aggregate.functions import AggCall
    from changeflow.kernels.aggregate.local_window import LocalWindowAggregate
    from changeflow.kernels.aggregate.window_agg import WindowAggregate
    from changeflow.kernels.watermark_emissions import emitted_watermarks
    from changeflow.runtime.spark.event_time import WINDOW_ROWS_PER_PAGE
    from changeflow.runtime.spark.packing import PAYLOAD, Packer, unpack
    from changeflow.state.paged import DictPageStore, PagedKeyedState

    names = ["window_start", "window_end", "k"]
    calls = [AggCall("count_star", None, T.BIGINT(False), "cnt"), AggCall("sum", "v", T.BIGINT(), "s")]
    rng = np.random.default_rng(7)
    ms = event_times(rng, 1_000, rows)
    window = ms - ms % WINDOW_MS
    offset = int((EPOCH - np.datetime64("1970-01-01T00:00:00", "ms")).astype(np.int64))
    stamps = (EPOCH + ms.astype("timedelta64[ms]")).astype("datetime64[us]")
    # The assigner's input as Spark sends it: the row's columns, bookkeeping, the watermark value.
    arrow = pa.record_batch({"ts": pa.array(stamps), "k": pa.array(rng.integers(0, keys, rows)),
                             "v": pa.array(rng.integers(0, 1000, rows)), "_kind": pa.array(np.zeros(rows, np.int8)),
                             "_seq": pa.array(np.arange(rows, dtype=np.int64)),
                             "_sub": pa.array(np.zeros(rows, dtype=np.int64)),
                             "__watermark": pa.array(ms + offset - 2_000)})
    out: dict = {"rows": rows, "keys": keys, "buckets": buckets}
    clock = time.process_time
    out["staging_s"] = staging_profile(rows, keys)
    start = clock()
    marks, _, pending = emitted_watermarks(arrow.column(6).to_numpy(zero_copy_only=False),
                                           arrow.column(4).to_numpy(zero_copy_only=False), None, None, 200)
    marks += [pending] if pending is not None else []
    out["assigner_s"] = round(clock() - start, 3)
    # The packing stage's input: the window columns (TIMESTAMP as Spark's Arrow gives it), k, v, bookkeeping.
    def spark_stamps(values: np.ndarray) -> np.ndarray:
        return (EPOCH + values.astype("timedelta64[ms]")).astype("datetime64[us]")

    frame = pd.DataFrame({"window_start": spark_stamps(window), "window_end": spark_stamps(window + WINDOW_MS),
                          "k": arrow.column(1).to_numpy(), "v": arrow.column(2).to_numpy(),
                          "_kind": np.zeros(rows, np.int8), "_seq": np.arange(rows, dtype=np.int64),
                          "_sub": np.zeros(rows, dtype=np.int64)})
    dtypes = {"window_start": "datetime64[ns]", "window_end": "datetime64[ns]", "k": "Int64", "v": "Int64"}
    for phases in (1, 2):
        local = LocalWindowAggregate(names, calls, "window_end") if phases == 2 else None
        packer = Packer(names, buckets, list(frame.columns), dtypes, local, 0 if local else None)
        start = clock()
        packed = pd.concat(list(packer(iter([frame.copy()]), lambda: [(0, p, w) for p, w in marks])))
        packing = clock() - start
        kernel_s, fired = 0.0, 0
        for payloads in packed.groupby("_bucket")[PAYLOAD]:
            kernel = WindowAggregate(names, calls, "window_end", partial_input=phases == 2)
            state = PagedKeyedState(DictPageStore(), names, 1, WINDOW_ROWS_PER_PAGE)
            start = clock()
            got = kernel.process_with_watermarks([unpack(payloads[1])], list(marks), state)
            state.commit()
            kernel_s += clock() - start
            fired += 0 if got is None else len(got)
        out[f"{phases}_phase"] = {"packing_s": round(packing, 3), "kernel_s_all_buckets": round(kernel_s, 3),
                                  "rows_shuffled": int(sum(len(pickle.loads(p)) for p in packed[PAYLOAD])),
                                  "bytes_shuffled": int(sum(len(p) for p in packed[PAYLOAD])),
                                  "windows_fired": fired}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--keys", type=int, default=1_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--state-rows", type=int, default=2_000_000)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "event_time_window.json"))
    parser.add_argument("--flink-python", help="PyFlink 2.3's python: also run the query on Flink (same rows)")
    parser.add_argument("--kernel", action="store_true", help="only one micro-batch in the kernel (no Spark)")
    parser.add_argument("--kernel-rows", type=int, default=250_000)
    parser.add_argument("--segment-buckets", type=int, default=1)
    parser.add_argument("--object-buckets", type=int, default=8,
                        help="buckets also run with the time keys as objects (as before they stayed datetime64)")
    parser.add_argument("--changeflow-first", action="store_true", help="run changeflow's query before Spark's")
    parser.add_argument("--stages", action="store_true",
                        help="only the Python stages of one micro-batch of --kernel-rows rows (no Spark)")
    args = parser.parse_args()
    if args.stages:
        print(json.dumps({"date": dt.date.today().isoformat(), "load_average": os.getloadavg()[0],
                          **stage_profile(args.kernel_rows, args.keys)}, indent=1))
        return
    if args.kernel:
        report = {"date": dt.date.today().isoformat(), "load_average": os.getloadavg()[0],
                  **kernel_micro_batch(args.kernel_rows, args.keys, segment_buckets=args.segment_buckets,
                                     object_buckets=args.object_buckets)}
        print(json.dumps(report, indent=1))
        return
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "4"})
    workdir = tempfile.mkdtemp(prefix="cf-bench-window-")
    try:
        data = os.path.join(workdir, "data")
        os.makedirs(data)
        write_files(data, args.rows, args.keys, args.files)
        load_start = os.getloadavg()[0]   # the machine may be shared: the load goes with the figures
        start_stage = max([s["stage"] for s in spark_stages(spark)], default=-1)
        if args.changeflow_first:   # alternate the order between runs: a shared machine's load drifts
            (changeflow_s, changeflow_batches), changeflow_cpu = timed(
                lambda: changeflow_run(spark, data, args.rows, args.files))
            first_stages = spark_stages(spark, start_stage)
            (spark_s, spark_batches, spark_durations), spark_cpu = timed(lambda: spark_baseline(spark, data, workdir))
        else:
            (spark_s, spark_batches, spark_durations), spark_cpu = timed(lambda: spark_baseline(spark, data, workdir))
            first_stages = spark_stages(spark, start_stage)
            (changeflow_s, changeflow_batches), changeflow_cpu = timed(
                lambda: changeflow_run(spark, data, args.rows, args.files))
        second_stages = spark_stages(spark, max([s["stage"] for s in first_stages], default=start_stage))
        changeflow_stages, spark_query_stages = ((first_stages, second_stages) if args.changeflow_first
                                                 else (second_stages, first_stages))
        flink_s = None
        if args.flink_python:
            csv_data = os.path.join(workdir, "csv")
            os.makedirs(csv_data)
            write_csv_copies(data, csv_data)
            try:
                flink_s = flink_run(args.flink_python, csv_data)
            except (subprocess.CalledProcessError, ValueError, KeyError) as failed:   # keep the other figures
                print(f"the Flink run failed: {failed}", file=sys.stderr)
        growth = state_growth(args.state_rows, args.keys)
        report = {"date": dt.date.today().isoformat(), "rows": args.rows, "keys": args.keys, "files": args.files,
                  "window": "TUMBLE 10 s, watermark ts - 2 s, event time 1 ms a row, up to 1 s disorder",
                  "order": "changeflow first" if args.changeflow_first else "spark first",
                  "spark_s": round(spark_s, 1), "changeflow_s": round(changeflow_s, 1),
                  "ratio": round(changeflow_s / spark_s, 2),
                  **({} if spark_cpu is None or changeflow_cpu is None else {
                      "spark_cpu_s": spark_cpu, "changeflow_cpu_s": changeflow_cpu,
                      "cpu_ratio": round(changeflow_cpu / spark_cpu, 2)}),
                  **({} if flink_s is None else {"flink_s": round(flink_s, 1),
                                                 "ratio_to_flink": round(changeflow_s / flink_s, 2)}),
                  "spark_batch_ms": spark_durations, "changeflow_batch_ms": changeflow_batches,
                  "spark_stage_medians": stage_medians(spark_query_stages),
                  "changeflow_stage_medians": stage_medians(changeflow_stages),
                  "spark_state_after_batches": spark_batches[:: max(1, len(spark_batches) // 10)] + spark_batches[-1:],
                  "load_average_1min": {"start": load_start, "end": os.getloadavg()[0]},
                  "state_rows_after_batches": growth[:: max(1, len(growth) // 10)] + growth[-1:]}
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
