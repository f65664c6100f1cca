"""PyFlink's ``StateTtlConfig``: time-to-live of a keyed function's state.

Built as in PyFlink::

    config = (StateTtlConfig.new_builder(Time.seconds(1))
              .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
              .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
              .disable_cleanup_in_background()
              .build())
    descriptor.enable_time_to_live(config)

The rules (processing time, stamp per value / list element / map entry,
expiry on access) are in :mod:`changeflow.kernels.keyed.ttl`. The cleanup
strategies are kept for ``get_cleanup_strategies()`` and have no effect:
changeflow cleans up on access only.

>>> StateTtlConfig.new_builder(Time.seconds(1)).update_ttl_on_read_and_write().build()
... # doctest: +NORMALIZE_WHITESPACE
StateTtlConfig<update_type=UpdateType.OnReadAndWrite, state_visibility=StateVisibility.NeverReturnExpired,
ttl_time_characteristic=TtlTimeCharacteristic.ProcessingTime, ttl=1000 ms>
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from changeflow.common.time import Duration, Time

__all__ = ["StateTtlConfig"]


class StateTtlConfig:
    """How long keyed state lives after its last write (or read) and whether expired state may be seen."""

    class UpdateType(Enum):
        """When the last-access stamp is renewed (``Disabled``: the state has no TTL)."""
        Disabled = 0
        OnCreateAndWrite = 1
        OnReadAndWrite = 2

    class StateVisibility(Enum):
        """Whether a read may return an expired value not yet cleaned up."""
        ReturnExpiredIfNotCleanedUp = 0
        NeverReturnExpired = 1

    class TtlTimeCharacteristic(Enum):
        """The time TTL is measured in: processing time only (as in Flink)."""
        ProcessingTime = 0

    def __init__(self, update_type: "StateTtlConfig.UpdateType", state_visibility: "StateTtlConfig.StateVisibility",
                 ttl_time_characteristic: "StateTtlConfig.TtlTimeCharacteristic", ttl: Time,
                 cleanup_strategies: "StateTtlConfig.CleanupStrategies") -> None:
        if not isinstance(ttl, Time):
            raise TypeError(f"StateTtlConfig: the ttl is a Time (Time.seconds(1), ...), got {ttl!r}")
        if ttl.to_milliseconds() <= 0:
            raise ValueError(f"StateTtlConfig: TTL must be positive, got {ttl}")
        self._update_type = update_type
        self._state_visibility = state_visibility
        self._ttl_time_characteristic = ttl_time_characteristic
        self._ttl = ttl
        self._cleanup_strategies = cleanup_strategies

    @staticmethod
    def new_builder(ttl: Time) -> "StateTtlConfig.Builder":
        return StateTtlConfig.Builder(ttl)

    def get_update_type(self) -> "StateTtlConfig.UpdateType":
        return self._update_type

    def get_state_visibility(self) -> "StateTtlConfig.StateVisibility":
        return self._state_visibility

    def get_ttl(self) -> Time:
        return self._ttl

    def get_ttl_time_characteristic(self) -> "StateTtlConfig.TtlTimeCharacteristic":
        return self._ttl_time_characteristic

    def is_enabled(self) -> bool:
        return self._update_type is not StateTtlConfig.UpdateType.Disabled

    def get_cleanup_strategies(self) -> "StateTtlConfig.CleanupStrategies":
        return self._cleanup_strategies

    def __repr__(self) -> str:
        return (f"StateTtlConfig<update_type={self._update_type}, state_visibility={self._state_visibility}, "
                f"ttl_time_characteristic={self._ttl_time_characteristic}, ttl={self._ttl}>")

    class Builder:
        """Builds a :class:`StateTtlConfig` (defaults: OnCreateAndWrite, NeverReturnExpired, processing time)."""

        def __init__(self, ttl: Time) -> None:
            self._ttl = ttl
            self._update_type = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._state_visibility = StateTtlConfig.StateVisibility.NeverReturnExpired
            self._ttl_time_characteristic = StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
            self._is_cleanup_in_background = True
            self._strategies: dict[Any, Any] = {}

        def set_update_type(self, update_type: "StateTtlConfig.UpdateType") -> "StateTtlConfig.Builder":
            if not isinstance(update_type, StateTtlConfig.UpdateType):
                raise TypeError(f"set_update_type takes a StateTtlConfig.UpdateType, got {update_type!r}")
            self._update_type = update_type
            return self

        def update_ttl_on_create_and_write(self) -> "StateTtlConfig.Builder":
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> "StateTtlConfig.Builder":
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(self, state_visibility: "StateTtlConfig.StateVisibility") -> "StateTtlConfig.Builder":
            if not isinstance(state_visibility, StateTtlConfig.StateVisibility):
                raise TypeError(f"set_state_visibility takes a StateTtlConfig.StateVisibility, "
                                f"got {state_visibility!r}")
            self._state_visibility = state_visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> "StateTtlConfig.Builder":
            return self.set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

        def never_return_expired(self) -> "StateTtlConfig.Builder":
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl_time_characteristic(self, ttl_time_characteristic: "StateTtlConfig.TtlTimeCharacteristic") \
                -> "StateTtlConfig.Builder":
            if ttl_time_characteristic is not StateTtlConfig.TtlTimeCharacteristic.ProcessingTime:
                raise ValueError(f"StateTtlConfig: only processing time is supported, got {ttl_time_characteristic!r}")
            self._ttl_time_characteristic = ttl_time_characteristic
            return self

        def use_processing_time(self) -> "StateTtlConfig.Builder":
            return self.set_ttl_time_characteristic(StateTtlConfig.TtlTimeCharacteristic.ProcessingTime)

        # Cleanup strategies are recorded (get_cleanup_strategies) and have no effect: changeflow
        # removes an expired value when its key is next accessed (kernels.keyed.ttl).
        def cleanup_full_snapshot(self) -> "StateTtlConfig.Builder":
            self._strategies["FULL_STATE_SCAN_SNAPSHOT"] = None
            return self

        def cleanup_incrementally(self, cleanup_size: int, run_cleanup_for_every_record: bool) \
                -> "StateTtlConfig.Builder":
            self._strategies["INCREMENTAL_CLEANUP"] = (cleanup_size, run_cleanup_for_every_record)
            return self

        def cleanup_in_rocksdb_compact_filter(self, query_time_after_num_entries: int,
                                              periodic_compaction_time: Duration | None = None) \
                -> "StateTtlConfig.Builder":
            self._strategies["ROCKSDB_COMPACTION_FILTER"] = (query_time_after_num_entries, periodic_compaction_time)
            return self

        def disable_cleanup_in_background(self) -> "StateTtlConfig.Builder":
            self._is_cleanup_in_background = False
            return self

        def set_ttl(self, ttl: Time) -> "StateTtlConfig.Builder":
            self._ttl = ttl
            return self

        def build(self) -> "StateTtlConfig":
            return StateTtlConfig(self._update_type, self._state_visibility, self._ttl_time_characteristic,
                                  self._ttl, StateTtlConfig.CleanupStrategies(dict(self._strategies),
                                                                              self._is_cleanup_in_background))

    class CleanupStrategies:
        """The cleanup strategies a config names (kept for inspection; changeflow cleans up on access)."""

        def __init__(self, strategies: dict, is_cleanup_in_background: bool) -> None:
            self._strategies = strategies
            self._is_cleanup_in_background = is_cleanup_in_background

        def is_cleanup_in_background(self) -> bool:
            return self._is_cleanup_in_background

        def in_full_snapshot(self) -> bool:
            return "FULL_STATE_SCAN_SNAPSHOT" in self._strategies
