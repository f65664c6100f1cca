"""The rest of the Table API without Spark: plans, types, EXPLAIN and refusals of order_by/fetch,
column operations, expression functions and statement sets."""

from __future__ import annotations

import pytest

from changeflow.expression_functions import TimeIntervalUnit
from changeflow.plan.type_inference import PlanError
from changeflow.sql.statements import StatementError
from changeflow.table import EnvironmentSettings, TableEnvironment, expressions
from changeflow.table.expressions import col, lit, range_, with_columns, without_columns
from changeflow.table.statement_set import split_statement_set


@pytest.fixture(params=["streaming", "batch"])
def t_env(request):
    settings = EnvironmentSettings.in_streaming_mode() if request.param == "streaming" else \
        EnvironmentSettings.in_batch_mode()
    return TableEnvironment.create(settings)


def _t(t_env):
    return t_env.from_elements([(1, "a", 2.5)], ["id", "name", "v"])


def _names(table):
    return table.get_schema().get_field_names()


def test_column_access_and_column_sets(t_env):
    t = _t(t_env)
    assert str(t.id) == "id" and str(t["v"]) == "v"
    with pytest.raises(AttributeError, match=r"no column named 'nope', available columns: \[id, name, v\]"):
        _ = t.nope
    assert _names(t.select(col("*"))) == ["id", "name", "v"]
    assert _names(t.select("*")) == ["id", "name", "v"]
    assert _names(t.select(with_columns(range_("name", "v")), col("id").alias("i"))) == ["name", "v", "i"]
    assert _names(t.select(without_columns(1, col("v")))) == ["name"]
    with pytest.raises(PlanError, match="position 4 is out of range 1..3"):
        t.select(with_columns(4))


def test_drop_rename_add_or_replace(t_env):
    t = _t(t_env)
    assert _names(t.drop_columns(col("name"), col("v"))) == ["id"]
    assert _names(t.rename_columns(col("name").alias("n"))) == ["id", "n", "v"]
    replaced = t.add_or_replace_columns((col("id") + 1).alias("v"), lit("x").alias("w"), lit("y").alias("w"))
    assert _names(replaced) == ["id", "name", "v", "w"]
    assert [str(x) for x in replaced.get_schema().get_field_data_types()] == \
        ["BIGINT", "STRING", "BIGINT", "CHAR(1) NOT NULL"]
    with pytest.raises(PlanError, match="column 'zz' of drop_columns not found"):
        t.drop_columns(col("zz"))
    with pytest.raises(PlanError, match="rename_columns takes col"):
        t.rename_columns(col("id"))


def test_order_by_explain_and_streaming_refusal():
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    assert "SortLimit(orderBy=[v DESC], offset=[1], fetch=[2], global=[true])" in \
        _t(batch).order_by(col("v").desc).limit(2, 1).explain()
    assert "Sort(orderBy=[id ASC])" in _t(batch).order_by(col("id")).explain()
    assert "Limit(offset=[0], fetch=[3], global=[true])" in _t(batch).fetch(3).explain()
    plan = _t(stream).order_by(col("v").desc).offset(1).fetch(2).explain()
    assert "rankRange=[rankStart=2, rankEnd=3], partitionBy=[], orderBy=[v DESC]" in plan
    with pytest.raises(PlanError, match="Sort on a non-time-attribute field is not supported."):
        _t(stream).order_by(col("v")).explain()
    with pytest.raises(PlanError, match="FETCH is already defined."):
        _t(stream).order_by(col("v")).fetch(1).fetch(2)
    with pytest.raises(PlanError, match="FETCH count must be equal or larger than 0"):
        _t(stream).fetch(-1)


def test_expression_methods_build_builtin_calls():
    a = col("a")
    assert str(a.upper_case) == "UPPER(a)" and str(a.init_cap) == "INITCAP(a)"
    assert str(a.between(1, 3)) == "((a >= 1) AND (a <= 3))"
    assert str(a.not_between(1, 3)) == "((a < 1) OR (a > 3))"
    assert str(a.in_(1, 2)) == "IN(a, 1, 2)"
    assert str((a > 1).then("x", "y")) == "CASE((a > 1), 'x', 'y')"
    assert str(a.log(2)) == "(LN(a) / LN(2))" and str(a ** 2) == "POWER(a, 2)"
    assert str(a.trim_leading("x")) == "TRIM(a, 'LEADING', 'x')"
    assert str(a.floor(TimeIntervalUnit.HOUR)) == "FLOOR_TO(a, 'HOUR')"
    assert str(a.extract(TimeIntervalUnit.YEAR)) == "EXTRACT('YEAR', a)"
    assert str(expressions.concat_ws("-", a, "b")) == "CONCAT_WS('-', a, 'b')"
    assert str(expressions.and_(a > 1, a < 5, a != 3)) == "(((a > 1) AND (a < 5)) AND (a != 3))"
    assert str(expressions.if_then_else(a > 1, 1, 2)) == "CASE((a > 1), 1, 2)"


def test_unmapped_pyflink_functions_raise_naming_themselves():
    with pytest.raises(NotImplementedError, match="Expression.hash_code"):
        _ = col("a").hash_code
    assert not hasattr(col("a"), "md5")  # still an AttributeError for code that probes
    with pytest.raises(AttributeError):
        _ = col("a").not_a_pyflink_method
    with pytest.raises(NotImplementedError, match="in_\\(table\\)"):
        col("a").in_(_t(TableEnvironment.create(EnvironmentSettings.in_batch_mode())))
    from changeflow.table.expressions import uuid  # importable: only a call fails
    with pytest.raises(NotImplementedError, match="pyflink.table.expressions.uuid"):
        uuid()
    with pytest.raises(NotImplementedError, match="ceil\\(TimeIntervalUnit\\)"):
        col("a").ceil(TimeIntervalUnit.DAY)


def test_statement_set_refusals_and_split():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TABLE snk (id BIGINT) WITH ('connector' = 'blackhole')")
    statement_set = t_env.create_statement_set()
    with pytest.raises(StatementError, match="No modify operations to execute"):
        statement_set.execute()
    with pytest.raises(StatementError, match="only accepts a single SQL statement of type INSERT"):
        statement_set.add_insert_sql("SELECT 1")
    with pytest.raises(NotImplementedError, match="attach_as_datastream"):
        statement_set.attach_as_datastream()
    statement_set.add_insert("snk", _t(t_env).select(col("id")))
    assert "Sink(table=[default_catalog.default_database.snk]" in statement_set.explain()
    assert split_statement_set("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT ';'; INSERT INTO b "
                               "SELECT 1; END;") == ["INSERT INTO a SELECT ';'", "INSERT INTO b SELECT 1"]
    assert split_statement_set("INSERT INTO a SELECT 1") is None


def test_str_of_a_table_registers_it_for_sql():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = _t(t_env)
    name = str(t)
    assert name.startswith("UnnamedTable$") and str(t) == name
    assert _names(t_env.sql_query(f"SELECT name FROM {name}")) == ["name"]
