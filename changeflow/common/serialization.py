"""PyFlink's ``Encoder``: how a row-format ``FileSink`` writes each record.

``Encoder.simple_string_encoder()`` writes a record's Java ``toString`` (as
PyFlink's ``print()`` shows it, :func:`changeflow.datastream.sinks.to_java_string`)
followed by a newline, in the given charset.

>>> enc = Encoder.simple_string_encoder()
>>> enc.encode("to be"), enc.charset_name
(b'to be\\n', 'UTF-8')
"""

from __future__ import annotations

import codecs
from typing import Any, Callable

__all__ = ["Encoder"]


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
