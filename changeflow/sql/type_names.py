"""Flink's type names, as DDL, CAST and the Table API's type strings spell them.

:func:`parse_type` reads a type text: the numeric, character, DECIMAL, TIMESTAMP and ARRAY
types itself, the others (BINARY/VARBINARY/BYTES, TIME, NULL, MAP, MULTISET, ROW) through
:func:`read_other_type`, with the reader itself as ``read_type`` for the nested types of MAP,
MULTISET and ROW. Each returns the engine's type, Flink's display spelling and the words left.
"""

from __future__ import annotations

import re
from typing import Callable

from sqlglot import exp

from changeflow.common.types import MAX_LENGTH, DataType, DataTypes

OTHER_TYPES = ("BINARY", "VARBINARY", "BYTES", "TIME", "NULL", "MAP", "MULTISET", "ROW")

def DdlError(message: str) -> Exception:  # noqa: N802 - raised as ddl.DdlError, which imports this module
    from changeflow.sql.ddl import DdlError as Error

    return Error(message)


Reader = Callable[[list[str], str, str], tuple[DataType, str, list[str]]]


def _params(rest: list[str], text: str, column: str) -> tuple[list[int], list[str]]:
    if not rest or rest[0] != "(":
        return [], rest
    if ")" not in rest:
        raise DdlError(f"unbalanced parentheses in the type {text!r} of column {column!r}")
    close = rest.index(")")
    values = [w for w in rest[1:close] if w != ","]
    if not all(v.isdigit() for v in values):
        raise DdlError(f"type parameters must be integers in {text!r} (column {column!r})")
    return [int(v) for v in values], rest[close + 1:]


def _not_null(t: DataType, shown: str, rest: list[str]) -> tuple[DataType, str, list[str]]:
    """A nested type's ``NOT NULL`` / ``NULL`` suffix."""
    if rest[:2] and [w.upper() for w in rest[:2]] == ["NOT", "NULL"]:
        return t.with_nullable(False), f"{shown} NOT NULL", rest[2:]
    if rest[:1] and rest[0].upper() == "NULL":
        return t, shown, rest[1:]
    return t, shown, rest


def _expect(rest: list[str], word: str, what: str, text: str, column: str) -> list[str]:
    if not rest or rest[0] != word:
        raise DdlError(f"expected {word!r} in {what} of the type {text!r} (column {column!r})")
    return rest[1:]


def read_other_type(head: str, rest: list[str], text: str, column: str,
                    read_type: Reader) -> tuple[DataType, str, list[str]]:
    if head in ("BINARY", "VARBINARY"):
        p, rest = _params(rest, text, column)
        n = p[0] if p else 1
        if not 1 <= n <= MAX_LENGTH:
            raise DdlError(f"{head} length must be between 1 and {MAX_LENGTH}, got {n} (column {column!r})")
        t = DataTypes.BINARY(n) if head == "BINARY" else DataTypes.VARBINARY(n)
        return t, str(t), rest
    if head == "BYTES":
        return DataTypes.BYTES(), "BYTES", rest
    if head == "NULL":
        return DataTypes.NULL(), "NULL", rest
    if head == "TIME":
        p, rest = _params(rest, text, column)
        precision = p[0] if p else 0
        if not 0 <= precision <= 9:
            raise DdlError(f"TIME precision must be between 0 and 9, got {precision} (column {column!r})")
        if rest[:3] and [w.upper() for w in rest[:3]] == ["WITHOUT", "TIME", "ZONE"]:
            rest = rest[3:]
        return DataTypes.TIME(precision), f"TIME({precision})", rest
    if head == "MULTISET":
        rest = _expect(rest, "<", "MULTISET<...>", text, column)
        element, shown, rest = _not_null(*read_type(rest, text, column))
        rest = _expect(rest, ">", "MULTISET<...>", text, column)
        return DataTypes.MULTISET(element), f"MULTISET<{shown}>", rest
    if head == "MAP":
        rest = _expect(rest, "<", "MAP<...>", text, column)
        key, key_shown, rest = _not_null(*read_type(rest, text, column))
        rest = _expect(rest, ",", "MAP<key, value>", text, column)
        value, value_shown, rest = _not_null(*read_type(rest, text, column))
        rest = _expect(rest, ">", "MAP<...>", text, column)
        return DataTypes.MAP(key, value), f"MAP<{key_shown}, {value_shown}>", rest
    return _read_row(rest, text, column, read_type)


def _read_row(rest: list[str], text: str, column: str, read_type: Reader) -> tuple[DataType, str, list[str]]:
    """``ROW<a INT, b STRING>`` or ``ROW(a INT, b STRING)``: the field names may be backquoted."""
    if not rest or rest[0] not in ("<", "("):
        raise DdlError(f"ROW needs its fields, as ROW<a INT, b STRING>, in {text!r} (column {column!r})")
    close = ">" if rest[0] == "<" else ")"
    rest = rest[1:]
    fields, shown = [], []
    while rest and rest[0] != close:
        name = rest[0].strip("`")
        field, field_shown, rest = _not_null(*read_type(rest[1:], text, column))
        fields.append(DataTypes.FIELD(name, field))
        shown.append(f"`{name}` {field_shown}")
        if rest and rest[0] == ",":
            rest = rest[1:]
    rest = _expect(rest, close, "ROW<...>", text, column)
    return DataTypes.ROW(fields), "ROW<" + ", ".join(shown) + ">", rest


def cast_type(node: exp.DataType, params: list[int], read: Callable) -> DataType | None:
    """The Flink type of a parsed ``CAST`` target among BINARY/VARBINARY/BYTES, TIME and MAP.

    ``params`` are the type's integer parameters and ``read`` turns a MAP's key and
    value type nodes into types. None for any other type name (the caller refuses it).
    """
    kind = node.this.name if hasattr(node.this, "name") else str(node.this)
    if kind == "USERDEFINED":  # sqlglot knows no BYTES
        kind = str(node.args.get("kind") or "").upper()
    nested = [e for e in node.expressions if isinstance(e, exp.DataType)]
    if kind == "BYTES":
        return DataTypes.BYTES()
    if kind in ("BINARY", "VARBINARY"):
        n = params[0] if params else (1 if kind == "BINARY" else MAX_LENGTH)
        if not 1 <= n <= MAX_LENGTH:
            raise DdlError(f"{kind} length must be between 1 and {MAX_LENGTH}, got {n}")
        return DataTypes.BINARY(n) if kind == "BINARY" else DataTypes.VARBINARY(n)
    if kind == "TIME":
        precision = params[0] if params else 0
        if not 0 <= precision <= 9:
            raise DdlError(f"TIME precision must be between 0 and 9, got {precision}")
        return DataTypes.TIME(precision)
    if kind == "MAP" and len(nested) == 2:
        return DataTypes.MAP(read(nested[0]), read(nested[1]))
    return None


_SIMPLE = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "INTEGER": "INT",
    "BIGINT": "BIGINT", "FLOAT": "FLOAT", "REAL": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE",
    "STRING": "STRING",
}


def parse_type(text: str, column: str = "?") -> tuple[DataType, str]:
    """A Flink type name: the engine's type and Flink's display spelling.

    >>> [parse_type(t)[1] for t in ("INTEGER", "VARCHAR(10)", "DECIMAL", "TIMESTAMP", "ARRAY<BIGINT>")]
    ['INT', 'VARCHAR(10)', 'DECIMAL(10, 0)', 'TIMESTAMP(6)', 'ARRAY<BIGINT>']
    >>> [parse_type(t)[1] for t in ("MAP<STRING, INT>", "ROW<a INT, b STRING NOT NULL>", "BYTES", "TIME")]
    ['MAP<STRING, INT>', 'ROW<`a` INT, `b` STRING NOT NULL>', 'BYTES', 'TIME(0)']
    """
    words = re.findall(r"`[^`]*`|[A-Za-z_][A-Za-z_0-9]*|\d+|[(),<>]", text)
    data_type, display, rest = _read_type(words, text, column)
    if rest:
        raise DdlError(f"unexpected {' '.join(rest)!r} in the type {text!r} of column {column!r}")
    return data_type, display


def _read_type(words: list[str], text: str, column: str) -> tuple[DataType, str, list[str]]:
    if not words:
        raise DdlError(f"missing type of column {column!r}")
    head, rest = words[0].upper(), words[1:]

    def params() -> list[int]:
        nonlocal rest
        if not rest or rest[0] != "(":
            return []
        close = rest.index(")") if ")" in rest else -1
        if close < 0:
            raise DdlError(f"unbalanced parentheses in the type {text!r} of column {column!r}")
        values = [w for w in rest[1:close] if w != ","]
        if not all(v.isdigit() for v in values):
            raise DdlError(f"type parameters must be integers in {text!r} (column {column!r})")
        rest = rest[close + 1:]
        return [int(v) for v in values]

    if head == "DOUBLE" and rest[:1] and rest[0].upper() == "PRECISION":
        rest = rest[1:]
    if head in _SIMPLE:
        root = _SIMPLE[head]
        return DataType(root), root, rest
    if head in ("VARCHAR", "CHAR"):
        (n,) = params() or [1]
        if head == "VARCHAR" and n == 2147483647:
            return DataTypes.STRING(), "STRING", rest
        # The engine does not enforce lengths: character strings are STRING values.
        return DataTypes.STRING(), f"{head}({n})", rest
    if head in ("DECIMAL", "DEC", "NUMERIC"):
        p = params() or [10, 0]
        precision, scale = (p + [0])[:2]
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise DdlError(f"Decimal precision must be between 1 and 38 and scale between 0 and the precision, "
                           f"got DECIMAL({precision}, {scale}) for column {column!r}")
        return DataTypes.DECIMAL(precision, scale), f"DECIMAL({precision}, {scale})", rest
    if head in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        (precision,) = params() or [6]
        if rest[:3] and [w.upper() for w in rest[:3]] == ["WITHOUT", "TIME", "ZONE"]:
            rest = rest[3:]
        elif rest[:4] and [w.upper() for w in rest[:4]] == ["WITH", "LOCAL", "TIME", "ZONE"]:
            rest, head = rest[4:], "TIMESTAMP_LTZ"
        if not 0 <= precision <= 9:
            raise DdlError(f"TIMESTAMP precision must be between 0 and 9, got {precision} for column {column!r}")
        # TIMESTAMP_LTZ values are instants; the engine keeps them as UTC timestamps.
        return DataTypes.TIMESTAMP(precision), f"{head}({precision})", rest
    if head in OTHER_TYPES:
        return read_other_type(head, rest, text, column, _read_type)
    if head == "ARRAY":
        if not rest or rest[0] != "<":
            raise DdlError(f"ARRAY needs an element type, as ARRAY<INT>, in {text!r} (column {column!r})")
        element, shown, rest = _read_type(rest[1:], text, column)
        if rest[:2] and rest[0].upper() == "NOT" and rest[1].upper() == "NULL":
            element, shown, rest = element.with_nullable(False), f"{shown} NOT NULL", rest[2:]
        if not rest or rest[0] != ">":
            raise DdlError(f"expected > closing ARRAY<...> in {text!r} (column {column!r})")
        return DataTypes.ARRAY(element), f"ARRAY<{shown}>", rest[1:]
    raise DdlError(f"unsupported type {text!r} of column {column!r}; supported: BOOLEAN, TINYINT, SMALLINT, INT, "
                   "BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), CHAR(n), VARCHAR(n), STRING, BINARY(n), VARBINARY(n), "
                   "BYTES, DATE, TIME(p), TIMESTAMP(p), TIMESTAMP_LTZ(p), ARRAY<t>, MAP<k, v>, MULTISET<t>, "
                   "ROW<name t, ...>")
