"""Flink SQL front end: the dialect, and the query planner over the engine's logical plan."""

from changeflow.sql.dialect import Flink, parse
from changeflow.sql.errors import SqlError
from changeflow.sql.planner import plan_query

__all__ = ["Flink", "SqlError", "parse", "plan_query"]
