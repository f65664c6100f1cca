"""Errors of the SQL planner name the construct, its position, the column and types, or the known tables."""

from __future__ import annotations

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.sql import SqlError


@pytest.mark.parametrize("sql, message", [
    ("SELECT id FROM t ORDER BY v + 1",
     r"unsupported SQL: ORDER BY an expression that is not in the select list .*`v \+ 1` \(at line 1, column 27\)"),
    ("SELECT id FROM t LIMIT v",
     r"unsupported SQL: LIMIT other than a non-negative integer literal `v` \(at line 1, column 24\)"),
    ("SELECT id,\n  LAG(v) OVER (ORDER BY v) FROM t",
     r"unsupported SQL: window function LAG\(v\) .*`LAG\(v\) OVER \(ORDER BY v\)` \(at line 2, column 3\)"),
    ("SELECT id FROM t INTERSECT SELECT id, w FROM u", r"INTERSECT inputs have 1 and 2 columns"),
    ("SELECT SOUNDEX(name) FROM t", r"unsupported SQL: function SOUNDEX `SOUNDEX\(name\)` \(at line 1, column 8\)"),
    ("SELECT id, (SELECT MAX(w) FROM u) FROM t", r"unsupported SQL: scalar subquery .*\(at line 1, column 20\)"),
    ("SELECT * FROM t JOIN u FOR SYSTEM_TIME AS OF t.id ON t.id = u.id",
     r"FOR SYSTEM_TIME AS OF \(an event-time temporal join\): The system time period specification expects "
     r"Timestamp type but is 'BIGINT' \(column t.id\) \(at line 1, column 46\)"),
    ("SELECT * FROM u FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00'",
     r"FOR SYSTEM_TIME AS OF outside a join \(time travel\) is not supported \(table u\)"),
    ("SELECT * FROM tp JOIN u FOR SYSTEM_TIME AS OF tp.pt ON tp.id = u.id",
     r"unsupported SQL: FOR SYSTEM_TIME AS OF a processing-time attribute \(a lookup join\) into table u, whose "
     r"connector cannot look rows up \(a processing-time temporal join\); the 'jdbc' connector can"),
    ("SELECT * FROM TABLE(\n  TUMBLE(TABLE t PARTITION BY id, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
     r"PARTITION BY in the table argument of TUMBLE \(at line 2, column 3\)"),
    ("SELECT name, TUMBLE_ROWTIME(pt, INTERVAL '1' MINUTE) FROM tp GROUP BY TUMBLE(pt, INTERVAL '1' MINUTE), name",
     r"^A proctime window cannot provide a rowtime attribute\. \(at line 1, column 14\)$"),
    ("SELECT name FROM t GROUP BY HOP(d, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE), name",
     r"requires the timecol is a time attribute type.*\(at line 1, column 29\)"),
    ("SELECT name, COUNT(*) FROM t GROUP BY TUMBLE(d, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE), name",
     r"unsupported SQL: TUMBLE with 3 arguments"),
    ("SELECT CAST(v AS INTERVAL DAY) FROM t", r"unsupported SQL: type `INTERVAL DAY` \(at line 1, column 13\)"),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY v) AS rn FROM t) WHERE rn > 3",
     r"ROW_NUMBER\(\) without an upper bound .*\(at line 1, column 26\)"),
    ("SELECT * FROM t WHERE COUNT(*) > 1", r"aggregate in WHERE \(use HAVING\) .*\(at line 1, column 23\)"),
    ("SELECT FROM WHERE", r"SQL parse error at line 1, column \d+: Expected table name but got 'WHERE'"),
])
def test_unsupported_sql_names_the_construct_and_its_position(catalog, sql, message):
    with pytest.raises(SqlError, match=message):
        catalog.plan(sql)


@pytest.mark.parametrize("sql, message", [
    ("SELECT id FROM t WHERE name > 3",
     r"cannot compare name of type STRING with 3 of type INT NOT NULL .*\(at line 1, column 24\)"),
    ("SELECT name + 1 FROM t",
     r"arithmetic \(name \+ 1\) needs numeric operands, but name is STRING and 1 is INT NOT NULL"),
    ("SELECT UPPER(v) FROM t", r"UPPER needs a string, but v is INT"),
    ("SELECT name IS NOT TRUE FROM t", r"IS NOT TRUE needs a BOOLEAN operand, but name is STRING"),
    ("SELECT id, v FROM t UNION ALL SELECT id, region FROM u", r"UNION ALL column 'v': incompatible types INT, STRING"),
    ("SELECT * FROM t JOIN u ON t.id = u.region", r"join key id of type BIGINT cannot equal region of type STRING"),
    ("SELECT CAST(v AS BYTES) FROM t", r"CAST .*Cast function cannot convert value of type INT to type BYTES"),
    ("SELECT CAST(name AS MAP<STRING, INT>) FROM t",
     r"Cast function cannot convert value of type STRING to type MAP<STRING, INT>"),
    ("SELECT CAST(d AS TIME) FROM t", r"Cast function cannot convert value of type DOUBLE to type TIME\(0\)"),
    ("SELECT name FROM t GROUP BY name HAVING COUNT(*)",
     r"HAVING condition COUNT\(\*\) must be BOOLEAN, but it is BIGINT NOT NULL"),
])
def test_type_errors_name_the_column_and_both_types(catalog, sql, message):
    with pytest.raises(SqlError, match=message):
        catalog.plan(sql)


def test_missing_table_names_it_and_lists_the_known_ones(catalog):
    with pytest.raises(SqlError,
                       match=r"table 'nope' not found; known tables: src, t, tp, u, up \(at line 1, column 15\)"):
        catalog.plan("SELECT * FROM nope")


def test_unknown_and_ambiguous_columns(catalog):
    with pytest.raises(SqlError, match=r"column 'idx' not found; available columns: t.id, t.name, t.v, t.d"):
        catalog.plan("SELECT idx FROM t")
    with pytest.raises(SqlError, match=r"column 'id' is ambiguous: it is in t, u; qualify it"):
        catalog.plan("SELECT id FROM t JOIN u ON t.id = u.id")
    with pytest.raises(SqlError, match=r"column 'name' .* is neither a grouping key nor inside an aggregate"):
        catalog.plan("SELECT name, COUNT(*) FROM t")


def test_sql_error_is_a_plan_error(catalog):
    with pytest.raises(PlanError):
        catalog.plan("SELECT idx FROM t")
