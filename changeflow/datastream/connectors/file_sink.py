"""PyFlink's row-format ``FileSink``: each record as a line of text (its ``Encoder``) in part files.

::

    FileSink.for_row_format(base_path, Encoder.simple_string_encoder()) \\
        .with_output_file_config(OutputFileConfig.builder().with_part_prefix("p").with_part_suffix(".txt").build()) \\
        .with_rolling_policy(RollingPolicy.default_rolling_policy()) \\
        .build()

Files go to ``<base_path>/<bucket>/``, the bucket given by the bucket assigner:
Flink's default ``date_time_bucket_assigner()`` (``yyyy-MM-dd--HH`` of the
processing time, in the machine's time zone) or ``base_path_bucket_assigner()``
(straight into ``base_path``). A record is written as ``simple_string_encoder``
writes it: Java's ``toString`` of the record as PyFlink passes it to Java (a
``Types.TUPLE`` record as ``(a,1)``, see :func:`changeflow.datastream.sinks.to_java_string`)
and a newline.

Part files: one per bucket per micro-batch (batch mode: one per bucket), named
``<prefix>-<writer>-<batch><suffix>``, where ``writer`` is the job's id (kept in
its checkpoint) and ``batch`` the micro-batch id; it is written under a hidden
name (``.<name>.inprogress``) and renamed, so a reader sees whole files only
(Flink's in-progress files are hidden the same way). A restarted streaming job
that runs a micro-batch again replaces that batch's files instead of adding
copies: nothing written twice, nothing lost (the micro-batch is delivered
before Spark commits it).

Where changeflow differs from Flink: files roll at every micro-batch; the
rolling policy's part size, rollover and inactivity intervals are accepted and
have no further effect (Flink rolls row-format files by them and commits them
on checkpoints); file names carry the writer id and micro-batch id, not
Flink's subtask UUID and counter; bulk formats and compaction are refused.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from changeflow.common.serialization import Encoder
from changeflow.connectors import filestore
from changeflow.connectors.sink_job import SinkJob
from changeflow.datastream.connectors.base import Sink
from changeflow.datastream.sinks import to_java_string

__all__ = ["BucketAssigner", "DefaultRollingPolicy", "FileSink", "OnCheckpointRollingPolicy", "OutputFileConfig",
           "RollingPolicy"]

# Java's DateTimeFormatter letters changeflow translates (the ones bucket formats use).
_JAVA_DATE = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
_JAVA_TOKEN = re.compile(r"yyyy|yy|MM|dd|HH|mm|ss|[A-Za-z]")


def _strftime_pattern(java: str) -> str:
    """A Java date pattern (``yyyy-MM-dd--HH``) as strftime's; other letters are refused.

    >>> _strftime_pattern("yyyy-MM-dd--HH")
    '%Y-%m-%d--%H'
    """
    def token(m: re.Match) -> str:
        if m.group(0) not in _JAVA_DATE:
            raise ValueError(f"BucketAssigner.date_time_bucket_assigner: pattern letter {m.group(0)!r} of "
                             f"{java!r} is not supported (yyyy, yy, MM, dd, HH, mm, ss are)")
        return _JAVA_DATE[m.group(0)]
    return _JAVA_TOKEN.sub(token, java.replace("%", "%%"))


class BucketAssigner:
    """Which directory under the base path a record goes to."""

    def __init__(self, pattern: str | None, timezone_id: str | None = None) -> None:
        self.pattern = pattern  # a strftime pattern, or None: the base path itself
        self.timezone_id = timezone_id

    @staticmethod
    def base_path_bucket_assigner() -> "BucketAssigner":
        return BucketAssigner(None)

    @staticmethod
    def date_time_bucket_assigner(format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None) \
            -> "BucketAssigner":
        return BucketAssigner(_strftime_pattern(format_str), timezone_id)

    def bucket(self, now: datetime.datetime) -> str:
        if self.pattern is None:
            return ""
        if self.timezone_id is not None:
            from zoneinfo import ZoneInfo
            now = now.astimezone(ZoneInfo(self.timezone_id))
        return now.strftime(self.pattern)


class RollingPolicy:
    """When a part file rolls (changeflow: at every micro-batch, see the module docstring)."""

    @staticmethod
    def default_rolling_policy(part_size: int = 1024 * 1024 * 128, rollover_interval: int = 60 * 1000,
                               inactivity_interval: int = 60 * 1000) -> "DefaultRollingPolicy":
        return DefaultRollingPolicy(part_size, rollover_interval, inactivity_interval)

    @staticmethod
    def on_checkpoint_rolling_policy() -> "OnCheckpointRollingPolicy":
        return OnCheckpointRollingPolicy()


class DefaultRollingPolicy(RollingPolicy):
    def __init__(self, part_size: int, rollover_interval: int, inactivity_interval: int) -> None:
        for name, value in (("part_size", part_size), ("rollover_interval", rollover_interval),
                            ("inactivity_interval", inactivity_interval)):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"RollingPolicy.default_rolling_policy: {name} must be a positive int, got {value!r}")
        self.part_size = part_size
        self.rollover_interval = rollover_interval
        self.inactivity_interval = inactivity_interval


class OnCheckpointRollingPolicy(RollingPolicy):
    pass


class OutputFileConfig:
    """The prefix and suffix of part file names (``part`` and none by default)."""

    def __init__(self, part_prefix: str, part_suffix: str) -> None:
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix

    @staticmethod
    def builder() -> "OutputFileConfig.OutputFileConfigBuilder":
        return OutputFileConfig.OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self.part_prefix

    def get_part_suffix(self) -> str:
        return self.part_suffix

    class OutputFileConfigBuilder:
        def __init__(self) -> None:
            self.part_prefix = "part"
            self.part_suffix = ""

        def with_part_prefix(self, prefix: str) -> "OutputFileConfig.OutputFileConfigBuilder":
            self.part_prefix = prefix
            return self

        def with_part_suffix(self, suffix: str) -> "OutputFileConfig.OutputFileConfigBuilder":
            self.part_suffix = suffix
            return self

        def build(self) -> "OutputFileConfig":
            return OutputFileConfig(self.part_prefix, self.part_suffix)


class FileSink(Sink):
    """Writes records as lines of part files under a base path (see the module docstring)."""

    def __init__(self, base_path: str, encoder: Encoder, bucket_assigner: BucketAssigner,
                 output_file_config: OutputFileConfig, rolling_policy: RollingPolicy) -> None:
        self.base_path = base_path
        self.encoder = encoder
        self.bucket_assigner = bucket_assigner
        self.output_file_config = output_file_config
        self.rolling_policy = rolling_policy
        self.type_info: Any = None
        self._job: SinkJob | None = None
        self._next_batch = 0  # batch mode / direct calls: a counter instead of micro-batch ids
        self._earlier: dict[str, list[str]] | None = None  # a resumed job's part files, by name

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> "FileSink.RowFormatBuilder":
        if not isinstance(encoder, Encoder):
            raise TypeError(f"FileSink.for_row_format takes an Encoder (Encoder.simple_string_encoder()), "
                            f"got {encoder!r}")
        return FileSink.RowFormatBuilder(base_path, encoder)

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: Any) -> Any:
        raise NotImplementedError("FileSink.for_bulk_format (bulk formats: Parquet, ORC, Avro) is not supported by "
                                  "changeflow; use for_row_format(path, Encoder.simple_string_encoder())")

    class RowFormatBuilder:
        def __init__(self, base_path: str, encoder: Encoder) -> None:
            if not isinstance(base_path, str) or not base_path:
                raise ValueError(f"FileSink.for_row_format needs a base path, got {base_path!r}")
            self._args: dict[str, Any] = {"base_path": base_path, "encoder": encoder,
                                          "bucket_assigner": BucketAssigner.date_time_bucket_assigner(),
                                          "output_file_config": OutputFileConfig("part", ""),
                                          "rolling_policy": RollingPolicy.default_rolling_policy()}

        def with_bucket_check_interval(self, interval: int) -> "FileSink.RowFormatBuilder":
            return self  # the interval at which Flink checks the rolling policy's timers: no effect here

        def with_bucket_assigner(self, bucket_assigner: BucketAssigner) -> "FileSink.RowFormatBuilder":
            return self._set("bucket_assigner", bucket_assigner, BucketAssigner)

        def with_output_file_config(self, output_file_config: OutputFileConfig) -> "FileSink.RowFormatBuilder":
            return self._set("output_file_config", output_file_config, OutputFileConfig)

        def with_rolling_policy(self, rolling_policy: RollingPolicy) -> "FileSink.RowFormatBuilder":
            return self._set("rolling_policy", rolling_policy, RollingPolicy)

        def enable_compact(self, strategy: Any, compactor: Any) -> "FileSink.RowFormatBuilder":
            raise NotImplementedError("FileSink.enable_compact (file compaction) is not supported by changeflow")

        def disable_compact(self) -> "FileSink.RowFormatBuilder":
            return self

        def _set(self, name: str, value: Any, kind: type) -> "FileSink.RowFormatBuilder":
            if not isinstance(value, kind):
                raise TypeError(f"FileSink.with_{name} takes a {kind.__name__}, got {value!r}")
            self._args[name] = value
            return self

        def build(self) -> "FileSink":
            return FileSink(**self._args)

    # --- the sink contract (changeflow.datastream.sinks; runtime: open_job / write_batch) ---
    def bind_type(self, type_info: Any) -> None:
        """The type of the stream written (``sink_to`` passes it): the encoder writes its Java ``toString``."""
        self.type_info = type_info

    def open_job(self, job: SinkJob) -> None:
        """The job writing this sink: its writer id names the part files, stable across restarts."""
        self._job = job
        self._earlier = None

    def write(self, records: list[Any]) -> None:
        self.write_batch(records, None)

    def write_batch(self, records: list[Any], batch_id: int | None) -> None:
        """Writes one micro-batch (``batch_id``; None: the next number) as one part file per bucket."""
        if self._job is None:
            self._job = SinkJob.fresh()
        if batch_id is None:
            batch_id, self._next_batch = self._next_batch, self._next_batch + 1
        config = self.output_file_config
        name = f"{config.part_prefix}-{self._job.writer}-{batch_id}{config.part_suffix}"
        store = filestore.store_for(self.base_path)
        # A micro-batch run again after a restart: its first attempt's files go (it may now
        # fall into another bucket, the clock having moved on).
        for earlier in self._files_named(name):
            store.delete(earlier)
        if not records:
            return
        encoder = self.encoder.with_to_string(lambda r: to_java_string(r, self.type_info))
        data = b"".join(encoder.encode(r) for r in records)
        bucket = self.bucket_assigner.bucket(datetime.datetime.now().astimezone())
        directory = filestore.join(self.base_path, bucket) if bucket else self.base_path
        store.makedirs(directory)
        hidden = filestore.join(directory, f".{name}.inprogress")
        store.write_bytes(hidden, data)
        store.replace(hidden, filestore.join(directory, name))

    def _files_named(self, name: str) -> list[str]:
        """This job's part files called ``name`` written before a restart (a streaming job's, found once)."""
        assert self._job is not None
        if self._earlier is None:
            self._earlier = {}
            store = filestore.store_for(self.base_path)
            if self._job.directory is not None and store.exists(self.base_path):  # a streaming job's
                mine = f"{self.output_file_config.part_prefix}-{self._job.writer}-"
                for path in filestore.walk_files(self.base_path, lambda n: not n.startswith("."), str, str):
                    if filestore.basename(path).startswith(mine):
                        self._earlier.setdefault(filestore.basename(path), []).append(path)
        return self._earlier.pop(name, [])
