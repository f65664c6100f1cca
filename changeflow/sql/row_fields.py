"""ROW field access in SQL: ``person.id`` is field ``id`` of the ROW column ``person``.

As in Flink, a dotted name is first a qualified column (``t.id``, a table or
alias ``t``); when none matches, its first part (or its second, after a table
qualifier: ``t.person.id``) may name a ROW column and the rest its fields. The
access is the planner's ``get_field`` call, typed by
:mod:`changeflow.plan.type_inference` (an unknown field or a column that is no ROW
fails there, naming it) and compiled to Spark's ``getField``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.common.types import DataTypes
from changeflow.expressions import Call, Column, Expression, Literal
from changeflow.sql.errors import SqlError

if TYPE_CHECKING:
    from changeflow.sql.scalar import Scope


def _field_path(scope: Scope, node: exp.Column) -> tuple[str, list[str]] | None:
    """The plan column of the ROW and the field names ``node`` names, or None."""
    parts = [p.name for p in node.parts]
    for qualifier, name, fields in ((None, parts[0], parts[1:]), (parts[0], parts[1], parts[2:])):
        if not fields:
            continue
        found = [c for c in scope.columns if c.name == name and (qualifier is None or c.qualifier == qualifier)]
        if len(found) == 1:
            return found[0].plan_name, fields
    return None


def column_or_field(scope: Scope, node: exp.Column, sql: str | None) -> Expression:
    """The column ``node`` names, or a field of a ROW column (the column's lookup error when neither)."""
    try:
        return Column(scope.lookup(node, sql))
    except SqlError:
        path = _field_path(scope, node) if node.table else None
        if path is None:
            raise
    value: Expression = Column(path[0])
    for field in path[1]:
        value = Call("get_field", (value, Literal(field, DataTypes.STRING(False))))
    return value
