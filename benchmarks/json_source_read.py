"""The driver's read of a bounded ``filesystem``/``json`` table (Nexmark's event file): the record reader
against Arrow's JSON reader (``changeflow/connectors/json_arrow.py``), in one process, in turn.

Usage (from the repository root)::

    .venv/bin/python benchmarks/json_source_read.py --events 100000 [--rounds 3] [--data DIR]

Generates ``--events`` Nexmark events (``nexmark_workload.write_events``) unless the file is in
``--data`` already, declares nexmark's ``datagen`` table over it (``ddl_gen.sql``'s schema, built
here as ``write_events`` builds it), and times, per round, what a streaming query's staging gets:
the record reader's rows made into the Arrow table that is staged (``FileSystemSource.rows`` and
``sources.arrow_table``), and ``FileSystemSource.arrow_rows``. Checks that both give equal
tables. Writes ``benchmarks/results/json_source_read.json`` (CPU seconds of this process, so
Arrow's reader threads count too; the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import nexmark_workload as W  # noqa: E402

RESULT = os.path.join(ROOT, "benchmarks", "results", "json_source_read.json")


def datagen_source(path: str):
    """nexmark's ``datagen`` table (event_type and the person/auction/bid ROWs) over ``path`` as a source."""
    from changeflow.connectors.filesystem import FileSystemSource
    from changeflow.sql.ddl import parse_create_table

    columns = ", ".join(f"{kind} ROW<" + ", ".join(f"`{f}` {W._SQL[role]}" for f, role in fields) + ">"
                        for kind, fields in W._nexmark_columns().items())
    table, _ = parse_create_table(f"CREATE TABLE datagen (event_type INT, {columns}) WITH ("
                                  f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')")
    return FileSystemSource(table, streaming=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", help="directory of the event file (kept; a file already there is used)")
    parser.add_argument("--out", default=RESULT)
    args = parser.parse_args(argv)
    from changeflow.plan.nodes import Source
    from changeflow.runtime.spark.sources import arrow_table

    data = args.data or tempfile.mkdtemp(prefix="changeflow-json-read-")
    path = os.path.join(data, f"events-{args.events}.json")
    if not os.path.exists(path):
        W.write_events(path, args.events)
    source = datagen_source(path)
    runs = []
    for r in range(args.rounds):
        start = time.process_time()
        by_records = arrow_table(Source("datagen", source.schema, "elements", source.rows()))
        records_cpu = time.process_time() - start
        start = time.process_time()
        by_arrow = source.arrow_rows()
        arrow_cpu = time.process_time() - start
        if by_arrow is None or not by_arrow.equals(by_records):
            raise SystemExit("Arrow's read differs from the record reader's")
        runs.append({"round": r, "record_reader_cpu_s": round(records_cpu, 3), "arrow_cpu_s": round(arrow_cpu, 3),
                     "load": W.load_average()})
        print(json.dumps(runs[-1]), flush=True)
    report = {"events": args.events, "file_bytes": os.path.getsize(path), "rows": by_records.num_rows,
              "runs": runs, "cpus": os.cpu_count()}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
