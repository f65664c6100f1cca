"""The ``json``, ``csv`` and ``parquet`` formats: files to rows and rows to files.

Reading follows Flink's formats: JSON lines (a missing field is null, an
unknown field is ignored, a number or string is converted to the column's type
as Flink's ``JsonToRowDataConverters`` do), CSV by position, Parquet by column
name. A record that does not parse or a value that does not fit its column
fails with a :class:`BadRecordError` naming the file, the line, the record and
the column, unless ``<format>.ignore-parse-errors`` is set: then, as in Flink,
a record that does not parse is skipped and a value that does not fit is null.

>>> from changeflow.common.types import DataTypes
>>> schema = (("a", DataTypes.INT()), ("s", DataTypes.STRING()))
>>> JsonFormat(ignore_parse_errors=False).decode('{"a": 1, "s": "x"}\\n{"s": "y"}\\n', "f.json", schema)
[(1, 'x'), (None, 'y')]
>>> JsonFormat(ignore_parse_errors=False).decode('{"a": "zz"}\\n', "f.json", schema)
Traceback (most recent call last):
...
changeflow.connectors.formats.BadRecordError: Failed to deserialize JSON '{"a": "zz"}' (file f.json, line 1): column 'a' of type INT: For input string: "zz"
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from changeflow.connectors.values import csv_field, dump_json, json_value, to_python

Schema = tuple


class BadRecordError(ValueError):
    """A record of a source file that cannot be read; names the file, the record and the column."""


class JsonFormat:
    name = "json"
    options = {"json.ignore-parse-errors", "json.fail-on-missing-field", "json.timestamp-format.standard",
               "json.map-null-key.mode", "json.map-null-key.literal", "json.encode.decimal-as-plain-number",
               "json.encode.ignore-null-fields", "json.decode.json-parser.enabled"}

    def __init__(self, ignore_parse_errors: bool, fail_on_missing_field: bool = False) -> None:
        self.ignore_parse_errors = ignore_parse_errors
        self.fail_on_missing_field = fail_on_missing_field

    def decode(self, text: str, path: str, schema: Schema) -> list[tuple]:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("a JSON record must be an object")
            except ValueError as e:
                if self.ignore_parse_errors:
                    continue
                raise BadRecordError(f"Failed to deserialize JSON '{line}' (file {path}, line {number}): {e}") from None
            row = []
            for name, t in schema:
                if name not in record and self.fail_on_missing_field and not self.ignore_parse_errors:
                    raise BadRecordError(f"Failed to deserialize JSON '{line}' (file {path}, line {number}): "
                                         f"Could not find field with name '{name}'.")
                try:
                    row.append(to_python(record.get(name), t, from_text=False))
                except ValueError as e:
                    if self.ignore_parse_errors:
                        row.append(None)
                        continue
                    raise BadRecordError(f"Failed to deserialize JSON '{line}' (file {path}, line {number}): "
                                         f"column '{name}' of type {t}: {e}") from None
            rows.append(tuple(row))
        return rows

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        lines = [dump_json({n: json_value(v, t) for (n, t), v in zip(schema, row)}) for row in rows]
        return "".join(line + "\n" for line in lines).encode()


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

    def decode(self, text: str, path: str, schema: Schema) -> list[tuple]:
        rows = []
        reader = csv.reader(io.StringIO(text), delimiter=self.delimiter, quotechar=self.quote, strict=True)
        lines = text.splitlines()
        try:
            for fields in reader:
                number = reader.line_num
                record = lines[number - 1] if number - 1 < len(lines) else ",".join(fields)
                if not fields or (self.allow_comments and fields[0].startswith("#")):
                    continue
                if len(fields) != len(schema) and not self.ignore_parse_errors:
                    raise BadRecordError(f"Failed to deserialize CSV row '{record}' (file {path}, line {number}): "
                                         f"it has {len(fields)} fields, the table has {len(schema)} columns")
                row = []
                for i, (name, t) in enumerate(schema):
                    field = fields[i] if i < len(fields) else None
                    if field is not None and (field == self.null_literal or (field == "" and not t.is_string)):
                        field = None
                    try:
                        row.append(to_python(field, t, from_text=True))
                    except ValueError as e:
                        if self.ignore_parse_errors:
                            row.append(None)
                            continue
                        raise BadRecordError(f"Failed to deserialize CSV row '{record}' (file {path}, line {number}): "
                                             f"column '{name}' of type {t}: {e}") from None
                rows.append(tuple(row))
        except csv.Error as e:
            if not self.ignore_parse_errors:
                raise BadRecordError(f"Failed to deserialize CSV (file {path}, line {reader.line_num}): {e}") from None
        return rows

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        out = io.StringIO()
        writer = csv.writer(out, delimiter=self.delimiter, quotechar=self.quote, lineterminator="\n")
        for row in rows:
            fields = [csv_field(v, t) for (_, t), v in zip(schema, row)]
            writer.writerow(["" if f is None else f for f in fields] if self.null_literal is None
                            else [self.null_literal if f is None else f for f in fields])
        return out.getvalue().encode()


class ParquetFormat:
    name = "parquet"
    options = {"parquet.utc-timezone", "parquet.compression"}

    def decode_bytes(self, data: bytes, path: str, schema: Schema) -> list[tuple]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(pa.BufferReader(data))
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
        return list(zip(*columns)) if columns else []

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = list(zip(*rows)) if rows else [()] * len(schema)
        table = pa.Table.from_arrays([pa.array(list(c), type=arrow_type(t)) for c, (_, t) in zip(columns, schema)],
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
    raise TypeError(f"type {t} cannot be stored in a file")


def _native(value: Any, t) -> bool:
    """Whether a Parquet value already has the column's Python type (no conversion needed)."""
    import datetime
    import decimal

    if value is None:
        return True
    kinds = {"DATE": datetime.date, "TIMESTAMP": datetime.datetime, "DECIMAL": decimal.Decimal}
    return t.root in kinds and isinstance(value, kinds[t.root])


FORMATS = {"json": JsonFormat, "csv": CsvFormat, "parquet": ParquetFormat}
