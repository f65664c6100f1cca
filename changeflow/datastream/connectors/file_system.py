"""PyFlink's ``file_system`` connector: ``FileSource`` (text lines) and ``FileSink`` (row format).

Source::

    FileSource.for_record_stream_format(StreamFormat.text_line_format(), path, ...) \\
        .process_static_file_set().build()

reads the lines of the files at the paths (a file, or every file below a
directory; hidden files, starting with ``.`` or ``_``, are skipped, as in
Flink), bounded, as ``Types.STRING()`` records in file order. ``monitor_continuously``
(an unbounded source) and bulk formats are refused, naming themselves.

Sink: see :mod:`.file_sink`.
"""

from __future__ import annotations

import codecs
from typing import Any

from changeflow.common.time import Duration
from changeflow.common.typeinfo import Types
from changeflow.datastream.connectors.base import Source
from changeflow.datastream.connectors.file_sink import (BucketAssigner, DefaultRollingPolicy, FileSink,
                                                         OnCheckpointRollingPolicy, OutputFileConfig, RollingPolicy)

__all__ = ["BucketAssigner", "BulkFormat", "DefaultRollingPolicy", "FileCompactStrategy", "FileCompactor",
           "FileEnumeratorProvider", "FileSink", "FileSource", "FileSourceBuilder", "FileSplitAssignerProvider",
           "OnCheckpointRollingPolicy", "OutputFileConfig", "RollingPolicy", "StreamFormat", "StreamingFileSink"]


class StreamFormat:
    """How a ``FileSource`` reads records from a file: ``text_line_format()`` (one record per line)."""

    def __init__(self, kind: str, charset_name: str) -> None:
        self.kind = kind
        self.charset_name = charset_name

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> "StreamFormat":
        """Each line of a file (without its line break) is a ``STRING`` record."""
        if codecs.lookup(charset_name).name != "utf-8":
            raise ValueError(f"StreamFormat.text_line_format: changeflow reads UTF-8 only, got {charset_name!r}")
        return StreamFormat("text_line", charset_name)


class BulkFormat:
    """PyFlink's bulk formats (Parquet, ORC, Avro readers): not supported by the DataStream FileSource."""


class FileSourceBuilder:
    """Builds a :class:`FileSource`: ``process_static_file_set()`` (bounded, the default) then ``build()``."""

    def __init__(self, stream_format: StreamFormat, paths: tuple[str, ...]) -> None:
        self._format = stream_format
        self._paths = paths
        self._monitor: Duration | None = None

    def monitor_continuously(self, discovery_interval: Duration) -> "FileSourceBuilder":
        raise NotImplementedError("FileSource.monitor_continuously (an unbounded file source) is not supported by "
                                  "changeflow's DataStream API; read a directory once with process_static_file_set()")

    def process_static_file_set(self) -> "FileSourceBuilder":
        self._monitor = None
        return self

    def set_file_enumerator(self, file_enumerator: Any) -> "FileSourceBuilder":
        raise NotImplementedError("FileSource.set_file_enumerator is not supported by changeflow")

    def set_split_assigner(self, split_assigner: Any) -> "FileSourceBuilder":
        raise NotImplementedError("FileSource.set_split_assigner is not supported by changeflow")

    def build(self) -> "FileSource":
        return FileSource(self._format, self._paths)


class FileSource(Source):
    """A bounded source of the lines of files (see the module docstring)."""

    def __init__(self, stream_format: StreamFormat, paths: tuple[str, ...]) -> None:
        self.stream_format = stream_format
        self.paths = paths

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        if not isinstance(stream_format, StreamFormat):
            raise TypeError(f"FileSource.for_record_stream_format takes a StreamFormat, got {stream_format!r}")
        if not paths or not all(isinstance(p, str) and p for p in paths):
            raise ValueError(f"FileSource.for_record_stream_format needs at least one path, got {paths!r}")
        return FileSourceBuilder(stream_format, tuple(paths))

    @staticmethod
    def for_bulk_file_format(bulk_format: Any, *paths: str) -> FileSourceBuilder:
        raise NotImplementedError("FileSource.for_bulk_file_format (bulk formats) is not supported by changeflow; "
                                  "use for_record_stream_format(StreamFormat.text_line_format(), ...)")

    def source_node(self, name: str) -> tuple[str, Any, Any]:
        return "files", list(self.paths), Types.STRING()


class _Unsupported:
    """A PyFlink name of this module that changeflow does not implement: importable, refused when used."""

    _what = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{self._what} is not supported by changeflow")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._what = f"file_system.{cls.__name__}"


def _refuse(what: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{what} is not supported by changeflow")
    return staticmethod(refused)


class FileEnumeratorProvider(_Unsupported):
    default_splittable_file_enumerator = _refuse("FileEnumeratorProvider.default_splittable_file_enumerator")
    default_non_splittable_file_enumerator = _refuse("FileEnumeratorProvider.default_non_splittable_file_enumerator")


class FileSplitAssignerProvider(_Unsupported):
    locality_aware_split_assigner = _refuse("FileSplitAssignerProvider.locality_aware_split_assigner")


class FileCompactStrategy(_Unsupported):
    builder = _refuse("FileCompactStrategy (file compaction)")


class FileCompactor(_Unsupported):
    concat_file_compactor = _refuse("FileCompactor (file compaction)")
    identical_file_compactor = _refuse("FileCompactor (file compaction)")


class StreamingFileSink(_Unsupported):
    """The legacy ``SinkFunction`` file sink: use :class:`FileSink` (``ds.sink_to``)."""

    for_row_format = _refuse("StreamingFileSink (the legacy file sink; use FileSink with sink_to)")
    for_bulk_format = _refuse("StreamingFileSink (the legacy file sink; use FileSink with sink_to)")
