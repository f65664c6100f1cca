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

from dataclasses import dataclass
from typing import Any

from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import Call, Expression, Literal
from changeflow.kernels.json.path import JsonPathError, UnsupportedPath, parse_path

__all__ = ["JSON_FUNCTIONS", "JsonArraySpec", "JsonExistsSpec", "JsonObjectSpec", "JsonQuerySpec",
           "JsonValueSpec", "is_json", "json_array", "json_exists", "json_object", "json_query", "json_string",
           "json_text", "json_type", "json_value"]

JSON_FUNCTIONS = ("json_value", "json_query", "json_exists", "is_json", "json_object", "json_array",
                  "json_string", "json")

# RETURNING types Flink 2.3's code generator accepts for JSON_VALUE (others fail at planning).
_RETURNING = ("STRING", "VARCHAR", "CHAR", "BOOLEAN", "INT", "DOUBLE")


@dataclass(frozen=True)
class JsonValueSpec:
    path: str
    returning: DataType
    on_empty: str = "NULL"  # NULL | ERROR | DEFAULT
    on_error: str = "NULL"

    def __str__(self) -> str:
        return f"'{self.path}' RETURNING {self.returning.with_nullable(True)} {self.on_empty} ON EMPTY " \
               f"{self.on_error} ON ERROR"


@dataclass(frozen=True)
class JsonQuerySpec:
    path: str
    wrapper: str = "WITHOUT_ARRAY"  # | CONDITIONAL_ARRAY | UNCONDITIONAL_ARRAY
    on_empty: str = "NULL"  # NULL | ERROR | EMPTY_ARRAY | EMPTY_OBJECT
    on_error: str = "NULL"

    def __str__(self) -> str:
        return f"'{self.path}' {self.wrapper} {self.on_empty} ON EMPTY {self.on_error} ON ERROR"


@dataclass(frozen=True)
class JsonExistsSpec:
    path: str
    on_error: str = "FALSE"  # TRUE | FALSE | UNKNOWN | ERROR

    def __str__(self) -> str:
        return f"'{self.path}' {self.on_error} ON ERROR"


@dataclass(frozen=True)
class JsonObjectSpec:
    keys: tuple[str, ...]
    on_null: str = "NULL"  # NULL | ABSENT

    def __str__(self) -> str:
        return f"KEYS({', '.join(self.keys)}) {self.on_null} ON NULL"


@dataclass(frozen=True)
class JsonArraySpec:
    on_null: str = "ABSENT"

    def __str__(self) -> str:
        return f"{self.on_null} ON NULL"


def _check_path(path: Any, function: str) -> str:
    if not isinstance(path, str):
        raise ValueError(f"{function}'s path must be a string literal, got {path!r}")
    try:
        parse_path(path)
    except UnsupportedPath as error:
        raise NotImplementedError(f"{function}: {error}") from None
    except JsonPathError:
        pass  # Flink accepts the query; every row then takes the ON ERROR branch
    return path


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    text = value.upper().replace(" ", "_")
    if text not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return text


def _null_literal() -> Literal:
    return Literal(None, DataType("NULL", True))


def json_value(text: Expression, path: Any, returning: DataType | None = None, on_empty: str = "NULL",
               default_on_empty: Expression | None = None, on_error: str = "NULL",
               default_on_error: Expression | None = None) -> Call:
    """``JSON_VALUE(text, path [RETURNING t] [... ON EMPTY] [... ON ERROR])``."""
    returning = (returning or DataTypes.STRING()).with_nullable(True)
    if returning.root not in _RETURNING:
        raise NotImplementedError(f"Unsupported type '{returning.with_nullable(True)}' for RETURNING in "
                                  f"JSON_VALUE() (Flink 2.3 accepts STRING, BOOLEAN, INT and DOUBLE)")
    behaviours = ("NULL", "ERROR", "DEFAULT")
    spec = JsonValueSpec(_check_path(path, "JSON_VALUE"), returning, _choice(on_empty, behaviours, "ON EMPTY"),
                         _choice(on_error, behaviours, "ON ERROR"))
    empty = _null_literal() if default_on_empty is None else default_on_empty
    error = _null_literal() if default_on_error is None else default_on_error
    return Call("json_value", (text, Literal(spec, None), empty, error))


def json_query(text: Expression, path: Any, wrapper: str = "WITHOUT_ARRAY", on_empty: str = "NULL",
               on_error: str = "NULL") -> Call:
    """``JSON_QUERY(text, path [WITH [CONDITIONAL|UNCONDITIONAL] ARRAY WRAPPER] [... ON EMPTY] [... ON ERROR])``."""
    behaviours = ("NULL", "ERROR", "EMPTY_ARRAY", "EMPTY_OBJECT")
    spec = JsonQuerySpec(_check_path(path, "JSON_QUERY"),
                         _choice(wrapper, ("WITHOUT_ARRAY", "CONDITIONAL_ARRAY", "UNCONDITIONAL_ARRAY"), "wrapper"),
                         _choice(on_empty, behaviours, "ON EMPTY"), _choice(on_error, behaviours, "ON ERROR"))
    return Call("json_query", (text, Literal(spec, None)))


def json_exists(text: Expression, path: Any, on_error: str = "FALSE") -> Call:
    """``JSON_EXISTS(text, path [TRUE|FALSE|UNKNOWN|ERROR ON ERROR])``."""
    spec = JsonExistsSpec(_check_path(path, "JSON_EXISTS"),
                          _choice(on_error, ("TRUE", "FALSE", "UNKNOWN", "ERROR"), "ON ERROR"))
    return Call("json_exists", (text, Literal(spec, None)))


def is_json(text: Expression, kind: str = "VALUE") -> Call:
    """``text IS JSON [VALUE|SCALAR|ARRAY|OBJECT]``."""
    return Call("is_json", (text, Literal(_choice(kind, ("VALUE", "SCALAR", "ARRAY", "OBJECT"), "IS JSON kind"),
                                          None)))


def json_object(pairs: list[tuple[Any, Expression]], on_null: str = "NULL") -> Call:
    """``JSON_OBJECT(KEY k VALUE v, ... [NULL|ABSENT] ON NULL)``: keys are non-NULL string literals."""
    keys = []
    for key, _ in pairs:
        if not isinstance(key, str):
            raise ValueError(f"JSON_OBJECT keys must be non-NULL string literals, got {key!r}")
        keys.append(key)
    if len(set(keys)) != len(keys):
        duplicate = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"JSON_OBJECT has the key {duplicate!r} twice")
    spec = JsonObjectSpec(tuple(keys), _choice(on_null, ("NULL", "ABSENT"), "ON NULL"))
    return Call("json_object", (Literal(spec, None), *(value for _, value in pairs)))


def json_array(values: list[Expression], on_null: str = "ABSENT") -> Call:
    """``JSON_ARRAY(v, ... [NULL|ABSENT] ON NULL)``."""
    return Call("json_array", (Literal(JsonArraySpec(_choice(on_null, ("NULL", "ABSENT"), "ON NULL")), None),
                               *values))


def json_string(value: Expression) -> Call:
    """``JSON_STRING(v)``: the value serialized as JSON."""
    return Call("json_string", (value,))


def json_text(text: Expression) -> Call:
    """``JSON(text)``: pre-formatted JSON inserted as it is into JSON_OBJECT / JSON_ARRAY."""
    return Call("json", (text,))


def json_type(expr: Call, schema: dict[str, DataType], type_of) -> DataType:
    """The Flink type of a JSON call (``type_of`` types its value arguments)."""
    from changeflow.plan.type_inference import PlanError  # type_inference dispatches here

    f = expr.function
    if f == "json":
        raise PlanError(f"{expr}: the JSON function can only be used as a value of JSON_OBJECT or JSON_ARRAY")
    if f in ("json_value", "json_query", "json_exists", "is_json"):
        _need_string(expr, expr.args[0], schema, type_of)
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
