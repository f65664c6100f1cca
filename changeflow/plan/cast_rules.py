"""Which CASTs Flink allows, for the types whose casts changeflow checks: binary strings, TIME, MAP.

Flink (Calcite's validator with Flink's cast rules) refuses a CAST whose source type
cannot convert to its target with ``Cast function cannot convert value of type X to
type Y``; changeflow refuses the same casts at planning, naming the CAST and both
types. Only casts to or from BINARY/VARBINARY/BYTES, TIME and MAP are checked here;
the other casts are left as they were (Spark's casts, checked by the conformance cases).
"""

from __future__ import annotations

from changeflow.common.types import DataType

_CHECKED = ("BINARY", "VARBINARY", "BYTES", "TIME", "MAP")


def castable(source: DataType, target: DataType) -> bool:
    """Whether Flink casts a value of ``source`` to ``target`` (True for the casts not checked here)."""
    if source.root == "NULL" or (source.root not in _CHECKED and target.root not in _CHECKED):
        return True
    if target.is_binary:  # strings encode as UTF-8; binary strings pad or truncate
        return source.is_string or source.is_binary
    if target.root == "TIME":
        return source.is_string or source.root in ("TIME", "TIMESTAMP", "TIMESTAMP_LTZ")
    if target.root == "MAP":
        return source.root == "MAP" and castable(source.key_type, target.key_type) and castable(
            source.value_type, target.value_type)
    if source.is_binary:
        return target.is_string
    if source.root == "TIME":
        return target.is_string or target.root in ("TIMESTAMP", "TIMESTAMP_LTZ")
    return False  # a MAP to anything but a MAP


def cast_error(source: DataType, target: DataType, expr: object) -> str:
    """Flink's message for a refused CAST, with the expression."""
    return (f"CAST {expr}: Cast function cannot convert value of type {source.with_nullable(True)} "
            f"to type {target.with_nullable(True)}")
