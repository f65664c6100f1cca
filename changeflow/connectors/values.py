"""Values as Flink's formats read and write them, and as Flink prints them.

``to_python(text_or_json, type)`` converts what a JSON or CSV record holds into
the Python value of a column (raising ``ValueError`` with the reason), and
``flink_string(value, type)`` renders a value as Flink's ``Row.toString`` does
(what the print connector shows): ``null``, ``true``, ``1.50`` for a
``DECIMAL(10, 2)``, ``2024-01-02T03:04:05.123`` for a timestamp.

>>> import datetime, decimal
>>> from changeflow.common.types import DataTypes
>>> flink_string(decimal.Decimal("1.5"), DataTypes.DECIMAL(10, 2)), flink_string(None, DataTypes.INT())
('1.50', 'null')
>>> flink_string(datetime.datetime(2024, 1, 2, 3, 4), DataTypes.TIMESTAMP(3))
'2024-01-02T03:04'
>>> sql_timestamp(datetime.datetime(2024, 1, 2, 3, 4, 5, 120000))
'2024-01-02 03:04:05.12'
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
from typing import Any

from changeflow.common.types import DataType

_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# --- reading ---------------------------------------------------------------------------


def to_python(value: Any, t: DataType, from_text: bool) -> Any:
    """The value of column type ``t`` for a JSON value (``from_text=False``) or a CSV field (``True``)."""
    if value is None:
        return None
    root = t.root
    if root in _RANGES:
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a number")
        if isinstance(value, (float, decimal.Decimal)):  # a Decimal: a JSON integer too long for int()
            if not (value.is_finite() if isinstance(value, decimal.Decimal) else math.isfinite(value)):
                raise ValueError(f"{value!r} is not an integer")
            value = int(value)  # Jackson's intValue()/longValue() truncate, as Flink reads them
        elif isinstance(value, str):
            if not re.fullmatch(r"\s*[+-]?\d+\s*", value):
                raise ValueError(f"For input string: \"{value}\"")
            value = int(value)
        elif not isinstance(value, int):
            raise ValueError(f"{_json_text(value)} is not a number")
        half = 1 << (_RANGES[root] - 1)
        if not -half <= value < half:
            # str() of an int over 4300 digits raises: say how long it is instead.
            shown = value if value.bit_length() <= 256 else f"a {value.bit_length()}-bit number"
            raise ValueError(f"{shown} is out of the range of {root}")
        return value
    if root in ("DOUBLE", "FLOAT"):
        if isinstance(value, bool) or not isinstance(value, (int, float, str, decimal.Decimal)):
            raise ValueError(f"{_json_text(value)} is not a number")
        try:
            return float(value)  # a huge number gives infinity, as Jackson's doubleValue()
        except ValueError:
            raise ValueError(f"For input string: \"{value}\"") from None
    if root == "DECIMAL":
        if isinstance(value, bool) or not isinstance(value, (int, float, str, decimal.Decimal)):
            raise ValueError(f"{_json_text(value)} is not a number")
        try:
            d = decimal.Decimal(str(value).strip())
        except decimal.InvalidOperation:
            raise ValueError(f"Character array is missing \"exponent\" mark 'e' or 'E': \"{value}\"") from None
        if not d.is_finite():  # JSON's NaN/Infinity, a CSV "NaN": Java's BigDecimal has none
            raise ValueError(f"{_json_text(value) if isinstance(value, float) else value} is not a decimal number")
        precision, scale = t.params
        # A context wide enough for any value that fits: Python's default 28 digits would raise
        # on a DECIMAL(38, s) value, and a wider result than the context is an overflow.
        context = decimal.Context(prec=precision + 1, rounding=decimal.ROUND_HALF_UP)
        try:
            d = d.quantize(decimal.Decimal(1).scaleb(-scale), context=context)
        except decimal.InvalidOperation:
            return None  # too many digits (1e999999): the overflow below
        if len(d.as_tuple().digits) > precision and d != 0:
            return None  # Flink's DecimalData.fromBigDecimal gives null when the precision overflows
        return d
    if root in ("STRING", "VARCHAR", "CHAR"):
        return value if isinstance(value, str) else _json_text(value)
    if root == "BOOLEAN":
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value.strip().lower() == "true"  # Java's Boolean.parseBoolean
        raise ValueError(f"{_json_text(value)} is not a boolean")
    if root == "DATE":
        if not isinstance(value, str) or not _DATE.match(value.strip()):
            raise ValueError(f"{_json_text(value)} is not a date as yyyy-MM-dd")
        return datetime.date.fromisoformat(value.strip())
    if root == "TIMESTAMP":
        m = _TIMESTAMP.match(value.strip()) if isinstance(value, str) else None
        if m is None:
            raise ValueError(f"{_json_text(value)} is not a timestamp as yyyy-MM-dd HH:mm:ss[.fraction]")
        date, hh, mm, ss, fraction = m.groups()
        micros = int((fraction or "0").ljust(9, "0")[:6])
        return datetime.datetime.combine(datetime.date.fromisoformat(date),
                                         datetime.time(int(hh), int(mm), int(ss or 0), micros))
    if root == "ARRAY":
        if not isinstance(value, list):
            raise ValueError(f"{_json_text(value)} is not an array")
        return [to_python(v, t.element_type, from_text) for v in value]
    if root == "ROW" and not from_text:
        # A JSON object, its fields by name (a missing one is null), as Flink's JsonToRowDataConverters.
        if not isinstance(value, dict):
            raise ValueError(f"{_json_text(value)} is not an object")
        return tuple(to_python(value.get(name), field_type, from_text) for name, field_type in t.params)
    raise ValueError(f"type {t} is not supported by this format")


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"), default=str)


# --- writing ---------------------------------------------------------------------------


def sql_timestamp(value: datetime.datetime) -> str:
    """Flink's SQL timestamp format: ``yyyy-MM-dd HH:mm:ss`` and the fraction without trailing zeros."""
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


def json_value(value: Any, t: DataType) -> Any:
    """A column value as Flink's JSON format writes it (a JSON-ready Python value)."""
    if value is None:
        return None
    if t.root == "DECIMAL":
        return _JsonNumber(str(value.normalize()) if value != 0 else "0")
    if t.root == "TIMESTAMP":
        return sql_timestamp(value)
    if t.root == "DATE":
        return value.isoformat()
    if t.root == "ARRAY":
        return [json_value(v, t.element_type) for v in value]
    return value


class _JsonNumber(float):
    """A decimal written verbatim by :func:`dump_json` (Jackson writes BigDecimal digits, not a double)."""

    text: str

    def __new__(cls, text: str):
        obj = super().__new__(cls, float(text))
        obj.text = text
        return obj


def dump_json(record: dict) -> str:
    """One JSON record as Flink writes it: compact, fields in column order, decimals exact."""
    import json

    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # Replace the floats standing for decimals by their exact digits.
    for key, value in record.items():
        if isinstance(value, _JsonNumber):
            text = text.replace(f'{json.dumps(key)}:{json.dumps(float(value))}', f'{json.dumps(key)}:{value.text}', 1)
    return text


def csv_field(value: Any, t: DataType) -> str | None:
    """A column value as Flink's CSV format writes it (``None`` is an empty field)."""
    if value is None:
        return None
    if t.root == "BOOLEAN":
        return "true" if value else "false"
    if t.root == "TIMESTAMP":
        return sql_timestamp(value)
    if t.root == "DATE":
        return value.isoformat()
    if t.root == "DOUBLE":
        return java_double(value)
    if t.root == "FLOAT":
        return java_double(float32_digits(value))
    return str(value)


# --- printing --------------------------------------------------------------------------


def java_double(value: float) -> str:
    """Java's ``Double.toString``: ``1.0``, ``1.0E10``, ``1.0E-5``, ``NaN``, ``Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    # Python's shortest round-trip digits, placed as Java's d.dddE<n>.
    shortest = repr(value)
    sign = "-" if value < 0 else ""
    m = re.match(r"-?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$", shortest)
    assert m is not None, f"repr of a finite float: {shortest}"
    whole, frac, exp = m.group(1), m.group(2) or "", int(m.group(3) or 0)
    all_digits = (whole + frac).lstrip("0")
    point = len(whole) + exp - (len(whole + frac) - len((whole + frac).lstrip("0")))
    all_digits = all_digits.rstrip("0") or "0"
    return f"{sign}{all_digits[0]}.{all_digits[1:] or '0'}E{point - 1}"


def float32_digits(value: float) -> float:
    """The shortest decimal that reads back as the same FLOAT (Java's Float.toString digits)."""
    import numpy as np

    return float(str(np.float32(value)))


def java_time(value: datetime.time) -> str:
    text = f"{value.hour:02d}:{value.minute:02d}"
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
        if value.microsecond:
            micros = f"{value.microsecond:06d}"
            text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text


def flink_string(value: Any, t: DataType) -> str:
    """A value as Flink's ``Row.toString`` prints it (the print connector's format)."""
    if value is None:
        return "null"
    root = t.root
    if root == "BOOLEAN":
        return "true" if value else "false"
    if root == "DOUBLE":
        return java_double(float(value))
    if root == "FLOAT":
        return java_double(float32_digits(value))
    if root == "DECIMAL":
        return str(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-t.params[1])))
    if root == "TIMESTAMP":
        return f"{value.date().isoformat()}T{java_time(value.time())}"
    if root == "TIMESTAMP_LTZ":  # Java's Instant.toString: UTC, seconds always, fraction in groups of 3 digits
        utc = value.astimezone(datetime.timezone.utc) if value.tzinfo else value
        micros = utc.microsecond
        fraction = "" if not micros else f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
        return f"{utc.date().isoformat()}T{utc.strftime('%H:%M:%S')}{fraction}Z"
    if root == "DATE":
        return value.isoformat()
    if root == "ARRAY":
        return "[" + ", ".join(flink_string(v, t.element_type) for v in value) + "]"
    if root == "MULTISET":
        return "{" + ", ".join(f"{flink_string(k, t.element_type)}={v}" for k, v in dict(value).items()) + "}"
    return str(value)
