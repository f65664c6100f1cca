"""Flink 2.3's SQL/JSON query functions on one value: JSON_VALUE, JSON_QUERY, JSON_EXISTS, IS JSON.

The rules are Flink's (its ``SqlJsonUtils``), on the JSON text and the path spec:

- The path runs in *strict* mode unless the spec starts with ``lax``. In strict mode a path
  that matches nothing or a JSON ``null``, crosses a value of the wrong kind, or input that
  is not JSON is an *error*; in lax mode those give an *empty* result (an invalid path is an error in both).
- ``JSON_VALUE``: a JSON ``null``, no match, or (lax) an object/array is *empty*; (strict) an
  object/array is an error. ``ON EMPTY`` / ``ON ERROR``: ``NULL`` (default), ``ERROR`` (the
  query fails with Flink's message), ``DEFAULT`` (the given value).
- ``JSON_QUERY``: the selected object or array as JSON text, optionally wrapped in an array;
  a scalar is *empty* (lax) or an error (strict); ``EMPTY ARRAY`` gives ``[]``,
  ``EMPTY OBJECT`` ``{}``. An indefinite path (``[*]``, ``..``) selects the list of matches,
  which is an array (``[]`` when nothing matched).
- ``JSON_EXISTS``: whether the path selects a non-null value; on error ``FALSE`` (default),
  ``TRUE``, ``UNKNOWN`` (NULL) or ``ERROR``.
- ``IS JSON [VALUE|SCALAR|ARRAY|OBJECT]``: whether the text parses (as that kind).

A SQL NULL input gives NULL (``IS JSON``: FALSE) before any of this.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Any

from changeflow.kernels.json.path import JsonPath, JsonPathError, PathNotFound, parse_path
from changeflow.kernels.json.values import java_text, parse_json, to_json

__all__ = ["JsonFunctionError", "Path", "is_json", "json_exists", "json_query", "json_value", "prepare_path",
           "returning"]


class JsonFunctionError(ValueError):
    """``ERROR ON EMPTY`` / ``ERROR ON ERROR`` fired: the query fails with this message."""


_EMPTY = object()  # lax mode swallowed an error: no value


def prepare_path(spec: str) -> JsonPath | JsonPathError:
    """The parsed path, or the error an invalid one gives every row (Flink plans the query and
    takes each row's ON ERROR branch, in lax mode too)."""
    try:
        return parse_path(spec)
    except JsonPathError as error:
        return error


Path = JsonPath | JsonPathError


def _select(path: Path, text: str) -> tuple[Any, Exception | None]:
    """(selected value or _EMPTY, None) or (None, the error), as Flink's jsonApiCommonSyntax."""
    if isinstance(path, JsonPathError):
        return None, path
    try:
        document = parse_json(text)
    except ValueError as error:
        return (_EMPTY, None) if path.mode == "lax" else (None, error)
    try:
        value = path.evaluate(document)
    except PathNotFound as error:
        if path.mode == "lax":
            return ([] if not path.definite else _EMPTY), None
        return None, error
    except JsonPathError as error:
        return None, error
    if value is None and path.mode == "strict":  # a JSON null is no value in strict mode (measured)
        return None, JsonFunctionError("Strict jsonpath mode requires a non empty returned value, but is null")
    return value, None


def _lax(path: Path) -> bool:
    return isinstance(path, JsonPath) and path.mode == "lax"


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def json_value(text: str, path: Path, on_empty: str, default_on_empty: Any, on_error: str,
               default_on_error: Any, convert: Callable[[Any], Any] = java_text) -> Any:
    """``JSON_VALUE(text, path ...)``: the scalar as ``convert`` makes it (a string by default)."""
    value, error = _select(path, text)
    if error is None:
        if value is _EMPTY or value is None or _lax(path) and not _is_scalar(value):
            if on_empty == "ERROR":
                raise JsonFunctionError("Empty result of JSON_VALUE function is not allowed")
            return default_on_empty if on_empty == "DEFAULT" else None
        if _is_scalar(value):
            return convert(value)
        error = JsonFunctionError(f"Strict jsonpath mode requires scalar value, and the actual value is: "
                                  f"'{_java_collection(value)}'")
    if on_error == "ERROR":
        raise _as_function_error(error)
    return default_on_error if on_error == "DEFAULT" else None


def json_query(text: str, path: Path, wrapper: str, on_empty: str, on_error: str) -> str | None:
    """``JSON_QUERY(text, path [WITH ... ARRAY WRAPPER] ...)``: JSON text of the selected object/array.

    ``wrapper``: ``WITHOUT_ARRAY``, ``CONDITIONAL_ARRAY`` or ``UNCONDITIONAL_ARRAY``;
    ``on_empty``/``on_error``: ``NULL``, ``ERROR``, ``EMPTY_ARRAY`` or ``EMPTY_OBJECT``.
    """
    value, error = _select(path, text)
    if error is None:
        wrap = wrapper == "UNCONDITIONAL_ARRAY" or wrapper == "CONDITIONAL_ARRAY" and not isinstance(value, list)
        if wrap and value is not _EMPTY and value is not None:
            value = [value]
        if value is _EMPTY or value is None or _lax(path) and _is_scalar(value):
            if on_empty == "ERROR":
                raise JsonFunctionError("Empty result of JSON_QUERY function is not allowed")
            return _empty_result(on_empty)
        if not _is_scalar(value):
            return to_json(value)
        error = JsonFunctionError(f"Strict jsonpath mode requires array or object value, and the actual value "
                                  f"is: '{java_text(value)}'")
    if on_error == "ERROR":
        raise _as_function_error(error)
    return _empty_result(on_error)


def returning(type_root: str) -> Callable[[Any], Any]:
    """How JSON_VALUE turns the selected scalar into its RETURNING type (``STRING``, ``INT``, ...).

    Flink 2.3 casts the Java object the path selected: ``INT`` takes a JSON integer that fits
    32 bits, ``DOUBLE`` a JSON number with a fraction or exponent (``1`` is not one: an
    Integer), ``BOOLEAN`` ``true``/``false``. Anything else fails the query (a
    ``ClassCastException`` in Flink, whatever ON ERROR says); changeflow fails it too, naming
    the value.
    """
    if type_root in ("STRING", "VARCHAR", "CHAR"):
        return java_text

    def convert(value: Any) -> Any:
        if type_root == "INT" and isinstance(value, int) and not isinstance(value, bool) \
                and -(2**31) <= value < 2**31:
            return value
        if type_root == "DOUBLE" and isinstance(value, decimal.Decimal):
            return float(value)
        if type_root == "BOOLEAN" and isinstance(value, bool):
            return value
        raise JsonFunctionError(
            f"JSON_VALUE ... RETURNING {type_root}: the selected value {to_json(value)} is a "
            f"{_java_class(value)}, which Flink cannot return as {type_root} (it fails with a ClassCastException)")
    return convert


def _java_class(value: Any) -> str:
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        return "java.lang.Integer" if -(2**31) <= value < 2**31 else \
            "java.lang.Long" if -(2**63) <= value < 2**63 else "java.math.BigInteger"
    if isinstance(value, decimal.Decimal):
        return "java.math.BigDecimal"
    return "java.lang.String"


def _empty_result(behavior: str) -> str | None:
    return {"EMPTY_ARRAY": "[]", "EMPTY_OBJECT": "{}"}.get(behavior)


def json_exists(text: str, path: Path, on_error: str) -> bool | None:
    """``JSON_EXISTS(text, path [TRUE|FALSE|UNKNOWN|ERROR ON ERROR])``."""
    value, error = _select(path, text)
    if error is None:
        return value is not _EMPTY and value is not None
    if on_error == "ERROR":
        raise _as_function_error(error)
    return {"TRUE": True, "FALSE": False}.get(on_error)


def is_json(text: str | None, kind: str = "VALUE") -> bool:
    """``text IS JSON [VALUE|SCALAR|ARRAY|OBJECT]``; a NULL is not JSON."""
    if text is None:
        return False
    try:
        value = parse_json(text)
    except ValueError:
        return False
    if kind == "OBJECT":
        return isinstance(value, dict)
    if kind == "ARRAY":
        return isinstance(value, list)
    if kind == "SCALAR":
        return _is_scalar(value)
    return True


def _as_function_error(error: Exception) -> JsonFunctionError:
    if isinstance(error, JsonFunctionError):
        return error
    return JsonFunctionError(str(error))


def _java_collection(value: Any) -> str:
    """A list or map as Java's ``toString`` prints it (Flink's strict-mode message quotes it)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java_collection(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java_collection(v) for v in value) + "]"
    return "null" if value is None else java_text(value)
