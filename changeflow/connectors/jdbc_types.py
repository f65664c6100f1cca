"""PostgreSQL column types as Flink's JDBC connector maps them, and the values read from them.

Flink's ``PostgresTypeMapper`` gives each PostgreSQL type one Flink type
(``int4`` is ``INT``, ``numeric(p, s)`` is ``DECIMAL(p, s)``, ``timestamptz`` is
``TIMESTAMP_LTZ``, ``text`` is ``STRING``, ...), and its row converter reads a
column into the type the table declares, failing when the two differ (an
``int8`` column read as ``INT`` is a cast error in Flink). changeflow checks the
same correspondence when the table is opened, so a wrong declaration fails with
the column's name and both types rather than on the first row.

>>> from changeflow.common.types import DataTypes
>>> flink_type_name("int8"), flink_type_name("_text"), flink_type_name("geometry")
('BIGINT', 'ARRAY<STRING>', None)
>>> compatible("varchar", DataTypes.STRING()), compatible("int8", DataTypes.INT())
(True, False)
>>> import decimal
>>> read_value(decimal.Decimal("1.005"), DataTypes.DECIMAL(10, 2))
Decimal('1.01')
>>> read_value(decimal.Decimal("123.4"), DataTypes.DECIMAL(3, 1)) is None  # more digits than the precision
True
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from changeflow.common.types import DataType

_TEXT = {"CHAR", "VARCHAR", "STRING"}
_BINARY = {"BINARY", "VARBINARY", "BYTES"}

# PostgreSQL type name (pg_type.typname) -> (Flink's type as PostgresTypeMapper names it, the declared roots
# it reads as)
_TYPES: dict[str, tuple[str, set[str]]] = {
    "int2": ("SMALLINT", {"SMALLINT"}),
    "int4": ("INT", {"INT"}),
    "int8": ("BIGINT", {"BIGINT"}),
    "float4": ("FLOAT", {"FLOAT"}),
    "float8": ("DOUBLE", {"DOUBLE"}),
    "numeric": ("DECIMAL", {"DECIMAL"}),
    "bool": ("BOOLEAN", {"BOOLEAN"}),
    "bpchar": ("CHAR", _TEXT),
    "char": ("CHAR", _TEXT),
    "varchar": ("VARCHAR", _TEXT),
    "text": ("STRING", _TEXT),
    "bytea": ("BYTES", _BINARY),
    "date": ("DATE", {"DATE"}),
    "time": ("TIME", {"TIME"}),
    "timestamp": ("TIMESTAMP", {"TIMESTAMP"}),
    # changeflow's DDL reads TIMESTAMP_LTZ as TIMESTAMP, so a timestamptz column is read into either (as UTC).
    "timestamptz": ("TIMESTAMP_LTZ", {"TIMESTAMP_LTZ", "TIMESTAMP"}),
}


def flink_type_name(pg_type: str) -> str | None:
    """The Flink type Flink's JDBC connector gives a PostgreSQL type; None for one it does not support.

    Arrays (``_int4``) are ``ARRAY<...>`` of their element's type."""
    if pg_type.startswith("_"):
        element = _TYPES.get(pg_type[1:])
        return f"ARRAY<{element[0]}>" if element else None
    found = _TYPES.get(pg_type)
    return found[0] if found else None


def compatible(pg_type: str, declared: DataType) -> bool:
    """Whether a column of ``pg_type`` reads (and is written) as the ``declared`` Flink type."""
    if pg_type.startswith("_"):
        return declared.root == "ARRAY" and declared.element is not None and compatible(pg_type[1:], declared.element)
    found = _TYPES.get(pg_type)
    return found is not None and declared.root in found[1]


def read_value(value: Any, declared: DataType) -> Any:
    """A value psycopg read, as the Python value of the declared type (Flink's PostgresRowConverter)."""
    if value is None:
        return None
    root = declared.root
    if root == "DECIMAL":
        precision, scale = declared.params
        d = decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
        # Flink's DecimalData.fromBigDecimal gives null for a value with more digits than the precision.
        return d if len(d.as_tuple().digits) <= precision or d.is_zero() else None
    if root in _BINARY:
        return bytes(value)
    if root == "ARRAY":
        element = declared.element
        assert element is not None
        return [read_value(v, element) for v in value]
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:  # timestamptz: the instant as a naive UTC datetime, changeflow's TIMESTAMP_LTZ
            return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value
    if root in ("FLOAT", "DOUBLE"):
        return float(value)
    return value
