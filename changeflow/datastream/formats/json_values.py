"""JSON text to typed values and back, as Flink 2.3's ``JsonRowDeserializationSchema`` and
``JsonRowSerializationSchema`` convert them (the goldens of ``conformance/json_row_cases.py``).

Flink reads a document with Jackson and converts each field by its declared type:

- INT and LONG take a JSON number in range, truncating a fraction (``1.7`` is 1), or a text that
  parses (``"3"``); SHORT and BYTE parse the value's text (``-1.2`` fails, ``128`` is out of range);
- DOUBLE and FLOAT parse the value's text (``2`` is 2.0, ``"NaN"`` is NaN); BOOLEAN is true for
  ``true`` and for a text that is "true" in any case, false for anything else (``1``, ``"yes"``);
- STRING takes a scalar's text (``5`` is "5", ``true`` "true") and an object or array as compact JSON;
- SQL_DATE takes ``yyyy-MM-dd``, SQL_TIMESTAMP RFC 3339 with a literal ``Z``
  (``2026-01-02T03:04:05.123Z``; a zone offset or no ``Z`` fails) and no zone shift;
- arrays take a JSON array (elements converted by the element type), rows a JSON object by field
  name (other members ignored, a missing one null or, with ``fail_on_missing_field``, an error).

A document that is not an object fails (``null`` gives no record); with ``ignore_parse_errors`` a
field that does not convert is null and a document that does not parse gives no record. Jackson
reads the first value of a text and ignores what follows it. Writing gives compact JSON in the
row type's field order, nulls included, numbers as Java prints them (``1.0E308``; NaN as the text
``"NaN"``), timestamps in RFC 3339 with the fraction's significant digits. changeflow's timestamps
hold microseconds: a nanosecond fraction is cut to them.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any, Callable

from changeflow.common.row import Row
from changeflow.common.typeinfo import (BasicArrayTypeInfo, BasicTypeInfo, ListTypeInfo, PrimitiveArrayTypeInfo,
                                        RowTypeInfo, TypeInformation, to_float32)
from changeflow.connectors.values import float32_digits, java_double

__all__ = ["JsonFieldError", "check_json_type", "read_value", "write_row"]

_INTEGERS = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
_SCALARS = ("BOOLEAN", "BYTE", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "STRING", "SQL_DATE", "SQL_TIMESTAMP")
_ARRAYS = (BasicArrayTypeInfo, PrimitiveArrayTypeInfo, ListTypeInfo)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})$")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")


class JsonFieldError(ValueError):
    """A JSON value that does not convert to its field's type."""


def check_json_type(type_info: TypeInformation, where: str) -> None:
    """Refuse, naming it, a type the JSON row formats do not convert here."""
    if isinstance(type_info, RowTypeInfo):
        for t in type_info.get_field_types():
            check_json_type(t, where)
    elif isinstance(type_info, _ARRAYS):
        check_json_type(type_info.element_type, where)
    elif not (isinstance(type_info, BasicTypeInfo) and type_info.name in _SCALARS):
        raise NotImplementedError(f"{where}: a field of type {type_info!r} is not supported by changeflow's JSON "
                                  f"row format (supported: {', '.join(_SCALARS)}, arrays and rows of them)")


def _text(value: Any) -> str:
    """A JSON value's text as Jackson gives it (``asText`` of a scalar, compact JSON of a container)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, int):
        return str(value)
    return _compact(value)


def _compact(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_compact(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return _text(value)


def java_int(text: str, bits: int) -> int:
    """Java's ``Integer.parseInt`` (and Long, Short, Byte): an optional sign and decimal digits, in range."""
    if not re.fullmatch(r"[+-]?\d+", text):
        raise JsonFieldError(f'For input string: "{text}"')
    number = int(text)
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise JsonFieldError(f'Value out of range. Value:"{text}"')
    return number


def _java_float(text: str) -> float:
    """Java's ``Double.parseDouble`` of a JSON value's text (``NaN``, ``Infinity``, ``1.0E308``)."""
    cleaned = text.strip()
    if re.fullmatch(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?", cleaned) is None:
        raise JsonFieldError(f'For input string: "{text}"')
    return float(cleaned.rstrip("fFdD").replace("Infinity", "inf"))


def _scalar(name: str, value: Any) -> Any:
    if name in ("INT", "LONG"):
        bits = _INTEGERS[name]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and -(1 << (bits - 1)) <= int(value) < (1 << (bits - 1)):
            return int(value)  # Jackson's canConvertToInt/Long, then asInt/asLong: a fraction is cut
        return java_int(_text(value), bits)
    if name in _INTEGERS:
        return java_int(_text(value), _INTEGERS[name])
    if name == "DOUBLE":
        return _java_float(_text(value))
    if name == "FLOAT":
        return to_float32(_java_float(_text(value)))
    if name == "BOOLEAN":
        return value if isinstance(value, bool) else _text(value).strip().lower() == "true"
    if name == "STRING":
        return _text(value)
    text = _text(value)
    match = (_DATE if name == "SQL_DATE" else _TIMESTAMP).match(text)
    if match is None:
        raise JsonFieldError(f"Text '{text}' could not be parsed as {name}")
    parts = [int(p) for p in match.groups()[:6] if p is not None]
    try:
        if name == "SQL_DATE":
            return datetime.date(parts[0], parts[1], parts[2])
        micros = int((match.group(7) or "0").ljust(9, "0")[:6])
        return datetime.datetime(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], micros)
    except ValueError as error:
        raise JsonFieldError(f"Invalid {name} '{text}': {error}") from None


def read_value(type_info: TypeInformation, value: Any, fail_on_missing: bool, ignore_errors: bool) -> Any:
    """``value`` (parsed JSON, not null) as ``type_info``; raises :class:`JsonFieldError` when it does not convert."""
    if isinstance(type_info, RowTypeInfo):
        if not isinstance(value, dict):
            raise JsonFieldError(f"{_compact(value)} is not a JSON object")
        fields = []
        for name, field_type in zip(type_info.get_field_names(), type_info.get_field_types(), strict=True):
            if name not in value:
                if fail_on_missing:
                    raise JsonFieldError(f"Could not find field with name '{name}'.")
                fields.append(None)
                continue
            fields.append(_nullable(field_type, value[name], fail_on_missing, ignore_errors))
        return Row(*fields) if type_info.field_names is None else Row(**dict(zip(type_info.field_names, fields,
                                                                                 strict=True)))
    if isinstance(type_info, _ARRAYS):
        if not isinstance(value, list):
            raise JsonFieldError(f"{_compact(value)} is not a JSON array")
        return [None if v is None else read_value(type_info.element_type, v, fail_on_missing, False)
                for v in value]
    return _scalar(type_info.name, value)  # type: ignore[attr-defined]


def _nullable(type_info: TypeInformation, value: Any, fail_on_missing: bool, ignore_errors: bool) -> Any:
    if value is None:
        return None
    if not ignore_errors:
        return read_value(type_info, value, fail_on_missing, False)
    try:
        return read_value(type_info, value, fail_on_missing, True)
    except JsonFieldError:
        return None  # ignore_parse_errors: the field that does not convert is null


# --- writing -----------------------------------------------------------------------------


def _timestamp_text(value: datetime.datetime) -> str:
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text + "Z"


def _writer(type_info: TypeInformation) -> Callable[[Any], str]:
    """A function writing a value of ``type_info`` (not null) as Flink's JSON text."""
    if isinstance(type_info, RowTypeInfo):
        names = type_info.get_field_names()
        writers = [_writer(t) for t in type_info.get_field_types()]
        keys = [json.dumps(n, ensure_ascii=False) for n in names]

        def write_row_value(row: Any) -> str:
            values = _fields(row, names)
            return "{" + ",".join(f"{k}:{'null' if v is None else w(v)}"
                                  for k, w, v in zip(keys, writers, values, strict=True)) + "}"
        return write_row_value
    if isinstance(type_info, _ARRAYS):
        element = _writer(type_info.element_type)
        return lambda values: "[" + ",".join("null" if v is None else element(v) for v in values) + "]"
    name = type_info.name  # type: ignore[attr-defined]
    if name in ("DOUBLE", "FLOAT"):
        def write_number(v: float) -> str:
            text = java_double(float32_digits(v) if name == "FLOAT" else float(v))
            return f'"{text}"' if not math.isfinite(v) else text  # Jackson writes NaN and Infinity as text
        return write_number
    return {"BOOLEAN": lambda v: "true" if v else "false", "STRING": lambda v: json.dumps(v, ensure_ascii=False),
            "SQL_DATE": lambda v: f'"{v.isoformat()}"', "SQL_TIMESTAMP": lambda v: f'"{_timestamp_text(v)}"'
            }.get(name, lambda v: str(int(v)))


def _fields(row: Any, names: list[str]) -> list[Any]:
    if isinstance(row, Row) and row._fields is not None:
        return [row[n] for n in names]
    if isinstance(row, dict):
        return [row.get(n) for n in names]
    values = list(row)
    if len(values) != len(names):
        raise ValueError(f"{len(values)} fields for a row of {len(names)} ({', '.join(names)})")
    return values


def write_row(type_info: RowTypeInfo) -> Callable[[Any], str]:
    """A function writing a record of ``type_info`` as Flink's ``JsonRowSerializationSchema`` does."""
    return _writer(type_info)
