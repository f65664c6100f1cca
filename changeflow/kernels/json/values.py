"""JSON text <-> values the way Flink's JSON functions read and write it (Jackson, as Flink configures it).

Reading (:func:`parse_json`): one JSON value after optional JSON whitespace (space, tab, line
feed, carriage return: Jackson skips no other space); text after it is ignored (Jackson does not
fail on trailing tokens); ``NaN``/``Infinity``, single quotes and unquoted names are errors.
Integers stay ``int``; numbers with a fraction or exponent are kept exactly, as ``Decimal``
(Flink's JSON functions read floats as ``BigDecimal``), or read as ``float`` on request (the
DataStream JSON row format converts a field from Jackson's double).

Writing (:func:`to_json`): compact, object keys sorted (Flink sorts map entries by key, in
Java's string order), strings escaped as Jackson does (``\\"``, ``\\\\``, ``\\n`` ... and
``\\u00XX`` in upper-case hex for other control characters; ``/`` and non-ASCII as they are),
a ``Decimal`` as Java's ``BigDecimal.toString()`` (``1E+3``).
"""

from __future__ import annotations

import decimal
import json
from typing import Any

__all__ = ["java_text", "parse_json", "to_json"]

_DECODERS = {True: json.JSONDecoder(parse_float=decimal.Decimal, parse_constant=lambda name: _reject(name)),
             False: json.JSONDecoder(parse_constant=lambda name: _reject(name))}
_WHITESPACE = " \t\n\r"


def _reject(name: str):
    raise ValueError(f"Non-standard token '{name}': enable JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS to allow")


def parse_json(text: str, exact_numbers: bool = True) -> Any:
    """The JSON value at the start of ``text``; ``ValueError`` if there is none. A number with a
    fraction or exponent is a ``Decimal`` (``exact_numbers``) or a ``float``.

    >>> parse_json(' {"b": 1.50, "a": [1, null]} trailing')
    {'b': Decimal('1.50'), 'a': [1, None]}
    >>> parse_json('[1.50, 2]', exact_numbers=False)
    [1.5, 2]
    """
    start = 0
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    if start == len(text):
        raise ValueError("No content to map due to end-of-input")
    value, _ = _DECODERS[exact_numbers].raw_decode(text, start)
    return value


def java_text(value: Any) -> str:
    """A scalar JSON value as Java's ``String.valueOf`` writes it (``JSON_VALUE ... RETURNING STRING``).

    >>> [java_text(v) for v in (True, 12, decimal.Decimal("1e3"), decimal.Decimal("-0.0"), "x")]
    ['true', '12', '1E+3', '0.0', 'x']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return _big_decimal(value)
    return str(value)


def _big_decimal(value: decimal.Decimal) -> str:
    # Java's BigDecimal.toString: scientific notation iff the scale is negative or the adjusted
    # exponent is below -6, the same rule as Python's Decimal.__str__; BigDecimal has no -0.
    if value.is_zero() and value.is_signed():
        value = value.copy_abs()
    return str(value)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text: str) -> str:
    out = ['"']
    for ch in text:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _java_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")  # Java compares strings by UTF-16 code unit


def to_json(value: Any) -> str:
    """``value`` as Flink writes JSON: compact, keys sorted.

    >>> to_json({"b": [1, decimal.Decimal("2.50"), None, True], "a": "x\\"y/\\u0001"})
    '{"a":"x\\\\"y/\\\\u0001","b":[1,2.50,null,true]}'
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return _big_decimal(value)
    if isinstance(value, float):
        raise TypeError("a float has no exact JSON text here: read numbers as Decimal")
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: _java_order(kv[0]))
        return "{" + ",".join(_string(k) + ":" + to_json(v) for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
