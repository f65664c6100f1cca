"""Table API expressions with PyFlink's names: ``col``, ``lit``.

>>> from changeflow.table.expressions import col, lit
>>> str(col("a") + lit(1))
'(a + 1)'
"""

from __future__ import annotations

from typing import Any

from changeflow.common.types import DataType
from changeflow import expressions as _json  # the JSON call builders
from changeflow.expressions import Agg, Column, Expression, Literal, UserCall, _to_expr

__all__ = ["Expression", "call", "col", "count_star", "json", "json_array", "json_array_agg", "json_object",
           "json_object_agg", "json_string", "lit"]


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


# --- JSON functions (PyFlink's pyflink.table.expressions names) --------------------------------

def json_object(on_null: Any = "NULL", *args: Any) -> Expression:
    """``JSON_OBJECT``: a JSON object from alternating keys (string literals) and values.

    >>> str(json_object("ABSENT", "k", col("v")))
    'JSON_OBJECT(KEYS(k) ABSENT ON NULL, v)'
    """
    if len(args) % 2:
        raise ValueError(f"json_object() takes alternating keys and values, got {len(args)} arguments")
    return _json.json_object(list(zip(args[0::2], args[1::2], strict=True)), on_null)


def json_array(on_null: Any = "ABSENT", *args: Any) -> Expression:
    """``JSON_ARRAY``: a JSON array of the values."""
    return _json.json_array(list(args), on_null)


def json_string(value: Any) -> Expression:
    """``JSON_STRING``: the value serialized as JSON; NULL for NULL."""
    return _json.json_string(value)


def json(value: Any) -> Expression:
    """``JSON``: pre-formatted JSON text, inserted as JSON into ``json_object`` / ``json_array``."""
    return _json.json_text(value)


def json_object_agg(on_null: Any, key_expr: Any, value_expr: Any) -> Expression:
    """``JSON_OBJECTAGG``: not implemented by changeflow."""
    raise NotImplementedError("json_object_agg (JSON_OBJECTAGG) is not supported by changeflow")


def json_array_agg(on_null: Any, item_expr: Any) -> Expression:
    """``JSON_ARRAYAGG``: not implemented by changeflow."""
    raise NotImplementedError("json_array_agg (JSON_ARRAYAGG) is not supported by changeflow")


def call(f: Any, *args: Any) -> Expression:
    """A call of a user-defined function: a ``udf``/``udtf``/``udaf`` result, or the name it was
    registered under with ``create_temporary_function`` / ``create_temporary_system_function``."""
    from changeflow.table.functions_env import registered_function, user_function
    function = registered_function(f) if isinstance(f, str) else user_function(f)
    return UserCall(function, tuple(_to_expr(a) for a in args))
