"""Conformance cases for Flink SQL's JSON functions (registered into ``sql_cases.CASES``).

Recorded like every SQL case by ``conformance/record_flink_sql.py`` into
``goldens/sql/json_*.json``. The inputs are JSON texts in a STRING column (so nothing is
folded at planning time), one source, streaming mode: Flink's order is input order.
``json_table_api`` builds its query with the Table API's JSON methods (``col(...).json_value``
and friends) from whichever engine's ``expressions`` module goes with ``E.DataTypes``.
"""

from __future__ import annotations

import importlib

from conformance.sql_cases import _view, case

# j(id BIGINT, s STRING): objects, arrays, scalars, text that is not JSON, a NULL.
J_ROWS = [
    (1, '{"a": 1, "b": {"c": "x"}, "arr": [10, 20, 30]}'),
    (2, '{"a": 2.50, "b": {"c": null}, "arr": []}'),
    (3, '{"a": "text", "b": [1, 2], "arr": [{"c": 1}, {"c": 2}]}'),
    (4, "not json"),
    (5, None),
    (6, '[1, {"a": true}]'),
    (7, '"just a string"'),
    (8, '{"a": 1e3, "b": {"c": "y\\u00e9/\\n"}, "arr": [1.5], "z": {"y": 1, "x": [null]}}'),
]

# r(id BIGINT, s STRING): values JSON_VALUE ... RETURNING can return (a type mismatch fails the job).
R_ROWS = [
    (1, '{"i": 5, "d": 0.25, "f": true}'),
    (2, '{"i": -7, "d": 1E+2, "f": false}'),
    (3, '{"other": 1}'),
    (4, '{"i": null, "d": null, "f": null}'),
]

# p(id BIGINT, name STRING, score DOUBLE, ok BOOLEAN): values for the constructors, with NULLs.
P_ROWS = [
    (1, "Alice", 1.5, True),
    (2, None, 1e20, False),
    (3, 'quote " and \\ slash /', None, None),
    (4, "Bob", 0.1, True),
]


def _j(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "j", J_ROWS, ("id", D.BIGINT()), ("s", D.STRING()))


@case("json_value_paths")
def json_value_paths(t_env, E):
    """JSON_VALUE over paths: members, nested members, array elements from either end, a
    deep scan (a list: not a scalar), a path into an array document; numbers as Flink prints
    them (2.50, 1E+3)."""
    _j(t_env, E)
    return t_env.sql_query(
        "SELECT id, JSON_VALUE(s, '$.a') AS a, JSON_VALUE(s, 'lax $.b.c') AS bc, "
        "JSON_VALUE(s, '$.arr[1]') AS arr1, JSON_VALUE(s, 'lax $.arr[-1].c') AS lastc, "
        "JSON_VALUE(s, '$..c') AS scan, JSON_VALUE(s, '$[1].a') AS inner_a, JSON_VALUE(s, '$') AS whole "
        "FROM j")


@case("json_value_empty_and_error")
def json_value_empty_and_error(t_env, E):
    """JSON_VALUE's ON EMPTY / ON ERROR: strict mode makes a missing member or bad input an
    error, lax mode makes them empty; an invalid path is an error in both."""
    _j(t_env, E)
    return t_env.sql_query(
        "SELECT id, JSON_VALUE(s, 'lax $.b.c' DEFAULT 'none' ON EMPTY) AS lax_empty, "
        "JSON_VALUE(s, 'strict $.b.c' DEFAULT 'none' ON EMPTY DEFAULT 'err' ON ERROR) AS strict_both, "
        "JSON_VALUE(s, '$.b' DEFAULT 'err' ON ERROR) AS object_error, "
        "JSON_VALUE(s, 'lax $.b' DEFAULT 'empty' ON EMPTY) AS object_empty, "
        "JSON_VALUE(s, 'lax $.zz' DEFAULT 'm' ON EMPTY DEFAULT 'e' ON ERROR) AS lax_missing, "
        "JSON_VALUE(s, 'bad path' DEFAULT 'bad' ON ERROR) AS bad_path "
        "FROM j")


@case("json_value_returning")
def json_value_returning(t_env, E):
    """JSON_VALUE ... RETURNING INT / DOUBLE / BOOLEAN, defaults of those types, arithmetic on
    the result."""
    D = E.DataTypes
    _view(t_env, E, "r", R_ROWS, ("id", D.BIGINT()), ("s", D.STRING()))
    return t_env.sql_query(
        "SELECT id, JSON_VALUE(s, '$.i' RETURNING INT) AS i, JSON_VALUE(s, '$.i' RETURNING INT) + 1 AS i1, "
        "JSON_VALUE(s, '$.d' RETURNING DOUBLE) AS d, JSON_VALUE(s, '$.f' RETURNING BOOLEAN) AS f, "
        "JSON_VALUE(s, 'lax $.i' RETURNING INT DEFAULT -1 ON EMPTY) AS i_or_default "
        "FROM r")


@case("json_query_wrappers")
def json_query_wrappers(t_env, E):
    """JSON_QUERY: objects and arrays as compact JSON text with sorted keys, the array
    wrappers, EMPTY ARRAY / EMPTY OBJECT, an indefinite path's list of matches."""
    _j(t_env, E)
    return t_env.sql_query(
        "SELECT id, JSON_QUERY(s, '$.b') AS b, JSON_QUERY(s, '$.arr' WITH CONDITIONAL ARRAY WRAPPER) AS arr, "
        "JSON_QUERY(s, '$.a' WITH UNCONDITIONAL ARRAY WRAPPER) AS wrapped_a, "
        "JSON_QUERY(s, 'lax $.a' EMPTY OBJECT ON EMPTY) AS a_or_object, "
        "JSON_QUERY(s, 'strict $.a' EMPTY ARRAY ON ERROR) AS a_or_array, "
        "JSON_QUERY(s, 'lax $.arr[*].c') AS cs, JSON_QUERY(s, '$') AS whole "
        "FROM j")


@case("json_exists_and_is_json")
def json_exists_and_is_json(t_env, E):
    """JSON_EXISTS (a JSON null does not exist) with its ON ERROR choices, and IS [NOT] JSON
    of each kind (a NULL is not JSON)."""
    _j(t_env, E)
    return t_env.sql_query(
        "SELECT id, JSON_EXISTS(s, '$.a') AS has_a, JSON_EXISTS(s, '$.b.c') AS has_bc, "
        "JSON_EXISTS(s, 'strict $.zz' TRUE ON ERROR) AS zz_true, "
        "JSON_EXISTS(s, 'strict $.zz' UNKNOWN ON ERROR) AS zz_unknown, "
        "s IS JSON AS is_json, s IS JSON OBJECT AS is_object, s IS JSON ARRAY AS is_array, "
        "s IS JSON SCALAR AS is_scalar, s IS NOT JSON AS is_not_json "
        "FROM j")


@case("json_construction")
def json_construction(t_env, E):
    """JSON_OBJECT (keys sorted; NULL / ABSENT ON NULL), JSON_ARRAY (ABSENT ON NULL by
    default), nesting, JSON(...) inserted as JSON, JSON_STRING; doubles and escapes as Flink
    writes them."""
    D = E.DataTypes
    _view(t_env, E, "p", P_ROWS, ("id", D.BIGINT()), ("name", D.STRING()), ("score", D.DOUBLE()),
          ("ok", D.BOOLEAN()))
    return t_env.sql_query(
        "SELECT id, JSON_OBJECT('name' VALUE name, 'id' VALUE id, 'score' VALUE score) AS obj, "
        "JSON_OBJECT(KEY 'name' VALUE name, KEY 'ok' VALUE ok ABSENT ON NULL) AS absent, "
        "JSON_ARRAY(id, name, ok) AS arr, JSON_ARRAY(name, score NULL ON NULL) AS arr_nulls, "
        "JSON_OBJECT('nested' VALUE JSON_OBJECT('ok' VALUE ok), 'list' VALUE JSON_ARRAY(id, 'x')) AS nested, "
        "JSON_OBJECT('raw' VALUE JSON('{\"b\": 1, \"a\": [2.50]}')) AS raw_json, "
        "JSON_STRING(name) AS name_json, JSON_STRING(score) AS score_json, JSON_OBJECT() AS empty_obj, "
        "JSON_ARRAY() AS empty_arr "
        "FROM p")


@case("json_value_error_on_error", compare="error", error_mentions=("JSON_VALUE",))
def json_value_error_on_error(t_env, E):
    """ERROR ON ERROR fails the job on the first row whose value is not a scalar."""
    _j(t_env, E)
    return t_env.sql_query("SELECT id, JSON_VALUE(s, '$.b' ERROR ON ERROR) AS b FROM j WHERE id = 1")


def _expressions(E):
    """The ``expressions`` module of the engine ``E.DataTypes`` comes from (pyflink or changeflow)."""
    package = E.DataTypes.__module__.split(".")[0]
    return importlib.import_module(f"{package}.table.expressions")


@case("json_table_api")
def json_table_api(t_env, E):
    """The Table API's JSON methods: json_value (with a RETURNING type), json_query, json_exists,
    is_json, as PyFlink's example table_process_json_data.py uses them. (PyFlink 2.3's
    json_object() / json_array() with arguments fail with a py4j "Method jsonObject(...) does
    not exist"; changeflow's are tested in tests/json.)"""
    X = _expressions(E)
    enums = importlib.import_module(f"{E.DataTypes.__module__.split('.')[0]}.table.expression")
    D = E.DataTypes
    _view(t_env, E, "r", R_ROWS, ("id", D.BIGINT()), ("s", D.STRING()))
    s = X.col("s")
    return t_env.sql_query("SELECT id, s FROM r").select(
        X.col("id"), s.json_value("$.i", D.INT()).alias("i"),
        s.json_value("lax $.missing", D.STRING(), enums.JsonValueOnEmptyOrError.DEFAULT, "none")
        .alias("missing"),
        s.json_query("$", enums.JsonQueryWrapper.CONDITIONAL_ARRAY).alias("q"),
        s.json_exists("$.f").alias("has_f"), s.is_json(enums.JsonType.OBJECT).alias("is_object"))


# o(id BIGINT, name STRING, score DOUBLE): per-name totals move between count groups, so the
# JSON aggregates over them retract and re-add members; one NULL score, one NULL name's row.
O_ROWS = [
    (1, "ann", 1.5), (2, "bob", 2.0), (3, "ann", None), (4, "cy", 0.25), (5, "bob", 1e20),
    (6, "dee", 3.0), (7, "ann", 2.0),
]

_JSON_AGGS = ("SELECT cnt, JSON_OBJECTAGG(KEY name VALUE total) AS obj, "
              "JSON_OBJECTAGG(KEY name VALUE low ABSENT ON NULL) AS obj_absent, JSON_ARRAYAGG(name) AS names, "
              "JSON_ARRAYAGG(low NULL ON NULL) AS lows, JSON_ARRAYAGG(JSON_OBJECT('n' VALUE name)) AS nested "
              "FROM (SELECT name, COUNT(*) AS cnt, SUM(score) AS total, MIN(CASE WHEN score < 2 THEN score END) "
              "AS low FROM o GROUP BY name) GROUP BY cnt")


def _o(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "o", O_ROWS, ("id", D.BIGINT()), ("name", D.STRING()), ("score", D.DOUBLE()))


@case("json_aggregates_over_retracting_input")
def json_aggregates_over_retracting_input(t_env, E):
    """JSON_OBJECTAGG (members sorted by key; NULL / ABSENT ON NULL) and JSON_ARRAYAGG (arrival
    order; ABSENT / NULL ON NULL; a nested JSON_OBJECT inserted as JSON) over a grouped input whose
    rows are retracted and re-added as names move between count groups."""
    _o(t_env, E)
    return t_env.sql_query(_JSON_AGGS)


@case("json_aggregates_batch", mode="batch")
def json_aggregates_batch(t_env, E):
    """The same JSON aggregates in batch mode, and a global JSON aggregate over no rows ([] and {})."""
    _o(t_env, E)
    return t_env.sql_query(_JSON_AGGS + " UNION ALL SELECT CAST(-1 AS BIGINT), JSON_OBJECTAGG(KEY name VALUE score), "
                           "'', JSON_ARRAYAGG(name), '', '' FROM o WHERE id < 0")


@case("json_objectagg_duplicate_key", compare="error", error_mentions=("already present",))
def json_objectagg_duplicate_key(t_env, E):
    """A key twice in one group fails the job with Flink's message."""
    _o(t_env, E)
    return t_env.sql_query("SELECT JSON_OBJECTAGG(KEY name VALUE id) AS obj FROM o")


@case("json_aggregates_table_api")
def json_aggregates_table_api(t_env, E):
    """The Table API's json_object_agg / json_array_agg with JsonOnNull, grouped by name."""
    X = _expressions(E)
    enums = importlib.import_module(f"{E.DataTypes.__module__.split('.')[0]}.table.expression")
    _o(t_env, E)
    return t_env.sql_query("SELECT * FROM o WHERE id < 7").group_by(X.col("name")).select(
        X.col("name"), X.json_array_agg(enums.JsonOnNull.NULL, X.col("score")).alias("scores"),
        X.json_object_agg(enums.JsonOnNull.ABSENT, X.col("id").cast(E.DataTypes.STRING()), X.col("score"))
        .alias("by_id"))
