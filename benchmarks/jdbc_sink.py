"""The jdbc upsert sink's rows/s against a plain psycopg ``executemany`` upsert of the same rows, same run.

Usage: .venv/bin/python benchmarks/jdbc_sink.py [--rows 200000] [--keys 200000,20000] [--batch 50000]
       [--repeats 3] [--url jdbc:postgresql://host:port/db --username U --password P]
       [--out benchmarks/results/jdbc_sink.json]

Without ``--url`` it starts a throwaway PostgreSQL cluster as the tests do (tests/postgres_server.py:
initdb in a temporary directory, fsync off) and stops it after.

Each case writes ``rows`` changes (``+I`` for a key's first row, then ``-U``/``+U`` pairs, counted as one
row each as a changelog delivers them: benchmarks/sink_changelog.py) over ``keys`` keys into a table
``(k BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(12, 2), at TIMESTAMP)``, in micro-batches of ``batch`` rows:

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

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.sink_changelog import arguments, batches, changelog, result, run_sink, upserts  # noqa: E402
from changeflow.common.change import Change  # noqa: E402
from changeflow.connectors.jdbc_url import conninfo  # noqa: E402

UPSERT = ("INSERT INTO bench (k, name, amount, at) VALUES (%s, %s, %s, %s) ON CONFLICT (k) DO UPDATE SET "
          "name = EXCLUDED.name, amount = EXCLUDED.amount, at = EXCLUDED.at")


def run_executemany(conn, parts: list[list[Change]]) -> float:
    start = time.perf_counter()
    for part in parts:
        with conn.cursor() as cur:
            cur.executemany(UPSERT, upserts(part))
        conn.commit()
    return time.perf_counter() - start


def main() -> None:
    parser = arguments(rows=200_000, keys="200000,20000", batch=50_000)
    parser.add_argument("--url")
    parser.add_argument("--username")
    parser.add_argument("--password")
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
                        options = (f"'connector' = 'jdbc', 'url' = '{url}', 'table-name' = 'bench', "
                                   f"'username' = '{user}', 'password' = '{password}', "
                                   f"'sink.buffer-flush.max-rows' = '{args.batch}'")
                        times[name].append(run_sink(options, parts))
                    else:
                        times[name].append(run_executemany(conn, parts))
            line = result(args, keys, statistics.median(times["sink"]), "executemany",
                          statistics.median(times["executemany"]))
            print(json.dumps(line))
            results.append(line)
        conn.close()
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
