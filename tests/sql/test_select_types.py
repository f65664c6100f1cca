"""Result names and types of SQL queries, as Flink 2.3 gives them (recorded with PyFlink's get_schema())."""

from __future__ import annotations

import pytest


def test_arithmetic_and_strings(catalog):
    assert catalog.types(
        "SELECT id, v + 1, v * 2.5, v / 2, MOD(v, 3), d / 2, -v, v > 1, name || 'x', CONCAT(name, 'x', name), "
        "UPPER(name), LOWER(name), CHAR_LENGTH(name), SUBSTRING(name, 1, 2), SUBSTRING(name FROM 2), TRIM(name), "
        "REPLACE(name, 'a', 'b'), 1, 2.5, TRUE FROM t") == [
        ("id", "BIGINT"), ("EXPR$1", "INT"), ("EXPR$2", "DECIMAL(13, 1)"), ("EXPR$3", "INT"), ("EXPR$4", "INT"),
        ("EXPR$5", "DOUBLE"), ("EXPR$6", "INT"), ("EXPR$7", "BOOLEAN"), ("EXPR$8", "STRING"), ("EXPR$9", "STRING"),
        ("EXPR$10", "STRING"), ("EXPR$11", "STRING"), ("EXPR$12", "INT"), ("EXPR$13", "STRING"),
        ("EXPR$14", "STRING"), ("EXPR$15", "STRING"), ("EXPR$16", "STRING"), ("EXPR$17", "INT NOT NULL"),
        ("EXPR$18", "DECIMAL(2, 1) NOT NULL"), ("EXPR$19", "BOOLEAN NOT NULL")]


def test_decimal_arithmetic_follows_flink(catalog):
    assert catalog.types("SELECT v + id, v + d, v + CAST(1 AS DECIMAL(10,2)), id * 2, v / 2.0, 7 / 2, 7.0 / 2 "
                         "FROM t") == [
        ("EXPR$0", "BIGINT"), ("EXPR$1", "DOUBLE"), ("EXPR$2", "DECIMAL(13, 2)"), ("EXPR$3", "BIGINT"),
        ("EXPR$4", "DECIMAL(17, 6)"), ("EXPR$5", "INT NOT NULL"), ("EXPR$6", "DECIMAL(13, 12) NOT NULL")]


def test_null_functions_case_and_predicates(catalog):
    types = catalog.types(
        "SELECT COALESCE(name, 'x'), COALESCE(v, id), NULLIF(v, 1), IFNULL(name, 'z'), IFNULL(v, 0), "
        "CASE WHEN v > 1 THEN 'big' ELSE 'small' END, CASE v WHEN 1 THEN 10 ELSE 2.5 END, name LIKE 'a%', "
        "v IN (1, 2), v BETWEEN 1 AND 3, name IS NULL, v IS NOT NULL, NOT (v > 1), v <> 2 FROM t")
    assert [t for _, t in types] == [
        "STRING NOT NULL", "BIGINT", "INT", "STRING NOT NULL", "INT NOT NULL", types[5][1],
        "DECIMAL(11, 1) NOT NULL", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN NOT NULL", "BOOLEAN NOT NULL",
        "BOOLEAN", "BOOLEAN"]
    # Flink: VARCHAR(5) NOT NULL (the longer branch, unpadded)
    assert catalog.plan("SELECT CASE WHEN v > 1 THEN 'big' ELSE 'small' END FROM t").schema[0][1].params == (5,)


def test_date_and_time_functions(catalog):
    types = dict(catalog.types(
        "SELECT DATE_FORMAT(pt, 'yyyy-MM-dd') AS f, CURRENT_TIMESTAMP, TO_TIMESTAMP(name) AS ts, "
        "TO_TIMESTAMP(name, 'yyyy') AS ts2, EXTRACT(YEAR FROM pt) AS y, YEAR(pt) AS y2, HOUR(pt) AS h, "
        "CAST(name AS DATE) AS dt, CAST(v AS BIGINT) AS b, CAST(v AS STRING) AS s, CURRENT_DATE, "
        "LOCALTIMESTAMP, TO_DATE(name) AS d2, UNIX_TIMESTAMP() AS u FROM tp"))
    assert types["f"] == "STRING"
    assert types["CURRENT_TIMESTAMP"].startswith("TIMESTAMP_LTZ") and types["CURRENT_TIMESTAMP"].endswith("NOT NULL")
    assert types["ts"] == types["ts2"] == "TIMESTAMP(3)"
    assert types["y"] == types["y2"] == types["h"] == "BIGINT NOT NULL"
    assert (types["dt"], types["b"], types["s"]) == ("DATE", "BIGINT", "STRING")
    assert (types["CURRENT_DATE"], types["LOCALTIMESTAMP"]) == ("DATE NOT NULL", "TIMESTAMP(3) NOT NULL")
    assert (types["d2"], types["u"]) == ("DATE", "BIGINT NOT NULL")


def test_every_aggregate(catalog):
    assert catalog.types(
        "SELECT name, COUNT(*), COUNT(v), COUNT(DISTINCT v), SUM(v), SUM(d), AVG(v), AVG(d), MIN(name), MAX(v), "
        "LISTAGG(name), LISTAGG(name, ';'), FIRST_VALUE(v), LAST_VALUE(name), STDDEV_POP(v), STDDEV_SAMP(d), "
        "VAR_POP(v), VAR_SAMP(v), COLLECT(name) FROM t GROUP BY name") == [
        ("name", "STRING"), ("EXPR$1", "BIGINT NOT NULL"), ("EXPR$2", "BIGINT NOT NULL"),
        ("EXPR$3", "BIGINT NOT NULL"), ("EXPR$4", "INT"), ("EXPR$5", "DOUBLE"), ("EXPR$6", "INT"),
        ("EXPR$7", "DOUBLE"), ("EXPR$8", "STRING"), ("EXPR$9", "INT"), ("EXPR$10", "STRING"),
        ("EXPR$11", "STRING"), ("EXPR$12", "INT"), ("EXPR$13", "STRING"), ("EXPR$14", "INT"),
        ("EXPR$15", "DOUBLE"), ("EXPR$16", "INT"), ("EXPR$17", "INT"), ("EXPR$18", "MULTISET<STRING> NOT NULL")]


def test_global_aggregate_having_and_expression_keys(catalog):
    assert catalog.types("SELECT COUNT(*), SUM(v), MAX(v) FROM t") == [
        ("EXPR$0", "BIGINT NOT NULL"), ("EXPR$1", "INT"), ("EXPR$2", "INT")]
    assert catalog.types("SELECT v % 10, COUNT(*) AS c FROM t GROUP BY v % 10 HAVING COUNT(*) > 1") == [
        ("EXPR$0", "INT"), ("c", "BIGINT NOT NULL")]
    assert catalog.types("SELECT UPPER(name) AS n, COUNT(*) FROM t GROUP BY UPPER(name)") == [
        ("n", "STRING"), ("EXPR$1", "BIGINT NOT NULL")]
    assert catalog.types("SELECT DISTINCT name, v FROM t") == [("name", "STRING"), ("v", "INT")]


def test_daily_uv_query_of_the_mini_batch_seed(catalog):
    assert catalog.types(
        "SELECT `day`, SUM(cnt) total FROM (SELECT `day`, MOD(user_id, 10), COUNT(DISTINCT user_id) as cnt "
        "FROM src GROUP BY `day`, MOD(user_id, 10)) GROUP BY `day`"
    ) == [("day", "STRING"), ("total", "BIGINT NOT NULL")]


def test_joins_rename_clashing_right_columns_and_pad_the_outer_side(catalog):
    star = catalog.types("SELECT * FROM t JOIN u ON t.id = u.id")
    assert [n for n, _ in star] == ["id", "name", "v", "d", "id0", "region", "w"]
    assert catalog.types("SELECT t.id, u.id, name, region FROM t LEFT JOIN u ON t.id = u.id AND v > w") == [
        ("id", "BIGINT"), ("id0", "BIGINT"), ("name", "STRING"), ("region", "STRING")]
    right = dict(catalog.types("SELECT * FROM tp RIGHT JOIN up ON tp.id = up.id"))
    assert "NOT NULL" not in right["pt"] and "NOT NULL" in right["pt0"]
    full = dict(catalog.types("SELECT * FROM tp FULL OUTER JOIN up ON tp.id = up.id"))
    assert "NOT NULL" not in full["pt"] and "NOT NULL" not in full["pt0"]
    assert [n for n, _ in catalog.types("SELECT * FROM t, u WHERE t.id = u.id")] == [n for n, _ in star]


def test_union_all_widens_to_the_common_type(catalog):
    assert catalog.types("SELECT id, name FROM t UNION ALL SELECT id, region FROM u") == [
        ("id", "BIGINT"), ("name", "STRING")]
    assert catalog.types("SELECT id, v FROM t UNION ALL SELECT id, w FROM u") == [("id", "BIGINT"), ("v", "BIGINT")]


def test_row_number_columns(catalog):
    assert [n for n, _ in catalog.types(
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY pt DESC) AS rn FROM tp) "
        "WHERE rn = 1")] == ["id", "name", "v", "d", "pt", "rn"]
    assert catalog.types("SELECT id, name, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY v DESC) "
                         "AS rn FROM t) WHERE rn <= 3") == [("id", "BIGINT"), ("name", "STRING"),
                                                            ("rn", "BIGINT NOT NULL")]


def test_to_timestamp_ltz_types_and_refusals(catalog):
    # Flink 2.3: TIMESTAMP_LTZ(3) up to precision 3, TIMESTAMP_LTZ(p) above; nullable as its argument.
    assert catalog.types("SELECT TO_TIMESTAMP_LTZ(v), TO_TIMESTAMP_LTZ(v, 0), TO_TIMESTAMP_LTZ(id, 6), "
                         "TO_TIMESTAMP_LTZ(d, 3), TO_TIMESTAMP_LTZ(1700000000, 0) FROM t") == [
        ("EXPR$0", "TIMESTAMP_LTZ(3)"), ("EXPR$1", "TIMESTAMP_LTZ(3)"), ("EXPR$2", "TIMESTAMP_LTZ(6)"),
        ("EXPR$3", "TIMESTAMP_LTZ(3)"), ("EXPR$4", "TIMESTAMP_LTZ(3) NOT NULL")]
    with pytest.raises(NotImplementedError, match="TO_TIMESTAMP_LTZ of a string"):
        catalog.types("SELECT TO_TIMESTAMP_LTZ(name) FROM t")
    with pytest.raises(Exception, match="precision must be an integer literal from 0 to 9"):
        catalog.types("SELECT TO_TIMESTAMP_LTZ(v, v) FROM t")
