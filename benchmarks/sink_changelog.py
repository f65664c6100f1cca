"""What the sink benchmarks (benchmarks/jdbc_sink.py, benchmarks/delta_sink.py) share: the changelog they
write, its micro-batches, the timed run of changeflow's sink, their arguments and their result lines.

The changelog: ``rows`` changes over ``keys`` keys of ``(k BIGINT, name STRING, amount DECIMAL(12, 2),
at TIMESTAMP(6))``, ``+I`` for a key's first row, then ``-U``/``+U`` pairs (counted as one row each, as a
changelog delivers them).
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.common.change import Change  # noqa: E402
from changeflow.common.row_kind import RowKind  # noqa: E402
from changeflow.connectors import create_sink  # noqa: E402
from changeflow.connectors.sink_job import SinkJob  # noqa: E402
from changeflow.sql.ddl import parse_create_table  # noqa: E402

COLUMNS = "k BIGINT, name STRING, amount DECIMAL(12, 2), at TIMESTAMP(6)"


def changelog(rows: int, keys: int) -> list[Change]:
    at = datetime.datetime(2024, 1, 1)
    seen: dict[int, tuple] = {}
    out: list[Change] = []
    i = 0
    while len(out) < rows:
        k = i % keys
        values = (k, f"name-{i}", decimal.Decimal(i % 100000) / 100, at + datetime.timedelta(seconds=i))
        if k in seen:
            out.append(Change(RowKind.UPDATE_BEFORE, seen[k]))
            out.append(Change(RowKind.UPDATE_AFTER, values))
        else:
            out.append(Change(RowKind.INSERT, values))
        seen[k] = values
        i += 1
    return out[:rows]


def batches(changes: list[Change], size: int) -> list[list[Change]]:
    return [changes[i:i + size] for i in range(0, len(changes), size)]


def upserts(part: list[Change]) -> list[tuple]:
    """The ``+I``/``+U`` rows of a micro-batch, in order: what a hand-written upsert writes."""
    return [c.values for c in part if c.kind in (RowKind.INSERT, RowKind.UPDATE_AFTER)]


def run_sink(options: str, parts: list[list[Change]]) -> float:
    """Seconds changeflow's sink (``PRIMARY KEY (k)``, connector ``options``) takes to write ``parts``.

    Each micro-batch is a ``write(changes, batch_id)``, as the runtime calls it; opening the sink (which may
    create the table) and closing it are not timed.
    """
    ddl = f"CREATE TABLE bench ({COLUMNS}, PRIMARY KEY (k) NOT ENFORCED) WITH ({options})"
    sink = create_sink(parse_create_table(ddl)[0], True)
    sink.open(SinkJob.fresh())
    start = time.perf_counter()
    for batch_id, part in enumerate(parts):
        sink.write(part, batch_id)
    elapsed = time.perf_counter() - start
    sink.close()
    return elapsed


def arguments(rows: int, keys: str, batch: int) -> argparse.ArgumentParser:
    """The arguments both benchmarks take, with their defaults: ``--rows --keys --batch --repeats --out``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=rows)
    parser.add_argument("--keys", default=keys)
    parser.add_argument("--batch", type=int, default=batch)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out")
    return parser


def result(args: argparse.Namespace, keys: int, sink_s: float, baseline: str, baseline_s: float) -> dict:
    """One case's line: both times, their rows/s, and the ratio baseline time / sink time."""
    return {"rows": args.rows, "keys": keys, "batch": args.batch, "sink_s": round(sink_s, 3),
            f"{baseline}_s": round(baseline_s, 3), "sink_rows_per_s": round(args.rows / sink_s),
            f"{baseline}_rows_per_s": round(args.rows / baseline_s), "ratio": round(baseline_s / sink_s, 2)}
