"""Table API expressions with PyFlink's names: ``col``, ``lit``.

>>> from changeflow.table.expressions import col, lit
>>> str(col("a") + lit(1))
'(a + 1)'
"""

from __future__ import annotations

from typing import Any

from changeflow.common.types import DataType
from changeflow.expressions import Agg, Column, Expression, Literal, UserCall, _to_expr

__all__ = ["Expression", "call", "col", "count_star", "lit"]


def col(name: str) -> Expression:
    """A reference to the column ``name``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"col() takes a column name, got {name!r}")
    return Column(name)


def lit(value: Any, data_type: DataType | None = None) -> Expression:
    """A literal value; ``data_type`` is needed for a typed NULL."""
    return Literal(value, data_type)


def count_star() -> Expression:
    """``COUNT(*)``: the number of rows of the group, nulls included."""
    return Agg("count_star", None)


def call(f: Any, *args: Any) -> Expression:
    """A call of a user-defined function: a ``udf``/``udtf``/``udaf`` result, or the name it was
    registered under with ``create_temporary_function`` / ``create_temporary_system_function``."""
    from changeflow.table.functions_env import registered_function, user_function
    function = registered_function(f) if isinstance(f, str) else user_function(f)
    return UserCall(function, tuple(_to_expr(a) for a in args))
