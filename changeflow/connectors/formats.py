"""The ``json``, ``csv`` and ``parquet`` formats: files to rows and rows to files.

Reading follows Flink's formats: JSON lines (a missing field is null, an
unknown field is ignored, a number or string is converted to the column's type
as Flink's ``JsonToRowDataConverters`` do), CSV by position, Parquet by column
name. A record that does not parse or a value that does not fit its column
fails with a :class:`BadRecordError` naming the file, the line, the record and
the column, unless ``<format>.ignore-parse-errors`` is set: then, as in Flink,
a record that does not parse is skipped and a value that does not fit is null.

Files are read as bytes (:meth:`decode_bytes`). Text formats take UTF-8: an
invalid byte fails the read naming the file, the line and the byte offset; with
``ignore-parse-errors`` the record holding it is skipped (changeflow's choice:
Flink's readers replace the byte with U+FFFD and read the record). A CSV record
that does not parse (a quote that never closes, a stray quote) is skipped on its
own: reading goes on at the line after the record's first line. Fields have no
size limit.

>>> from changeflow.common.types import DataTypes
>>> schema = (("a", DataTypes.INT()), ("s", DataTypes.STRING()))
>>> JsonFormat(ignore_parse_errors=False).decode('{"a": 1, "s": "x"}\\n{"s": "y"}\\n', "f.json", schema)
[(1, 'x'), (None, 'y')]
>>> JsonFormat(ignore_parse_errors=False).decode('{"a": "zz"}\\n', "f.json", schema)
Traceback (most recent call last):
...
changeflow.connectors.formats.BadRecordError: Failed to deserialize JSON '{"a": "zz"}' (file f.json, line 1): column
'a' of type INT: For input string: "zz"
"""

from __future__ import annotations

import csv
import decimal
import io
import json
import re
import sys
from typing import Any

from changeflow.connectors.values import csv_field, dump_json, json_value, to_python

Schema = tuple


class BadRecordError(ValueError):
    """A record of a source file that cannot be read; names the file, the record and the column."""


def _no_field_size_limit() -> None:
    # Python's csv module refuses fields over 128 KiB by default (a process-wide limit);
    # Flink's CSV reader has none. The largest limit the platform's C long holds.
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


_no_field_size_limit()

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # an invalid UTF-8 byte, as 'surrogateescape' decodes it
_SHOWN = 500  # characters of a record an error message shows



def _field(value, name: str, t, from_text: bool, ignore_errors: bool, where) -> object:
    """One field as its column's type; a value that does not convert is NULL with ignore-parse-errors
    (as Flink's converters), else an error naming the record (``where()``), the column and its type."""
    try:
        return to_python(value, t, from_text=from_text)
    except ValueError as e:
        if ignore_errors:
            return None
        raise BadRecordError(f"{where()}: column '{name}' of type {t}: {e}") from None


def _shown(record: str) -> str:
    """A record for an error message: a huge one is cut, saying how long it is."""
    if len(record) <= _SHOWN:
        return record
    return f"{record[:_SHOWN]}... ({len(record)} characters)"


def _text(data: bytes, path: str, ignore_parse_errors: bool) -> tuple[str, bool]:
    """A file's content as text, and whether it holds invalid UTF-8 bytes (escaped, see :data:`_ESCAPED_BYTE`)."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError as e:
        if not ignore_parse_errors:
            line = data.count(b"\n", 0, e.start) + 1
            raise BadRecordError(f"Invalid UTF-8 in file {path}, line {line}, byte offset {e.start}: "
                                 f"byte 0x{data[e.start]:02x} ({e.reason})") from None
        # Every bad byte becomes a lone surrogate, which valid UTF-8 never decodes to:
        # the records holding one are found and skipped.
        return data.decode("utf-8", "surrogateescape"), True


def _json_int(digits: str) -> int | decimal.Decimal:
    # Python refuses int() of over 4300 digits; Jackson reads any length (a BigInteger).
    return int(digits) if len(digits) <= 4000 else decimal.Decimal(digits)


class JsonFormat:
    name = "json"
    options = {"json.ignore-parse-errors", "json.fail-on-missing-field", "json.timestamp-format.standard",
               "json.map-null-key.mode", "json.map-null-key.literal", "json.encode.decimal-as-plain-number",
               "json.encode.ignore-null-fields", "json.decode.json-parser.enabled"}

    def __init__(self, ignore_parse_errors: bool, fail_on_missing_field: bool = False) -> None:
        self.ignore_parse_errors = ignore_parse_errors
        self.fail_on_missing_field = fail_on_missing_field

    def decode_bytes(self, data: bytes, path: str, schema: Schema) -> list[tuple]:
        """The rows of a file's content (UTF-8 JSON lines)."""
        text, escaped = _text(data, path, self.ignore_parse_errors)
        return self._decode(text, path, schema, escaped)

    def decode(self, text: str, path: str, schema: Schema) -> list[tuple]:
        """The rows of JSON lines text."""
        return self._decode(text, path, schema, False)

    def decode_arrow(self, data: bytes, path: str, schema: Schema):
        """A file's rows as an Arrow table typed by ``schema``, read by Arrow's JSON reader, or None where
        only :meth:`decode_bytes` gives the rows (:mod:`.json_arrow` says where; ``path`` is unused: an
        error is :meth:`decode_bytes`'s to report)."""
        if self.fail_on_missing_field:
            return None   # Arrow's reader cannot tell a missing field from a null one
        from changeflow.connectors.json_arrow import read_json_lines

        return read_json_lines(data, schema)

    def _decode(self, text: str, path: str, schema: Schema, escaped: bool) -> list[tuple]:
        rows = []
        # Records end at '\n' only: str.splitlines() would also split at U+2028 and other
        # characters a JSON string may hold raw.
        for number, line in enumerate(text.split("\n"), 1):
            line = line.rstrip("\r")
            if not line.strip():
                continue
            if escaped and _ESCAPED_BYTE.search(line):
                continue  # invalid UTF-8 with ignore-parse-errors (an error otherwise, in _text)
            try:
                record = _json_record(line)
            except ValueError as e:
                if self.ignore_parse_errors:
                    continue
                raise BadRecordError(f"Failed to deserialize JSON '{_shown(line)}' (file {path}, line {number}): "
                                     f"{e}") from None
            row = []
            for name, t in schema:
                if name not in record and self.fail_on_missing_field and not self.ignore_parse_errors:
                    raise BadRecordError(f"Failed to deserialize JSON '{_shown(line)}' (file {path}, line {number}): "
                                         f"Could not find field with name '{name}'.")
                row.append(_field(record.get(name), name, t, False, self.ignore_parse_errors,
                                  lambda line=line, number=number:
                                  f"Failed to deserialize JSON '{_shown(line)}' (file {path}, line {number})"))
            rows.append(tuple(row))
        return rows

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        """Rows as JSON lines."""
        lines = [dump_json({n: json_value(v, t) for (n, t), v in zip(schema, row, strict=True)}) for row in rows]
        return "".join(line + "\n" for line in lines).encode()


def _json_record(line: str) -> dict:
    """One JSON line as a dict (``ValueError`` if it is not a JSON object)."""
    try:
        record = json.loads(line)
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        record = json.loads(line, parse_int=_json_int)  # a number over 4300 digits (rare: only then the hook)
    if not isinstance(record, dict):
        raise ValueError("a JSON record must be an object")
    return record


class CsvFormat:
    name = "csv"
    options = {"csv.ignore-parse-errors", "csv.field-delimiter", "csv.quote-character", "csv.disable-quote-character",
               "csv.allow-comments", "csv.array-element-delimiter", "csv.escape-character", "csv.null-literal",
               "csv.write-bigdecimal-in-scientific-notation"}

    def __init__(self, ignore_parse_errors: bool, delimiter: str = ",", quote: str = '"',
                 null_literal: str | None = None, allow_comments: bool = False) -> None:
        self.ignore_parse_errors = ignore_parse_errors
        self.delimiter = delimiter
        self.quote = quote
        self.null_literal = null_literal
        self.allow_comments = allow_comments

    def decode_bytes(self, data: bytes, path: str, schema: Schema) -> list[tuple]:
        """The rows of a file's content (UTF-8 CSV)."""
        text, escaped = _text(data, path, self.ignore_parse_errors)
        return self._decode(text, path, schema, escaped)

    def decode(self, text: str, path: str, schema: Schema) -> list[tuple]:
        """The rows of CSV text."""
        return self._decode(text, path, schema, False)

    def _decode(self, text: str, path: str, schema: Schema, escaped: bool) -> list[tuple]:
        # Lines as the csv module splits them ('\n', '\r\n', '\r'). A quoted field may span
        # lines (as in Jackson's CSV parser, Flink's); a record that does not parse is
        # skipped alone: a new reader starts at the line after the record's first line.
        # (Flink's reader would take everything after an unclosed quote as one field and
        # lose the rest of the file.)
        lines = io.StringIO(text, newline="").readlines()
        rows: list[tuple] = []
        first = 0
        while first < len(lines):
            feed = _Lines(lines, first)
            reader = csv.reader(feed, delimiter=self.delimiter, quotechar=self.quote, strict=True)
            while True:
                start = feed.next
                try:
                    fields = next(reader)
                except StopIteration:
                    first = len(lines)
                    break
                except csv.Error as e:
                    if not self.ignore_parse_errors:
                        reason = ("a quoted field never closes"
                                  if str(e) == "unexpected end of data" else str(e))
                        raise BadRecordError(f"Failed to deserialize CSV row '{_shown(lines[start].rstrip())}' "
                                             f"(file {path}, line {start + 1}): {reason}") from None
                    first = start + 1
                    break
                record = "".join(lines[start:feed.next]).rstrip("\r\n")
                if escaped and _ESCAPED_BYTE.search(record):
                    continue  # invalid UTF-8 with ignore-parse-errors (an error otherwise, in _text)
                row = self._row(fields, record, path, start + 1, schema)
                if row is not None:
                    rows.append(row)
        return rows

    def _row(self, fields: list[str], record: str, path: str, number: int, schema: Schema) -> tuple | None:
        """A parsed record as a row (None for a blank line or a comment)."""
        if not fields or (self.allow_comments and fields[0].startswith("#")):
            return None
        if len(fields) != len(schema) and not self.ignore_parse_errors:
            raise BadRecordError(f"Failed to deserialize CSV row '{_shown(record)}' (file {path}, line {number}): "
                                 f"it has {len(fields)} fields, the table has {len(schema)} columns")
        row = []
        for i, (name, t) in enumerate(schema):
            field = fields[i] if i < len(fields) else None
            if field is not None and (field == self.null_literal or (field == "" and not t.is_string)):
                field = None
            row.append(_field(field, name, t, True, self.ignore_parse_errors,
                              lambda: f"Failed to deserialize CSV row '{_shown(record)}' (file {path}, line {number})"))
        return tuple(row)

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        """Rows as CSV lines, quoted as Flink's writer (Jackson's) quotes them.

        A text field (strings, dates, times, bytes) is quoted when it has a character below
        the writer's *safe* character: one past the largest of the delimiter, the quote and
        the line feed (``-`` for ``,`` and ``"``), so a space or a ``#`` quotes it too, or
        when it is longer than 24 characters (the writer quotes those without looking);
        numbers and booleans are never quoted.
        """
        safe = max(ord(self.delimiter), ord(self.quote), ord("\n")) + 1
        texts = [t.root not in _UNQUOTED for _, t in schema]
        null = "" if self.null_literal is None else self.null_literal
        quote, doubled = self.quote, self.quote * 2
        lines = []
        for row in rows:
            fields = []
            for (_, t), v, text in zip(schema, row, texts, strict=True):
                f = csv_field(v, t)
                if f is None:
                    fields.append(null)
                elif (text or self.delimiter in f) and (len(f) > _QUOTE_CHECK or any(ord(c) < safe for c in f)):
                    fields.append(quote + f.replace(quote, doubled) + quote)
                else:
                    fields.append(f)
            lines.append(self.delimiter.join(fields) + "\n")
        return "".join(lines).encode()


# Text longer than this Flink's CSV writer (Jackson's) quotes without checking its characters.
_QUOTE_CHECK = 24
# Types Flink's CSV writer writes as numbers or booleans: never quoted.
_UNQUOTED = frozenset(("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN"))


class _Lines:
    """An iterator over ``lines`` from ``first`` on; ``next`` is the index of the line it gives next.

    The csv reader pulls lines one at a time, so before each record ``next`` is the
    record's first line, and after it the line after its last.
    """

    def __init__(self, lines: list[str], first: int) -> None:
        self.lines, self.next = lines, first

    def __iter__(self) -> "_Lines":
        return self

    def __next__(self) -> str:
        if self.next >= len(self.lines):
            raise StopIteration
        self.next += 1
        return self.lines[self.next - 1]


class ParquetFormat:
    name = "parquet"
    options = {"parquet.utc-timezone", "parquet.compression"}

    def decode_bytes(self, data: bytes, path: str, schema: Schema) -> list[tuple]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError) as e:  # not Parquet, truncated, a corrupt page
            raise BadRecordError(f"Failed to read Parquet file {path}: {e}") from None
        names = table.column_names
        columns = []
        for name, t in schema:
            if name not in names:
                columns.append([None] * table.num_rows)
                continue
            values = table.column(name).to_pylist()
            try:
                columns.append([to_python(v, t, from_text=False) if not _native(v, t) else v for v in values])
            except ValueError as e:
                raise BadRecordError(f"Failed to read Parquet file {path}: column '{name}' of type {t}: {e}") from None
        return list(zip(*columns, strict=True)) if columns else []

    def decode_arrow(self, data: bytes, path: str, schema: Schema):
        """One file's rows as an Arrow table typed by ``schema`` (:func:`arrow_type`), or None.

        Only where every column's values need no Python conversion, so the table
        holds exactly the values :meth:`decode_bytes` gives: a column absent (nulls)
        or stored with the column's own Arrow type, or a TIMESTAMP stored without a
        zone in seconds, milliseconds or microseconds. Anything else (a conversion
        that checks ranges or parses, nanoseconds that Python's datetime drops) is
        None: the caller reads rows.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError) as e:  # not Parquet, truncated, a corrupt page
            raise BadRecordError(f"Failed to read Parquet file {path}: {e}") from None
        columns = []
        for name, t in schema:
            target = arrow_type(t) if t.root in _ARROW_EXACT else None
            if target is None:
                return None
            if name not in table.column_names:
                columns.append(pa.nulls(table.num_rows, target))
                continue
            column = table.column(name)
            stored = column.type
            if stored == target:
                columns.append(column)
            elif t.root == "TIMESTAMP" and pa.types.is_timestamp(stored) and stored.tz is None \
                    and stored.unit in ("s", "ms", "us"):
                columns.append(column.cast(target))
            else:
                return None
        return pa.Table.from_arrays(columns, names=[n for n, _ in schema])

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
        table = pa.Table.from_arrays([pa.array(list(c), type=arrow_type(t))
                                      for c, (_, t) in zip(columns, schema, strict=True)],
                                     names=[n for n, _ in schema])
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return sink.getvalue().to_pybytes()


def arrow_type(t):
    """The Arrow type of a column of Flink type ``t`` (Parquet files, typed row batches)."""
    import pyarrow as pa

    simple = {"BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
              "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "STRING": pa.string(),
              "VARCHAR": pa.string(), "CHAR": pa.string(), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us")}
    if t.root in simple:
        return simple[t.root]
    if t.root == "DECIMAL":
        return pa.decimal128(*t.params)
    if t.root == "ARRAY":
        return pa.list_(arrow_type(t.element))
    if t.root == "ROW":
        return pa.struct([pa.field(n, arrow_type(f)) for n, f in t.params])
    raise TypeError(f"type {t} cannot be stored in a file")


# Column types whose Parquet values, stored with the column's own Arrow type, reach the engine unchanged.
_ARROW_EXACT = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "DOUBLE", "STRING", "TIMESTAMP"}


def _native(value: Any, t) -> bool:
    """Whether a Parquet value already has the column's Python type (no conversion needed)."""
    import datetime
    import decimal

    if value is None:
        return True
    kinds = {"DATE": datetime.date, "TIMESTAMP": datetime.datetime, "DECIMAL": decimal.Decimal}
    return t.root in kinds and isinstance(value, kinds[t.root])


FORMATS = {"json": JsonFormat, "csv": CsvFormat, "parquet": ParquetFormat}
