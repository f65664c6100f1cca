"""The jdbc upsert sink's rows/s against a plain psycopg ``executemany`` upsert of the same rows, same run.

Usage: .venv/bin/python benchmarks/jdbc_sink.py [--rows 200000] [--keys 200000,20000] [--batch 50000]
       [--repeats 3] [--url jdbc:postgresql://host:port/db --username U --password P]
       [--out benchmarks/results/jdbc_sink.json]

Without ``--url`` it starts a throwaway PostgreSQL cluster as the tests do (tests/postgres_server.py:
initdb in a temporary directory, fsync off) and stops it after.

Each case writes ``rows`` changes (``+I`` for a key's first row, then ``-U``/``+U`` pairs, counted as one
row each as a changelog delivers them) over ``keys`` keys into a table ``(k BIGINT PRIMARY KEY, name TEXT,
amount NUMERIC(12, 2), at TIMESTAMP)``, in micro-batches of ``batch`` rows:

- ``sink``: changeflow's ``JdbcSink.write(changes, batch_id)`` per micro-batch, as the runtime calls it:
  one transaction per micro-batch that also records the batch id, rows folded per key in a buffer of
  ``sink.buffer-flush.max-rows`` (set to ``batch``: one flush per micro-batch);
- ``executemany``: per micro-batch, one transaction of psycopg's ``executemany`` of
  ``INSERT ... ON CONFLICT (k) DO UPDATE`` over the ``+I``/``+U`` rows (what a hand-written upsert
  would do; it skips the ``-U`` rows too, and does not fold them per key, nor record the batch).

With as many keys as rows every row is a new key, so both write the same statements; with fewer keys the
sink folds each micro-batch's changes per key first (Flink's reducing buffer) and writes fewer rows.
The table is emptied before each timed run; figures are medians of ``repeats`` runs.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.common.change import Change  # noqa: E402
from changeflow.common.row_kind import RowKind  # noqa: E402
from changeflow.connectors import create_sink  # noqa: E402
from changeflow.connectors.jdbc_url import conninfo  # noqa: E402
from changeflow.connectors.sink_job import SinkJob  # noqa: E402
from changeflow.sql.ddl import parse_create_table  # noqa: E402

UPSERT = ("INSERT INTO bench (k, name, amount, at) VALUES (%s, %s, %s, %s) ON CONFLICT (k) DO UPDATE SET "
          "name = EXCLUDED.name, amount = EXCLUDED.amount, at = EXCLUDED.at")


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


def run_sink(url: str, user: str, password: str, parts: list[list[Change]], batch: int) -> float:
    ddl = (f"CREATE TABLE bench (k BIGINT, name STRING, amount DECIMAL(12, 2), at TIMESTAMP(6), "
           f"PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{url}', 'table-name' = 'bench', "
           f"'username' = '{user}', 'password' = '{password}', 'sink.buffer-flush.max-rows' = '{batch}')")
    sink = create_sink(parse_create_table(ddl)[0], True)
    sink.open(SinkJob.fresh())
    start = time.perf_counter()
    for batch_id, part in enumerate(parts):
        sink.write(part, batch_id)
    elapsed = time.perf_counter() - start
    sink.close()
    return elapsed


def run_executemany(conn, parts: list[list[Change]]) -> float:
    start = time.perf_counter()
    for part in parts:
        rows = [c.values for c in part if c.kind in (RowKind.INSERT, RowKind.UPDATE_AFTER)]
        with conn.cursor() as cur:
            cur.executemany(UPSERT, rows)
        conn.commit()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keys", default="200000,20000")
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--url")
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--out")
    args = parser.parse_args()
    import psycopg

    server = None
    if args.url is None:
        from tests import postgres_server

        server = postgres_server.start()
        url, user, password = server.url, postgres_server.USER, postgres_server.PASSWORD
    else:
        url, user, password = args.url, args.username, args.password
    try:
        conn = psycopg.connect(**conninfo(url), user=user, password=password)
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS bench")
            cur.execute("CREATE TABLE bench (k BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(12, 2), at TIMESTAMP)")
        conn.commit()
        results = []
        for keys in (int(k) for k in args.keys.split(",")):
            parts = batches(changelog(args.rows, keys), args.batch)
            times: dict[str, list[float]] = {"sink": [], "executemany": []}
            for _ in range(args.repeats):
                for name in ("sink", "executemany"):
                    with conn.cursor() as cur:
                        cur.execute("TRUNCATE bench")
                    conn.commit()
                    if name == "sink":
                        times[name].append(run_sink(url, user, password, parts, args.batch))
                    else:
                        times[name].append(run_executemany(conn, parts))
            sink_s, many_s = statistics.median(times["sink"]), statistics.median(times["executemany"])
            result = {"rows": args.rows, "keys": keys, "batch": args.batch, "sink_s": round(sink_s, 3),
                      "executemany_s": round(many_s, 3), "sink_rows_per_s": round(args.rows / sink_s),
                      "executemany_rows_per_s": round(args.rows / many_s), "ratio": round(many_s / sink_s, 2)}
            print(json.dumps(result))
            results.append(result)
        conn.close()
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
