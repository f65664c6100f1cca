"""The ``avro`` format: rows to Avro and back, with the schema Flink derives from the table's columns.

As Flink 2.3's ``flink-avro`` (``AvroSchemaConverter``): the schema is a record named
``record`` in namespace ``org.apache.flink.avro.generated`` (a nested ROW column ``c``: a
record ``record_c``), its fields the table's columns in order; a nullable type is the union
``["null", type]`` with default null; DECIMAL(p, s) is ``bytes`` with the ``decimal`` logical
type, DATE ``int``/``date``, TIME(p <= 3) ``int``/``time-millis``, TIMESTAMP(p <= 3)
``long``/``timestamp-millis`` (Flink's legacy mapping, its default), TINYINT and SMALLINT
``int``, MAP a ``map`` (string keys only). Other types (TIMESTAMP(6), TIMESTAMP_LTZ, ...) are
refused with Flink's message.

Where the bytes go is Flink's too: the ``filesystem`` connector writes Avro container files
(one a write, compressed by ``avro.codec``, ``snappy`` by default; the row record nullable,
``["null", record]``, as Flink's file writer declares it) and reads them with the table's
schema as the reader's schema (Avro's schema resolution: a file whose field types do not
match fails naming the file). The ``kafka`` connector writes and reads each record as
schemaless Avro binary of the (not nullable) row record, as Flink's
``AvroRowDataSerializationSchema``. A record that does not decode (truncated, a wrong type)
fails naming the file and the record's number, or the Kafka record's position. Flink's avro
has no ``ignore-parse-errors``. Only ``avro.encoding`` = ``binary`` and the legacy timestamp
mapping are implemented (other values are refused naming the option).

>>> from changeflow.common.types import DataTypes
>>> fmt = AvroFormat()
>>> schema = (("id", DataTypes.INT(False)), ("s", DataTypes.STRING()))
>>> fmt.decode_record(fmt.encode_record((1, "a"), schema), "r", schema)
(1, 'a')
>>> fmt.decode_record(b"\\x02\\x02", "Kafka record 7", schema)
Traceback (most recent call last):
...
changeflow.connectors.formats.BadRecordError: Failed to deserialize Avro record (Kafka record 7): it ends too early
"""

from __future__ import annotations

import datetime
import io
from typing import Any

from changeflow.connectors.formats import BadRecordError

Schema = tuple
NAMESPACE = "org.apache.flink.avro.generated"
CODECS = ("null", "deflate", "snappy", "bzip2", "xz", "zstandard")
_PRIMITIVE = {"BOOLEAN": "boolean", "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "long",
              "FLOAT": "float", "DOUBLE": "double", "CHAR": "string", "VARCHAR": "string", "STRING": "string",
              "BINARY": "bytes", "VARBINARY": "bytes", "BYTES": "bytes"}


class AvroSchemaError(ValueError):
    """A column type Flink's Avro schema derivation refuses (its message)."""


def avro_type(t, name: str) -> Any:
    """The Avro schema of Flink type ``t`` (``name``: the record name a ROW takes), as AvroSchemaConverter."""
    root = t.root
    if root in _PRIMITIVE:
        schema: Any = _PRIMITIVE[root]
    elif root == "DECIMAL":
        schema = {"type": "bytes", "logicalType": "decimal", "precision": t.params[0], "scale": t.params[1]}
    elif root == "DATE":
        schema = {"type": "int", "logicalType": "date"}
    elif root == "TIME":
        if t.params and t.params[0] > 3:
            raise AvroSchemaError(f"Avro does not support TIME type with precision: {t.params[0]}, it only "
                                  f"supports precision less than 3.")
        schema = {"type": "int", "logicalType": "time-millis"}
    elif root == "TIMESTAMP":
        if t.params and t.params[0] > 3:
            raise AvroSchemaError(f"Avro does not support TIMESTAMP type with precision: {t.params[0]}, it only "
                                  f"supports precision less than 3.")
        schema = {"type": "long", "logicalType": "timestamp-millis"}
    elif root == "ARRAY":
        schema = {"type": "array", "items": avro_type(t.element_type, name)}
    elif root == "MAP":
        if not t.key_type.is_string:
            raise AvroSchemaError("Avro format doesn't support non-string as key type of map. The key type is: "
                                  f"{t.key_type}")
        schema = {"type": "map", "values": avro_type(t.value_type, name)}
    elif root == "ROW":
        schema = record_schema(t.params, name, top=False)
    else:
        raise AvroSchemaError(f"Unsupported to derive Schema for type: {t}")
    return ["null", schema] if t.nullable else schema


def record_schema(columns: Schema, name: str = "record", top: bool = True) -> dict:
    """The record of ``columns`` (not nullable); a nullable field has default null, as Flink's.

    Only the top record names the namespace: a nested one (``record_c``) inherits it.
    """
    fields = []
    for column, t in columns:
        field: dict = {"name": column, "type": avro_type(t, f"{name}_{column}")}
        if t.nullable:
            field["default"] = None
        fields.append(field)
    if not top:
        return {"type": "record", "name": name, "fields": fields}
    return {"type": "record", "name": name, "namespace": NAMESPACE, "fields": fields}


def _to_avro(value: Any, t) -> Any:
    """A column value as fastavro writes it (a ROW's tuple as a dict, a decimal at its scale)."""
    if value is None:
        return None
    if t.root == "ROW":
        return {n: _to_avro(v, ft) for (n, ft), v in zip(t.params, value, strict=True)}
    if t.root == "ARRAY":
        return [_to_avro(v, t.element_type) for v in value]
    if t.root == "MAP":
        return {k: _to_avro(v, t.value_type) for k, v in value.items()}
    return value


def _from_avro(value: Any, t) -> Any:
    """An Avro value as the column's Python value (a record as a tuple, a timestamp without its zone)."""
    if value is None:
        return None
    if t.root == "ROW":
        return tuple(_from_avro(value.get(n), ft) for n, ft in t.params)
    if t.root == "ARRAY":
        return [_from_avro(v, t.element_type) for v in value]
    if t.root == "MAP":
        return {k: _from_avro(v, t.value_type) for k, v in value.items()}
    if t.root == "TIMESTAMP" and isinstance(value, datetime.datetime) and value.tzinfo is not None:
        # Flink's legacy mapping: the timestamp's fields are UTC's
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if t.root in ("CHAR", "VARCHAR", "STRING") and not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return value


def _reason(e: Exception) -> str:
    if type(e).__name__ == "SchemaResolutionError":  # a writer's schema of other types than the table's
        return f"the file's schema does not resolve to the table's: {str(e).split(' is not ')[0]}"
    if isinstance(e, (EOFError, StopIteration)) or "unpack" in str(e) or "buffer" in str(e):
        return "it ends too early"
    return f"{type(e).__name__}: {e}"


class AvroFormat:
    """Flink's ``avro`` format (see the module's docstring): container files and schemaless Kafka records."""

    name = "avro"
    options = {"avro.codec", "avro.encoding", "avro.timestamp_mapping.legacy"}

    def __init__(self, codec: str = "snappy") -> None:
        self.codec = codec
        self._parsed: dict = {}

    def _schema(self, schema: Schema, nullable: bool):
        import fastavro

        key = (schema, nullable)
        if key not in self._parsed:
            record = record_schema(schema)
            self._parsed[key] = fastavro.parse_schema(["null", record] if nullable else record)
        return self._parsed[key]

    # --- files ----------------------------------------------------------------------------

    def encode(self, rows: list[tuple], schema: Schema) -> bytes:
        """Rows as one Avro container file, blocks compressed by the codec."""
        import fastavro

        out = io.BytesIO()
        records = [{n: _to_avro(v, t) for (n, t), v in zip(schema, row, strict=True)} for row in rows]
        try:
            fastavro.writer(out, self._schema(schema, True), records, codec=self.codec)
        except (ValueError, TypeError, OverflowError) as e:
            raise ValueError(f"Failed to serialize Avro record: {e}") from None
        return out.getvalue()

    def decode_bytes(self, data: bytes, path: str, schema: Schema) -> list[tuple]:
        """The rows of an Avro container file, read with the table's schema as the reader's."""
        import fastavro

        rows: list[tuple] = []
        try:
            reader = fastavro.reader(io.BytesIO(data), reader_schema=self._schema(schema, True))
        except Exception as e:  # not an Avro file, or its schema does not resolve to the table's
            raise BadRecordError(f"Failed to read Avro file {path}: {_reason(e)}") from None
        try:
            for record in reader:
                rows.append(self._row(record, schema))
        except Exception as e:
            raise BadRecordError(f"Failed to deserialize Avro record {len(rows) + 1} of file {path}: "
                                 f"{_reason(e)}") from None
        return rows

    # --- Kafka records -----------------------------------------------------------------------

    def encode_record(self, row: tuple, schema: Schema) -> bytes:
        """One row as schemaless Avro binary (Flink's AvroRowDataSerializationSchema)."""
        import fastavro

        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, self._schema(schema, False),
                                       {n: _to_avro(v, t) for (n, t), v in zip(schema, row, strict=True)})
        except (ValueError, TypeError, OverflowError) as e:
            raise ValueError(f"Failed to serialize Avro record {row}: {e}") from None
        return out.getvalue()

    def decode_record(self, data: bytes, where: str, schema: Schema) -> tuple:
        """One schemaless Avro record as a row; fails naming ``where`` when it does not decode."""
        import fastavro

        buffer = io.BytesIO(data)
        try:
            record = fastavro.schemaless_reader(buffer, self._schema(schema, False), None)
            return self._row(record, schema)
        except Exception as e:
            raise BadRecordError(f"Failed to deserialize Avro record ({where}): {_reason(e)}") from None

    def _row(self, record: Any, schema: Schema) -> tuple:
        if not isinstance(record, dict):
            raise ValueError("the record is null")
        return tuple(_from_avro(record.get(n), t) for n, t in schema)


def avro_format(table, as_sink: bool, prefix: str = "") -> AvroFormat:
    """The ``avro`` format of ``table`` with its options under ``prefix``; the schema is checked now."""
    from changeflow.connectors.options import ConnectorError, boolean, failure

    try:
        import fastavro  # noqa: F401
    except ImportError:
        raise ConnectorError("The 'avro' format needs the fastavro package: pip install 'changeflow[avro]' "
                             "(or fastavro and cramjam)") from None
    codec = table.options.get(f"{prefix}avro.codec", "snappy")
    if codec not in CODECS:
        raise failure(table, as_sink, f"Unsupported value '{codec}' for option '{prefix}avro.codec'. Supported "
                                      f"values are [{', '.join(CODECS)}].")
    encoding = table.options.get(f"{prefix}avro.encoding", "binary")
    if encoding != "binary":
        raise failure(table, as_sink, f"'{prefix}avro.encoding' = '{encoding}' is not supported by changeflow "
                                      f"(only binary).")
    if not boolean(table, as_sink, f"{prefix}avro.timestamp_mapping.legacy", True):
        raise failure(table, as_sink, f"'{prefix}avro.timestamp_mapping.legacy' = 'false' is not supported by "
                                      f"changeflow (only Flink's legacy timestamp mapping).")
    try:
        record_schema(tuple((c.name, c.data_type) for c in table.schema.physical_columns()))
    except AvroSchemaError as e:
        raise failure(table, as_sink, str(e)) from None
    return AvroFormat(codec)
