"""INSERT ... ON CONFLICT: parsing, errors with positions, and when the planner adds the materializer.

Planning only (no Spark). The outcomes follow Flink 2.3's planner, recorded
with PyFlink in ``conformance/goldens/upsert/`` (see ``test_upsert_goldens.py``).
"""

from __future__ import annotations

import pytest

from changeflow.plan.nodes import Sink, UpsertMaterialize
from changeflow.plan.type_inference import PlanError
from changeflow.sql.ddl import Cursor
from changeflow.sql.statements import insert_plan, statement_tokens
from changeflow.table import EnvironmentSettings, InsertConflictStrategy, TableEnvironment
from changeflow.table.expressions import col

TABLES = (
    "CREATE TABLE src (a INT, b BIGINT, c STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TABLE srcw (a INT, b BIGINT, c STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
    "WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    "CREATE TABLE snk (x INT, y BIGINT, PRIMARY KEY (x) NOT ENFORCED) WITH ('connector' = 'print')",
    "CREATE TABLE snk_b (b BIGINT, cnt BIGINT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'print')",
    "CREATE TABLE snk_c (c STRING, b BIGINT, PRIMARY KEY (c) NOT ENFORCED) WITH ('connector' = 'print')",
    "CREATE TABLE files (x INT, y BIGINT, PRIMARY KEY (x) NOT ENFORCED) "
    "WITH ('connector' = 'filesystem', 'path' = 'unused', 'format' = 'csv')",
)
AGG = "INSERT INTO snk SELECT MAX(a), COUNT(*) FROM src GROUP BY b"


def env(batch=False):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode() if batch
                                    else EnvironmentSettings.in_streaming_mode())
    for ddl in TABLES:
        t_env.execute_sql(ddl)
    return t_env


def plan(sql, batch=False, config=None):
    t_env = env(batch)
    for key, value in (config or {}).items():
        t_env.get_config().set(key, value)
    return insert_plan(t_env._planning, sql, Cursor(sql, statement_tokens(sql)))


def materializer(sink: Sink) -> UpsertMaterialize | None:
    return sink.input if isinstance(sink.input, UpsertMaterialize) else None


# --- parsing ------------------------------------------------------------------------------

@pytest.mark.parametrize("clause, source", [
    ("ON CONFLICT DO DEDUPLICATE", "src"),
    ("ON CONFLICT DO NOTHING", "srcw"),   # DO NOTHING / DO ERROR need watermarked sources
    ("on conflict do error", "srcw"),
    ("", "src"),
])
def test_the_clause_ends_the_insert_and_sets_the_sinks_conflict_mode(clause, source):
    sink = plan(f"INSERT INTO snk SELECT MAX(a), COUNT(*) FROM {source} GROUP BY b {clause};",
                config={"table.exec.sink.require-on-conflict": "false"})
    expected = clause.split()[-1].upper() if clause else None
    assert sink.conflict == expected
    assert materializer(sink).conflict == (expected or "DEDUPLICATE")


def test_the_clause_follows_a_column_list_and_a_join_condition():
    sink = plan("INSERT INTO snk (y, x) SELECT COUNT(*), MAX(s.a) FROM src s JOIN src t ON s.b = t.b "
                "GROUP BY s.c ON CONFLICT DO DEDUPLICATE")
    assert sink.conflict == "DEDUPLICATE" and materializer(sink).primary_key == ("x",)


def test_a_join_condition_on_a_column_named_conflict_is_not_the_clause():
    t_env = env()
    t_env.execute_sql("CREATE TABLE c (`conflict` BIGINT, v INT) "
                      "WITH ('connector' = 'datagen', 'number-of-rows' = '1')")
    table = t_env.sql_query("SELECT v FROM src JOIN c ON conflict = b")
    assert table.get_schema().get_field_names() == ["v"]


@pytest.mark.parametrize("sql, construct, where", [
    ("INSERT INTO snk ON CONFLICT DO NOTHING SELECT a, b FROM src", "must follow the query", "line 1, column 17"),
    (AGG + " ON CONFLICT DO UPDATE", "unknown ON CONFLICT action 'UPDATE'", "line 1, column 76"),
    (AGG + " ON CONFLICT (x) DO NOTHING", "no conflict target", "line 1, column 73"),
    (AGG + " ON CONFLICT NOTHING", "expected DO after ON CONFLICT", "line 1, column 73"),
    (AGG + " ON CONFLICT DO NOTHING LIMIT 1", "unexpected text after the ON CONFLICT clause", "line 1, column 84"),
    ("INSERT INTO snk SELECT * FROM (SELECT MAX(a), COUNT(*) FROM src GROUP BY b\n  ON CONFLICT DO NOTHING)",
     "not stand inside the query", "line 2, column 3"),
    (AGG + " ON CONFLICT DO NOTHING ON CONFLICT DO ERROR", "not stand inside the query", "line 1, column 84"),
])
def test_a_misplaced_or_unknown_clause_is_named_with_its_position(sql, construct, where):
    with pytest.raises(PlanError) as error:
        plan(sql)
    assert construct in str(error.value) and where in str(error.value)


@pytest.mark.parametrize("stmt", [
    "SELECT a FROM src ON CONFLICT DO NOTHING",
    "CREATE VIEW v AS SELECT a FROM src ON CONFLICT DO NOTHING",
    "EXPLAIN SELECT a FROM src ON CONFLICT DO NOTHING",
])
def test_a_query_outside_insert_cannot_carry_the_clause(stmt):
    with pytest.raises(PlanError, match=r"ON CONFLICT is a clause of INSERT INTO .* at line 1, column \d+"):
        env().execute_sql(stmt)


def test_explain_insert_with_the_clause_shows_the_materializer():
    text = env().explain_sql(AGG + " ON CONFLICT DO DEDUPLICATE")
    assert "upsertMaterialize=[true], conflictStrategy=[DEDUPLICATE], changelogMode=[NONE])" in text
    assert "+- SinkMaterializer(pk=[x], strategy=[LEGACY], conflict=[DEDUPLICATE]" in text
    assert env().execute_sql("EXPLAIN " + AGG + " ON CONFLICT DO DEDUPLICATE").collect  # runs as a statement


# --- when the planner adds the materializer (Flink 2.3's rules) -------------------------------

@pytest.mark.parametrize("sql, config, expected", [
    # AUTO: only where the query updates and no upsert key lies within the primary key
    ("INSERT INTO snk_b SELECT b, COUNT(*) FROM src GROUP BY b", {}, False),
    ("INSERT INTO snk_b SELECT b, COUNT(*) FROM src GROUP BY b ON CONFLICT DO DEDUPLICATE", {}, False),
    ("INSERT INTO snk SELECT MAX(a), COUNT(*) FROM src", {}, False),       # one row: key () fits any pk
    (AGG + " ON CONFLICT DO DEDUPLICATE", {}, True),
    ("INSERT INTO snk_c SELECT c, b FROM (SELECT c, b, COUNT(*) AS n FROM src GROUP BY c, b) "
     "ON CONFLICT DO DEDUPLICATE", {}, True),                              # key [c, b] is wider than pk [c]
    ("INSERT INTO snk SELECT a, b FROM src", {}, False),                   # insert-only
    ("INSERT INTO snk_b SELECT s.b, t.b FROM (SELECT b FROM src GROUP BY b) s "
     "LEFT JOIN (SELECT b FROM src GROUP BY b) t ON s.b = t.b", {}, False),
    # FORCE: whenever the sink has a primary key, also over insert-only input; no clause required
    ("INSERT INTO snk SELECT a, b FROM src", {"table.exec.sink.upsert-materialize": "FORCE"}, True),
    (AGG, {"table.exec.sink.upsert-materialize": "FORCE"}, True),
    # NONE: never, and the clause is accepted
    (AGG, {"table.exec.sink.upsert-materialize": "NONE"}, False),
    (AGG + " ON CONFLICT DO DEDUPLICATE", {"table.exec.sink.upsert-materialize": "NONE"}, False),
    (AGG, {"table.exec.sink.require-on-conflict": "false"}, True),
])
def test_materializer_placement(sql, config, expected):
    assert (materializer(plan(sql, config=config)) is not None) == expected


def test_materializer_takes_strategy_thresholds_and_ttl_from_the_configuration():
    node = materializer(plan(AGG + " ON CONFLICT DO DEDUPLICATE", config={
        "table.exec.sink.upsert-materialize.strategy": "adaptive",
        "table.exec.sink.upsert-materialize.adaptive.threshold.high": "400",
        "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low": "300",
        "table.exec.state.ttl": "2 min"}))
    assert (node.strategy, node.threshold_high, node.threshold_low, node.ttl_ms) == ("ADAPTIVE", 400, 300, 120_000)
    assert node.upsert_key is None


def test_adaptive_thresholds_must_be_ordered():
    with pytest.raises(PlanError, match=r"threshold.low \(60\) must be below .*threshold.high \(50\)"):
        plan(AGG + " ON CONFLICT DO DEDUPLICATE", config={
            "table.exec.sink.upsert-materialize-strategy.type": "ADAPTIVE",
            "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low": "60"})


def test_the_materializer_identifies_rows_by_the_smallest_upsert_key():
    node = materializer(plan("INSERT INTO snk_c SELECT c, b FROM (SELECT c, b, COUNT(*) AS n FROM src GROUP BY c, b) "
                             "ON CONFLICT DO DEDUPLICATE"))
    assert (node.primary_key, node.upsert_key) == (("c",), ("c", "b"))


# --- what Flink rejects -----------------------------------------------------------------------

def test_a_missing_clause_names_the_primary_key_and_the_upsert_key():
    with pytest.raises(PlanError) as error:
        plan("INSERT INTO snk_c SELECT c, b FROM (SELECT c, b, COUNT(*) AS n FROM src GROUP BY c, b)")
    message = str(error.value)
    assert "sink table 'default_catalog.default_database.snk_c'" in message
    assert "Primary key: [c], upsert key: [c, b]" in message and "ON CONFLICT DO DEDUPLICATE" in message


def test_a_missing_clause_without_any_upsert_key_says_so():
    with pytest.raises(PlanError, match=r"Primary key: \[x\], upsert key: none"):
        plan(AGG)


@pytest.mark.parametrize("action", ["NOTHING", "ERROR"])
def test_do_nothing_and_do_error_need_a_watermark_on_every_source(action):
    with pytest.raises(PlanError, match=f"ON CONFLICT DO {action} requires all source tables to define watermarks, "
                                        r"but the following source\(s\) do not: "
                                        r"default_catalog.default_database.src\."):
        plan(f"INSERT INTO snk SELECT MAX(s.a), COUNT(*) FROM srcw s JOIN src t ON s.b = t.b GROUP BY s.c "
             f"ON CONFLICT DO {action}")
    assert materializer(plan(f"{AGG.replace('src', 'srcw')} ON CONFLICT DO {action}")).conflict == action


def test_the_clause_over_an_insert_only_query_is_rejected_even_with_force():
    for mode in ("AUTO", "FORCE"):
        with pytest.raises(PlanError, match="ON CONFLICT clause is only allowed for upsert sinks. The sink "
                                            "'default_catalog.default_database.snk' is not an upsert sink"):
            plan("INSERT INTO snk SELECT a, b FROM src ON CONFLICT DO DEDUPLICATE",
                 config={"table.exec.sink.upsert-materialize": mode})


def test_an_append_only_sink_gets_no_materializer_even_with_force():
    sink = plan("INSERT INTO files SELECT a, b FROM src", config={"table.exec.sink.upsert-materialize": "FORCE"})
    assert materializer(sink) is None


# --- batch mode ---------------------------------------------------------------------------------

@pytest.mark.parametrize("clause", ["", " ON CONFLICT DO NOTHING", " ON CONFLICT DO ERROR",
                                    " ON CONFLICT DO DEDUPLICATE"])
def test_batch_mode_accepts_any_clause_and_never_materializes(clause):
    for sql in (AGG + clause, "INSERT INTO snk SELECT a, b FROM src" + clause):
        sink = plan(sql, batch=True)
        assert materializer(sink) is None


# --- the Table API ----------------------------------------------------------------------------

def table_env_capturing_inserts():
    t_env = env()
    t_env._execute_insert = lambda sink: sink  # planning only: hand back the planned sink
    return t_env


def test_table_api_execute_insert_follows_require_on_conflict():
    t_env = table_env_capturing_inserts()
    table = t_env.from_path("src").group_by(col("b")).select(col("a").max, col("a").count)
    with pytest.raises(PlanError, match=r"Primary key: \[x\], upsert key: none"):
        table.execute_insert("snk")
    sink = table.execute_insert("snk", conflict_strategy=InsertConflictStrategy.deduplicate())
    assert sink.conflict == "DEDUPLICATE" and materializer(sink).primary_key == ("x",)
