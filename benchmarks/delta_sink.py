"""The delta upsert sink's rows/s against a plain deltalake merge of the same rows, same run.

Usage: .venv/bin/python benchmarks/delta_sink.py [--rows 100000] [--keys 100000,10000] [--batch 25000]
       [--repeats 3] [--out benchmarks/results/delta_sink.json]

Each case writes ``rows`` changes (``+I`` for a key's first row, then ``-U``/``+U`` pairs, counted as one
row each as a changelog delivers them: benchmarks/sink_changelog.py, as benchmarks/jdbc_sink.py writes) over
``keys`` keys into a Delta table ``(k BIGINT, name STRING, amount DECIMAL(12, 2), at TIMESTAMP)`` in a
temporary directory, in micro-batches of ``batch`` rows:

- ``sink``: changeflow's ``DeltaSink.write(changes, batch_id)`` per micro-batch, as the runtime calls it
  (``PRIMARY KEY (k)``): the changes folded per key, one MERGE commit per micro-batch that also records
  the batch id as an application transaction (and reads it first);
- ``merge``: per micro-batch, the last ``+I``/``+U`` row of each key (a MERGE needs one source row per
  key) as an Arrow table and one delta-rs ``merge`` (update all columns when matched, insert when not):
  what a hand-written upsert into Delta would do, without deletes or the exactly-once record.

Each timed run starts from a new empty table; the two alternate which runs first; figures are medians of
``repeats`` runs.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.sink_changelog import arguments, batches, changelog, result, run_sink, upserts  # noqa: E402
from changeflow.common.change import Change  # noqa: E402


def run_merge(path: str, parts: list[list[Change]], schema) -> float:
    import pyarrow as pa
    from deltalake import DeltaTable

    DeltaTable.create(path, schema)
    start = time.perf_counter()
    for part in parts:
        last = {values[0]: values for values in upserts(part)}
        columns = list(zip(*last.values(), strict=True))
        source = pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, schema, strict=True)],
                                      schema=schema)
        (DeltaTable(path).merge(source, "t.k = s.k", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
    return time.perf_counter() - start


def main() -> None:
    args = arguments(rows=100_000, keys="100000,10000", batch=25_000).parse_args()
    import pyarrow as pa

    schema = pa.schema([("k", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(12, 2)),
                        ("at", pa.timestamp("us"))])
    results = []
    root = tempfile.mkdtemp(prefix="delta-bench-")
    try:
        for keys in (int(k) for k in args.keys.split(",")):
            parts = batches(changelog(args.rows, keys), args.batch)
            times: dict[str, list[float]] = {"sink": [], "merge": []}
            for run in range(args.repeats):
                for name in (("sink", "merge") if run % 2 == 0 else ("merge", "sink")):  # neither always first
                    path = os.path.join(root, f"{name}-{keys}-{run}")
                    if name == "sink":
                        times[name].append(run_sink(f"'connector' = 'delta', 'table-path' = '{path}'", parts))
                    else:
                        times[name].append(run_merge(path, parts, schema))
                    shutil.rmtree(path)
            line = result(args, keys, statistics.median(times["sink"]), "merge", statistics.median(times["merge"]))
            print(json.dumps(line), flush=True)
            results.append(line)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
