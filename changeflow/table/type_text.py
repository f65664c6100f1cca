"""Values as Flink's ``execute().print()`` shows them, for every type: Flink casts each to STRING.

A top-level NULL is ``<NULL>``, a nested one ``NULL``; booleans are ``TRUE``/``FALSE``; a
binary string is ``x'<hex>'``; an ARRAY is ``[a, b]``, a MAP and a MULTISET ``{k=v}``, a
ROW ``(a, b)``; a TIME or TIMESTAMP shows exactly its precision's fraction digits. Column
widths follow Flink's TableauStyle: by type, at least the name and ``<NULL>``, 30 at most
for the types it does not size.

>>> import datetime
>>> from changeflow.common.types import DataTypes as T
>>> tableau_text({"k": [1, None]}, T.MAP(T.STRING(), T.ARRAY(T.INT())))
'{k=[1, NULL]}'
>>> tableau_text(datetime.time(1, 2, 3, 450000), T.TIME(3)), tableau_text(b"ab", T.BYTES())
('01:02:03.450', "x'6162'")
>>> [column_width(n, t) for n, t in (("i", T.INT()), ("ts", T.TIMESTAMP(3)), ("b", T.BOOLEAN()))]
[11, 23, 6]
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from changeflow.common.types import DataType
from changeflow.connectors.values import flink_string

__all__ = ["column_width", "tableau_text"]

NULL_TEXT = "<NULL>"
_UNKNOWN = DataType("RAW")  # an element type a plan did not record: printed as Python prints it
MAX_WIDTH = 30


def _timestamp_width(precision: int) -> int:
    return 19 if precision == 0 else 23 if precision <= 3 else 26 if precision <= 6 else 29


def column_width(name: str, t: DataType, null_as_empty: bool = False) -> int:
    """A tableau column's width as Flink sizes it from the column's type."""
    root = t.root
    fixed = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}
    if root in fixed:
        width = fixed[root]
    elif root == "DECIMAL":
        width = t.params[0] + 2
    elif root == "TIME":
        precision = t.params[0] if t.params else 0
        width = 8 if precision == 0 else precision + 9
    elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        width = _timestamp_width(t.params[0] if t.params else 6)
    else:
        width = MAX_WIDTH
    if not null_as_empty:
        width = max(width, len(NULL_TEXT))
    return max(width, len(name))


def _fraction(micros: int, precision: int) -> str:
    # Python keeps microseconds: digits beyond 6 are zeros.
    return ("." + f"{micros:06d}".ljust(9, "0")[:precision]) if precision else ""


def tableau_text(value: Any, t: DataType, nested: bool = False) -> str:
    """A Python value of type ``t`` as Flink's tableau shows it (``nested``: inside a collection)."""
    if value is None:
        return "NULL" if nested else NULL_TEXT
    root = t.root
    if root == "BOOLEAN":
        return "TRUE" if value else "FALSE"
    if root in ("DOUBLE", "FLOAT", "DECIMAL") and isinstance(value, (int, float, decimal.Decimal)):
        return flink_string(value, t)
    if root in ("BINARY", "VARBINARY", "BYTES"):
        return f"x'{bytes(value).hex()}'"
    if root == "TIME" and isinstance(value, datetime.time):
        precision = t.params[0] if t.params else 0
        return value.strftime("%H:%M:%S") + _fraction(value.microsecond, precision)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ") and isinstance(value, datetime.datetime):
        precision = t.params[0] if t.params else 6
        return value.strftime("%Y-%m-%d %H:%M:%S") + _fraction(value.microsecond, precision)
    if root == "DATE" and isinstance(value, datetime.date):
        return value.isoformat()
    if root == "ARRAY":
        return "[" + ", ".join(tableau_text(v, t.element or _UNKNOWN, True) for v in value) + "]"
    if root == "MAP" and isinstance(value, dict):
        return "{" + ", ".join(f"{tableau_text(k, t.key_type, True)}={tableau_text(v, t.value_type, True)}"
                               for k, v in value.items()) + "}"
    if root == "MULTISET" and isinstance(value, dict):
        return "{" + ", ".join(f"{tableau_text(k, t.element or _UNKNOWN, True)}={n}" for k, n in value.items()) + "}"
    if root == "ROW":
        return "(" + ", ".join(tableau_text(v, ft, True) for v, (_, ft) in zip(value, t.params, strict=True)) + ")"
    return str(value)
