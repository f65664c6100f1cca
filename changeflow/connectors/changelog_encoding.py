"""Writing a changelog as ``debezium-json``, ``canal-json`` or ``maxwell-json`` records.

Each change becomes one JSON record, as Flink 2.3's serialization schemas write it
(``flink-json``: ``DebeziumJsonSerializationSchema``, ``CanalJsonSerializationSchema``,
``MaxwellJsonSerializationSchema``). Flink's encoders know two kinds of record only, an
insert and a delete: ``+I`` and ``+U`` are written as an insert of the row, ``-U`` and
``-D`` as a delete of it. An update is therefore a delete of the old row followed by an
insert of the new one; reading the records back gives ``+I``/``-D`` pairs whose
materialized result is the same table.

- Debezium: ``{"before":null,"after":ROW,"op":"c"}`` and ``{"before":ROW,"after":null,"op":"d"}``.
- Canal: ``{"data":[ROW],"type":"INSERT"}`` and ``{"data":[ROW],"type":"DELETE"}``.
- Maxwell: ``{"data":ROW,"type":"insert"}`` and ``{"data":ROW,"type":"delete"}``.

A row is a JSON object of the table's columns in column order, each value as Flink's
JSON format writes it (a DECIMAL with its trailing zeros stripped, ``1E+2`` for 100.00,
unless ``<format>.encode.decimal-as-plain-number``; a TIMESTAMP as ``2024-01-02 03:04:05.1``
or, with ``timestamp-format.standard`` = ``ISO-8601``, ``2024-01-02T03:04:05.1``; a DOUBLE
as Java prints it). ``encode.ignore-null-fields`` leaves null fields out (also ``before``
or ``after``); ``map-null-key.mode`` (``FAIL``, ``DROP``, ``LITERAL`` with
``map-null-key.literal``) decides what a MAP's null key becomes.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.common.row_kind import RowKind
>>> import decimal
>>> schema = (("id", DataTypes.INT()), ("d", DataTypes.DECIMAL(10, 2)))
>>> encoder = ChangelogEncoder("debezium-json")
>>> encoder.record((1, decimal.Decimal("100.00")), RowKind.UPDATE_BEFORE, schema)
'{"before":{"id":1,"d":1E+2},"after":null,"op":"d"}'
>>> ChangelogEncoder("canal-json", ignore_null_fields=True).record((1, None), RowKind.UPDATE_AFTER, schema)
'{"data":[{"id":1}],"type":"INSERT"}'
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from typing import Any

from changeflow.common.row_kind import RowKind
from changeflow.connectors.values import float32_digits, java_double, java_time, sql_timestamp

Schema = tuple

MAP_NULL_KEY_MODES = ("FAIL", "DROP", "LITERAL")


class EncodeError(ValueError):
    """A change that the format cannot write (a MAP's null key with ``map-null-key.mode`` = ``FAIL``, ...)."""


class ChangelogEncoder:
    """Writes changes as one changelog format's JSON records (see the module's docstring)."""

    changelog = True  # a sink of every change kind: +I, -U, +U, -D

    def __init__(self, name: str, timestamp_standard: str = "SQL", decimal_plain: bool = False,
                 ignore_null_fields: bool = False, map_null_key_mode: str = "FAIL",
                 map_null_key_literal: str = "null") -> None:
        self.name = name
        self.timestamp_standard = timestamp_standard
        self.decimal_plain = decimal_plain
        self.ignore_null_fields = ignore_null_fields
        self.map_null_key_mode = map_null_key_mode
        self.map_null_key_literal = map_null_key_literal

    def encode_changes(self, kinds_and_values: list[tuple[RowKind, tuple]], schema: Schema) -> bytes:
        """Changes as JSON lines, one record a change."""
        return "".join(self.record(values, kind, schema) + "\n" for kind, values in kinds_and_values).encode()

    def record(self, values: tuple, kind: RowKind, schema: Schema) -> str:
        """The one JSON record (without a line end) that Flink's serializer writes for a change."""
        inserted = kind in (RowKind.INSERT, RowKind.UPDATE_AFTER)
        row = self._row(values, schema)
        fields: list[tuple[str, str | None]]
        if self.name == "debezium-json":
            fields = [("before", None if inserted else row), ("after", row if inserted else None),
                      ("op", '"c"' if inserted else '"d"')]
        elif self.name == "canal-json":
            fields = [("data", f"[{row}]"), ("type", '"INSERT"' if inserted else '"DELETE"')]
        else:
            fields = [("data", row), ("type", '"insert"' if inserted else '"delete"')]
        return self._object(fields)

    def _object(self, fields: list[tuple[str, str | None]]) -> str:
        """A JSON object of already written values (None: null, left out with ignore-null-fields)."""
        parts = [f"{json.dumps(name, ensure_ascii=False)}:{'null' if text is None else text}"
                 for name, text in fields if text is not None or not self.ignore_null_fields]
        return "{" + ",".join(parts) + "}"

    def _row(self, values: tuple, schema: Schema) -> str:
        fields = []
        for (name, t), value in zip(schema, values, strict=True):
            try:
                fields.append((name, self._value(value, t)))
            except EncodeError as e:
                raise EncodeError(f"Fail to serialize at field: {name}. {e}") from None
        return self._object(fields)

    def _value(self, value: Any, t) -> str | None:
        """One value as Flink's JSON serializer (JsonRowDataSerializationSchema) writes it; None for null."""
        if value is None:
            return None
        root = t.root
        if root in ("CHAR", "VARCHAR", "STRING"):
            return json.dumps(value, ensure_ascii=False)
        if root == "BOOLEAN":
            return "true" if value else "false"
        if root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
            return str(int(value))
        if root in ("DOUBLE", "FLOAT"):
            text = java_double(value if root == "DOUBLE" else float32_digits(value))
            # Jackson quotes what is not a JSON number (its QUOTE_NON_NUMERIC_NUMBERS default).
            return text if math.isfinite(value) else f'"{text}"'
        if root == "DECIMAL":
            return _decimal(value, self.decimal_plain)
        if root == "DATE":
            return f'"{value.isoformat()}"'
        if root == "TIME":
            return f'"{java_time(value)}"'
        if root == "TIMESTAMP" and isinstance(value, datetime.datetime):
            text = sql_timestamp(value)
            return f'"{text.replace(" ", "T", 1) if self.timestamp_standard == "ISO-8601" else text}"'
        if root == "ARRAY":
            return "[" + ",".join(self._value(v, t.element_type) or "null" for v in value) + "]"
        if root == "MAP":
            return self._map(value, t)
        if root == "ROW":
            return self._row(tuple(value), t.params)
        raise EncodeError(f"a value of type {t} cannot be written by changeflow's '{self.name}' format")

    def _map(self, value: dict, t) -> str:
        parts = []
        for k, v in value.items():
            if k is None:
                if self.map_null_key_mode == "FAIL":
                    raise EncodeError("JSON format doesn't support to serialize map data with null keys. You can "
                                      "drop null key entries or encode null in literals by specifying "
                                      "map-null-key.mode option.")
                if self.map_null_key_mode == "DROP":
                    continue
                k = self.map_null_key_literal
            key = k if isinstance(k, str) else (self._value(k, t.key_type) or "null").strip('"')
            parts.append(f"{json.dumps(key, ensure_ascii=False)}:{self._value(v, t.value_type) or 'null'}")
        return "{" + ",".join(parts) + "}"


def _decimal(value: decimal.Decimal, plain: bool) -> str:
    """Jackson's BigDecimal: trailing zeros stripped and Java's toString (``1E+2``), or the plain digits."""
    if plain:
        return format(value, "f")
    if value == 0:
        return "0"
    # A context as wide as DECIMAL(38)'s digits and more: the default 28 would round.
    return str(value.normalize(decimal.Context(prec=max(len(value.as_tuple().digits), 28))))
