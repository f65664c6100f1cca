"""The Table API's JSON functions build the same plan calls as SQL, with PyFlink's names. No Spark."""

import pytest

from changeflow.table import DataTypes, EnvironmentSettings, TableEnvironment
from changeflow.table.expression import JsonExistsOnError, JsonOnNull, JsonQueryWrapper, JsonType, \
    JsonValueOnEmptyOrError
from changeflow.table.expressions import col, json, json_array, json_object, json_object_agg, json_string, lit


@pytest.fixture
def table():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    return env.from_elements([(1, '{"a": 1}')], ["id", "s"])


def test_table_api_json_calls_type_like_flinks(table):
    s = col("s")
    result = table.select(
        s.json_value("$.a", DataTypes.INT(), JsonValueOnEmptyOrError.DEFAULT, 0).alias("a"),
        s.json_query("$", JsonQueryWrapper.CONDITIONAL_ARRAY).alias("q"),
        s.json_exists("$.a", JsonExistsOnError.UNKNOWN).alias("e"), s.is_json(JsonType.OBJECT).alias("o"),
        json_object(JsonOnNull.ABSENT, "id", col("id"), "raw", json(s)).alias("obj"),
        json_array(JsonOnNull.NULL, col("id"), lit("x")).alias("arr"), json_string(col("id")).alias("js"))
    assert [(n, str(t)) for n, t in result._plan.schema] == [
        ("a", "INT"), ("q", "STRING"), ("e", "BOOLEAN"), ("o", "BOOLEAN NOT NULL"), ("obj", "STRING NOT NULL"),
        ("arr", "STRING NOT NULL"), ("js", "STRING")]
    assert str(s.json_value("$.a")) == "JSON_VALUE(s, '$.a' RETURNING STRING NULL ON EMPTY NULL ON ERROR, None, None)"


def test_table_api_refusals_name_what_is_missing(table):
    with pytest.raises(ValueError, match="ON NULL must be one of NULL, ABSENT"):
        json_object_agg("EMPTY", col("s"), col("id"))
    with pytest.raises(NotImplementedError, match="RETURNING"):
        col("s").json_value("$.a", DataTypes.BIGINT())
    with pytest.raises(Exception, match="filter"):
        table.select(col("s").json_value("$.a[?(@.b)]"))
    with pytest.raises(Exception, match="JSON function can only be used as a value"):
        table.select(json(col("s")))
    with pytest.raises(ValueError, match="alternating keys and values"):
        json_object(JsonOnNull.NULL, "k")
