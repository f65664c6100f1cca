"""JSON function calls in plan expressions: how the front ends build them and what type they have.

Both front ends (SQL's ``JSON_VALUE(s, 'lax $.a' RETURNING INT DEFAULT 0 ON EMPTY)``, the
Table API's ``col('s').json_value('lax $.a', DataTypes.INT(), ...)``) build the same
:class:`~changeflow.expressions.Call`; its constant clauses travel as one :class:`Literal`
holding a spec (a frozen dataclass), so the runtime compiles them without re-parsing:

==============  =============================================================  ====================
function        arguments                                                      type (Flink's)
==============  =============================================================  ====================
``json_value``  text, ``JsonValueSpec``, default on empty, default on error    RETURNING type, nullable
``json_query``  text, ``JsonQuerySpec``                                        STRING, nullable
``json_exists`` text, ``JsonExistsSpec``                                       BOOLEAN, nullable
``is_json``     text, kind (``VALUE``/``SCALAR``/``ARRAY``/``OBJECT``)         BOOLEAN NOT NULL
``json_object`` ``JsonObjectSpec`` (keys, ON NULL), values...                  STRING NOT NULL
``json_array``  ``JsonArraySpec`` (ON NULL), values...                          STRING NOT NULL
``json_string`` value                                                          STRING, nullable as the value
``json``        text (only as a value of json_object / json_array)            STRING
==============  =============================================================  ====================

The path is parsed when the call is built, so an invalid path, or a JSONPath feature
changeflow does not implement (filters, functions), is refused with the query.
"""

from __future__ import annotations

from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import (Call, Expression, Literal, json_array, json_exists, json_is_json, json_object,
                                    json_query, json_string, json_text, json_value)
from changeflow.json_specs import JsonArraySpec, JsonExistsSpec, JsonObjectSpec, JsonQuerySpec, JsonValueSpec
from changeflow.kernels.json.path import JsonPathError, UnsupportedPath, parse_path

__all__ = ["JSON_FUNCTIONS", "JsonArraySpec", "JsonExistsSpec", "JsonObjectSpec", "JsonQuerySpec",
           "JsonValueSpec", "is_json", "json_array", "json_exists", "json_object", "json_query", "json_string",
           "json_text", "json_type", "json_value"]

JSON_FUNCTIONS = ("json_value", "json_query", "json_exists", "is_json", "json_object", "json_array",
                  "json_string", "json")

is_json = json_is_json


def _check_path(expr: Call) -> None:
    """Refuse a path using a JSONPath feature changeflow does not implement (filters, functions).

    An invalid path is no error here: Flink plans the query and every row takes ON ERROR.
    """
    from changeflow.plan.type_inference import PlanError

    spec = expr.args[1]
    assert isinstance(spec, Literal)
    try:
        parse_path(spec.value.path)
    except UnsupportedPath as error:
        raise PlanError(f"{expr.function.upper()}: {error}") from None
    except JsonPathError:
        pass


def json_type(expr: Call, schema: dict[str, DataType], type_of) -> DataType:
    """The Flink type of a JSON call (``type_of`` types its value arguments)."""
    from changeflow.plan.type_inference import PlanError  # type_inference dispatches here

    f = expr.function
    if f == "json":
        raise PlanError(f"{expr}: the JSON function can only be used as a value of JSON_OBJECT or JSON_ARRAY")
    if f in ("json_value", "json_query", "json_exists", "is_json"):
        _need_string(expr, expr.args[0], schema, type_of)
    if f in ("json_value", "json_query", "json_exists"):
        _check_path(expr)
    if f in ("json_object", "json_array"):
        for value in expr.args[1:]:
            if isinstance(value, Call) and value.function == "json":
                _need_string(value, value.args[0], schema, type_of)
            else:
                type_of(value, schema)
    if f == "json_value":
        returning = expr.args[1]
        assert isinstance(returning, Literal)
        for default in expr.args[2:]:
            type_of(default, schema)
        return returning.value.returning
    if f == "json_query":
        return DataTypes.STRING(True)
    if f == "json_exists":
        return DataTypes.BOOLEAN(True)
    if f == "is_json":
        return DataTypes.BOOLEAN(False)
    if f in ("json_object", "json_array"):
        return DataTypes.STRING(False)
    if f == "json_string":
        return DataTypes.STRING(type_of(expr.args[0], schema).nullable)
    raise PlanError(f"unsupported JSON function {f!r} in {expr}")


def _need_string(expr: Call, arg: Expression, schema: dict[str, DataType], type_of) -> None:
    from changeflow.plan.type_inference import PlanError

    t = type_of(arg, schema)
    if not (t.is_string or t.root == "NULL"):
        raise PlanError(f"{expr.function.upper()} needs a string, but {arg} is {t} in {expr}")
