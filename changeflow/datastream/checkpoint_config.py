"""PyFlink's checkpointing settings: ``enable_checkpointing`` and ``CheckpointConfig``.

On Spark every micro-batch of a streaming job is a checkpoint: its source offsets, its
operators' state and its sinks' commit are written together before the next one starts, so
a job restarted from its checkpoint (``changeflow.checkpoint-dir``) loses and repeats nothing,
in every mode. Flink's checkpointing settings (interval, mode, timeout, pauses, unaligned
checkpoints, retention) therefore change no result of a changeflow job: they are kept, under
Flink's own keys (``execution.checkpointing.*``), in the environment's configuration, read back
by the getters as Flink gives them, and checked as Flink checks them. An ``AT_LEAST_ONCE`` job
gets exactly-once results, which it allows.

>>> from changeflow.common import Configuration
>>> config = CheckpointConfig(Configuration())
>>> config.is_checkpointing_enabled(), config.get_checkpoint_interval()
(False, -1)
>>> config.set_checkpoint_interval(5000).get_checkpoint_interval(), config.get_checkpointing_mode()
(5000, <CheckpointingMode.EXACTLY_ONCE: 0>)
>>> config.set_checkpoint_interval(5)
Traceback (most recent call last):
    ...
ValueError: Checkpoint interval must be larger than or equal to 10 ms
"""

from __future__ import annotations

import datetime
from enum import Enum

from changeflow.common.configuration import Configuration
from changeflow.common.time import Duration
from changeflow.config.durations import format_duration, to_millis

__all__ = ["CheckpointConfig", "CheckpointingMode", "ExternalizedCheckpointRetention"]

_PREFIX = "execution.checkpointing."
_MIN_INTERVAL_MS = 10  # Flink's MINIMAL_CHECKPOINT_TIME


class CheckpointingMode(Enum):
    """Flink's checkpointing guarantee; changeflow's micro-batch checkpoints give exactly-once in both."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


class ExternalizedCheckpointRetention(Enum):
    """What Flink does with a job's checkpoint when it is cancelled (changeflow always keeps it)."""

    DELETE_ON_CANCELLATION = 0
    RETAIN_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2


class CheckpointConfig:
    """Flink's checkpointing settings of one environment, kept in its configuration (see the module)."""

    def __init__(self, configuration: Configuration) -> None:
        self._config = configuration

    # --- interval and mode ----------------------------------------------------------------
    def is_checkpointing_enabled(self) -> bool:
        return self.get_checkpoint_interval() > 0

    def get_checkpoint_interval(self) -> int:
        """The interval in milliseconds, -1 while checkpointing is not enabled (as Flink)."""
        return self._millis("interval", -1)

    def set_checkpoint_interval(self, checkpoint_interval: int) -> "CheckpointConfig":
        if checkpoint_interval < _MIN_INTERVAL_MS:
            raise ValueError(f"Checkpoint interval must be larger than or equal to {_MIN_INTERVAL_MS} ms")
        return self._set_millis("interval", checkpoint_interval)

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """EXACTLY_ONCE once checkpointing is enabled (unless set); AT_LEAST_ONCE before, as Flink 2.3 reports."""
        mode = self._config.get(_PREFIX + "mode")
        if mode is not None:
            return CheckpointingMode[str(mode)]
        return CheckpointingMode.EXACTLY_ONCE if self.is_checkpointing_enabled() else CheckpointingMode.AT_LEAST_ONCE

    def set_checkpointing_mode(self, checkpointing_mode: CheckpointingMode) -> "CheckpointConfig":
        if not isinstance(checkpointing_mode, CheckpointingMode):
            raise TypeError(f"set_checkpointing_mode() takes a CheckpointingMode, got {checkpointing_mode!r}")
        self._config.set(_PREFIX + "mode", checkpointing_mode.name)
        return self

    # --- timing ---------------------------------------------------------------------------
    def get_checkpoint_timeout(self) -> int:
        return self._millis("timeout", 600_000)

    def set_checkpoint_timeout(self, checkpoint_timeout: int) -> "CheckpointConfig":
        _at_least(checkpoint_timeout, _MIN_INTERVAL_MS, "Checkpoint timeout")
        return self._set_millis("timeout", checkpoint_timeout)

    def get_min_pause_between_checkpoints(self) -> int:
        return self._millis("min-pause", 0)

    def set_min_pause_between_checkpoints(self, min_pause_between_checkpoints: int) -> "CheckpointConfig":
        _at_least(min_pause_between_checkpoints, 0, "Pause value")
        return self._set_millis("min-pause", min_pause_between_checkpoints)

    def get_max_concurrent_checkpoints(self) -> int:
        return self._int("max-concurrent-checkpoints", 1)

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> "CheckpointConfig":
        _at_least(max_concurrent_checkpoints, 1, "The maximum number of concurrent attempts")
        return self._set("max-concurrent-checkpoints", max_concurrent_checkpoints)

    # --- failures -------------------------------------------------------------------------
    def get_tolerable_checkpoint_failure_number(self) -> int:
        return self._int("tolerable-failed-checkpoints", 0)

    def set_tolerable_checkpoint_failure_number(self, tolerable_checkpoint_failure_number: int) -> "CheckpointConfig":
        _at_least(tolerable_checkpoint_failure_number, 0, "The tolerable failure checkpoint number")
        return self._set("tolerable-failed-checkpoints", tolerable_checkpoint_failure_number)

    def is_fail_on_checkpointing_errors(self) -> bool:
        return self.get_tolerable_checkpoint_failure_number() == 0

    def set_fail_on_checkpointing_errors(self, fail_on_checkpointing_errors: bool) -> "CheckpointConfig":
        # Flink maps the deprecated flag onto the tolerable number: 0, or "never fail" (Integer.MAX_VALUE).
        return self.set_tolerable_checkpoint_failure_number(0 if fail_on_checkpointing_errors else 2**31 - 1)

    # --- retention ------------------------------------------------------------------------
    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention:
        value = self._config.get(_PREFIX + "externalized-checkpoint-retention")
        return ExternalizedCheckpointRetention[str(value or "NO_EXTERNALIZED_CHECKPOINTS")]

    def set_externalized_checkpoint_retention(self, retention_mode: ExternalizedCheckpointRetention) \
            -> "CheckpointConfig":
        if not isinstance(retention_mode, ExternalizedCheckpointRetention):
            raise TypeError(f"set_externalized_checkpoint_retention() takes an ExternalizedCheckpointRetention, "
                            f"got {retention_mode!r}")
        return self._set("externalized-checkpoint-retention", retention_mode.name)

    def is_externalized_checkpoints_enabled(self) -> bool:
        retention = self.get_externalized_checkpoint_retention()
        return retention is not ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS

    # --- unaligned checkpoints (Spark's barriers are its micro-batch ends: nothing to align) ---
    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self._bool("unaligned.enabled")

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> "CheckpointConfig":
        return self._set("unaligned.enabled", bool(enabled))

    def disable_unaligned_checkpoints(self) -> "CheckpointConfig":
        return self.enable_unaligned_checkpoints(False)

    def is_force_unaligned_checkpoints(self) -> bool:
        return self._bool("unaligned.forced")

    def set_force_unaligned_checkpoints(self, force_unaligned_checkpoints: bool = True) -> "CheckpointConfig":
        return self._set("unaligned.forced", bool(force_unaligned_checkpoints))

    def get_aligned_checkpoint_timeout(self) -> Duration:
        return Duration.of_millis(self._millis("aligned-checkpoint-timeout", 0))

    def set_aligned_checkpoint_timeout(self, aligned_checkpoint_timeout: Duration) -> "CheckpointConfig":
        return self._set_millis("aligned-checkpoint-timeout", aligned_checkpoint_timeout.to_millis())

    get_alignment_timeout = get_aligned_checkpoint_timeout  # Flink's deprecated names
    set_alignment_timeout = set_aligned_checkpoint_timeout

    # --- storage ----------------------------------------------------------------------------
    def _set(self, key: str, value: object) -> "CheckpointConfig":
        self._config.set(_PREFIX + key, value)
        return self

    def _set_millis(self, key: str, millis: int) -> "CheckpointConfig":
        return self._set(key, format_duration(datetime.timedelta(milliseconds=millis)))

    def _millis(self, key: str, default: int) -> int:
        value = self._config.get(_PREFIX + key)
        return default if value is None else to_millis(value)

    def _int(self, key: str, default: int) -> int:
        value = self._config.get(_PREFIX + key)
        return default if value is None else int(value)

    def _bool(self, key: str) -> bool:
        return str(self._config.get(_PREFIX + key, "false")).lower() == "true"


def _at_least(value: int, least: int, what: str) -> None:
    if value < least:
        raise ValueError(f"{what} must be at least {least}, got {value}")
