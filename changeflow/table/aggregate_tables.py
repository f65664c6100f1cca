"""``aggregate`` and ``flat_aggregate`` of :class:`~changeflow.table.table.Table` and ``GroupedTable``.

As PyFlink: ``t.group_by(col('k')).aggregate(f(col('v')).alias('a', 'b')).select(...)``
runs a ``udaf`` per group, its ROW result expanded into columns; ``flat_aggregate(g)``
runs a ``udtaf`` and yields the rows its ``emit_value`` emits. Each must be closed
with ``select``. Passing the function itself instead of a call
(``aggregate(f.alias('a', 'b'))``, ``flat_aggregate(top2)``) calls it with the whole
row: one :class:`~changeflow.common.Row` argument whose fields are the table's columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from changeflow.expressions import Column, Expression, MultiAlias, UserCall
from changeflow.plan import builder, user_aggregates
from changeflow.plan.type_inference import PlanError

if TYPE_CHECKING:
    from changeflow.table.table import Table


def _call(table: "Table", func: Any, what: str) -> tuple[Expression, tuple[str, ...]]:
    """The call expression, and the row fields when the function takes the whole row."""
    from changeflow.table.udf import UserDefinedFunctionWrapper
    if isinstance(func, str):
        raise NotImplementedError(f"{what}('{func}'): a function given by name in a string is not supported by "
                                  f"changeflow; pass the udaf/udtaf or a call of it")
    if isinstance(func, UserDefinedFunctionWrapper):
        fields = tuple(table.plan.field_names)
        call = UserCall(func.function, tuple(Column(n) for n in fields))
        names = func.function.alias_names
        return (MultiAlias(call, names) if names else call), fields
    if not isinstance(func, Expression):
        raise TypeError(f"{what} takes a Python aggregate function or a call of one, got {func!r}")
    return func, ()


def _with_row_fields(plan, fields: tuple[str, ...]):
    """Mark the node's call as taking the whole row (``row_fields``)."""
    if not fields:
        return plan
    import dataclasses
    if hasattr(plan, "calls"):
        return dataclasses.replace(plan, calls=tuple(dataclasses.replace(c, row_fields=fields) for c in plan.calls))
    return dataclasses.replace(plan, call=dataclasses.replace(plan.call, row_fields=fields))


class AggregatedTable:
    """The result of ``aggregate(...)``: close it with :meth:`select`."""

    def __init__(self, table: "Table", keys: list[Expression], func: Any) -> None:
        call, fields = _call(table, func, "aggregate")
        self._table = table
        self._plan = _with_row_fields(user_aggregates.aggregate(table.plan, keys, call), fields)

    def select(self, *fields: Expression | str) -> "Table":
        """Project the keys and the aggregate's result columns (no further aggregates)."""
        return self._table._wrap(_select(self._plan, fields))


class FlatAggregateTable:
    """The result of ``flat_aggregate(...)``: close it with :meth:`select`."""

    def __init__(self, table: "Table", keys: list[Expression], func: Any) -> None:
        call, fields = _call(table, func, "flat_aggregate")
        self._table = table
        self._plan = _with_row_fields(user_aggregates.flat_aggregate(table.plan, keys, call), fields)

    def select(self, *fields: Expression | str) -> "Table":
        """Project the keys and the emitted columns (no further aggregates)."""
        return self._table._wrap(_select(self._plan, fields))


def _select(plan, fields) -> Any:
    from changeflow.table.table import _exprs
    exprs = _exprs(tuple(fields))
    if any(e.contains_aggregate() for e in exprs):
        raise PlanError("the select after aggregate/flat_aggregate cannot hold aggregates")
    if len(exprs) == 1 and isinstance(exprs[0], Column) and exprs[0].name == "*":
        return plan
    return builder.project(plan, exprs)
