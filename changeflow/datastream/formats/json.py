"""PyFlink's JSON row formats (``pyflink.datastream.formats.json``) for DataStream connectors.

``JsonRowDeserializationSchema`` reads a Kafka record's value (a JSON object) into a ``Row`` of the
given ``Types.ROW_NAMED``; ``JsonRowSerializationSchema`` writes a ``Row`` as compact JSON. Both
convert as Flink 2.3's do (:mod:`.json_values`; checked against its goldens)::

    row_type = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    source = KafkaSource.builder()...set_value_only_deserializer(
        JsonRowDeserializationSchema.builder().type_info(row_type).build()).build()
    sink = KafkaSink.builder()...set_record_serializer(KafkaRecordSerializationSchema.builder()
        .set_topic("out").set_value_serialization_schema(
            JsonRowSerializationSchema.builder().with_type_info(row_type).build()).build()).build()

A record that fails to deserialize fails the job with an error naming the text and the reason,
unless ``ignore_parse_errors()`` (then a field that does not convert is null, and a record that
does not parse is skipped, as in Flink).

>>> from changeflow.common import Types
>>> schema = JsonRowDeserializationSchema.builder().type_info(
...     Types.ROW_NAMED(["id", "tags"], [Types.INT(), Types.BASIC_ARRAY(Types.STRING())])).build()
>>> schema.deserialize(b'{"id": "3", "tags": ["x", 1], "other": true}')
Row(id=3, tags=['x', '1'])
>>> JsonRowSerializationSchema.builder().with_type_info(schema.get_produced_type()).build().serialize(
...     schema.deserialize(b'{"id": 1.7}'))
b'{"id":1,"tags":null}'
"""

from __future__ import annotations

from typing import Any

from changeflow.common.serialization import DeserializationSchema, SerializationSchema
from changeflow.common.typeinfo import RowTypeInfo, TypeInformation
from changeflow.datastream.functions import FlatMapFunction
from changeflow.datastream.formats.json_values import JsonFieldError, check_json_type, read_value, write_row
from changeflow.kernels.json.values import parse_json

__all__ = ["DeserializedRows", "JsonRowDeserializationSchema", "JsonRowSerializationSchema"]


def _row_type(type_info: Any, where: str) -> RowTypeInfo:
    if not isinstance(type_info, RowTypeInfo):
        raise TypeError(f"{where}: the type information must be a row type (Types.ROW_NAMED), got {type_info!r}")
    check_json_type(type_info, where)
    return type_info


class JsonRowDeserializationSchema(DeserializationSchema):
    """JSON objects to rows of a row type (see the module)."""

    def __init__(self, type_info: RowTypeInfo, fail_on_missing_field: bool, ignore_parse_errors: bool) -> None:
        self.type_info = type_info
        self.fail_on_missing_field = fail_on_missing_field
        self.ignore_parse_errors = ignore_parse_errors

    @staticmethod
    def builder() -> "JsonRowDeserializationSchema.Builder":
        return JsonRowDeserializationSchema.Builder()

    def get_produced_type(self) -> RowTypeInfo:
        return self.type_info

    def deserialize(self, message: bytes) -> Any:
        """The row of one JSON object; None for a JSON ``null`` (and, ignoring parse errors, for what does not
        parse): the source drops such a record."""
        # utf-8-sig: Jackson skips a byte order mark at the start of the bytes.
        text = bytes(message).decode("utf-8-sig", errors="replace")
        try:
            # The JSON functions' reader (the first value; JSON's whitespace only, as Jackson), with
            # floats: Flink converts a field from Jackson's double.
            document = parse_json(text, exact_numbers=False)
            if document is None:
                return None
            return read_value(self.type_info, document, self.fail_on_missing_field, self.ignore_parse_errors)
        except (ValueError, JsonFieldError) as error:
            if self.ignore_parse_errors:
                return None
            raise ValueError(f"Failed to deserialize JSON '{text}': {error}") from None

    class Builder:
        """PyFlink's builder: ``type_info(...)``, then ``fail_on_missing_field()``, ``ignore_parse_errors()``."""

        def __init__(self) -> None:
            self._type_info: Any = None
            self._fail_on_missing_field = False
            self._ignore_parse_errors = False

        def type_info(self, type_info: TypeInformation) -> "JsonRowDeserializationSchema.Builder":
            self._type_info = type_info
            return self

        def json_schema(self, json_schema: str) -> "JsonRowDeserializationSchema.Builder":
            raise NotImplementedError("JsonRowDeserializationSchema.Builder.json_schema (a JSON schema's text) is not "
                                      "supported by changeflow: give the row type with type_info(Types.ROW_NAMED(...))")

        def fail_on_missing_field(self) -> "JsonRowDeserializationSchema.Builder":
            self._fail_on_missing_field = True
            return self

        def ignore_parse_errors(self) -> "JsonRowDeserializationSchema.Builder":
            self._ignore_parse_errors = True
            return self

        def build(self) -> "JsonRowDeserializationSchema":
            if self._type_info is None:
                raise TypeError("JsonRowDeserializationSchema: the type information is required (type_info)")
            row_type = _row_type(self._type_info, "JsonRowDeserializationSchema")
            return JsonRowDeserializationSchema(row_type, self._fail_on_missing_field, self._ignore_parse_errors)


class JsonRowSerializationSchema(SerializationSchema):
    """Rows to compact JSON objects (see the module)."""

    def __init__(self, type_info: RowTypeInfo) -> None:
        self.type_info = type_info
        self._write = write_row(type_info)  # built once: serialize runs per record

    def __getstate__(self) -> dict:
        return {"type_info": self.type_info}  # the writer is closures: rebuilt where the schema is unpickled

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["type_info"])

    @staticmethod
    def builder() -> "JsonRowSerializationSchema.Builder":
        return JsonRowSerializationSchema.Builder()

    def serialize(self, element: Any) -> bytes:
        try:
            return self._write(element).encode("utf-8")
        except (TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"Could not serialize row '{element!r}' as {self.type_info!r}: {error}. Make sure that "
                             f"the schema matches the input.") from None

    class Builder:
        """PyFlink's builder: ``with_type_info(...)``, then ``build()``."""

        def __init__(self) -> None:
            self._type_info: Any = None

        def with_type_info(self, type_info: TypeInformation) -> "JsonRowSerializationSchema.Builder":
            self._type_info = type_info
            return self

        def build(self) -> "JsonRowSerializationSchema":
            if self._type_info is None:
                raise TypeError("Typeinfo should be set.")  # PyFlink's message
            return JsonRowSerializationSchema(_row_type(self._type_info, "JsonRowSerializationSchema"))


class DeserializedRows(FlatMapFunction):
    """A source's text records (a Kafka value's UTF-8 text) through a row deserializer (JSON or CSV): a row, or
    none for a null (the source's records are dropped there, as Flink's source drops them)."""

    def __init__(self, schema: Any) -> None:   # a JSON or CSV row deserialization schema
        self.schema = schema

    def flat_map(self, value: str) -> Any:
        row = self.schema.deserialize(value.encode("utf-8"))
        if row is not None:
            yield row
