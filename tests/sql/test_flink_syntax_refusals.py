"""SQL that other dialects accept but Flink refuses is refused, not run with another meaning."""

from __future__ import annotations

import pytest

from changeflow.plan.nodes import Join
from changeflow.sql import SqlError


@pytest.mark.parametrize("sql, word", [
    ("SELECT * EXCEPT (id) FROM t", "EXCEPT"),
    ("SELECT t.* EXCEPT (id, v) FROM t", "EXCEPT"),
    ("SELECT * REPLACE (1 AS id) FROM t", "REPLACE"),
])
def test_star_modifiers_are_refused(catalog, sql, word):
    # Flink's parser takes a bare `*`; sqlglot reads these modifiers for BigQuery/Spark/DuckDB.
    # The planner used to expand the star and drop the modifier: `id` came back.
    with pytest.raises(SqlError, match=rf"unsupported SQL: SELECT \* {word} \(not Flink SQL.*\(at line 1, column 8\)"):
        catalog.plan(sql)


def test_plain_star_still_expands(catalog):
    assert [n for n, _ in catalog.types("SELECT * FROM t")] == ["id", "name", "v", "d"]


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t JOIN u",
    "SELECT * FROM t INNER JOIN u",
    "SELECT * FROM t LEFT JOIN u",
    "SELECT * FROM t FULL OUTER JOIN u WHERE t.id = u.id",
])
def test_join_without_condition_is_refused_with_calcites_message(catalog, sql):
    with pytest.raises(SqlError, match=r"INNER, LEFT, RIGHT or FULL join requires a condition "
                                       r"\(NATURAL keyword or ON or USING clause\)"):
        catalog.plan(sql)


def test_cross_join_takes_no_condition(catalog):
    with pytest.raises(SqlError, match=r"Cannot specify condition .* following CROSS JOIN"):
        catalog.plan("SELECT * FROM t CROSS JOIN u ON t.id = u.id")


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t CROSS JOIN u",
    "SELECT * FROM t, u",
])
def test_cross_and_comma_joins_are_cross_products(catalog, sql):
    plan = catalog.plan(sql)
    assert isinstance(plan, Join) and plan.join_type == "INNER"
    assert plan.left_keys == () and plan.condition is None


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t CROSS JOIN u WHERE t.id = u.id",
    "SELECT * FROM t, u WHERE t.id = u.id",
])
def test_cross_and_comma_joins_take_keys_from_where(catalog, sql):
    plan = catalog.plan(sql)
    assert isinstance(plan, Join) and plan.left_keys == ("id",) and plan.right_keys == ("id",)
