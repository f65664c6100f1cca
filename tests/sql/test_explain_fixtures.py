"""EXPLAIN of SQL queries against fixture files of ``SQL; expected EXPLAIN;`` pairs.

Each entry of ``fixtures/*.sql`` is a ``# title:`` line, optional settings
lines (``# mini-batch: on``, ``# mode: batch``, ``# config: key=value, key=value``),
the query ending with ``;`` and the expected plan ending with ``;``. The plans
follow the shape of Flink 2.3's physical plan with ``ExplainDetail.CHANGELOG_MODE``
for the same queries. An ``INSERT INTO`` entry is planned by a TableEnvironment
over the DDL tables of :data:`SINK_TABLES` (no Spark is started), so it goes
through sink planning: the upsert materializer and its ``ON CONFLICT`` clause.

To regenerate after an intended change, run from the repository root::

    PYTHONPATH=$PWD:$PWD/tests python tests/sql/test_explain_fixtures.py

which rewrites each fixture's expected plans with the current ones; review
the diff before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.type_inference import PlanError
from changeflow.sql import plan_query
from fixture_files import Case, catalog, read_cases

FIXTURES = Path(__file__).parent / "fixtures"


# Tables for the INSERT entries: sources with and without a watermark, sinks with and without a key.
SINK_TABLES = (
    "CREATE TABLE orders (order_id BIGINT, product STRING, qty INT) "
    "WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TABLE orders_wm (order_id BIGINT, product STRING, qty INT, ts TIMESTAMP(3), "
    "WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TABLE products (name STRING, price INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TABLE product_orders (product STRING, order_id BIGINT, PRIMARY KEY (product) NOT ENFORCED) "
    "WITH ('connector' = 'print')",
    "CREATE TABLE order_totals (order_id BIGINT, qty BIGINT, PRIMARY KEY (order_id) NOT ENFORCED) "
    "WITH ('connector' = 'print')",
    "CREATE TABLE order_log (order_id BIGINT, qty BIGINT) WITH ('connector' = 'print')",
    # An upsert source and upsert sinks (planning only: no broker is reached).
    "CREATE TABLE scores (k STRING, v INT, s STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
    "'connector' = 'upsert-kafka', 'topic' = 'a', 'properties.bootstrap.servers' = 'localhost:9092', "
    "'key.format' = 'json', 'value.format' = 'json')",
    "CREATE TABLE scores_out (k STRING, v INT, s STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
    "'connector' = 'upsert-kafka', 'topic' = 'b', 'properties.bootstrap.servers' = 'localhost:9092', "
    "'key.format' = 'json', 'value.format' = 'json')",
    "CREATE TABLE score_totals (s STRING, total BIGINT, PRIMARY KEY (s) NOT ENFORCED) WITH ("
    "'connector' = 'upsert-kafka', 'topic' = 'c', 'properties.bootstrap.servers' = 'localhost:9092', "
    "'key.format' = 'json', 'value.format' = 'json')",
    "CREATE TABLE scores_print (k STRING, v INT, s STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print')",
    "CREATE TABLE scores_void (k STRING, v INT, s STRING) WITH ('connector' = 'blackhole')",
)


def explain_insert(case: Case) -> str:
    from changeflow.table import EnvironmentSettings, TableEnvironment

    batch = case.settings.get("mode") == "batch"
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode() if batch
                                    else EnvironmentSettings.in_streaming_mode())
    for item in filter(None, case.settings.get("config", "").split(",")):
        key, _, value = item.partition("=")
        t_env.get_config().set(key.strip(), value.strip())
    for ddl in SINK_TABLES:
        t_env.execute_sql(ddl)
    try:
        return t_env.explain_sql(case.sql).rstrip()
    except PlanError as e:
        return f"ERROR: {e}"


def actual(case: Case) -> str:
    if case.sql.lstrip().upper().startswith("INSERT"):
        return explain_insert(case)
    mini_batch = case.settings.get("mini-batch") == "on"
    settings = ExplainSettings(streaming=case.settings.get("mode", "streaming") == "streaming",
                               mini_batch=mini_batch, mini_batch_latency_ms=1000 if mini_batch else 0,
                               mini_batch_size=1000 if mini_batch else -1)
    return explain(plan_query(case.sql, catalog()), settings).rstrip()


ALL = [c for f in sorted(FIXTURES.glob("*.sql")) for c in read_cases(f)]


@pytest.mark.parametrize("case", ALL, ids=[f"{c.file.stem}:{c.title}" for c in ALL])
def test_explain_matches_fixture(case):
    assert actual(case) == case.expected


def regenerate() -> None:
    for path in sorted(FIXTURES.glob("*.sql")):
        blocks = []
        for case in read_cases(path):
            head = [f"# title: {case.title}"] + [f"# {k}: {v}" for k, v in case.settings.items()]
            blocks.append("\n".join(head + [case.sql + ";", actual(case) + ";"]))
        path.write_text("\n\n".join(blocks) + "\n")


if __name__ == "__main__":
    regenerate()
