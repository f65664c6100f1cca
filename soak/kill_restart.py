"""Kill-and-restart soak: streaming INSERT jobs SIGKILLed again and again lose, repeat and miscompute nothing.

A child process runs four named streaming INSERT jobs over one monitored
directory of CSV files (``changeflow.checkpoint-dir`` set, so each restart
resumes from the checkpoints); this script keeps adding input files, kills the
child with SIGKILL at random moments, and starts it again. After the last
restart it lets the jobs catch up, then reads every sink back with changeflow's
own sources and compares it with the result computed in plain Python from all
the input written:

=========  =======================================================  ==========================================
job        query                                                    sink
=========  =======================================================  ==========================================
two_level  ``SUM`` per key, then ``SUM``/``COUNT`` per group         filesystem, upsert changelog (CSV)
raw        a filter (insert-only)                                   filesystem, append (JSON): no row twice
distinct   ``COUNT(DISTINCT id)`` per key, mini-batch, flush 2 s    filesystem, upsert changelog (CSV)
printed    ``SUM`` per key                                          print (the child's standard output)
=========  =======================================================  ==========================================

The print sink has no storage to take a repeat back: a micro-batch delivered
and recorded as delivered is skipped when a resumed job runs it again, so
only a kill between printing and recording (a window of microseconds) could
print it twice; the soak reports it if it happens.

Run: ``.venv/bin/python soak/kill_restart.py --kills 20`` (about 20-30 minutes on two
cores); the figures go to ``soak/results/kill_restart.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

JOBS = {
    "two_level": ("CREATE TABLE two_level (g INT, total BIGINT, n BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ("
                  "'connector' = 'filesystem', 'path' = '{out}/two_level', 'format' = 'csv', "
                  "'sink.changelog-mode' = 'upsert')",
                  "INSERT INTO two_level SELECT g, SUM(s), COUNT(*) FROM "
                  "(SELECT MOD(k, 5) AS g, k, SUM(v) AS s FROM src GROUP BY MOD(k, 5), k) GROUP BY g", {}),
    "raw": ("CREATE TABLE raw (id BIGINT, k INT, v INT) WITH ("
            "'connector' = 'filesystem', 'path' = '{out}/raw', 'format' = 'json')",
            "INSERT INTO raw SELECT id, k, v FROM src WHERE MOD(v, 3) <> 0", {}),
    "distinct": ("CREATE TABLE uv (k INT, uv BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
                 "'connector' = 'filesystem', 'path' = '{out}/distinct', 'format' = 'csv', "
                 "'sink.changelog-mode' = 'upsert')",
                 "INSERT INTO uv SELECT k, COUNT(DISTINCT MOD(id, 97)) FROM src GROUP BY k",
                 {"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": "1 s",
                  "table.exec.mini-batch.size": "1000", "execution.max-flush-interval": "2 s"}),
    "printed": ("CREATE TABLE printed (k INT, total BIGINT) WITH ('connector' = 'print')",
                "INSERT INTO printed SELECT k, SUM(v) FROM src GROUP BY k", {}),
}


def child(work: str) -> None:
    """Run the four jobs until killed."""
    from changeflow.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("changeflow.checkpoint-dir", f"{work}/checkpoints")
    config.set("changeflow.state.buckets", "2")
    t_env.execute_sql(f"CREATE TABLE src (id BIGINT, k INT, v INT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{work}/in', 'format' = 'csv', 'source.monitor-interval' = '500 ms')")
    jobs = []
    # The job with settings of its own (mini-batch, flush interval) is submitted last.
    for name, (ddl, insert, settings) in sorted(JOBS.items(), key=lambda job: bool(job[1][2])):
        t_env.execute_sql(ddl.format(out=f"{work}/out"))
        for key, value in settings.items():
            config.set(key, value)
        config.set("pipeline.name", name)
        jobs.append(t_env.execute_sql(insert).get_job_client())  # settings are taken at submission
    print("CHILD-READY", flush=True, file=sys.stderr)
    while True:  # the source is monitored: the jobs never end, the parent kills this process
        for job in jobs:
            if job.get_job_status() == "FAILED":
                job.wait()  # raises the job's error
        time.sleep(1)


def write_input(work: str, number: int, rng: random.Random, rows: list[tuple]) -> None:
    lines = []
    for _ in range(50):
        row = (len(rows), rng.randrange(20), rng.randrange(-50, 100))
        rows.append(row)
        lines.append(",".join(map(str, row)))
    hidden = os.path.join(work, "in", f".{number:06d}.csv.tmp")
    with open(hidden, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(hidden, os.path.join(work, "in", f"{number:06d}.csv"))


def expected(rows: list[tuple]) -> dict:
    sums: dict = defaultdict(int)
    for _, k, v in rows:
        sums[k] += v
    groups: dict = defaultdict(lambda: [0, 0])
    for k, s in sums.items():
        groups[k % 5][0] += s
        groups[k % 5][1] += 1
    distinct: dict = defaultdict(set)
    for i, k, _ in rows:
        distinct[k].add(i % 97)
    return {"two_level": {g: tuple(t) for g, t in groups.items()},
            "raw": Counter((i, k, v) for i, k, v in rows if v % 3 != 0),
            "distinct": {k: len(s) for k, s in distinct.items()},
            "printed": dict(sums)}


def read_back(work: str, logs: list[str]) -> dict:
    """Every sink as changeflow's own sources read it (the print sink: its lines, replayed)."""
    from changeflow.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())

    def upserts(path: str, columns: str, width: int) -> dict:
        if not os.path.isdir(path):  # nothing written yet
            return {}
        t_env.execute_sql(f"CREATE TEMPORARY TABLE IF NOT EXISTS log_{width}_{abs(hash(path))} "
                          f"(op STRING, {columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                          f"'format' = 'csv')")
        table: dict = {}
        with t_env.sql_query(f"SELECT * FROM log_{width}_{abs(hash(path))}").execute().collect() as rows:
            for r in rows:
                op, key, *values = tuple(r)
                if op in ("+I", "+U"):
                    table[key] = tuple(values) if len(values) > 1 else values[0]
                else:
                    table.pop(key, None)
        return table

    out = f"{work}/out"
    t_env.execute_sql(f"CREATE TEMPORARY TABLE raw_back (id BIGINT, k INT, v INT) WITH ('connector' = "
                      f"'filesystem', 'path' = '{out}/raw', 'format' = 'json')")
    raw: Counter = Counter()
    if os.path.isdir(f"{out}/raw"):
        with t_env.sql_query("SELECT * FROM raw_back").execute().collect() as rows:
            raw = Counter(tuple(r) for r in rows)
    printed: dict = {}
    pattern = re.compile(r"^([+-][IUD])\[(-?\d+), (-?\d+)\]$")
    for log in logs:
        with open(log) as f:
            for line in f:
                m = pattern.match(line.strip())
                if m:
                    op, k, total = m.group(1), int(m.group(2)), int(m.group(3))
                    if op in ("+I", "+U"):
                        printed[k] = total
                    else:
                        printed.pop(k, None)
    return {"two_level": upserts(f"{out}/two_level", "g INT, total BIGINT, n BIGINT", 3),
            "raw": raw, "distinct": upserts(f"{out}/distinct", "k INT, uv BIGINT", 2), "printed": printed}


def start_child(work: str, run: int) -> tuple[subprocess.Popen, str]:
    log = os.path.join(work, f"stdout-{run:03d}.log")
    # The child gets its own copies of the descriptors: this process closes its ones.
    with open(log, "w") as out, open(os.path.join(work, f"stderr-{run:03d}.log"), "w") as err:
        process = subprocess.Popen([sys.executable, __file__, "--child", work], stdout=out, stderr=err)
    return process, log


def wait_ready(process: subprocess.Popen, work: str, run: int, limit_s: float = 300) -> float:
    started = time.monotonic()
    path = os.path.join(work, f"stderr-{run:03d}.log")
    while time.monotonic() - started < limit_s:
        if process.poll() is not None:
            raise RuntimeError(f"child exited with {process.returncode}; see {path}")
        with open(path) as f:
            if "CHILD-READY" in f.read():
                return time.monotonic() - started
        time.sleep(0.2)
    raise RuntimeError("child not ready in time")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--catch-up-s", type=float, default=600)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "kill_restart.json"))
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="changeflow-soak-")
    os.makedirs(f"{work}/in")
    rows: list[tuple] = []
    logs, kills, ready_s = [], [], []
    files = 0
    started = time.monotonic()
    try:
        for run in range(args.kills + 1):
            process, log = start_child(work, run)
            logs.append(log)
            ready_s.append(wait_ready(process, work, run))
            for _ in range(3):
                write_input(work, files, rng, rows)
                files += 1
                time.sleep(rng.uniform(0.3, 2.0))
            if run == args.kills:
                break
            time.sleep(rng.uniform(2, 25))
            _alive(process, work, run)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            kills.append(round(time.monotonic() - started, 1))
            print(f"kill {len(kills)} at {kills[-1]} s ({files} files written)", flush=True)
        want = expected(rows)
        deadline = time.monotonic() + args.catch_up_s
        while True:  # the last run catches up with every file: then each sink must equal the expected table
            got = read_back(work, logs)
            if got == want or time.monotonic() > deadline:
                break
            _alive(process, work, args.kills)
            time.sleep(10)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        verdict = {name: got[name] == want[name] for name in want}
        result = {"kills": len(kills), "files": files, "rows": len(rows), "seconds": round(time.monotonic() - started),
                  "start_to_ready_s": {"median": sorted(ready_s)[len(ready_s) // 2], "max": max(ready_s)},
                  "sinks_equal_expected": verdict,
                  "differences": {n: _difference(got[n], want[n]) for n in want if not verdict[n]}}
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2, default=str)
        print(json.dumps(result, indent=2, default=str))
        if not all(verdict.values()):
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _alive(process: subprocess.Popen, work: str, run: int) -> None:
    """A job that failed by itself (not killed) fails the soak, with the end of its error."""
    if process.poll() is not None:
        with open(os.path.join(work, f"stderr-{run:03d}.log")) as f:
            tail = f.read()[-3000:]
        raise RuntimeError(f"run {run}: the jobs' process ended with {process.returncode} before it was killed:\n"
                           f"{tail}")


def _difference(got, want) -> dict:
    if isinstance(want, Counter):
        return {"missing": list((want - got).items())[:10], "extra": list((got - want).items())[:10]}
    keys = set(got) | set(want)
    return {str(k): {"got": got.get(k), "want": want.get(k)}
            for k in sorted(keys, key=str) if got.get(k) != want.get(k)}


if __name__ == "__main__":
    main()
