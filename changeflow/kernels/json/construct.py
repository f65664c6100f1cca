"""Flink 2.3's JSON construction functions on one row: JSON_OBJECT, JSON_ARRAY, JSON_STRING.

Each argument arrives as JSON text already (the Spark runtime renders a SQL value with
Spark's JSON writer, which is Jackson like Flink's: numbers, strings and nested arrays, maps
and rows come out as Flink writes them), or as None for a SQL NULL. An argument that is the
result of another JSON_OBJECT/JSON_ARRAY call or of ``JSON(...)`` is inserted as the JSON it
holds, not as a string (``raw``). The result is compact with every object's keys sorted, as
Flink sorts map entries when it serializes.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Sequence
from typing import Any

from changeflow.kernels.json.values import parse_json, to_json

__all__ = ["json_array", "json_object", "json_string", "read_rendered", "value_node"]

# Flink turns its JSON tree into Java objects reading floats as BigDecimal before it writes
# them, so a DOUBLE 1e20 (Jackson: 1.0E20) comes out as BigDecimal("1.0E20") prints: 1.0E+20.
_RENDERED = json.JSONDecoder(parse_float=decimal.Decimal)


def read_rendered(text: str) -> Any:
    """A value Spark rendered as JSON text; numbers with a fraction or exponent as ``Decimal``."""
    return _RENDERED.decode(text)


def value_node(rendered: Any, raw: str) -> Any:
    """The JSON value a JSON_OBJECT / JSON_ARRAY argument contributes; None for a SQL NULL.

    ``rendered``: the argument as decoded from Spark's JSON rendering (None for NULL).
    ``raw``: ``""`` a SQL value, used as it is; ``"json"`` a JSON function's result (JSON text
    to insert as JSON); ``"parse"`` the text of ``JSON(...)``, read as Flink reads JSON (an
    empty text is NULL).
    """
    if rendered is None or raw == "":
        return rendered
    if raw == "parse" and not rendered.strip():
        return None
    return parse_json(rendered) if raw == "parse" else read_rendered(rendered)


def json_object(keys: Sequence[str], values: Sequence[Any], on_null: str) -> str:
    """``JSON_OBJECT(KEY k VALUE v, ... [NULL|ABSENT] ON NULL)`` of the arguments' JSON values (None: NULL).

    >>> json_object(["b", "a"], ["x", None], "NULL")
    '{"a":null,"b":"x"}'
    >>> json_object(["b", "a"], ["x", None], "ABSENT")
    '{"b":"x"}'
    """
    entries: dict[str, Any] = {}
    for key, value in zip(keys, values, strict=True):
        if value is None and on_null == "ABSENT":
            continue
        entries[key] = value
    return to_json(entries)


def json_array(values: Sequence[Any], on_null: str) -> str:
    """``JSON_ARRAY(v, ... [NULL|ABSENT] ON NULL)`` (ABSENT by default in Flink).

    >>> json_array([1, None, "two"], "ABSENT")
    '[1,"two"]'
    """
    return to_json([v for v in values if v is not None or on_null == "NULL"])


def json_string(value: Any) -> str | None:
    """``JSON_STRING(v)`` of the value's JSON form (as :func:`read_rendered` gives it): keys sorted; NULL for NULL."""
    return None if value is None else to_json(value)
