"""Flink 2.3's JSON functions on single values (facts measured with PyFlink 2.3). No Spark."""

import decimal

import pytest

from changeflow.kernels.json.construct import json_array, json_object, json_string, read_rendered, value_node
from changeflow.kernels.json.functions import (JsonFunctionError, is_json, json_exists, json_query, json_value,
                                               prepare_path, returning)
from changeflow.kernels.json.values import parse_json, to_json


def value(text, spec, on_empty="NULL", d_empty=None, on_error="NULL", d_error=None, ret="STRING"):
    return json_value(text, prepare_path(spec), on_empty, d_empty, on_error, d_error, returning(ret))


@pytest.mark.parametrize(("text", "spec", "expected"), [
    ('{"a": true}', "$.a", "true"), ('{"a": 1.0}', "$.a", "1.0"), ('{"a": 1e3}', "$.a", "1E+3"),
    ('{"a": 12345678901234567890}', "$.a", "12345678901234567890"), ('{"a": -0.0}', "$.a", "0.0"),
    ('{"a": 1E-7}', "$.a", "1E-7"), ('{"a": 1.50}', "$.a", "1.50"), ('{"a": 1, "a": 2}', "$.a", "2"),
    ('{"a": [1,2]}', "$.a", None), ('{"a": {"b": 1}}', "$.a", None), ('{"a": [10, 20, 30]}', "$.a[-1]", "30"),
    ('{"a": [10, 20, 30]}', "$.a[5]", None), ('{"a": [10, 20, 30]}', "$.a[*]", None),
    ('{"a.b": [0.998,0.996]}', "$.['a.b'][0]", "0.998"), ('"x"', "$", "x"), ('{"a": "x"}', "$.a.b", None),
    ('{"a": {"b": "x"}}', "$..b", None), ('{"a": 1}', "bad path", None), ('{"a": "é\\n"}', "$.a", "é\n"),
])
def test_json_value(text, spec, expected):
    assert value(text, spec) == expected


def test_json_value_empty_and_error_behaviours():
    assert value('{"a": 1}', "$.b", "DEFAULT", "d") is None  # strict: a missing key is an error, not empty
    assert value('{"a": 1}', "$.b", on_error="DEFAULT", d_error="d") == "d"
    assert value('{"a": 1}', "lax $.b", "DEFAULT", "d", "DEFAULT", "e") == "d"
    assert value('{"a": 1}', "strict $.b", "DEFAULT", "d", "DEFAULT", "e") == "e"
    assert value("not json", "$.a", on_error="DEFAULT", d_error="e") == "e"
    assert value("not json", "lax $.a", "DEFAULT", "m", "DEFAULT", "e") == "m"  # lax: bad input is empty
    with pytest.raises(JsonFunctionError, match="Strict jsonpath mode requires scalar value, and the actual "
                                                "value is: '\\[1, 2\\]'"):
        value('{"a": [1,2]}', "$.a", on_error="ERROR")
    with pytest.raises(JsonFunctionError, match="Empty result of JSON_VALUE function is not allowed"):
        value('{"a": [1,2]}', "lax $.a", on_empty="ERROR")
    assert value('{"a": [1,2]}', "$.a", on_empty="ERROR") is None
    with pytest.raises(JsonFunctionError, match=r"No results for path: \$\['b'\]"):
        value('{"a": 1}', "strict $.b", on_error="ERROR")


def test_json_value_returning_casts_only_what_flink_casts():
    assert value('{"a": 0.1}', "$.a", ret="DOUBLE") == 0.1
    assert value('{"a": false}', "$.a", ret="BOOLEAN") is False
    assert value('{"a": 5}', "$.a", ret="INT") == 5
    for text, ret in (('{"a": "12"}', "INT"), ('{"a": 1.7}', "INT"), ('{"a": 2147483648}', "INT"),
                      ('{"a": 1}', "DOUBLE"), ('{"a": "true"}', "BOOLEAN"), ('{"a": 1}', "BOOLEAN")):
        with pytest.raises(JsonFunctionError, match=f"RETURNING {ret}"):
            value(text, "$.a", on_error="DEFAULT", d_error=7, ret=ret)  # a ClassCastException in Flink


def query(text, spec, wrapper="WITHOUT_ARRAY", on_empty="NULL", on_error="NULL"):
    return json_query(text, prepare_path(spec), wrapper, on_empty, on_error)


@pytest.mark.parametrize(("args", "expected"), [
    (('{"a": {"b": 1}}', "$.a"), '{"b":1}'), (("[1,2]", "$"), "[1,2]"),
    (("{}", "$", "CONDITIONAL_ARRAY"), "[{}]"), (("[1,2]", "$", "CONDITIONAL_ARRAY"), "[1,2]"),
    (("[1,2]", "$", "UNCONDITIONAL_ARRAY"), "[[1,2]]"), (("1", "$"), None), (("1", "$", "CONDITIONAL_ARRAY"), "[1]"),
    (("1", "strict $"), None), (("{}", "lax $.invalid", "WITHOUT_ARRAY", "EMPTY_OBJECT"), "{}"),
    (("{}", "strict $.invalid", "WITHOUT_ARRAY", "NULL", "EMPTY_ARRAY"), "[]"),
    (('{"b": 1, "a": [1, 2.50, "x/y", null, true]}', "$"), '{"a":[1,2.50,"x/y",null,true],"b":1}'),
])
def test_json_query(args, expected):
    assert query(*args) == expected


def test_json_query_errors():
    with pytest.raises(JsonFunctionError, match="requires array or object value, and the actual value is: '1'"):
        query("1", "strict $", on_error="ERROR")
    with pytest.raises(JsonFunctionError, match="Empty result of JSON_QUERY function is not allowed"):
        query("1", "lax $", on_empty="ERROR")


@pytest.mark.parametrize(("text", "spec", "on_error", "expected"), [
    ('{"a": true}', "$.a", "FALSE", True), ('{"a": true}', "$.b", "FALSE", False),
    ('{"a": [{"b": 1}]}', "$.a[0].b", "FALSE", True), ('{"a": true}', "strict $.b", "TRUE", True),
    ('{"a": true}', "strict $.b", "UNKNOWN", None), ('{"a": true}', "lax $.b", "ERROR", False),
    ("bad", "lax $.b", "ERROR", False),
])
def test_json_exists(text, spec, on_error, expected):
    assert json_exists(text, prepare_path(spec), on_error) is expected


@pytest.mark.parametrize(("text", "kind", "expected"), [
    ("1", "VALUE", True), ("[]", "VALUE", True), ("{}", "VALUE", True), ('"abc"', "VALUE", True),
    ("abc", "VALUE", False), (None, "VALUE", False), ("1", "SCALAR", True), ("1", "ARRAY", False),
    ("{}", "OBJECT", True), ("{}", "SCALAR", False), ("[1,", "VALUE", False), ("", "VALUE", False),
    ("NaN", "VALUE", False), ("{a:1}", "VALUE", False),
])
def test_is_json(text, kind, expected):
    assert is_json(text, kind) is expected


def test_reading_and_writing_json_as_flink():
    assert parse_json(' {"a": 1} trailing') == {"a": 1}  # Jackson ignores what follows the value
    assert to_json({"b": "\u0001\t", "a": decimal.Decimal("1E+3")}) == '{"a":1E+3,"b":"\\u0001\\t"}'


def test_construction_from_spark_rendered_values():
    nodes = [value_node(read_rendered(t), "") for t in ('"V2"', "1.5", "null")]
    assert json_object(["K2", "K1", "K3"], nodes, "NULL") == '{"K1":1.5,"K2":"V2","K3":null}'
    assert json_object(["K2", "K1", "K3"], nodes, "ABSENT") == '{"K1":1.5,"K2":"V2"}'
    assert json_array(nodes, "ABSENT") == '["V2",1.5]'
    assert json_array(nodes, "NULL") == '["V2",1.5,null]'
    nested = value_node('{"x":1}', "json")
    assert json_array([nested, value_node('{"b": 1.0, "a": 2}', "parse"), value_node("", "parse")], "NULL") == \
        '[{"x":1},{"a":2,"b":1.0},null]'
    assert json_string(read_rendered('{"b":1,"a":[true]}')) == '{"a":[true],"b":1}'
    assert json_string(None) is None


def test_sql_is_json_kinds_reach_the_plan():
    from changeflow.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.create_temporary_view("t", env.from_elements([("{}",)], ["s"]))
    plan = env.sql_query("SELECT s IS JSON OBJECT, s IS NOT JSON ARRAY, s IS JSON FROM t")._plan
    assert [str(e) for _, e in plan.exprs] == ["IS_JSON(s, 'OBJECT')", "NOT(IS_JSON(s, 'ARRAY'))",
                                               "IS_JSON(s, 'VALUE')"]


def test_strict_mode_takes_a_json_null_for_an_error_and_lax_for_empty():
    assert value('{"a": null}', "strict $.a", "DEFAULT", "d", "DEFAULT", "e") == "e"
    assert value('{"a": null}', "lax $.a", "DEFAULT", "d", "DEFAULT", "e") == "d"
    assert json_exists('{"a": null}', prepare_path("$.a"), "UNKNOWN") is None


def test_doubles_are_written_as_flinks_bigdecimal():
    assert json_string(read_rendered("1.0E20")) == "1.0E+20"
    assert json_array([read_rendered("0.1"), read_rendered("1.5")], "NULL") == "[0.1,1.5]"
