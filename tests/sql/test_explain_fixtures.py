"""EXPLAIN of SQL queries against fixture files of ``SQL; expected EXPLAIN;`` pairs.

Each entry of ``fixtures/*.sql`` is a ``# title:`` line, optional settings
lines (``# mini-batch: on``, ``# mode: batch``, ``# config: key=value, key=value``),
the query ending with ``;`` and the expected plan ending with ``;``. The plans
follow the shape of Flink 2.3's physical plan with ``ExplainDetail.CHANGELOG_MODE``
for the same queries. An ``INSERT INTO`` entry is planned by a TableEnvironment
over the DDL tables of :data:`SINK_TABLES` (no Spark is started), so it goes
through sink planning: the upsert materializer and its ``ON CONFLICT`` clause.

To regenerate after an intended change, run from the repository root::

    PYTHONPATH=$PWD python tests/sql/test_explain_fixtures.py

which rewrites each fixture's expected plans with the current ones; review
the diff before committing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import Source
from changeflow.plan.type_inference import PlanError
from changeflow.sql import plan_query

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Case:
    file: Path
    title: str
    settings: dict[str, str]
    sql: str
    expected: str


def read_cases(path: Path) -> list[Case]:
    cases = []
    for block in re.split(r"\n\s*\n(?=# title:)", path.read_text().strip()):
        lines = block.strip().splitlines()
        title = lines[0].removeprefix("# title:").strip()
        settings = {}
        body = []
        for line in lines[1:]:
            if line.startswith("# ") and not body:
                key, _, value = line[2:].partition(":")
                settings[key.strip()] = value.strip()
            else:
                body.append(line)
        end = next(i for i, line in enumerate(body) if line.rstrip().endswith(";"))
        sql = "\n".join(body[:end + 1]).rstrip()[:-1]
        expected = "\n".join(body[end + 1:]).rstrip()
        expected = expected[:-1].rstrip() if expected.endswith(";") else expected
        cases.append(Case(path, title, settings, sql, expected))
    return cases


def catalog():
    """Deterministically named sources: t, u, src (the seed's table), tp/up (with PROCTIME())."""
    tables = {
        "t": Source("t", (("id", T.BIGINT()), ("name", T.STRING()), ("v", T.INT()), ("d", T.DOUBLE())),
                    "elements", []),
        "u": Source("u", (("id", T.BIGINT()), ("region", T.STRING()), ("w", T.BIGINT())), "elements", []),
        "src": Source("src", (("user_id", T.INT()), ("day", T.STRING())), "elements", []),
    }

    def resolve(name):
        if name not in tables:
            raise PlanError(f"table {name!r} not found; known tables: {', '.join(sorted(tables))}")
        return tables[name]

    tables["tp"] = plan_query("SELECT *, PROCTIME() AS pt FROM t", resolve)
    tables["up"] = plan_query("SELECT *, PROCTIME() AS pt FROM u", resolve)
    return resolve


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
