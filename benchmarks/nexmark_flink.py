"""The Flink 2.3 half of ``benchmarks/nexmark.py``: run Nexmark queries on PyFlink, print JSON.

Usage (with PyFlink 2.3's python; ``nexmark.py`` starts it)::

    python benchmarks/nexmark_flink.py --queries DIR --events FILE --side-input FILE --out-dir DIR
        [--check-events FILE] [--parallelism 2] q0 q1 ...

Per query a fresh streaming TableEnvironment runs the statements of
``nexmark_workload.statements`` (the ``datagen`` table over the event file, nexmark's
views, the query's sink and its ``INSERT``), then, with ``--check-events``, again over that
file. The first (``blackhole``) times ``execute_sql(INSERT).wait()``
(job submission to end of input; the JVM start is before the clock) and the CPU seconds of
this process and its descendants (the Python client and the JVM) over the same span.
The second (``collect``) runs the ``INSERT``'s query and materializes its changelog. Prints
one JSON object: ``{"<query>/<mode>": {"seconds", "cpu_seconds"} | {"rows": [[row, count],
...]} | {"error"}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import nexmark_workload as W  # noqa: E402

_KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


def run(args, query: str, mode: str) -> dict:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(args.parallelism))
    out_dir = os.path.join(args.out_dir, f"flink-{query}-{mode}")
    events = args.events if mode == "blackhole" else args.check_events
    *ddl, insert = W.statements(args.queries, query, events, args.side_input, out_dir)
    for statement in ddl:
        t_env.execute_sql(statement)
    if mode == "collect":
        with t_env.execute_sql(W.select_of(insert)).collect() as rows:
            changes = [(_KINDS[r.get_row_kind().value], tuple(r)) for r in rows]
        return {"rows": W.encode(W.materialize(changes, W.UPSERT_KEYS.get(query)))}
    start = time.perf_counter()
    with W.TreeCpu() as cpu:
        t_env.execute_sql(insert).wait()
    return {"seconds": time.perf_counter() - start, "cpu_seconds": cpu.seconds()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--side-input", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--check-events", help="the small event file of the collect runs (none: no collect)")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    report = {}
    modes = ["blackhole", "collect"] if args.check_events else ["blackhole"]
    for query in args.names:
        for mode in modes:
            try:
                result = run(args, query, mode)
            except Exception as e:  # recorded; the other queries go on
                result = {"error": W.error_line(e)}
            report[f"{query}/{mode}"] = result
            print(f"flink {mode} {query}: {({k: v for k, v in result.items() if k != 'rows'})}",
                  file=sys.stderr, flush=True)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
