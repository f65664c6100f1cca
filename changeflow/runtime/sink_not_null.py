"""Flink's sink NOT NULL enforcer (``table.exec.sink.not-null-enforcer``).

A sink table's NOT NULL columns (declared NOT NULL, or in its PRIMARY KEY, which
makes them NOT NULL) refuse a NULL at run time, for every change whatever its row
kind, as Flink's ``ConstraintEnforcer`` does: ``ERROR`` (the default) fails the
job with Flink's message, to which changeflow adds the change and its values;
``DROP`` drops the change silently. Flink checks at run time even where the
value is a literal NULL, and so does changeflow.

Both the streaming and the batch INSERT hand their changes to the sink through
:func:`enforce` (:mod:`changeflow.runtime.spark.jobs`). Where the planner put the
sink upsert materializer before the sink, the check runs after it, where Flink
runs it before: with ``DROP`` the materializer may see a change Flink would have
dropped (its output for that key is dropped in turn).
"""

from __future__ import annotations

from typing import Iterable

from changeflow.runtime.changes import Change

OPTION = "table.exec.sink.not-null-enforcer"


class NotNullViolation(RuntimeError):
    """A NULL written into a NOT NULL column of a sink table (Flink's TableException)."""


def not_null_columns(schema) -> list[int]:
    """Positions of the NOT NULL columns of a sink's ``(name, type)`` schema."""
    return [i for i, (_, t) in enumerate(schema) if not t.nullable]


def enforce(changes: Iterable[Change], schema, mode: str, table: str | None = None) -> list[Change]:
    """``changes`` checked against the NOT NULL columns of ``schema``.

    >>> from changeflow.common.row_kind import RowKind
    >>> from changeflow.common.types import DataTypes as T
    >>> schema = [("id", T.BIGINT(False)), ("name", T.STRING())]
    >>> rows = [Change(RowKind.INSERT, (1, None)), Change(RowKind.INSERT, (None, "b"))]
    >>> [c.values for c in enforce(rows, schema, "DROP")]
    [(1, None)]
    >>> enforce(rows, schema, "ERROR", "snk")
    Traceback (most recent call last):
    ...
    changeflow.runtime.sink_not_null.NotNullViolation: Column 'id' is NOT NULL, however, a null value is being written
    into it. You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and
    drop such records silently. (sink table snk, change +I[id=NULL, name=b])
    """
    checked = not_null_columns(schema)
    changes = list(changes)
    if not checked:
        return changes
    names = [n for n, _ in schema]
    kept = []
    for change in changes:
        missing = next((i for i in checked if change.values[i] is None), None)
        if missing is None:
            kept.append(change)
        elif mode != "DROP":
            shown = ", ".join(f"{n}={'NULL' if v is None else v}" for n, v in zip(names, change.values, strict=True))
            where = f"sink table {table}, " if table else ""
            raise NotNullViolation(
                f"Column '{names[missing]}' is NOT NULL, however, a null value is being written into it. "
                f"You can set job configuration '{OPTION}'='DROP' to suppress this exception and drop "
                f"such records silently. ({where}change {change.kind}[{shown}])")
    return kept
