"""The SQL benchmark's data and queries, shared by ``sql.py`` (changeflow) and
``flink_sql.py`` (Flink 2.3), so both engines run the same SQL text on the same rows.

Two workloads (issue 3):

* ``join``: ``orders`` (1M rows: order_id, user_id, amount) joined with the latest
  version of each user in ``users`` (100k rows: user_id, region, version).  ``users``
  holds one first version for 90,909 users followed by 9,091 later versions for 10% of
  them (sampled without replacement), so when a later version arrives the
  ``LAST_VALUE(region) GROUP BY user_id`` view updates (-U/+U), the join retracts that
  user's joined orders and re-emits them, and the outer aggregation retracts and
  re-accumulates them.  Then ``COUNT(*), SUM(amount) GROUP BY region`` (50 regions).
* ``topn``: Top-10 per group over ``scores`` (5M rows: g, item, score; 1,000 groups,
  uniform random scores): ``ROW_NUMBER() OVER (PARTITION BY g ORDER BY score DESC)
  <= 10``.

Rows come from ``numpy.random.default_rng(SEED)``, so every run (and both engines) see
identical data.  Each table is written as Parquet (changeflow's native source format)
and as headerless CSV with the same rows and file split (Flink 2.3's Python
distribution ships the CSV format but not Parquet, which needs extra jars).  Files are
named ``part-NNN.<ext>`` in row order; ``users`` is one file so that later versions
always follow the first ones.

Only numpy/pyarrow are imported here: the module runs under both Python environments.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

SEED = 20231219
REGIONS = 50
UPDATED_FRACTION = 0.10

SIZES = {"orders": 1_000_000, "users": 100_000, "scores": 5_000_000}
FILES = {"orders": 4, "users": 1, "scores": 5}
GROUPS = 1_000
TOP_N = 10

SCHEMAS = {
    "orders": [("order_id", "BIGINT"), ("user_id", "BIGINT"), ("amount", "BIGINT")],
    "users": [("user_id", "BIGINT"), ("region", "STRING"), ("version", "BIGINT")],
    "scores": [("g", "BIGINT"), ("item", "BIGINT"), ("score", "BIGINT")],
}

JOIN_QUERY = """SELECT u.region, COUNT(*) AS orders, SUM(o.amount) AS total
FROM orders AS o
JOIN (SELECT user_id, LAST_VALUE(region) AS region FROM users GROUP BY user_id) AS u
ON o.user_id = u.user_id
GROUP BY u.region"""

TOPN_QUERY = f"""SELECT g, item, score
FROM (SELECT g, item, score,
             ROW_NUMBER() OVER (PARTITION BY g ORDER BY score DESC) AS rn
      FROM scores)
WHERE rn <= {TOP_N}"""

WORKLOADS = {
    "join": {"inputs": ("orders", "users"), "query": JOIN_QUERY,
             "sink": [("region", "STRING"), ("orders", "BIGINT"), ("total", "BIGINT")]},
    "topn": {"inputs": ("scores",), "query": TOPN_QUERY,
             "sink": [("g", "BIGINT"), ("item", "BIGINT"), ("score", "BIGINT")]},
}


# Runtime modes measured on both engines: streaming with mini-batch off (Flink's default),
# streaming with mini-batch on, and batch.  The config is set on the table config.
MODES = {
    "streaming": {},
    "streaming-minibatch": {"table.exec.mini-batch.enabled": "true",
                            "table.exec.mini-batch.allow-latency": "1 s",
                            "table.exec.mini-batch.size": "100000"},
    "batch": {},
}


def users_layout(rows: int | None = None, fraction: float = UPDATED_FRACTION) -> tuple[int, int]:
    """(distinct users, later versions): rows = users + later versions, later = fraction * users.

    >>> users_layout(100_000)
    (90909, 9091)
    """
    rows = SIZES["users"] if rows is None else rows
    users = round(rows / (1 + fraction))
    return users, rows - users


def generate(seed: int = SEED) -> dict[str, pa.Table]:
    """The three input tables (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    users, later = users_layout()
    region_names = np.array([f"r{i:02d}" for i in range(REGIONS)], dtype=object)

    first_ids = rng.permutation(users).astype(np.int64)
    updated_ids = rng.choice(users, size=later, replace=False).astype(np.int64)
    user_ids = np.concatenate([first_ids, updated_ids])
    regions = region_names[rng.integers(0, REGIONS, users + later)]
    versions = np.concatenate([np.ones(users, np.int64), np.full(later, 2, np.int64)])

    n = SIZES["orders"]
    orders = pa.table({"order_id": np.arange(n, dtype=np.int64),
                       "user_id": rng.integers(0, users, n, dtype=np.int64),
                       "amount": rng.integers(1, 1000, n, dtype=np.int64)})
    n = SIZES["scores"]
    scores = pa.table({"g": rng.integers(0, GROUPS, n, dtype=np.int64),
                       "item": np.arange(n, dtype=np.int64),
                       "score": rng.integers(0, 1_000_000_000, n, dtype=np.int64)})
    return {"orders": orders,
            "users": pa.table({"user_id": user_ids, "region": pa.array(regions, pa.string()),
                               "version": versions}),
            "scores": scores}


def write(directory: str, seed: int = SEED) -> dict[str, dict[str, str]]:
    """Write every table as Parquet and CSV under ``directory``; return
    ``{table: {"parquet": dir, "csv": dir}}``.  Existing complete output is reused."""
    paths = {name: {fmt: os.path.join(directory, fmt, name) for fmt in ("parquet", "csv")}
             for name in SIZES}
    marker = os.path.join(directory, f"complete-{seed}")
    if os.path.exists(marker):
        return paths
    for name, table in generate(seed).items():
        files = FILES[name]
        per_file = -(-table.num_rows // files)
        for fmt in ("parquet", "csv"):
            os.makedirs(paths[name][fmt], exist_ok=True)
        for i in range(files):
            part = table.slice(i * per_file, per_file)
            pq.write_table(part, os.path.join(paths[name]["parquet"], f"part-{i:03d}.parquet"))
            pacsv.write_csv(part, os.path.join(paths[name]["csv"], f"part-{i:03d}.csv"),
                            pacsv.WriteOptions(include_header=False, quoting_style="none"))
    open(marker, "w").close()
    return paths


def create_table_sql(name: str, path: str, fmt: str, extra_options: dict | None = None) -> str:
    """``CREATE TABLE`` of a filesystem source table (the same text for both engines)."""
    columns = ",\n  ".join(f"`{c}` {t}" for c, t in SCHEMAS[name])
    options = {"connector": "filesystem", "path": path, "format": fmt, **(extra_options or {})}
    opts = ",\n  ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return f"CREATE TABLE {name} (\n  {columns}\n) WITH (\n  {opts}\n)"


def create_sink_sql(workload: str) -> str:
    """A blackhole sink for the workload's result."""
    columns = ",\n  ".join(f"`{c}` {t}" for c, t in WORKLOADS[workload]["sink"])
    return f"CREATE TABLE sink_{workload} (\n  {columns}\n) WITH ('connector' = 'blackhole')"


def insert_sql(workload: str) -> str:
    return f"INSERT INTO sink_{workload}\n{WORKLOADS[workload]['query']}"


def input_rows(workload: str) -> int:
    return sum(SIZES[t] for t in WORKLOADS[workload]["inputs"])
