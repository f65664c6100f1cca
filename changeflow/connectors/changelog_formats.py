"""The changelog formats ``debezium-json``, ``canal-json`` and ``maxwell-json``: records to changes.

Each JSON record describes a change of a database row; it becomes Flink's row kinds
as Flink 2.3's deserialization schemas make them (``flink-json``):

- Debezium: ``op`` ``c`` (create) and ``r`` (snapshot read) give ``+I`` of ``after``;
  ``u`` gives ``-U`` of ``before`` then ``+U`` of ``after``; ``d`` gives ``-D`` of
  ``before``. With ``debezium-json.schema-include`` the change is under ``payload``
  (Kafka Connect's ``schemas.enable``).
- Canal: ``type`` ``INSERT``/``DELETE`` give ``+I``/``-D`` of every row of ``data``;
  ``UPDATE`` gives, per row of ``data``, ``-U`` of the old row then ``+U`` of the new,
  the old row being ``old``'s row with the fields it lacks (the unchanged ones) taken
  from ``data``; ``CREATE`` (a DDL event) gives nothing. ``canal-json.database.include``
  and ``table.include`` keep only records whose ``database``/``table`` matches the
  regular expression.
- Maxwell: ``type`` ``insert``/``delete`` give ``+I``/``-D`` of ``data``; ``update``
  gives ``-U`` of ``old`` completed from ``data`` as Canal's, then ``+U`` of ``data``.

A record that is not JSON, lacks its op or type (or the row it needs), or has an op
Flink does not know fails with a :class:`BadRecordError` naming the format, the record
(shortened) and its position; a value that does not fit its column fails too. With
``<format>.ignore-parse-errors`` such a record is skipped and counted (:attr:`skipped`),
and a value that does not fit is null, as in Flink. An empty record (a Kafka tombstone)
gives nothing, as in Flink.

Writing these formats (a sink's format) is :mod:`.changelog_encoding`'s; :func:`changelog_format`
gives a sink its encoder.

Rows are returned with their change kind last: ``(*values, kind)``, ``kind`` being the
:class:`~changeflow.common.row_kind.RowKind` value (0 ``+I``, 1 ``-U``, 2 ``+U``, 3 ``-D``).

>>> from changeflow.common.types import DataTypes
>>> schema = (("id", DataTypes.INT()), ("v", DataTypes.STRING()))
>>> update = b'{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}'
>>> DebeziumJsonFormat(False).decode_bytes(update, "f", schema)
[(1, 'a', 1), (1, 'b', 2)]
>>> DebeziumJsonFormat(False).decode_bytes(b'{"after":{"id":1,"v":"a"}}', "f", schema)
Traceback (most recent call last):
...
changeflow.connectors.formats.BadRecordError: Corrupt Debezium JSON message '{"after":{"id":1,"v":"a"}}' (file f,
line 1): the "op" field is missing
"""

from __future__ import annotations

import re
from typing import Any

from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.connectors.changelog_encoding import MAP_NULL_KEY_MODES, ChangelogEncoder
from changeflow.connectors.formats import BadRecordError, _json_record, _shown, _text, _ESCAPED_BYTE
from changeflow.connectors.options import boolean, failure
from changeflow.connectors.values import to_python

Schema = tuple
_STRING = DataTypes.STRING()

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = (RowKind.INSERT.value, RowKind.UPDATE_BEFORE.value,
                                               RowKind.UPDATE_AFTER.value, RowKind.DELETE.value)
TIMESTAMP_STANDARDS = ("SQL", "ISO-8601")
_REPLICA_IDENTITY = ('The "before" field of {} message is null, if you are using Debezium Postgres Connector, '
                     'please check the Postgres table has been set REPLICA IDENTITY to FULL level.')


class _Corrupt(ValueError):
    """A record that Flink's schema rejects (the reason; the caller adds the record and its position)."""


def _json_options(name: str) -> set[str]:
    # The options each of Flink's three factories declares (flink-json 2.3).
    return {f"{name}.{o}" for o in ("ignore-parse-errors", "timestamp-format.standard", "map-null-key.mode",
                                    "map-null-key.literal", "encode.decimal-as-plain-number",
                                    "encode.ignore-null-fields")}


class ChangelogJsonFormat:
    """What the three formats share: reading JSON lines and converting rows; subclasses read the changes."""

    name = ""
    title = ""  # as Flink's messages name the format ("Debezium")
    changelog = True  # the rows carry their change kind (a source of +I/-U/+U/-D)
    options: set[str] = set()

    def __init__(self, ignore_parse_errors: bool, timestamp_standard: str = "SQL") -> None:
        self.ignore_parse_errors = ignore_parse_errors
        self.timestamp_standard = timestamp_standard
        self.skipped = 0  # records skipped by ignore-parse-errors, since this object was made
        self.first_skipped: str | None = None  # where the first skipped record was

    def decode_bytes(self, data: bytes, path: str, schema: Schema) -> list[tuple]:
        """The changes of a file's content (UTF-8 JSON lines), each row ``(*values, kind)``."""
        text, escaped = _text(data, path, self.ignore_parse_errors)
        return self._decode(text, schema, escaped, lambda number: f"file {path}, line {number}")

    def decode_record(self, data: bytes, where: str, schema: Schema) -> list[tuple]:
        """The changes of one Kafka record's value (``where`` names it), each row ``(*values, kind)``."""
        if not data:
            return []  # a tombstone: Flink's schemas skip it
        text, escaped = _text(data, where, self.ignore_parse_errors)
        # One record per message: a raw newline can only be whitespace in JSON.
        return self._decode(text.replace("\r", " ").replace("\n", " "), schema, escaped, lambda _: where)

    def _decode(self, text: str, schema: Schema, escaped: bool, where) -> list[tuple]:
        rows: list[tuple] = []
        for number, line in enumerate(text.split("\n"), 1):
            line = line.rstrip("\r")
            if not line.strip():
                continue
            if escaped and _ESCAPED_BYTE.search(line):
                self._skip(where(number))  # invalid UTF-8 with ignore-parse-errors (an error otherwise)
                continue
            try:
                record = _json_record(line)
                rows.extend(self.changes(record, schema))
            except (_Corrupt, ValueError) as e:
                if self.ignore_parse_errors:
                    self._skip(where(number))
                    continue
                raise BadRecordError(f"Corrupt {self.title} JSON message '{_shown(line)}' ({where(number)}): "
                                     f"{e}") from None
        return rows

    def _skip(self, where: str) -> None:
        self.skipped += 1
        if self.first_skipped is None:
            self.first_skipped = where

    def changes(self, record: dict, schema: Schema) -> list[tuple]:
        """The changes one parsed record gives (``_Corrupt``/``ValueError`` if Flink's schema rejects it)."""
        raise NotImplementedError

    def row(self, value: Any, what: str, schema: Schema) -> tuple | None:
        """A JSON object as a row of ``schema`` (None for JSON null); a missing field is null."""
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _Corrupt(f"the \"{what}\" field is not a JSON object")
        return tuple(self.field(value.get(name), name, t) for name, t in schema)

    def field(self, value: Any, name: str, t) -> Any:
        """One value as its column's type: null when it does not fit and ignore-parse-errors is set."""
        try:
            if t.root == "TIMESTAMP" and isinstance(value, str):
                self._check_timestamp(value)
            return to_python(value, t, from_text=False)
        except ValueError as e:
            if self.ignore_parse_errors:
                return None
            raise _Corrupt(f"Fail to deserialize at field: {name} of type {t}: {e}") from None

    def _check_timestamp(self, value: str) -> None:
        # Flink's SQL standard reads 'yyyy-MM-dd HH:mm:ss.s', ISO-8601 'yyyy-MM-ddTHH:mm:ss.s'.
        separator = value.strip()[10:11]
        wanted = " " if self.timestamp_standard == "SQL" else "T"
        if separator in (" ", "T") and separator != wanted:
            raise ValueError(f"{value!r} is not a timestamp of the {self.timestamp_standard} standard "
                             f"('{self.name}.timestamp-format.standard')")


def _text_of(value: Any) -> str | None:
    """A JSON value as Flink's STRING converter reads it (a number as its text); None for null."""
    return None if value is None else to_python(value, _STRING, from_text=False)


class DebeziumJsonFormat(ChangelogJsonFormat):
    name = "debezium-json"
    title = "Debezium"
    options = _json_options("debezium-json") | {"debezium-json.schema-include"}

    def __init__(self, ignore_parse_errors: bool, timestamp_standard: str = "SQL",
                 schema_include: bool = False) -> None:
        super().__init__(ignore_parse_errors, timestamp_standard)
        self.schema_include = schema_include

    def changes(self, record: dict, schema: Schema) -> list[tuple]:
        payload = record.get("payload") if self.schema_include else record
        if payload is None:
            raise _Corrupt("the \"payload\" field is missing ('debezium-json.schema-include' is true)")
        if not isinstance(payload, dict):
            raise _Corrupt("the \"payload\" field is not a JSON object")
        before = self.row(payload.get("before"), "before", schema)
        after = self.row(payload.get("after"), "after", schema)
        op = _text_of(payload.get("op"))
        if op is None:
            raise _Corrupt("the \"op\" field is missing")
        if op in ("c", "r"):
            if after is None:
                raise _Corrupt(f"the \"after\" field of an \"op\" \"{op}\" message is null")
            return [after + (INSERT,)]
        if op == "u":
            if before is None:
                raise _Corrupt(_REPLICA_IDENTITY.format("UPDATE"))
            if after is None:
                raise _Corrupt("the \"after\" field of an \"op\" \"u\" message is null")
            return [before + (UPDATE_BEFORE,), after + (UPDATE_AFTER,)]
        if op == "d":
            if before is None:
                raise _Corrupt(_REPLICA_IDENTITY.format("DELETE"))
            return [before + (DELETE,)]
        raise _Corrupt(f"Unknown \"op\" value \"{op}\"")


def _find_value(node: Any, name: str) -> bool:
    """Whether ``name`` is a field anywhere in ``node`` (Jackson's ``findValue``, which Flink's schemas use)."""
    if isinstance(node, dict):
        return name in node or any(_find_value(v, name) for v in node.values())
    if isinstance(node, list):
        return any(_find_value(v, name) for v in node)
    return False


def _before(old: tuple, after: tuple, old_json: Any, schema: Schema) -> tuple:
    """The row before an update: a field ``old`` leaves null and does not name at all was not changed."""
    return tuple(a if o is None and not _find_value(old_json, name) else o
                 for o, a, (name, _) in zip(old, after, schema, strict=True))


class CanalJsonFormat(ChangelogJsonFormat):
    name = "canal-json"
    title = "Canal"
    options = _json_options("canal-json") | {"canal-json.database.include", "canal-json.table.include"}

    def __init__(self, ignore_parse_errors: bool, timestamp_standard: str = "SQL",
                 database: str | None = None, table: str | None = None) -> None:
        super().__init__(ignore_parse_errors, timestamp_standard)
        # Java's Pattern.matcher(...).matches(): the whole name must match.
        self.database = re.compile(database) if database is not None else None
        self.table = re.compile(table) if table is not None else None

    def _included(self, record: dict) -> bool:
        for key, pattern in (("database", self.database), ("table", self.table)):
            if pattern is not None:
                value = record.get(key)
                if value is None:
                    raise _Corrupt(f"the \"{key}\" field is missing ('canal-json.{key}.include' is set)")
                if not pattern.fullmatch(value if isinstance(value, str) else _text_of(value) or ""):
                    return False
        return True

    def _rows(self, value: Any, what: str, schema: Schema) -> list[tuple | None]:
        if value is None:
            raise _Corrupt(f"the \"{what}\" field is missing")
        if not isinstance(value, list):
            raise _Corrupt(f"the \"{what}\" field is not a JSON array")
        return [self.row(v, what, schema) for v in value]

    def changes(self, record: dict, schema: Schema) -> list[tuple]:
        if not self._included(record):
            return []
        kind = _text_of(record.get("type"))
        if kind is None:
            raise _Corrupt("the \"type\" field is missing")
        if kind in ("INSERT", "DELETE"):
            rows = self._rows(record.get("data"), "data", schema)
            if any(r is None for r in rows):
                raise _Corrupt("a row of \"data\" is null")
            return [r + (INSERT if kind == "INSERT" else DELETE,) for r in rows if r is not None]
        if kind == "UPDATE":
            data = self._rows(record.get("data"), "data", schema)
            old_json = record.get("old")
            old = self._rows(old_json, "old", schema)
            out: list[tuple] = []
            for i, after in enumerate(data):
                if i >= len(old):
                    raise _Corrupt(f"\"old\" has {len(old)} rows, \"data\" {len(data)}")
                before = old[i]
                if after is None or before is None:
                    raise _Corrupt("a row of \"data\" or \"old\" is null")
                out += [_before(before, after, old_json, schema) + (UPDATE_BEFORE,), after + (UPDATE_AFTER,)]
            return out
        if kind == "CREATE":
            return []  # a DDL event
        raise _Corrupt(f"Unknown \"type\" value \"{kind}\"")


class MaxwellJsonFormat(ChangelogJsonFormat):
    name = "maxwell-json"
    title = "Maxwell"
    options = _json_options("maxwell-json")

    def changes(self, record: dict, schema: Schema) -> list[tuple]:
        data = self.row(record.get("data"), "data", schema)
        kind = _text_of(record.get("type"))
        if kind is None:
            raise _Corrupt("the \"type\" field is missing")
        if kind not in ("insert", "update", "delete"):
            raise _Corrupt(f"Unknown \"type\" value \"{kind}\"")
        if data is None:
            raise _Corrupt("the \"data\" field is missing")
        if kind == "insert":
            return [data + (INSERT,)]
        if kind == "delete":
            return [data + (DELETE,)]
        old_json = record.get("old")
        old = self.row(old_json, "old", schema)
        if old is None:
            raise _Corrupt("the \"old\" field of an update is missing")
        return [_before(old, data, old_json, schema) + (UPDATE_BEFORE,), data + (UPDATE_AFTER,)]


CHANGELOG_FORMATS = {f.name: f for f in (DebeziumJsonFormat, CanalJsonFormat, MaxwellJsonFormat)}



def changelog_format(table, as_sink: bool, name: str, prefix: str = ""):
    """The changelog format ``name`` of ``table`` with its options read under ``prefix`` (``value.`` or none).

    A source gets a :class:`ChangelogJsonFormat` (reading records); a sink a
    :class:`~changeflow.connectors.changelog_encoding.ChangelogEncoder` (writing them),
    which takes Flink's encode options and ignores the read ones, as Flink's factories do.
    """
    key = f"{prefix}{name}"
    standard = table.options.get(f"{key}.timestamp-format.standard", "SQL").upper()
    if standard not in TIMESTAMP_STANDARDS:
        raise failure(table, as_sink, f"Unsupported value '{standard}' for {key}.timestamp-format.standard. "
                                      f"Supported values are [SQL, ISO-8601].")
    if as_sink:
        return _encoder(table, name, key, standard)
    ignore = boolean(table, False, f"{key}.ignore-parse-errors")
    if name == "debezium-json":
        return DebeziumJsonFormat(ignore, standard, boolean(table, False, f"{key}.schema-include"))
    if name == "canal-json":
        patterns = {}
        for what in ("database", "table"):
            text = table.options.get(f"{key}.{what}.include")
            if text is not None:
                try:
                    re.compile(text)
                except re.error as e:
                    raise failure(table, False, f"Invalid regular expression '{text}' for option "
                                                f"'{key}.{what}.include': {e}") from None
            patterns[what] = text
        return CanalJsonFormat(ignore, standard, patterns["database"], patterns["table"])
    return MaxwellJsonFormat(ignore, standard)


def _encoder(table, name: str, key: str, standard: str) -> ChangelogEncoder:
    """The sink side of format ``name``: its encode options checked as Flink's factories check them."""
    if name == "debezium-json" and boolean(table, True, f"{key}.schema-include"):
        raise failure(table, True, "Debezium JSON serialization doesn't support 'debezium-json.schema-include' "
                                   "option been set to true.")
    mode = table.options.get(f"{key}.map-null-key.mode", "FAIL")
    if mode.upper() not in MAP_NULL_KEY_MODES:
        raise failure(table, True, f"Unsupported value '{mode}' for option {key}.map-null-key.mode. Supported "
                                   f"values are [{', '.join(MAP_NULL_KEY_MODES)}].")
    return ChangelogEncoder(name, standard, boolean(table, True, f"{key}.encode.decimal-as-plain-number"),
                            boolean(table, True, f"{key}.encode.ignore-null-fields"), mode.upper(),
                            table.options.get(f"{key}.map-null-key.literal", "null"))
