"""Sinks of the DataStream API: print to stdout and collect into a list.

A sink has ``write(records)``: the job calls it once per micro-batch (batch
mode: once) with that batch's records in order.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Iterator

from changeflow.common.row import Row
from changeflow.common.typeinfo import PickledBytesTypeInfo, RowTypeInfo, TupleTypeInfo
from changeflow.datastream.stream_hints import TaskHints

__all__ = ["CloseableIterator", "CollectSink", "DataStreamSink", "PrintSink", "to_java_string"]


def to_java_string(value: Any, type_info: Any = None) -> str:
    """How PyFlink 2.3's ``print()`` writes a record of ``type_info`` (checked against PyFlink).

    A pickled value (no type information) prints as Python's ``str``; a Row as
    PyFlink formats it before printing (``+I[`` then Python's ``str`` of each
    field joined by ``,``); other typed values as Java prints them (a tuple as
    ``(a,1,true)``, null as ``null``).

    >>> to_java_string(Row(word="a", n=1, ok=True, x=None), RowTypeInfo([], None))
    '+I[a,1,True,None]'
    >>> to_java_string(("a", 1.5, None, True), TupleTypeInfo([]))
    '(a,1.5,null,true)'
    >>> to_java_string(("a", 1))
    "('a', 1)"
    """
    if type_info is None or isinstance(type_info, PickledBytesTypeInfo):
        return value if isinstance(value, str) else str(value)
    if isinstance(type_info, RowTypeInfo) and isinstance(value, Row):
        return f"{value.get_row_kind()}[{','.join(str(v) for v in value)}]"
    if isinstance(type_info, TupleTypeInfo) and isinstance(value, tuple):
        return f"({','.join(_java(v) for v in value)})"
    return _java(value)


def _java(v: Any) -> str:
    """Java's ``toString`` of a converted Python value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return f"[{', '.join(_java(x) for x in v)}]"
    return str(v)


class PrintSink:
    """Prints each record on its own line, prefixed by ``identifier> `` when one is given."""

    def __init__(self, identifier: str | None = None, type_info: Any = None, stream: Any = None) -> None:
        self.identifier = identifier
        self.type_info = type_info
        self.stream = stream

    def write(self, records: list[Any]) -> None:
        out = self.stream or sys.stdout
        prefix = f"{self.identifier}> " if self.identifier else ""
        for r in records:
            print(prefix + to_java_string(r, self.type_info), file=out)


class CollectSink:
    """Collects every record into :attr:`records` (thread-safe)."""

    def __init__(self) -> None:
        self.records: list[Any] = []
        self._lock = threading.Lock()

    def write(self, records: list[Any]) -> None:
        with self._lock:
            self.records.extend(records)


class DataStreamSink(TaskHints):
    """What ``sink_to`` / ``print`` return (Flink's task hints: :class:`.stream_hints.TaskHints`)."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink

    def name(self, name: str) -> "DataStreamSink":
        return self

    def uid(self, uid: str) -> "DataStreamSink":
        return self

    def set_parallelism(self, parallelism: int) -> "DataStreamSink":
        return self


class CloseableIterator:
    """The records of ``execute_and_collect()``; usable in a ``with`` block as in PyFlink."""

    def __init__(self, records: list[Any]) -> None:
        self._it: Iterator[Any] = iter(records)

    def __iter__(self) -> "CloseableIterator":
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def next(self) -> Any:
        return next(self._it)

    def close(self) -> None:
        self._it = iter(())

    def __enter__(self) -> "CloseableIterator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
