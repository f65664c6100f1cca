"""PyFlink's ``Encoder`` (how a row-format ``FileSink`` writes each record) and ``SimpleStringSchema``.

``Encoder.simple_string_encoder()`` writes a record's Java ``toString`` (as
PyFlink's ``print()`` shows it, :func:`changeflow.datastream.sinks.to_java_string`)
followed by a newline, in the given charset.

>>> enc = Encoder.simple_string_encoder()
>>> enc.encode("to be"), enc.charset_name
(b'to be\\n', 'UTF-8')

``SimpleStringSchema`` turns a Kafka record's bytes into a string and back
(``KafkaSource``'s value deserializer, ``KafkaRecordSerializationSchema``'s
key and value serializers), in UTF-8 only.

>>> SimpleStringSchema().deserialize("é".encode()), SimpleStringSchema().serialize("é")
('é', b'\\xc3\\xa9')
"""

from __future__ import annotations

import codecs
from typing import Any, Callable

__all__ = ["DeserializationSchema", "Encoder", "SerializationSchema", "SimpleStringSchema"]


class Encoder:
    """Turns one record into the bytes a row-format file sink writes for it."""

    def __init__(self, charset_name: str = "UTF-8", to_string: Callable[[Any], str] = str) -> None:
        try:
            codecs.lookup(charset_name)
        except LookupError:
            raise ValueError(f"Encoder: unknown charset {charset_name!r}") from None
        self.charset_name = charset_name
        self._to_string = to_string

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> "Encoder":
        """Writes each element's string form followed by a newline (Flink's ``SimpleStringEncoder``)."""
        return Encoder(charset_name)

    def with_to_string(self, to_string: Callable[[Any], str]) -> "Encoder":
        """This encoder writing ``to_string(record)`` (the sink passes Java's ``toString`` of its stream's type)."""
        return Encoder(self.charset_name, to_string)

    def encode(self, record: Any) -> bytes:
        return (self._to_string(record) + "\n").encode(self.charset_name)


class SerializationSchema:
    """How a sink turns a record into bytes (PyFlink's base class; changeflow has :class:`SimpleStringSchema`)."""


class DeserializationSchema:
    """How a source turns bytes into a record (PyFlink's base class; changeflow has :class:`SimpleStringSchema`)."""


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Strings as their UTF-8 bytes (Flink's ``SimpleStringSchema``); other charsets are refused."""

    def __init__(self, charset: str = "UTF-8") -> None:
        try:
            name = codecs.lookup(charset).name
        except LookupError:
            raise ValueError(f"SimpleStringSchema: unknown charset {charset!r}") from None
        if name != "utf-8":
            raise NotImplementedError(f"SimpleStringSchema with charset {charset!r}: changeflow reads and writes "
                                      f"UTF-8 only")
        self.charset = charset

    def serialize(self, value: str) -> bytes:
        return value.encode("utf-8")

    def deserialize(self, data: bytes) -> str:
        return data.decode("utf-8")
