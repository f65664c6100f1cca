"""PyFlink's ``ExecutionConfig``: what ``StreamExecutionEnvironment.get_config()`` returns.

Each of PyFlink 2.3's methods reads or writes the Flink key behind it in Flink 2.x (where
``ExecutionConfig`` is a view of the job's configuration), with Flink's defaults and checks:

==================================================  =================================================
methods                                             key
==================================================  =================================================
``set/get_auto_watermark_interval`` (ms)            ``pipeline.auto-watermark-interval``
``set/get_parallelism``                             ``parallelism.default``
``set/get_max_parallelism``                         ``pipeline.max-parallelism``
``enable/disable/is_object_reuse(_enabled)``        ``pipeline.object-reuse``
``set/get_global_job_parameters`` (a dict)          ``pipeline.global-job-parameters``
``enable/disable/is_closure_cleaner(_enabled)``     ``pipeline.closure-cleaner-level``
``enable/disable_auto_generated_uids``              ``pipeline.auto-generate-uids``
``set/get_latency_tracking_interval`` (ms)          ``metrics.latency.interval``
``set/get_task_cancellation_interval/_timeout``     ``task.cancellation.interval``/``.timeout``
``set/is_use_snapshot_compression``                 ``execution.checkpointing.snapshot-compression``
``enable/disable_generic_types``, ``..._force_kryo``,  ``pipeline.generic-types``, ``pipeline.force-kryo``,
``..._force_avro``                                  ``pipeline.force-avro``
==================================================  =================================================

Beyond PyFlink, it is also the environment's :class:`~changeflow.common.configuration.Configuration`
(``set(key, value)``, ``get_string``, ...), so any key can be set through it.

What changeflow does with them: ``parallelism.default`` and ``pipeline.global-job-parameters``
(``RuntimeContext.get_job_parameter``) as Flink; a DataStream job emits its watermarks once per
micro-batch (the micro-batch is the period), so the watermark interval is read by SQL tables' watermark
assigners only; the serializer, closure-cleaner, UID, latency-tracking and cancellation settings have no
effect on Spark (changeflow pickles values; there are no Flink tasks to cancel), as with their keys.
The Kryo registries are empty (changeflow registers no Kryo types); PyFlink 2.3's own methods for
them, and for generic types, Kryo and Avro, fail (Flink 2.3's Java class lost them).

>>> config = ExecutionConfig()
>>> config.get_auto_watermark_interval(), config.get_max_parallelism(), config.is_object_reuse_enabled()
(200, -1, False)
>>> config.set_auto_watermark_interval(150).enable_object_reuse().get_string("pipeline.auto-watermark-interval", "")
'150 ms'
>>> config.set_global_job_parameters({"model": "m1", "threshold": 0.5}).get_global_job_parameters()
{'model': 'm1', 'threshold': '0.5'}
>>> config.set_parallelism(0)
Traceback (most recent call last):
...
ValueError: Parallelism must be at least one, or ExecutionConfig.PARALLELISM_DEFAULT (use system default).
"""

from __future__ import annotations

import datetime

from changeflow.common.configuration import Configuration
from changeflow.config.durations import format_duration, to_millis
from changeflow.config.job_parameters import GLOBAL_JOB_PARAMETERS, format_job_parameters, parse_job_parameters

__all__ = ["ExecutionConfig"]


def _text(ms: int) -> str:
    """A duration in ms as Flink writes it into the configuration (``7 s``, ``150 ms``)."""
    return format_duration(datetime.timedelta(milliseconds=int(ms)))


class ExecutionConfig(Configuration):
    """PyFlink's ``ExecutionConfig`` over the job's configuration (see the module docstring)."""

    PARALLELISM_DEFAULT = -1
    PARALLELISM_UNKNOWN = -2

    def share(self, configuration: Configuration) -> None:
        """Read and write ``configuration``'s keys from now on (what this held before is dropped): a stream
        environment shares its table environment's configuration, so PyFlink's calls on either reach the
        same keys, and what holds this object (a function's context factory) sees them too.

        >>> table_config, config = Configuration(), ExecutionConfig()
        >>> config.share(table_config)
        >>> table_config.get_string("pipeline.auto-watermark-interval", "")
        ''
        >>> _ = config.set_auto_watermark_interval(50)
        >>> table_config.get_string("pipeline.auto-watermark-interval", "")
        '50 ms'
        """
        self._values = configuration._values  # one store: a view, not a copy

    # --- values changeflow acts on -------------------------------------------------------------
    def set_auto_watermark_interval(self, interval: int) -> "ExecutionConfig":
        """The interval (ms) of the automatic watermark emission."""
        if interval < 0:
            raise ValueError("Auto watermark interval must not be negative.")
        self.set("pipeline.auto-watermark-interval", _text(interval))
        return self

    def get_auto_watermark_interval(self) -> int:
        return to_millis(self.get("pipeline.auto-watermark-interval"))

    def set_parallelism(self, parallelism: int) -> "ExecutionConfig":
        if parallelism < 1 and parallelism != self.PARALLELISM_DEFAULT:
            raise ValueError("Parallelism must be at least one, or ExecutionConfig.PARALLELISM_DEFAULT "
                             "(use system default).")
        self.set("parallelism.default", parallelism)
        return self

    def get_parallelism(self) -> int:
        return int(self.get("parallelism.default"))

    def set_max_parallelism(self, max_parallelism: int) -> "ExecutionConfig":
        if max_parallelism <= 0:
            raise ValueError("The maximum parallelism must be greater than 0.")
        self.set("pipeline.max-parallelism", max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return self.get_integer("pipeline.max-parallelism", -1)

    def set_global_job_parameters(self, global_job_parameters_dict: dict) -> "ExecutionConfig":
        """The job parameters ``RuntimeContext.get_job_parameter`` (and a UDF's ``FunctionContext``) read;
        values are kept as text, as PyFlink's ``str(value)``. Replaces the parameters set before."""
        parameters = {str(k): v if isinstance(v, str) else str(v) for k, v in global_job_parameters_dict.items()}
        self.set(GLOBAL_JOB_PARAMETERS, format_job_parameters(parameters))
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        return parse_job_parameters(self.get_string(GLOBAL_JOB_PARAMETERS, ""))

    # --- flags kept under their keys (no effect on Spark) -----------------------------------------
    def _flag(self, key: str, value: bool) -> "ExecutionConfig":
        self.set(key, "true" if value else "false")
        return self

    def enable_object_reuse(self) -> "ExecutionConfig":
        return self._flag("pipeline.object-reuse", True)

    def disable_object_reuse(self) -> "ExecutionConfig":
        return self._flag("pipeline.object-reuse", False)

    def is_object_reuse_enabled(self) -> bool:
        return self.get_boolean("pipeline.object-reuse", False)

    def enable_closure_cleaner(self) -> "ExecutionConfig":
        self.set("pipeline.closure-cleaner-level", "RECURSIVE")
        return self

    def disable_closure_cleaner(self) -> "ExecutionConfig":
        self.set("pipeline.closure-cleaner-level", "NONE")
        return self

    def is_closure_cleaner_enabled(self) -> bool:
        return self.get_string("pipeline.closure-cleaner-level", "RECURSIVE").upper() != "NONE"

    def enable_auto_generated_uids(self) -> "ExecutionConfig":
        return self._flag("pipeline.auto-generate-uids", True)

    def disable_auto_generated_uids(self) -> "ExecutionConfig":
        return self._flag("pipeline.auto-generate-uids", False)

    def has_auto_generated_uids_enabled(self) -> bool:
        return self.get_boolean("pipeline.auto-generate-uids", True)

    def enable_generic_types(self) -> "ExecutionConfig":
        return self._flag("pipeline.generic-types", True)

    def disable_generic_types(self) -> "ExecutionConfig":
        return self._flag("pipeline.generic-types", False)

    def has_generic_types_disabled(self) -> bool:
        return not self.get_boolean("pipeline.generic-types", True)

    def enable_force_kryo(self) -> "ExecutionConfig":
        return self._flag("pipeline.force-kryo", True)

    def disable_force_kryo(self) -> "ExecutionConfig":
        return self._flag("pipeline.force-kryo", False)

    def is_force_kryo_enabled(self) -> bool:
        return self.get_boolean("pipeline.force-kryo", False)

    def enable_force_avro(self) -> "ExecutionConfig":
        return self._flag("pipeline.force-avro", True)

    def disable_force_avro(self) -> "ExecutionConfig":
        return self._flag("pipeline.force-avro", False)

    def is_force_avro_enabled(self) -> bool:
        return self.get_boolean("pipeline.force-avro", False)

    def set_use_snapshot_compression(self, use_snapshot_compression: bool) -> "ExecutionConfig":
        return self._flag("execution.checkpointing.snapshot-compression", bool(use_snapshot_compression))

    def is_use_snapshot_compression(self) -> bool:
        return self.get_boolean("execution.checkpointing.snapshot-compression", False)

    # --- durations (ms) ------------------------------------------------------------------------
    def _set_ms(self, key: str, interval: int) -> "ExecutionConfig":
        self.set(key, _text(interval))
        return self

    def _get_ms(self, key: str, default_ms: int) -> int:
        text = self.get_string(key, "")
        return to_millis(text) if text else default_ms

    def set_latency_tracking_interval(self, interval: int) -> "ExecutionConfig":
        return self._set_ms("metrics.latency.interval", interval)

    def get_latency_tracking_interval(self) -> int:
        return self._get_ms("metrics.latency.interval", 0)

    def set_task_cancellation_interval(self, interval: int) -> "ExecutionConfig":
        return self._set_ms("task.cancellation.interval", interval)

    def get_task_cancellation_interval(self) -> int:
        return self._get_ms("task.cancellation.interval", 30_000)

    def set_task_cancellation_timeout(self, timeout: int) -> "ExecutionConfig":
        return self._set_ms("task.cancellation.timeout", timeout)

    def get_task_cancellation_timeout(self) -> int:
        return self._get_ms("task.cancellation.timeout", 180_000)

    # --- Kryo registries (changeflow registers no Kryo types) ----------------------------------
    def get_default_kryo_serializer_classes(self) -> dict[str, str]:
        return {}

    def get_registered_kryo_types(self) -> list[str]:
        return []

    def get_registered_pojo_types(self) -> list[str]:
        return []
