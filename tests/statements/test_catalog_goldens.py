"""Catalogs, databases and qualified names against what Flink 2.3 answered (conformance/goldens/catalogs).

Each case of ``conformance/catalog_cases.py`` is replayed step by step in a fresh environment:
a step Flink answered with rows must give the same rows, a step Flink refused must fail
with a message holding Flink's (the innermost cause, which names the problem), and an
API call must return what PyFlink returned. Queries are planned only (no Spark) here;
``test_qualified_queries_return_flinks_rows`` runs them.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment
from conformance.catalog_cases import CATALOG_CASES

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "catalogs"

# Steps where changeflow's message says something else than Flink's innermost cause, and why:
# (case, step) -> the text changeflow's message holds instead.
DIFFERENT_MESSAGES = {
    # Flink's SQL validator (Calcite) reports an unknown table as "Object 'v' not found"; changeflow's
    # planner names the table and lists the known ones.
    ("tables", "SELECT * FROM db1.v"): "Table 'db1.v' not found; known tables and views: (none)",
    ("tables", "SELECT * FROM v"): "Table 'v' not found; known tables and views: local_t",
    ("tables", "SELECT * FROM local_t"): "Table 'local_t' not found",
}

# Steps whose rows differ on purpose: SHOW CREATE VIEW prints the view's query as written, where Flink
# prints the query its planner expanded (docs/sql.md); the header and column list are compared.
QUERY_AS_WRITTEN = {("tables", "SHOW CREATE VIEW c1.db1.v")}


def _golden(case: str) -> list[dict]:
    return json.loads((GOLDENS / f"{case}.json").read_text())["steps"]


def _rows(result) -> list[list]:
    return [[None if v is None else str(v) for v in row] for row in result.collect()]


def replay(t_env, case: str, run_queries: bool) -> None:
    for expected, step in zip(_golden(case), CATALOG_CASES[case], strict=True):
        label = step if isinstance(step, str) else repr(step)
        query = isinstance(step, str) and step.startswith("SELECT")
        try:
            if isinstance(step, str):
                if query and not run_queries:
                    t_env.sql_query(step)  # planned only: names resolve, or fail as Flink's do
                    rows = None
                else:
                    rows = _rows(t_env.execute_sql(step))
                value = None
            elif step[0] == "view":
                t_env.create_temporary_view(step[1], t_env.sql_query(step[2]))
                rows = value = None
            else:
                rows, value = None, getattr(t_env, step[1])(*step[2:])
        except Exception as error:  # noqa: BLE001 - compared with Flink's error below
            assert expected["errors"], f"{label}: Flink ran it, changeflow failed: {error}"
            wanted = DIFFERENT_MESSAGES.get((case, label), expected["errors"][-1])
            assert wanted in str(error), f"{label}: expected Flink's message {wanted!r}, got {error}"
            continue
        assert expected["errors"] is None, f"{label}: Flink failed with {expected['errors'][-1]!r}, changeflow ran it"
        if (case, label) in QUERY_AS_WRITTEN:
            assert rows is not None and rows[0][0].split("\nAS ")[0] == expected["rows"][0][0].split("\nAS ")[0]
        elif rows is not None:
            assert rows == expected["rows"], label
        if expected["value"] is not None:
            assert (list(value) if isinstance(value, (list, tuple)) else value) == expected["value"], label


@pytest.mark.parametrize("case", sorted(CATALOG_CASES))
def test_catalog_statements_answer_as_flink(case):
    replay(TableEnvironment.create(EnvironmentSettings.in_streaming_mode()), case, run_queries=False)


def test_qualified_queries_return_flinks_rows(spark):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    replay(t_env, "tables", run_queries=True)


def test_insert_into_a_qualified_table_then_read_it_back(batch_env, tmp_path):
    batch_env.execute_sql("CREATE CATALOG c1 WITH ('type' = 'generic_in_memory')")
    batch_env.execute_sql("CREATE DATABASE c1.db1")
    batch_env.execute_sql(f"CREATE TABLE c1.db1.files (id INT, name STRING) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}', 'format' = 'csv')")
    batch_env.execute_sql("CREATE VIEW src AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS x(id, name)")
    batch_env.execute_sql("USE c1.db1")
    batch_env.execute_sql("INSERT INTO files SELECT * FROM default_catalog.default_database.src").wait()
    batch_env.use_catalog("default_catalog")
    rows = sorted(tuple(r) for r in batch_env.execute_sql("SELECT id, name FROM c1.db1.files").collect())
    assert rows == [(1, "a"), (2, "b")]
    batch_env.from_path("src").execute_insert("c1.db1.files").wait()
    assert len(list(batch_env.from_path("c1.db1.files").execute().collect())) == 4
