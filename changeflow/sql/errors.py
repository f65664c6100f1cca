"""``SqlError``: SQL the planner cannot run, located in the statement.

sqlglot records the source offset of identifiers, literals and function names
in ``expression.meta``; :func:`position` takes the leftmost one under a node,
so an error names where the construct starts.
"""

from __future__ import annotations

from sqlglot import exp

from changeflow.plan.type_inference import PlanError


class SqlError(PlanError):
    """SQL that cannot be planned: names the construct and its line and column."""


def position(node: exp.Expr, sql: str | None) -> tuple[int, int] | None:
    """(line, column), both from 1, where ``node`` starts in ``sql``, if known."""
    starts = [(n.meta["start"], n.meta) for n in node.walk() if "start" in n.meta]
    if not starts:
        return None
    start, meta = min(starts, key=lambda s: s[0])
    if sql is None:
        return meta.get("line", 1), max(1, meta.get("col", 1))
    line = sql.count("\n", 0, start) + 1
    return line, start - (sql.rfind("\n", 0, start) + 1) + 1


def located(message: str, node: exp.Expr | None, sql: str | None) -> str:
    """``message`` followed by where ``node`` is in the statement."""
    where = position(node, sql) if node is not None else None
    return message if where is None else f"{message} (at line {where[0]}, column {where[1]})"


def unsupported(what: str, node: exp.Expr, sql: str | None) -> SqlError:
    """The error for a construct the planner does not support."""
    return SqlError(located(f"unsupported SQL: {what} `{snippet(node)}`", node, sql))


def snippet(node: exp.Expr, limit: int = 60) -> str:
    """``node``'s SQL text, cut to ``limit`` characters, for an error message."""
    # Imported on use: dialect.py raises this module's SqlError (a cycle inside this package).
    from changeflow.sql.dialect import Flink

    text = node.sql(dialect=Flink)
    return text if len(text) <= limit else text[: limit - 3] + "..."
