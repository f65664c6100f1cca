"""End to end: a keyed CDC source through ChangelogNormalize into an aggregation, the vectorised kernel
against the row-by-row one, in the same run.

A Debezium changelog in JSON files (``--records`` changes over ``--keys`` keys: creates, updates,
deletes, and a tenth of the records delivered twice, as an at-least-once CDC pipeline does) is read
by the ``filesystem`` connector in streaming mode with ``table.exec.source.cdc-events-duplicate``,
so the planner puts a ChangelogNormalize keyed by the primary key after the source (its ``-U`` rows
dropped first), and ``SUM``/``COUNT`` per group go to a ``blackhole`` sink. The clock times
``execute_sql("INSERT ...").wait()`` (planning, the Spark job, the end of input); the SparkSession
starts before it. The baseline is the same query with the kernel swapped for
:class:`~changeflow.kernels.normalize.rowwise.RowwiseChangelogNormalize` (the kernel object is
built on the driver and shipped to Spark's workers, so patching its factory swaps it there too).
Runs alternate (baseline, vectorised, ...) so that load changes hit both alike.

    .venv/bin/python benchmarks/normalize_end_to_end.py [--records 400000] [--keys 40000] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

RESULT = os.path.join(ROOT, "benchmarks", "results", "normalize_end_to_end.json")
GROUPS = 100


def _row(k: int, v: int) -> dict:
    return {"k": k, "g": k % GROUPS, "v": v}


def write_changelog(directory: str, records: int, keys: int, files: int, seed: int = 7) -> None:
    """Debezium records over ``keys`` keys in ``files`` files: each key created, then updated or deleted."""
    rng = np.random.default_rng(seed)
    key_of = rng.integers(0, keys, records)
    value_of = rng.integers(0, 1000, records)
    delete = rng.random(records) < 0.1
    twice = rng.random(records) < 0.1
    current: dict[int, int] = {}
    lines = []
    for k, v, d, again in zip(key_of.tolist(), value_of.tolist(), delete.tolist(), twice.tolist(), strict=True):
        before = current.get(k)
        if before is None:
            record = {"before": None, "after": _row(k, v), "op": "c"}
            current[k] = v
        elif d:
            record = {"before": _row(k, before), "after": None, "op": "d"}
            del current[k]
        else:
            record = {"before": _row(k, before), "after": _row(k, v), "op": "u"}
            current[k] = v
        text = json.dumps(record)
        lines.extend([text, text] if again else [text])
    per_file = -(-len(lines) // files)
    for i in range(files):
        with open(os.path.join(directory, f"part-{i:03d}.json"), "w") as f:
            f.write("\n".join(lines[i * per_file:(i + 1) * per_file]) + "\n")


def run(spark, directory: str, rowwise: bool) -> float:
    """Seconds of the INSERT with the vectorised kernel, or the row-by-row one."""
    import changeflow.runtime.spark.rank as rank
    from changeflow.kernels.normalize import changelog_normalize_kernel
    from changeflow.kernels.normalize.rowwise import RowwiseChangelogNormalize
    from changeflow.table import EnvironmentSettings, TableEnvironment

    def factory(columns, keys, **options):
        options.pop("ttl_ms", None)
        generate = options.pop("generate_update_before", True)
        return RowwiseChangelogNormalize(columns, keys, generate_update_before=generate, **options)

    rank.changelog_normalize_kernel = factory if rowwise else changelog_normalize_kernel
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("table.exec.source.cdc-events-duplicate", "true")
    t_env.execute_sql(f"CREATE TABLE src (k BIGINT, g BIGINT, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{directory}', 'format' = 'debezium-json')")
    t_env.execute_sql("CREATE TABLE snk (g BIGINT, s BIGINT, c BIGINT, PRIMARY KEY (g) NOT ENFORCED) "
                      "WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    t_env.execute_sql("INSERT INTO snk SELECT g, SUM(v), COUNT(*) FROM src GROUP BY g").wait()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--keys", type=int, default=40_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    from changeflow.runtime.spark import session

    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    directory = tempfile.mkdtemp(prefix="changeflow-normalize-bench-")
    try:
        write_changelog(directory, args.records, args.keys, args.files)
        loads = [os.getloadavg()[0]]
        times: dict[str, list[float]] = {"row-by-row": [], "vectorised": []}
        for _ in range(args.runs):
            for name in times:
                times[name].append(run(spark, directory, rowwise=name == "row-by-row"))
                loads.append(os.getloadavg()[0])
                print(f"{name}: {times[name][-1]:.1f} s (load {loads[-1]:.1f})", flush=True)
        best = {name: min(t) for name, t in times.items()}
        report = {"records": args.records, "keys": args.keys, "files": args.files, "seconds": times,
                  "speedup": best["row-by-row"] / best["vectorised"], "load_averages": loads}
        print(f"vectorised {report['speedup']:.2f}x faster end to end")
        with open(RESULT, "w") as f:
            json.dump(report, f, indent=1)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
