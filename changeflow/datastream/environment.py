"""PyFlink's ``StreamExecutionEnvironment`` on Spark.

``get_execution_environment(configuration)`` takes Flink's keys
(``execution.runtime-mode``, ``parallelism.default``) and changeflow's
(``changeflow.state.buckets``, ``changeflow.source.rows-per-batch``,
``changeflow.spark.master``, ``changeflow.checkpoint-dir``); beyond PyFlink,
``spark_session=`` runs the jobs on an existing SparkSession.

FLIP-365 (which Flink never shipped): with ``execution.max-flush-interval`` set
(and optionally ``execution.flush.memory-buffer-only``), keyed operators whose
output is idempotent (keyed ``reduce``/``sum``/``min``/``max``/``min_by``/``max_by``,
a function whose ``is_output_idempotent()`` is True) buffer their latest record
per key in streaming mode; :meth:`StreamExecutionEnvironment.get_execution_plan`
shows which.

Runtime modes: STREAMING runs one Structured Streaming query per job (bounded
sources end it: ``availableNow``), BATCH runs Spark batch jobs, AUTOMATIC is
BATCH when every source of the job is bounded. In streaming mode a keyed
reduce emits its running value per input record; in batch mode one final
value per key.
"""

from __future__ import annotations

import datetime
import os
import time
from enum import Enum
from typing import Any, Iterable

from changeflow.common.configuration import Configuration
from changeflow.common.execution_config import ExecutionConfig
from changeflow.common.job_execution_result import JobExecutionResult
from changeflow.config.durations import format_duration
from changeflow.common.typeinfo import PickledBytesTypeInfo, Types, TypeInformation
from changeflow.plan.flush_policy import flush_policy
from changeflow.plan.optimizer import PlannerSettings
from changeflow.plan.boundedness import is_bounded
from changeflow.datastream import graph
from changeflow.datastream.cache import CacheRegistry, cache_nodes, check_batch
from changeflow.datastream.checkpoint_config import CheckpointConfig, CheckpointingMode
from changeflow.datastream.data_stream import DataStream
from changeflow.datastream.execution_plan import execution_plan
from changeflow.datastream.job_context import JobContext
from changeflow.datastream.pyflink_names import REFUSALS
from changeflow.datastream.sinks import CollectSink
from changeflow.datastream.stream_hints import check_buffer_timeout, check_max_parallelism
from changeflow.runtime.engine import Engine, spark_engine

__all__ = ["JobExecutionResult", "RuntimeExecutionMode", "StreamExecutionEnvironment"]


class RuntimeExecutionMode(Enum):
    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2


class StreamExecutionEnvironment:
    """Builds DataStream jobs and runs them on Spark."""

    def __init__(self, configuration: Configuration | None = None, spark_session: Any = None) -> None:
        self._config = ExecutionConfig(configuration)  # PyFlink's get_config(), over the job's configuration
        self._spark_session = spark_session  # the user's SparkSession, held opaquely for the engine
        self._engine_instance: Engine | None = None
        self._sinks: list[tuple[graph.Node, Any]] = []
        self._caches = CacheRegistry()  # DataStream.cache() results created by this environment's jobs
        mode = self._config.get("execution.runtime-mode")
        self._mode = RuntimeExecutionMode[str(mode)] if mode is not None else RuntimeExecutionMode.STREAMING
        self._buffer_timeout = 100  # ms, Flink's default
        self._local_parallelism = os.cpu_count() or 1  # Flink's default: the machine's cores

    @staticmethod
    def get_execution_environment(configuration: Configuration | None = None,
                                  spark_session: Any = None) -> "StreamExecutionEnvironment":
        return StreamExecutionEnvironment(configuration, spark_session)

    # --- settings -----------------------------------------------------------------------
    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode) -> "StreamExecutionEnvironment":
        if not isinstance(execution_mode, RuntimeExecutionMode):
            raise TypeError(f"set_runtime_mode() takes a RuntimeExecutionMode, got {execution_mode!r}")
        self._mode = execution_mode
        self._config.set("execution.runtime-mode", execution_mode.name)
        return self

    def set_parallelism(self, parallelism: int) -> "StreamExecutionEnvironment":
        """Flink's default parallelism; on Spark the shuffle partitions decide the actual parallelism."""
        self._config.set("parallelism.default", parallelism)
        return self

    def get_parallelism(self) -> int:
        return int(self._config.get("parallelism.default"))

    def get_config(self) -> ExecutionConfig:
        """PyFlink's ``ExecutionConfig``; in changeflow also the job's ``Configuration`` (any key)."""
        return self._config

    # --- checkpointing (:mod:`.checkpoint_config`: every micro-batch is a checkpoint) -----
    def enable_checkpointing(self, interval: int, mode: CheckpointingMode | None = None) \
            -> "StreamExecutionEnvironment":
        """Flink's checkpoint interval (ms) and mode, kept under Flink's keys; changeflow checkpoints every
        micro-batch whatever they say, with exactly-once results (:mod:`.checkpoint_config`)."""
        config = self.get_checkpoint_config().set_checkpoint_interval(interval)
        if mode is not None:
            config.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        return CheckpointConfig(self._config)

    def get_checkpoint_interval(self) -> int:
        return self.get_checkpoint_config().get_checkpoint_interval()

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return self.get_checkpoint_config().get_checkpointing_mode()

    get_checkpointing_consistency_mode = get_checkpointing_mode

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self.get_checkpoint_config().is_unaligned_checkpoints_enabled()

    def is_force_unaligned_checkpoints(self) -> bool:
        return self.get_checkpoint_config().is_force_unaligned_checkpoints()

    def enable_changelog_state_backend(self, enabled: bool) -> "StreamExecutionEnvironment":
        """Flink's changelog state backend switch (``state.changelog.enabled``): no effect on Spark's state."""
        self._config.set("state.changelog.enabled", bool(enabled))
        return self

    def is_changelog_state_backend_enabled(self) -> bool | None:
        value = self._config.get("state.changelog.enabled")
        return None if value is None else str(value).lower() == "true"

    def get_default_savepoint_directory(self) -> str | None:
        return None  # changeflow takes no savepoints (set_default_savepoint_directory is refused)

    # --- Flink's task-graph settings: kept under Flink's keys, no effect on results ---------
    def set_max_parallelism(self, max_parallelism: int) -> "StreamExecutionEnvironment":
        check_max_parallelism(max_parallelism)
        self._config.set("pipeline.max-parallelism", max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return int(self._config.get("pipeline.max-parallelism", "-1"))

    def set_buffer_timeout(self, timeout_millis: int) -> "StreamExecutionEnvironment":
        """Flink's network buffer timeout; Spark hands records on per micro-batch, not per buffer."""
        check_buffer_timeout(timeout_millis)
        self._buffer_timeout = timeout_millis
        return self

    def get_buffer_timeout(self) -> int:
        return self._buffer_timeout

    def disable_operator_chaining(self) -> "StreamExecutionEnvironment":
        self._config.set("pipeline.operator-chaining.enabled", False)
        return self

    def is_chaining_enabled(self) -> bool:
        return str(self._config.get("pipeline.operator-chaining.enabled", "true")).lower() == "true"

    def is_chaining_of_operators_with_different_max_parallelism_enabled(self) -> bool:
        return True

    def register_slot_sharing_group(self, slot_sharing_group: Any) -> "StreamExecutionEnvironment":
        return self  # Flink's slots are not Spark's executors: nothing to register

    def set_default_local_parallelism(self, parallelism: int) -> None:
        self._local_parallelism = parallelism

    def get_default_local_parallelism(self) -> int:
        return self._local_parallelism

    def add_jars(self, *jars_path: str) -> None:
        """Flink's connector and UDF jars (``pipeline.jars``): changeflow's connectors need none; a Java
        function from a jar is refused where a job uses it."""
        self._add_paths("pipeline.jars", jars_path)

    def add_classpaths(self, *classpaths: str) -> None:
        self._add_paths("pipeline.classpaths", classpaths)

    def _add_paths(self, key: str, paths: tuple[str, ...]) -> None:
        kept = self._config.get(key)
        self._config.set(key, ";".join(([str(kept)] if kept else []) + list(paths)))

    def __getattr__(self, name: str) -> Any:
        return REFUSALS.attribute("StreamExecutionEnvironment", name)

    def configure(self, configuration: Configuration) -> None:
        for key, value in configuration.to_dict().items():
            self._config.set_string(key, value)
        mode = self._config.get("execution.runtime-mode")
        if mode is not None:
            self._mode = RuntimeExecutionMode[str(mode)]

    # --- sources ------------------------------------------------------------------------
    def from_collection(self, collection: Iterable, type_info: TypeInformation | None = None) -> DataStream:
        """A bounded stream of ``collection``'s elements, converted to ``type_info`` (checked here)."""
        values = list(collection)
        if type_info is not None and not isinstance(type_info, PickledBytesTypeInfo):
            converted = []
            for v in values:
                try:
                    converted.append(type_info.from_value(v))
                except ValueError as error:
                    raise ValueError(f"from_collection: element {v!r}: {error}") from error
            values = converted
        node = graph.SourceNode("Collection Source", type_info or PickledBytesTypeInfo(),
                                kind="collection", payload=values)
        return DataStream(self, node)

    def read_text_file(self, file_path: str, charset_name: str = "UTF-8") -> DataStream:
        """A bounded stream of the lines of a text file (or of every file in a directory)."""
        if charset_name.upper().replace("-", "") != "UTF8":
            raise ValueError(f"read_text_file reads UTF-8 only, got charset {charset_name!r}")
        return DataStream(self, graph.SourceNode(f"Text Source({file_path})", Types.STRING(), kind="text",
                                                 payload=file_path))

    def from_source(self, source: Any, watermark_strategy: Any = None, source_name: str = "Source",
                    type_info: TypeInformation | None = None) -> DataStream:
        """A stream of a connector source's records, or of a Spark DataFrame's rows (beyond PyFlink).

        A source of :mod:`changeflow.datastream.connectors` (``FileSource``,
        ``NumberSequenceSource``) gives its records; a ``watermark_strategy`` with a
        timestamp assigner timestamps them (as ``assign_timestamps_and_watermarks``).
        A Spark DataFrame gives its rows as named ``Row`` records: a batch DataFrame is
        bounded; a streaming one is unbounded (STREAMING mode only, and its rows within
        one micro-batch have no defined order).
        """
        if callable(getattr(source, "source_node", None)):
            from changeflow.datastream.connectors.sources import connector_source
            stream = DataStream(self, connector_source(source, watermark_strategy, source_name, type_info,
                                                       JobContext(self._config)))
            # A strategy with a timestamp assigner timestamps the records; without one the source's
            # records keep having none, and its watermarks could not pass Long.MIN_VALUE (Flink's too).
            if getattr(watermark_strategy, "timestamp_assigner", None) is not None:
                stream = stream.assign_timestamps_and_watermarks(watermark_strategy)
            return stream
        self._engine().check_frame(source, "from_source()")
        return DataStream(self, graph.SourceNode(source_name, type_info or PickledBytesTypeInfo(),
                                                 kind="dataframe", payload=source))

    # --- execution ----------------------------------------------------------------------
    def execute(self, job_name: str | None = None) -> JobExecutionResult:
        """Runs every sink added since the last execution (``print``, ``sink_to``).

        The job is named by ``job_name``, else by ``pipeline.name``. With
        ``changeflow.checkpoint-dir`` set, a named streaming job keeps its checkpoint in
        ``<checkpoint-dir>/<name>`` and running it again resumes from there: its
        sources go on after the last committed micro-batch and its keyed state
        (reductions, process-function state, buffered flush output) is restored::

            conf.set_string("changeflow.checkpoint-dir", "/data/checkpoints")
            env.from_source(clicks).key_by(user).sum(1).print()
            env.execute("click-totals")   # again after a stop: continues where it stopped
        """
        sinks, self._sinks = self._sinks, []
        name = job_name or self._config.get("pipeline.name")
        started = time.monotonic()
        self._run(sinks, name)
        runtime_ms = int((time.monotonic() - started) * 1000)
        return JobExecutionResult(name or "Flink Streaming Job", net_runtime_ms=runtime_ms)

    def get_execution_plan(self) -> str:
        """The JSON plan of the sinks added since the last execution (Flink's shape, see :mod:`.execution_plan`).

        Operators that buffer their output under ``execution.max-flush-interval``
        (FLIP-365) carry an ``output_buffer`` entry saying why.
        """
        policy = flush_policy(self._config) if self._mode is not RuntimeExecutionMode.BATCH else None
        flushes = None
        if policy is not None and policy.memory_only:
            flushes = (f"latest record per key in memory only, flushed at the end of every micro-batch and "
                       f"whenever more than {policy.max_entries} keys are buffered")
        elif policy is not None:
            every = format_duration(datetime.timedelta(milliseconds=policy.interval_ms))
            flushes = f"latest record per key, flushed every {every}, on idle input and at end of input"
        settings = PlannerSettings(streaming=self._mode is not RuntimeExecutionMode.BATCH, flush=policy)
        return execution_plan(list(self._sinks), self.get_parallelism(), settings, flushes, self._caches.cached_ids())

    def close(self) -> None:
        """Drops the pending sinks and releases every cached intermediate result of this environment."""
        self._sinks = []
        self._caches.release_all()

    def _add_sink(self, node: graph.Node, sink: Any) -> None:
        self._sinks.append((node, sink))

    def _run_collect(self, node: graph.Node, job_name: str | None) -> list[Any]:
        # As in Flink, the job also runs the sinks added so far (executeAndCollect executes the environment).
        sink = CollectSink()
        pending, self._sinks = self._sinks, []
        self._run(pending + [(node, sink)])
        return sink.records

    def is_streaming(self, nodes: list[graph.Node]) -> bool:
        """Whether a job over ``nodes`` runs in streaming mode (AUTOMATIC: unless every source is bounded)."""
        if self._mode is RuntimeExecutionMode.AUTOMATIC:
            return any(not is_bounded(s) for n in nodes for s in graph.sources(n))
        return self._mode is RuntimeExecutionMode.STREAMING

    def _engine(self) -> Engine:
        """The engine running this environment's jobs (no Spark starts until a job needs it)."""
        if self._engine_instance is None:
            self._engine_instance = spark_engine(self._config, self._spark_session)
        return self._engine_instance

    def _run(self, outputs: list[tuple[graph.Node, Any]], job_name: str | None = None) -> None:
        if cache_nodes([n for n, _ in outputs]):  # before starting Spark: the mode may have changed since cache()
            check_batch(self, [n for n, _ in outputs])
        streaming = self.is_streaming([n for n, _ in outputs])
        # The context user functions' open() gets, with the job parameters (RuntimeContext.get_job_parameter).
        self._engine().run_datastream(outputs, streaming, job_name, self._caches, JobContext(self._config))

