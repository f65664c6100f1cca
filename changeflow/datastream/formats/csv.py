"""PyFlink's CSV row formats (``pyflink.datastream.formats.csv``) for DataStream connectors.

``CsvRowDeserializationSchema`` reads a Kafka record's value (one CSV record) into a ``Row`` of the
given ``Types.ROW_NAMED``; ``CsvRowSerializationSchema`` writes a ``Row`` as one CSV record. Both
convert as Flink 2.3's do (:mod:`.csv_values`; checked against its goldens)::

    row_type = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    source = KafkaSource.builder()...set_value_only_deserializer(
        CsvRowDeserializationSchema.Builder(row_type).set_field_delimiter("|").build()).build()
    sink = KafkaSink.builder()...set_record_serializer(KafkaRecordSerializationSchema.builder()
        .set_topic("out").set_value_serialization_schema(
            CsvRowSerializationSchema.Builder(row_type).build()).build()).build()

A record that fails to deserialize fails the job with an error naming the text and the reason,
unless ``set_ignore_parse_errors(True)`` (then a value that does not convert is null, missing fields
are null, and a record that does not parse is skipped, as in Flink).

>>> from changeflow.common import Types
>>> row_type = Types.ROW_NAMED(["id", "name", "tags"], [Types.INT(), Types.STRING(), Types.BASIC_ARRAY(Types.INT())])
>>> schema = CsvRowDeserializationSchema.Builder(row_type).build()
>>> schema.deserialize(b' 3 ,"a, b",1;2')
Row(id=3, name='a, b', tags=[1, 2])
>>> CsvRowSerializationSchema.Builder(row_type).set_field_delimiter("|").build().serialize(
...     schema.deserialize(b'4,x y,'))
b'4|"x y"|\\n'
"""

from __future__ import annotations

import dataclasses
from typing import Any

from changeflow.common.row import Row
from changeflow.common.serialization import DeserializationSchema, SerializationSchema
from changeflow.common.typeinfo import RowTypeInfo, TypeInformation
from changeflow.datastream.formats.csv_values import (CsvDialect, CsvFieldError, check_csv_type, read_record,
                                                      write_record)

__all__ = ["CsvRowDeserializationSchema", "CsvRowSerializationSchema"]


def _char(value: str, what: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{what} must be one character, got {value!r}")
    return value


def _checked(type_info: Any, where: str) -> RowTypeInfo:
    if type_info is None:
        raise TypeError("Type information must not be None")  # PyFlink's message
    check_csv_type(type_info, where)
    return type_info


class CsvRowDeserializationSchema(DeserializationSchema):
    """CSV records to rows of a row type (see the module)."""

    def __init__(self, type_info: RowTypeInfo, dialect: CsvDialect, ignore_parse_errors: bool) -> None:
        self.type_info = type_info
        self.dialect = dialect
        self.ignore_parse_errors = ignore_parse_errors
        self._read = read_record(type_info, dialect, ignore_parse_errors)  # built once: deserialize runs per record

    def __getstate__(self) -> dict:
        return {"type_info": self.type_info, "dialect": self.dialect, "ignore": self.ignore_parse_errors}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["type_info"], state["dialect"], state["ignore"])

    def get_produced_type(self) -> RowTypeInfo:
        return self.type_info

    def deserialize(self, message: bytes) -> Any:
        """The row of one CSV record; None for no record (comment lines only, or ignoring parse errors, a
        record that does not parse): the source drops it."""
        text = bytes(message).decode("utf-8", errors="replace")
        try:
            values = self._read(text)
        except CsvFieldError as error:
            if self.ignore_parse_errors:
                return None
            raise ValueError(f"Failed to deserialize CSV row '{text}': {error}") from None
        return None if values is None else Row(**dict(zip(self.type_info.get_field_names(), values, strict=True)))

    class Builder:
        """PyFlink's builder: ``Builder(type_info)``, the ``set_...`` options, ``build()``."""

        def __init__(self, type_info: TypeInformation) -> None:
            self._type_info = _checked(type_info, "CsvRowDeserializationSchema")
            self._dialect = CsvDialect()
            self._ignore = False

        def _set(self, **changes: Any) -> "CsvRowDeserializationSchema.Builder":
            self._dialect = dataclasses.replace(self._dialect, **changes)
            return self

        def set_field_delimiter(self, delimiter: str) -> "CsvRowDeserializationSchema.Builder":
            return self._set(field_delimiter=_char(delimiter, "The field delimiter"))

        def set_allow_comments(self, allow_comments: bool) -> "CsvRowDeserializationSchema.Builder":
            return self._set(allow_comments=bool(allow_comments))

        def set_array_element_delimiter(self, delimiter: str) -> "CsvRowDeserializationSchema.Builder":
            return self._set(array_element_delimiter=delimiter)

        def set_quote_character(self, c: str) -> "CsvRowDeserializationSchema.Builder":
            return self._set(quote_character=_char(c, "The quote character"))

        def set_escape_character(self, c: str) -> "CsvRowDeserializationSchema.Builder":
            return self._set(escape_character=_char(c, "The escape character"))

        def set_null_literal(self, null_literal: str) -> "CsvRowDeserializationSchema.Builder":
            return self._set(null_literal=null_literal)

        def set_ignore_parse_errors(self, ignore_parse_errors: bool) -> "CsvRowDeserializationSchema.Builder":
            self._ignore = bool(ignore_parse_errors)
            return self

        def build(self) -> "CsvRowDeserializationSchema":
            return CsvRowDeserializationSchema(self._type_info, self._dialect, self._ignore)


class CsvRowSerializationSchema(SerializationSchema):
    """Rows to CSV records (see the module)."""

    def __init__(self, type_info: RowTypeInfo, dialect: CsvDialect) -> None:
        self.type_info = type_info
        self.dialect = dialect
        self._write = write_record(type_info, dialect)  # built once: serialize runs per record

    def __getstate__(self) -> dict:
        return {"type_info": self.type_info, "dialect": self.dialect}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["type_info"], state["dialect"])

    def serialize(self, element: Any) -> bytes:
        names = self.type_info.get_field_names()
        try:
            if isinstance(element, Row) and element._fields is not None:
                values = [element[n] for n in names]
            else:
                values = list(element)
            return self._write(values).encode("utf-8")
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            raise ValueError(f"Could not serialize row '{element!r}' as {self.type_info!r}: {error}") from None

    class Builder:
        """PyFlink's builder: ``Builder(type_info)``, the ``set_...`` options, ``build()``."""

        def __init__(self, type_info: TypeInformation) -> None:
            self._type_info = _checked(type_info, "CsvRowSerializationSchema")
            self._dialect = CsvDialect()

        def _set(self, **changes: Any) -> "CsvRowSerializationSchema.Builder":
            self._dialect = dataclasses.replace(self._dialect, **changes)
            return self

        def set_field_delimiter(self, c: str) -> "CsvRowSerializationSchema.Builder":
            return self._set(field_delimiter=_char(c, "The field delimiter"))

        def set_line_delimiter(self, delimiter: str) -> "CsvRowSerializationSchema.Builder":
            if delimiter not in ("\n", "\r", "\r\n", ""):
                raise ValueError("Unsupported new line delimiter. Only \\n, \\r, \\r\\n are supported.")
            return self._set(line_delimiter=delimiter)

        def set_array_element_delimiter(self, delimiter: str) -> "CsvRowSerializationSchema.Builder":
            return self._set(array_element_delimiter=delimiter)

        def disable_quote_character(self) -> "CsvRowSerializationSchema.Builder":
            return self._set(quote_character=None)

        def set_quote_character(self, c: str) -> "CsvRowSerializationSchema.Builder":
            return self._set(quote_character=_char(c, "The quote character"))

        def set_escape_character(self, c: str) -> "CsvRowSerializationSchema.Builder":
            return self._set(escape_character=_char(c, "The escape character"))

        def set_null_literal(self, s: str) -> "CsvRowSerializationSchema.Builder":
            return self._set(null_literal=s)

        def build(self) -> "CsvRowSerializationSchema":
            return CsvRowSerializationSchema(self._type_info, self._dialect)
