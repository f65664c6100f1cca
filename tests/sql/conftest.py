"""Tables for the SQL planner tests: plans from ``from_elements``, no Spark needed."""

from __future__ import annotations

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.sql import plan_query
from changeflow.table import EnvironmentSettings, TableEnvironment


class Catalog:
    """A name -> plan resolver, as the TableEnvironment's catalog gives the planner."""

    def __init__(self) -> None:
        self.tables = {}

    def __call__(self, name: str):
        if name not in self.tables:
            raise PlanError(f"table {name!r} not found; known tables: {', '.join(sorted(self.tables))}")
        return self.tables[name]

    def add(self, name: str, table_or_sql) -> None:
        self.tables[name] = plan_query(table_or_sql, self) if isinstance(table_or_sql, str) else table_or_sql._plan

    def plan(self, sql: str):
        return plan_query(sql, self)

    def types(self, sql: str) -> list[tuple[str, str]]:
        return [(n, str(t)) for n, t in self.plan(sql).schema]


@pytest.fixture
def planning_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


@pytest.fixture
def catalog(planning_env):
    """``t(id BIGINT, name STRING, v INT, d DOUBLE)``, ``u(id BIGINT, region STRING, w BIGINT)``,
    ``src(user_id INT, day STRING)`` (the mini-batch seed's table), and ``tp``/``up``: t and u with a
    ``pt AS PROCTIME()`` column."""
    from changeflow.common.types import DataTypes as T

    c = Catalog()
    row = T.ROW
    f = T.FIELD
    c.add("t", planning_env.from_elements(
        [(1, "a", 3, 1.5)], row([f("id", T.BIGINT()), f("name", T.STRING()), f("v", T.INT()), f("d", T.DOUBLE())])))
    c.add("u", planning_env.from_elements(
        [(1, "eu", 3)], row([f("id", T.BIGINT()), f("region", T.STRING()), f("w", T.BIGINT())])))
    c.add("src", planning_env.from_elements(
        [(1, "2023-12-19")], row([f("user_id", T.INT()), f("day", T.STRING())])))
    c.add("tp", "SELECT *, PROCTIME() AS pt FROM t")
    c.add("up", "SELECT *, PROCTIME() AS pt FROM u")
    return c
