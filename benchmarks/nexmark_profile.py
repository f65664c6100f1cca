"""Where a Nexmark query's CPU seconds go on changeflow: driver, JVM (by thread group), Python workers (by stage).

Usage (from the repository root; the query files as for ``nexmark.py``)::

    .venv/bin/python benchmarks/nexmark_profile.py --queries NEXMARK/.../queries --events 30000 100000
        [--runs 2] [--jvm-options "-XX:TieredStopAtLevel=1"] q5 q8 q4

Per query, event count and run (a process runs each query ``--runs`` times in a row, so the
first run carries the query's share of warm-up and the later ones show it warm), the CPU
seconds of ``nexmark.py``'s timed span (``INSERT INTO`` the blackhole sink, ``.wait()``)
split into:

- ``driver_python``: this process (planning, the driver loop, staging the event file);
- ``jvm``: Spark's JVM, by thread group from ``/proc/<pid>/task``: ``jit`` (C1/C2
  compiler threads), ``gc``, ``tasks`` (executor task threads: scans, shuffles, Spark's
  generated code, the state store), ``other`` (query planning and the micro-batch thread,
  RPC, ...);
- ``python_workers``: every other process of the tree (Spark's Python workers and their
  fork server), and within it ``stages``: the CPU seconds spent inside each ``mapInPandas``
  / ``mapInArrow`` function (timed by wrapping the function given to Spark), the rest
  (``unattributed``: the stateful operators' ``transformWithStateInPandas`` kernels,
  worker starts) by difference.

With ``--cprofile DIR`` the stateful operators' kernels run under cProfile in the workers
(``benchmarks/worker_cprofile``; its overhead counts in ``python_workers``); ``jvm_threads``
gives the JVM's CPU seconds by thread name. Writes ``--out`` (JSON). Threads and processes
that ended during the span are counted
through their parents' ``cutime`` only where the kernel gives it (a JVM thread that ended
is lost: the JVM's total is taken from the process, the groups from live threads, and the
difference is reported as ``jvm.ended_threads``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import nexmark_workload as W  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")
_STAGE_LOG = os.path.join(tempfile.gettempdir(), f"changeflow-profile-{os.getpid()}.log")


def _read_stat(path: str) -> tuple[str, int, float, float] | None:
    """(comm, ppid, own CPU s, waited children's CPU s) from a ``stat`` file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return comm, int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS, \
        (int(fields[13]) + int(fields[14])) / _TICKS


def _group(comm: str) -> str:
    if "Compiler" in comm or comm.startswith(("C1 ", "C2 ")):
        return "jit"
    if comm.startswith(("GC ", "G1 ")) or "GC" in comm:
        return "gc"
    if comm.startswith("Executor task"):
        return "tasks"
    if comm.startswith("stream exec"):
        return "micro_batch_thread"   # a streaming query's driver loop: planning, offsets, commits
    if "python" in comm.lower() or "writer" in comm.lower():
        return "python_io"   # the threads feeding Python workers and reading their output
    if comm.startswith("rocksdb"):
        return "rocksdb"
    return "other"


class ThreadSampler(threading.Thread):
    """The CPU seconds of every JVM thread, sampled every 0.5 s: threads that end between two
    snapshots (a streaming query's own thread, the Python runners' writer threads) are kept."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[tuple[int, int], tuple[str, float]] = {}
        self.done = threading.Event()
        self.jvms = _jvms()
        self.own_cpu = 0.0   # the sampling's own CPU seconds, in this (the driver's) process: not the query's

    def sample(self) -> None:
        for pid in self.jvms:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                t = _read_stat(f"/proc/{pid}/task/{tid}/stat")
                if t is not None:
                    self.seen[(pid, int(tid))] = (t[0], t[2])

    def run(self) -> None:
        while not self.done.wait(0.5):
            self.sample()
        self.own_cpu = time.thread_time()

    def groups(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for comm, cpu in self.seen.values():
            out[_group(comm)] = out.get(_group(comm), 0.0) + cpu
        return out

    def names(self) -> dict[str, float]:
        """CPU seconds by thread name, numbers taken out (``Executor task launch worker for task 12``
        and ``... task 13`` are one name): what the groups are made of."""
        out: dict[str, float] = {}
        for comm, cpu in self.seen.values():
            name = re.sub(r"\d+", "N", comm)
            out[name] = out.get(name, 0.0) + cpu
        return out


def _jvms() -> list[int]:
    me = str(os.getpid())
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = _read_stat(f"/proc/{name}/stat")
            if s is not None and s[0] == "java" and str(s[1]) == me:
                out.append(int(name))
    return out


def snapshot() -> dict:
    """The CPU seconds of this process's tree: per process, and per JVM thread group."""
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = _read_stat(f"/proc/{name}/stat")
            if s is not None:
                stats[int(name)] = s
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    me = os.getpid()
    out = {"driver_python": stats[me][2], "jvm": 0.0, "jvm_groups": {}, "python_workers": 0.0}
    todo = list(children.get(me, ()))
    # Children this process waited for (e.g. the JVM's launcher) are in its cutime.
    out["driver_children_waited"] = stats[me][3]
    while todo:
        pid = todo.pop()
        comm, _, own, waited = stats[pid]
        if comm == "java":
            out["jvm"] += own + waited
            for tid in os.listdir(f"/proc/{pid}/task"):
                t = _read_stat(f"/proc/{pid}/task/{tid}/stat")
                if t is not None:
                    out["jvm_groups"][_group(t[0])] = out["jvm_groups"].get(_group(t[0]), 0.0) + t[2]
        else:
            out["python_workers"] += own + waited
        todo.extend(children.get(pid, ()))
    return out


def _diff(after: dict, before: dict) -> dict:
    out = {}
    for key, value in after.items():
        if isinstance(value, dict):
            out[key] = {k: round(v - before.get(key, {}).get(k, 0.0), 2) for k, v in value.items()}
        else:
            out[key] = round(value - before.get(key, 0.0), 2)
    return out


def _wrap_stages() -> None:
    """Time every function given to mapInPandas / mapInArrow (in the worker: CPU seconds per call into a log)."""
    from pyspark.sql.classic.dataframe import DataFrame

    for method in ("mapInPandas", "mapInArrow"):
        original = getattr(DataFrame, method)

        def wrapped(self, func, schema, *args, _original=original, _method=method, **kwargs):
            label = f"{_method}:{type(func).__name__}"
            inner = getattr(func, "packer", None)  # a ControlFanOut around a Packer
            if inner is not None:
                label += f"({type(inner).__name__}"
                local = getattr(inner, "local", None)
                label += f"/{type(local).__name__})" if local is not None else ")"
            elif getattr(func, "local", None) is not None:
                label += f"/{type(func.local).__name__}"
            log = _STAGE_LOG

            def timed(frames, *a, **k):
                start = time.process_time()
                try:
                    yield from func(frames, *a, **k)
                finally:
                    with open(log, "a", encoding="utf-8") as f:
                        f.write(f"{label}\t{time.process_time() - start}\n")
            return _original(self, timed, schema, *args, **kwargs)

        setattr(DataFrame, method, wrapped)


def _stages() -> dict:
    out: dict[str, float] = {}
    if os.path.exists(_STAGE_LOG):
        with open(_STAGE_LOG, encoding="utf-8") as f:
            for line in f:
                label, seconds = line.rstrip("\n").split("\t")
                out[label] = out.get(label, 0.0) + float(seconds)
        os.remove(_STAGE_LOG)
    return {k: round(v, 2) for k, v in out.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", required=True)
    parser.add_argument("--events", type=int, nargs="+", default=[30_000, 100_000])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--data", help="directory for the event files (kept; files already there are used)")
    parser.add_argument("--jvm-options", default="", help="extra options of the driver JVM")
    parser.add_argument("--cprofile", metavar="DIR", help="profile the stateful operators' handleInputRows in the "
                        "Python workers with cProfile into DIR/w<pid>.prof (benchmarks/worker_cprofile)")
    parser.add_argument("--out", required=True)
    parser.add_argument("names", nargs="+", metavar="query")
    args = parser.parse_args(argv)
    queries = os.path.abspath(args.queries)
    data = args.data or tempfile.mkdtemp(prefix="changeflow-nexmark-profile-")
    os.makedirs(data, exist_ok=True)
    side_input = os.path.join(data, "side_input.txt")
    if not os.path.exists(side_input):
        W.write_side_input(side_input)
    files = {}
    for n in args.events:
        files[n] = os.path.join(data, f"events-{n}.json")
        if not os.path.exists(files[n]):
            W.write_events(files[n], n)

    if args.cprofile:
        # Read by the workers' sitecustomize; the JVM started below passes the environment on to them.
        os.makedirs(args.cprofile, exist_ok=True)
        hook = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker_cprofile")
        os.environ["CHANGEFLOW_CPROFILE_DIR"] = os.path.abspath(args.cprofile)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (hook, os.environ.get("PYTHONPATH")) if p)
    from changeflow.runtime.spark import session
    from changeflow.table import EnvironmentSettings, TableEnvironment

    extra = {"spark.sql.shuffle.partitions": str(args.parallelism), "spark.driver.memory": "4g"}
    if args.jvm_options:
        extra["spark.driver.extraJavaOptions"] = args.jvm_options
    t0 = time.perf_counter()
    before = snapshot()
    spark = session.get_or_create(f"local[{args.parallelism}]", extra)
    report = {"events": args.events, "parallelism": args.parallelism, "jvm_options": args.jvm_options,
              "session_start": {"seconds": round(time.perf_counter() - t0, 2), "cpu": _diff(snapshot(), before)},
              "load_average_before": W.load_average(), "runs": []}
    _wrap_stages()
    for query in args.names:
        for n in args.events:
            for run in range(args.runs):
                t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
                *ddl, insert = W.statements(queries, query, files[n], side_input,
                                            os.path.join(data, f"out-{query}-{n}-{run}"))
                for statement in ddl:
                    t_env.execute_sql(statement)
                _stages()
                sampler = ThreadSampler()
                sampler.sample()
                threads_before = sampler.groups()
                names_before = sampler.names()
                sampler.seen.clear()
                sampler.sample()
                before, start = snapshot(), time.perf_counter()
                sampler.start()
                t_env.execute_sql(insert).wait()
                seconds = time.perf_counter() - start
                cpu = _diff(snapshot(), before)
                sampler.done.set()
                sampler.join()
                sampler.sample()
                cpu["driver_python"] = round(cpu["driver_python"] - sampler.own_cpu, 2)
                cpu["sampler_cpu_subtracted"] = round(sampler.own_cpu, 2)
                cpu["jvm_groups"] = {k: round(v - threads_before.get(k, 0.0), 2)
                                     for k, v in sampler.groups().items()}
                names = {k: round(v - names_before.get(k, 0.0), 2) for k, v in sampler.names().items()}
                cpu["jvm_threads"] = dict(sorted(((k, v) for k, v in names.items() if v >= 0.05),
                                                 key=lambda kv: -kv[1]))
                total = cpu["driver_python"] + cpu["jvm"] + cpu["python_workers"] + cpu["driver_children_waited"]
                stages = _stages()
                cpu["jvm_ended_threads"] = round(cpu["jvm"] - sum(cpu["jvm_groups"].values()), 2)
                cpu["python_stages"] = stages
                cpu["python_unattributed"] = round(cpu["python_workers"] - sum(stages.values()), 2)
                entry = {"query": query, "events": n, "run": run, "seconds": round(seconds, 2),
                         "cpu_seconds": round(total, 2), "cpu": cpu, "load": W.load_average()}
                report["runs"].append(entry)
                print(json.dumps(entry), flush=True)
                with open(args.out, "w", encoding="utf-8") as f:
                    json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
