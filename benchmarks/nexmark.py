"""Nexmark q0-q23 on changeflow and on Flink 2.3, in the same run, on the same events.

Usage (from the repository root; nexmark's query files from a checkout of
https://github.com/nexmark/nexmark, not shipped here)::

    .venv/bin/python benchmarks/nexmark.py --queries NEXMARK/nexmark-flink/src/main/resources/queries
        --flink-python PYFLINK_VENV/bin/python [--events 100000] [--check-events 2000]
        [--parallelism 2] [q0 q5 ...]
    .venv/bin/python benchmarks/nexmark.py --table   # the results as docs/benchmarks.md's table

``--checks-only`` runs only the result checks; ``--checks-from REPORT`` (with ``--check-events 0``)
takes them from such a run's report; ``--out`` writes the report elsewhere (several processes
at once, each over its own queries; docs/benchmarks.md says how the last run was split).

1. Generates ``--events`` events once with changeflow's Nexmark generator
   (``nexmark_workload.write_events``: nexmark's proportions, 10,000 events per second of
   event time, a fixed base time) into one JSON-lines file, and ``--check-events`` more
   into another, and nexmark's ``side_input.txt``.
2. Per query and engine, a fresh streaming TableEnvironment creates nexmark's ``datagen``
   table as a ``filesystem``/``json`` table over the event file (nexmark's schema and
   watermark ``dateTime - INTERVAL '4' SECOND``), nexmark's views and the query's
   statements (``nexmark_workload.statements``), and the clock times
   ``execute_sql("INSERT INTO nexmark_qN ...").wait()`` into nexmark's blackhole sink:
   planning, the job, the end of input (session and JVM starts are before the clock).
   Events/s = ``--events`` / seconds; events per CPU-second = ``--events`` / the CPU seconds
   (user + system, from ``/proc``) of the engine's whole process tree over the same span:
   changeflow's driver, its JVM and Python workers; Flink's Python client and its JVM
   (``nexmark_flink.py``, run with ``--flink-python`` in one subprocess for all queries,
   first: Flink's figures are measured before changeflow's).
3. The check: each query's ``SELECT`` (the ``INSERT``'s query) over the small event file,
   its changelog collected and materialized on both engines, compared as multisets.
   q12 (processing-time windows) is not compared. q10 writes a partitioned filesystem sink:
   the files both engines' timed runs wrote are compared too (``sink_files``: per partition
   directory the records as a multiset, and the success files).

The report is rewritten after each query of changeflow's, so a run stopped early keeps
what it measured (the queries not reached say so).

Both engines run at ``--parallelism`` (Spark ``local[N]`` with N shuffle partitions;
Flink ``parallelism.default``). The event file is one file, read in order by one source
task on each engine (several files read in parallel would make events late).

Writes ``benchmarks/results/nexmark.json``: sizes, the load average before and after, and
per query each engine's seconds, CPU seconds, events/s, events per CPU-second, or its error's
first line, the ratios changeflow / Flink, and the check's outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import nexmark_workload as W  # noqa: E402

RESULT = os.path.join(ROOT, "benchmarks", "results", "nexmark.json")
_KINDS = {"INSERT": "+I", "UPDATE_BEFORE": "-U", "UPDATE_AFTER": "+U", "DELETE": "-D"}


def changeflow_run(spark, args, paths: dict, query: str, mode: str) -> dict:
    """One query on changeflow: ``blackhole`` (timed) or ``collect`` (materialized rows)."""
    from changeflow.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    events = paths["events"] if mode == "blackhole" else paths["check"]
    *ddl, insert = W.statements(args.queries, query, events, paths["side_input"],
                                os.path.join(paths["dir"], f"changeflow-{query}-{mode}"))
    for statement in ddl:
        t_env.execute_sql(statement)
    if mode == "collect":
        with t_env.execute_sql(W.select_of(insert)).collect() as rows:
            changes = [(_KINDS[r.get_row_kind().name], tuple(r)) for r in rows]
        return {"rows": W.encode(W.materialize(changes, W.UPSERT_KEYS.get(query)))}
    start = time.perf_counter()
    with W.TreeCpu() as cpu:
        t_env.execute_sql(insert).wait()
    return {"seconds": time.perf_counter() - start, "cpu_seconds": cpu.seconds()}


def flink_all(args, paths: dict) -> dict:
    """``nexmark_flink.py`` under PyFlink's python for every query of ``args.names`` (timed, then
    collected), in one process: ``{"<query>/<mode>": result}``."""
    command = [args.flink_python, os.path.join(ROOT, "benchmarks", "nexmark_flink.py"),
               "--queries", args.queries, "--events", paths["events"], "--side-input", paths["side_input"],
               "--out-dir", os.path.join(paths["dir"], "flink"), "--parallelism", str(args.parallelism)]
    if args.check_events:
        command += ["--check-events", paths["check"]]
    done = subprocess.run(command + list(args.names), stdout=subprocess.PIPE, check=False, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nexmark_flink.py exited with {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class LoadSampler(threading.Thread):
    """The 1-minute load average every 15 s while the benchmark runs (other users of the machine)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(15):
            self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict:
        s = self.samples or [os.getloadavg()[0]]
        return {"mean": round(sum(s) / len(s), 1), "min": round(min(s), 1), "max": round(max(s), 1),
                "samples": len(s)}


def figures(run: dict, events: int) -> dict:
    if "error" in run:
        return {"error": run["error"]}
    return {"seconds": round(run["seconds"], 2), "cpu_seconds": round(run["cpu_seconds"], 2),
            "events_per_s": round(events / run["seconds"]),
            "events_per_cpu_s": round(events / run["cpu_seconds"]) if run["cpu_seconds"] > 0 else None}


def check(query: str, ours: dict, theirs: dict) -> dict:
    """The materialized results of the two engines compared: ``agree``, or why not."""
    if query in W.NONDETERMINISTIC:
        return {"outcome": "not compared", "reason": W.NONDETERMINISTIC[query]}
    if "error" in ours or "error" in theirs:
        # the collect run's own error: it can fail where the timed run did not
        return {"outcome": "not compared", "reason": "; ".join(
            f"{'not run' if r['error'].startswith('not run') else 'fails'} on {name}"
            for name, r in (("changeflow", ours), ("Flink", theirs)) if "error" in r),
                "errors": {name: r["error"] for name, r in (("changeflow", ours), ("Flink", theirs))
                           if "error" in r}}
    a = {json.dumps(r): n for r, n in ours["rows"]}
    b = {json.dumps(r): n for r, n in theirs["rows"]}
    rows = sum(b.values())
    if a == b:
        return {"outcome": "agree", "rows": rows}
    only_ours = sorted(set(a) - set(b))
    only_theirs = sorted(set(b) - set(a))
    return {"outcome": "differ", "rows_changeflow": sum(a.values()), "rows_flink": rows,
            "only_changeflow": len(only_ours), "only_flink": len(only_theirs),
            "example_changeflow": only_ours[:1], "example_flink": only_theirs[:1]}


def entry(query: str, ours: dict, flink: dict, events: int) -> dict:
    """One query's line of the report: both engines' figures, the ratios, the check."""
    mine, theirs = ours.get(f"{query}/blackhole"), flink.get(f"{query}/blackhole")
    missing = {"error": "not run (the run was stopped)"}
    out = {"changeflow": figures(mine, events) if mine else missing,
           "flink": figures(theirs, events) if theirs else missing}
    if mine and theirs and "error" not in mine and "error" not in theirs:
        out["ratio_events_per_s"] = round(out["changeflow"]["events_per_s"] / out["flink"]["events_per_s"], 3)
        if out["changeflow"]["events_per_cpu_s"] and out["flink"]["events_per_cpu_s"]:
            out["ratio_events_per_cpu_s"] = round(out["changeflow"]["events_per_cpu_s"]
                                                  / out["flink"]["events_per_cpu_s"], 3)
    if f"{query}/collect" in ours and f"{query}/collect" in flink:
        out["check"] = check(query, ours[f"{query}/collect"], flink[f"{query}/collect"])
    if f"{query}/sink_files" in ours:
        out["sink_files"] = ours[f"{query}/sink_files"]
    return out


def compare_sink_files(ours: str, theirs: str) -> dict:
    """The files two engines' timed runs wrote into a filesystem sink (q10), compared: per directory
    below the sink's path the records as a multiset (file names differ) and the success files."""
    from conformance.partition_cases import snapshot

    if not os.path.isdir(ours) or not os.path.isdir(theirs):
        return {"outcome": "not compared", "reason": "a sink directory is missing"}
    a, b = snapshot(ours), snapshot(theirs)
    records = sum(len(d["records"]) for d in b.values())
    if a == b:
        return {"outcome": "agree", "directories": len(b), "records": records,
                "success_files": sum(len(d["marks"]) for d in b.values())}
    differing = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return {"outcome": "differ", "directories_changeflow": sorted(a), "directories_flink": sorted(b),
            "first_differing": differing[:1], "records_changeflow": sum(len(d["records"]) for d in a.values()),
            "records_flink": records}


def _cell(figures: dict, key: str) -> str:
    return f"{figures[key]:,}" if figures.get(key) else ""


def _reason(result: dict) -> str:
    # The error's first line, short enough for a table cell; "|" would end the cell.
    text = result["error"].replace("|", "/")
    text = text.split(": ", 1)[1] if text.startswith(("org.", "java.")) and ": " in text else text
    # Spark's streaming failure: the query's ids say nothing, the cause follows them
    text = re.sub(r"\[STREAM_FAILED\] Query \[id = [^]]*\] terminated with exception: ", "", text)
    return text if len(text) <= 160 else text[:157] + "..."


def _failed(result: dict) -> str:
    return "not run" if result.get("error", "").startswith("not run") else "fails"


def markdown_table(report: dict) -> str:
    """The results as the Markdown table of docs/benchmarks.md."""
    lines = ["| query | changeflow events/s | Flink events/s | ratio | changeflow events/CPU-s | "
             "Flink events/CPU-s | ratio | results (check run) |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    notes = []
    for q, r in report["results"].items():
        ours, theirs = r["changeflow"], r["flink"]
        check = r.get("check", {})
        outcome = {"agree": f"agree ({check.get('rows', 0):,} rows)",
                   "not compared": f"not compared: {check.get('reason')}",
                   "differ": f"differ ({check.get('only_changeflow')} rows only in changeflow's, "
                             f"{check.get('only_flink')} only in Flink's)"}.get(check.get("outcome"), "")
        lines.append(f"| {q} | {_cell(ours, 'events_per_s') or _failed(ours)} "
                     f"| {_cell(theirs, 'events_per_s') or _failed(theirs)} "
                     f"| {r.get('ratio_events_per_s', '')} | {_cell(ours, 'events_per_cpu_s')} "
                     f"| {_cell(theirs, 'events_per_cpu_s')} | {r.get('ratio_events_per_cpu_s', '')} | {outcome} |")
        for engine, result in (("changeflow", ours), ("Flink", theirs)):
            if "error" in result and _failed(result) == "fails":
                notes.append(f"- {q} on {engine}: {_reason(result)}")
            elif engine in check.get("errors", {}) and _failed({"error": check["errors"][engine]}) == "fails":
                notes.append(f"- {q} on {engine}, the check run: {_reason({'error': check['errors'][engine]})}")
    return "\n".join(lines) + "\n\nWhy a query does not run (the error's first line):\n\n" + "\n".join(notes)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", action="store_true",
                        help="print the Markdown table of benchmarks/results/nexmark.json and stop")
    parser.add_argument("--queries", help="nexmark's queries directory (ddl_gen.sql, q0.sql, ...)")
    parser.add_argument("--flink-python", help="the python of a PyFlink 2.3 environment")
    parser.add_argument("--events", type=int, default=100_000, help="events of the timed runs")
    parser.add_argument("--check-events", type=int, default=2_000, help="events of the result check (0: no check)")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--data", help="directory for the event files (kept; default: temporary; "
                                           "files already there are used)")
    parser.add_argument("--flink-results", help="do not start Flink: take its figures from this file, which a "
                                                "nexmark_flink.py started separately over --data's files writes")
    parser.add_argument("--checks-from", action="append", default=[],
                        help="with --check-events 0: take each query's result check from this earlier report "
                             "(a run over the same check events; repeatable, the first with a query's check wins)")
    parser.add_argument("--checks-only", action="store_true", help="run only the result checks (no timed runs)")
    parser.add_argument("--out", default=RESULT, help="the report's path (default: %(default)s)")
    parser.add_argument("names", nargs="*", default=W.QUERIES, metavar="query")
    args = parser.parse_args(argv)
    if args.table:
        with open(RESULT, encoding="utf-8") as f:
            print(markdown_table(json.load(f)))
        return 0
    if not args.queries or not (args.flink_python or args.flink_results):
        parser.error("--queries and --flink-python (or --flink-results) are needed to run the benchmark")
    args.queries = os.path.abspath(args.queries)

    data = args.data or tempfile.mkdtemp(prefix="changeflow-nexmark-")
    paths = {"dir": data, "events": os.path.join(data, "events.json"),
             "check": os.path.join(data, "check.json"), "side_input": os.path.join(data, "side_input.txt")}
    report = {"engines": {"changeflow": f"changeflow on Spark local[{args.parallelism}]",
                          "flink": "Flink 2.3 (PyFlink, local MiniCluster)"},
              "parallelism": args.parallelism, "events": args.events, "check_events": args.check_events,
              "source": "filesystem json, one file (nexmark's datagen schema and watermark)",
              "sink": "nexmark's (blackhole; q10 filesystem)", "first_event_rate": 10_000,
              "cpus": os.cpu_count(), "machine": platform.machine()}
    load = LoadSampler()
    load.start()
    started = time.perf_counter()
    modes = ("blackhole", "collect") if args.check_events else ("blackhole",)
    if args.checks_only:
        modes = ("collect",)
    try:
        if not os.path.exists(paths["events"]):
            t0 = time.perf_counter()
            W.write_events(paths["events"], args.events)
            if args.check_events:
                W.write_events(paths["check"], args.check_events)
            W.write_side_input(paths["side_input"])
            print(f"events written in {time.perf_counter() - t0:.1f} s", flush=True)
        flink: dict = {}
        if args.flink_results:
            report["engines_ran"] = "concurrently (Flink in a separate nexmark_flink.py process)"
        else:
            flink = flink_all(args, paths)
            report["engines_ran"] = "one after the other: Flink first, then changeflow"
        from changeflow.runtime.spark import session

        spark = session.get_or_create(f"local[{args.parallelism}]",
                                      {"spark.sql.shuffle.partitions": str(args.parallelism),
                                       "spark.driver.memory": "4g"})
        ours: dict = {}
        for query in args.names:
            for mode in modes:
                try:
                    ours[f"{query}/{mode}"] = changeflow_run(spark, args, paths, query, mode)
                except Exception as e:  # recorded; the other queries go on
                    ours[f"{query}/{mode}"] = {"error": W.error_line(e)}
                shown = {k: v for k, v in ours[f"{query}/{mode}"].items() if k != "rows"}
                print(f"changeflow {mode} {query}: {shown}", flush=True)
            if W.writes_files(args.queries, query) and not args.checks_only:  # q10: the sinks' files too
                ours[f"{query}/sink_files"] = compare_sink_files(
                    os.path.join(paths["dir"], f"changeflow-{query}-blackhole"),
                    os.path.join(paths["dir"], "flink", f"flink-{query}-blackhole"))
                print(f"sink files {query}: {ours[f'{query}/sink_files']}", flush=True)
            # After every query: a run stopped early keeps what it measured.
            if args.flink_results and os.path.exists(args.flink_results):
                flink = _read_flink(args.flink_results)
            write(report, ours, flink, args, load, started)
        while args.flink_results and not _flink_done(args.flink_results):
            time.sleep(10)  # the Flink process still runs: its figures complete the report
        if args.flink_results:
            flink = _read_flink(args.flink_results)
        write(report, ours, flink, args, load, started)
        print(f"wrote {args.out} in {report['total_seconds']} s")
    finally:
        load.done.set()
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)
    return 0


def _flink_done(path: str) -> bool:
    return os.path.exists(path) and open(path, encoding="utf-8").read().rstrip().endswith("}")


def _read_flink(path: str) -> dict:
    """What a separate ``nexmark_flink.py`` wrote: its final JSON line, or, while it runs, nothing."""
    if not _flink_done(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.loads(f.read().strip().splitlines()[-1])


def write(report: dict, ours: dict, flink: dict, args, load: LoadSampler, started: float) -> None:
    report["results"] = {q: entry(q, ours, flink, args.events) for q in sorted(args.names, key=lambda q: int(q[1:]))}
    for path in args.checks_from:
        take_checks(report, path)
    report["load_average_1min"] = load.summary()
    report["total_seconds"] = round(time.perf_counter() - started, 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


def take_checks(report: dict, path: str) -> None:
    """The result checks of an earlier report (its check run over the same, deterministic check events):
    the checks and the timed runs then come from two runs, which the report says."""
    try:
        with open(path, encoding="utf-8") as f:
            earlier = json.load(f)
    except (OSError, ValueError):  # the other run may be rewriting it: the next write takes it
        return
    report["check_events"] = earlier.get("check_events")
    report["checks_from"] = "an earlier run over the same check events (the timed and the check runs were separate)"
    for q, r in report["results"].items():
        check = earlier.get("results", {}).get(q, {}).get("check")
        if check and "check" not in r:
            r["check"] = check


if __name__ == "__main__":
    sys.exit(main())
