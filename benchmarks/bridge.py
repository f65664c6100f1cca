"""The Table <-> DataStream bridge: a changelog through ``to_changelog_stream -> map -> from_changelog_stream``.

Usage: .venv/bin/python benchmarks/bridge.py [--rows 100000] [--keys 1000] [--repeats 3]
       [--level spark|kernels] [--variants bridge,table] [--before DIR] [--out benchmarks/results/bridge.json]

Input: ``rows`` rows ``(k BIGINT, v BIGINT)`` over ``keys`` keys (``from_elements``, streaming
mode, one micro-batch). ``SELECT k, SUM(v) GROUP BY k`` without mini-batch emits one change
per row after each key's first, a ``-U``/``+U`` pair: ``keys + 2 * (rows - keys)`` changes
(199,000 at the defaults). Two jobs, each an ``INSERT INTO`` a ``blackhole`` table:

- ``table``: the aggregation straight into the sink (the baseline: no bridge);
- ``bridge``: the aggregation's changelog through ``to_changelog_stream``, an identity
  ``map`` declaring the Row type (it sees each change's RowKind, as in PyFlink), and
  ``from_changelog_stream`` into the same sink: the bridge twice and one Python map.

``--before DIR`` names a source tree of changeflow to compare with (e.g. ``git archive`` of an
earlier commit unpacked): each job then runs with that tree's package and with this one's,
alternating, every run in a fresh Python process (its own Spark session), so both codes see
the same machine load in turn. A run measures, around its timed job only (after a warm-up
job of the same shape over ``rows // 10`` rows, so the Python workers are up), the wall time
and the CPU seconds (user + system, from ``/proc``) of the driver's whole process tree: the
driver, its JVM and the Python workers. Figures are medians over ``repeats``; the ratios are
against the same run's figures. The load average is recorded before and after.

``--level kernels`` times the same path without Spark, in one process per run: the
aggregation's changelog as one Arrow batch of ``keys + 2 * (rows - keys)`` changes (``+I`` for
each key's first row, then ``-U``/``+U`` pairs), converted to records (``ChangesToRecords``, the
``to_changelog_stream`` side), through the identity map with its declared Row type
(``ChainRunner``, as the Spark job runs it) and back to typed changes (``RecordsToChanges``,
the ``from_changelog_stream`` side), in batches of 10,000 as ``mapInArrow`` hands them over;
the CPU seconds of that process over the conversions, after one warm-up pass. The only
variant there is ``bridge``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _job(rows: int, keys: int, variant: str) -> None:
    """One job on a fresh environment (imports from the tree first on ``sys.path``)."""
    from changeflow.common import Configuration, Types
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from changeflow.table import StreamTableEnvironment
    from changeflow.table.expressions import col

    conf = Configuration()
    conf.set_string("parallelism.default", "2")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql("CREATE TEMPORARY TABLE sink (k BIGINT, s BIGINT) WITH ('connector' = 'blackhole')")
    data = t_env.from_elements([(i % keys, i) for i in range(rows)], ["k", "v"])
    agg = data.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    if variant == "bridge":
        stream = t_env.to_changelog_stream(agg).map(
            lambda r: r, output_type=Types.ROW_NAMED(["k", "s"], [Types.LONG(), Types.LONG()]))
        agg = t_env.from_changelog_stream(stream)
    agg.execute_insert("sink").wait()


def _kernels(rows: int, keys: int) -> float:
    """CPU seconds of the bridge's kernels over the changelog of ``SUM(v) GROUP BY k`` (see the docstring)."""
    import pyarrow as pa

    from changeflow.common import Types
    from changeflow.kernels.bridge import ChangesToRecords, RecordShape, RecordsToChanges
    from changeflow.kernels.chain import ChainRunner
    from changeflow.plan.stream_nodes import Op

    sums: dict[int, int] = {}
    ks, ss, kinds = [], [], []
    for i in range(rows):
        k = i % keys
        if k in sums:
            ks.append(k), ss.append(sums[k]), kinds.append(1)
            sums[k] += i
            ks.append(k), ss.append(sums[k]), kinds.append(2)
        else:
            sums[k] = i
            ks.append(k), ss.append(i), kinds.append(0)
    n = len(ks)
    seqs = [j // 2 for j in range(n)]
    subs = [j % 2 for j in range(n)]
    changes = pa.table({"k": pa.array(ks, pa.int64()), "s": pa.array(ss, pa.int64()),
                        "_kind": pa.array(kinds, pa.int8()), "_seq": pa.array(seqs, pa.int64()),
                        "_sub": pa.array(subs, pa.int64())}).to_batches(max_chunksize=10_000)
    schema = pa.schema([("k", pa.int64()), ("s", pa.int64()), ("_kind", pa.int8()), ("_seq", pa.int64()),
                        ("_sub", pa.int64())])
    to_records = ChangesToRecords(["k", "s"], 0, "row", False, "to_changelog_stream")
    identity = ChainRunner([Op("map", lambda r: r, "identity",
                               Types.ROW_NAMED(["k", "s"], [Types.LONG(), Types.LONG()]))])
    to_changes = RecordsToChanges(RecordShape("fields", (0, 1)), schema, True, "from_changelog_stream")

    def run() -> int:
        records = [pa.RecordBatch.from_pandas(identity.process(b.to_pandas()), preserve_index=False)
                   for b in to_records(iter(changes))]
        return sum(b.num_rows for b in to_changes(iter(records)))

    assert run() == n  # warm-up
    cpu = time.process_time()
    assert run() == n
    return time.process_time() - cpu


def _child(args: argparse.Namespace) -> None:
    sys.path.insert(0, HERE)
    from nexmark_workload import tree_cpu_seconds

    if args.level == "kernels":
        start = time.perf_counter()
        cpu = _kernels(args.rows, args.keys)
        _check_tree()
        print(json.dumps({"seconds": time.perf_counter() - start, "cpu_seconds": cpu}))
        return
    _job(max(args.rows // 10, args.keys), args.keys, args.variant)  # warm-up: session, JVM, Python workers
    cpu, start = tree_cpu_seconds(), time.perf_counter()
    _job(args.rows, args.keys, args.variant)
    seconds, cpu = time.perf_counter() - start, tree_cpu_seconds() - cpu
    _check_tree()
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu}))


def _check_tree() -> None:
    import changeflow

    if not os.path.abspath(changeflow.__file__).startswith(os.path.abspath(os.getcwd()) + os.sep):
        raise RuntimeError(f"imported {changeflow.__file__}, not the tree {os.getcwd()}")


def _run(tree: str, variant: str, args: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    command = [sys.executable, os.path.abspath(__file__), "--child", "--variant", variant,
               "--rows", str(args.rows), "--keys", str(args.keys), "--level", args.level]
    out = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{variant} ({tree}) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--level", choices=["spark", "kernels"], default="spark")
    parser.add_argument("--variants", default="bridge,table", help="spark level: the jobs to run")
    parser.add_argument("--before", help="a changeflow source tree to compare with (default: none)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "bridge.json"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=["table", "bridge"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    variants = ["bridge"] if args.level == "kernels" else args.variants.split(",")
    trees = {"after": ROOT} | ({"before": os.path.abspath(args.before)} if args.before else {})
    runs: dict[str, list[dict]] = {}
    load_before = [round(x, 2) for x in os.getloadavg()]
    for i in range(args.repeats):
        # Alternate which code goes first, so neither always runs on the other's leftovers.
        order = list(trees) if i % 2 == 0 else list(reversed(trees))
        for variant in variants:
            for code in order:
                run = _run(trees[code], variant, args)
                runs.setdefault(f"{code}/{variant}", []).append(run)
                print(code, variant, run, flush=True)
    medians = {name: {k: round(statistics.median(r[k] for r in rs), 2) for k in ("seconds", "cpu_seconds")}
               for name, rs in runs.items()}
    ratios = {}
    for code in trees if "table" in variants else ():
        bridge, table = medians[f"{code}/bridge"], medians[f"{code}/table"]
        ratios[f"{code}: bridge cpu / table cpu"] = round(bridge["cpu_seconds"] / table["cpu_seconds"], 3)
        ratios[f"{code}: bridge share, cpu s"] = round(bridge["cpu_seconds"] - table["cpu_seconds"], 2)
    if "before" in trees:
        ratios["after / before, bridge job cpu"] = round(
            medians["after/bridge"]["cpu_seconds"] / medians["before/bridge"]["cpu_seconds"], 3)
        if "table" in variants:
            ratios["after / before, bridge share cpu"] = round(
                ratios["after: bridge share, cpu s"] / ratios["before: bridge share, cpu s"], 3)
    changes = args.keys + 2 * (args.rows - args.keys)
    result = {"level": args.level, "rows": args.rows, "keys": args.keys, "changes": changes, "repeats": args.repeats,
              "load_average_before": load_before, "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "runs": {k: [{m: round(v, 2) for m, v in r.items()} for r in rs] for k, rs in runs.items()},
              "medians": medians, "ratios": ratios}
    print(json.dumps(result, indent=2))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
