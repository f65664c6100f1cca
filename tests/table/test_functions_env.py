"""Registering Python functions on a TableEnvironment and planning their calls (no Spark runs)."""

from __future__ import annotations

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.sql.errors import SqlError
from changeflow.table import DataTypes, EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import call, col
from changeflow.table.udf import udf


@pytest.fixture
def t_env():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.create_temporary_view("t", env.from_elements([(1, "a")], ["a", "s"]))
    return env


def test_register_list_and_drop(t_env):
    f = udf(lambda i: i, result_type="BIGINT")
    t_env.create_temporary_function("MyF", f)
    t_env.create_temporary_system_function("sysf", f)
    assert t_env.list_user_defined_functions() == ["myf", "sysf"]
    assert {"myf", "sysf", "upper", "sum"} <= set(t_env.list_functions())
    with pytest.raises(PlanError, match="Could not register temporary catalog function 'myf'"):
        t_env.create_temporary_function("myf", f)
    assert t_env.drop_temporary_function("MYF") is True
    assert t_env.drop_temporary_function("myf") is False
    assert t_env.list_user_defined_functions() == ["sysf"]


def test_java_functions_are_refused_naming_the_method(t_env):
    for method in ("create_java_temporary_function", "create_java_temporary_system_function", "create_java_function"):
        with pytest.raises(NotImplementedError, match=f"TableEnvironment.{method}: Java user-defined functions"):
            getattr(t_env, method)("f", "com.example.F")


def test_sql_calls_plan_with_the_declared_result_type(t_env):
    t_env.create_temporary_function("label", udf(lambda i: str(i), result_type=DataTypes.STRING()))
    plan = t_env.sql_query("SELECT label(a) AS l, label(a + 1) FROM t WHERE label(a) <> 'x'")
    assert plan.get_schema().get_field_names() == ["l", "EXPR$1"]
    assert [str(ty) for ty in plan.get_schema().get_field_data_types()] == ["STRING", "STRING"]
    assert "label(a)" in plan.explain()


def test_an_unknown_sql_function_is_still_refused_by_name(t_env):
    with pytest.raises(SqlError, match="function NOPE"):
        t_env.sql_query("SELECT nope(a) FROM t")


def test_a_system_function_shadows_a_builtin_in_sql_and_not_a_catalog_function(t_env):
    t_env.create_temporary_function("upper", udf(lambda s: s, result_type="INT"))
    assert [str(ty) for ty in t_env.sql_query("SELECT UPPER(s) FROM t").get_schema().get_field_data_types()] \
        == ["STRING"]  # the built-in comes before a temporary catalog function
    t_env.create_temporary_system_function("upper", udf(lambda s: s, result_type="INT"))
    assert [str(ty) for ty in t_env.sql_query("SELECT UPPER(s) FROM t").get_schema().get_field_data_types()] \
        == ["INT"]


def test_argument_checks_against_declared_input_types(t_env):
    f = udf(lambda d: d, input_types=[DataTypes.DOUBLE()], result_type="DOUBLE", name="half")
    t = t_env.from_path("t")
    assert [str(x) for x in t.select(f(col("a"))).get_schema().get_field_data_types()] == ["DOUBLE"]  # INT -> DOUBLE
    with pytest.raises(PlanError, match=r"argument 1 \(s\) is STRING, which cannot be passed as the declared input "
                                        r"type DOUBLE"):
        t.select(f(col("s")))


def test_call_by_name_and_by_function(t_env):
    f = udf(lambda i: i, result_type="BIGINT", name="ident")
    t_env.create_temporary_function("by_name", f)
    t = t_env.from_path("t")
    out = t.select(call("by_name", col("a")).alias("x"), call(f, col("a")).alias("y"))
    assert out.get_schema().get_field_names() == ["x", "y"]
    with pytest.raises(TypeError, match="expected a Python user-defined function"):
        call(len, col("a"))
