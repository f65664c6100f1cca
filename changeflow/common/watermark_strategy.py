"""PyFlink's ``WatermarkStrategy``, as far as changeflow has use for it (no event time yet).

changeflow has no event time (no record timestamps, no watermarks, no event-time
windows or timers), so a strategy only says what the source would do.
``no_watermarks()`` is what every changeflow source does; ``for_monotonous_timestamps()``
and ``for_bounded_out_of_orderness(...)`` are accepted by ``from_source`` because
without a timestamp assigner and without any event-time operator (changeflow has
none) their watermarks are unobservable. A ``TimestampAssigner``, idleness or
watermark alignment exist only for event time: they are refused, naming themselves.

>>> WatermarkStrategy.for_monotonous_timestamps()
WatermarkStrategy.for_monotonous_timestamps()
>>> WatermarkStrategy.no_watermarks().with_timestamp_assigner(None)
Traceback (most recent call last):
...
NotImplementedError: WatermarkStrategy.with_timestamp_assigner(): event time is not supported by changeflow yet
"""

from __future__ import annotations

from typing import Any

from changeflow.common.time import Duration

__all__ = ["TimestampAssigner", "WatermarkStrategy"]


def _no_event_time(what: str) -> NotImplementedError:
    return NotImplementedError(f"WatermarkStrategy.{what}: event time is not supported by changeflow yet")


class WatermarkStrategy:
    """How a source would generate watermarks; see the module docstring for what changeflow does with it."""

    def __init__(self, kind: str, max_out_of_orderness: Duration | None = None) -> None:
        self.kind = kind
        self.max_out_of_orderness = max_out_of_orderness

    @staticmethod
    def for_monotonous_timestamps() -> "WatermarkStrategy":
        return WatermarkStrategy("for_monotonous_timestamps")

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> "WatermarkStrategy":
        if not isinstance(max_out_of_orderness, Duration):
            raise TypeError(f"for_bounded_out_of_orderness takes a Duration, got {max_out_of_orderness!r}")
        return WatermarkStrategy("for_bounded_out_of_orderness", max_out_of_orderness)

    @staticmethod
    def no_watermarks() -> "WatermarkStrategy":
        return WatermarkStrategy("no_watermarks")

    def with_timestamp_assigner(self, timestamp_assigner: Any) -> "WatermarkStrategy":
        raise _no_event_time("with_timestamp_assigner()")

    def with_idleness(self, idle_timeout: Duration) -> "WatermarkStrategy":
        raise _no_event_time("with_idleness()")

    def with_watermark_alignment(self, watermark_group: str, max_allowed_watermark_drift: Duration,
                                 update_interval: Duration | None = None) -> "WatermarkStrategy":
        raise _no_event_time("with_watermark_alignment()")

    def __repr__(self) -> str:
        arg = repr(self.max_out_of_orderness) if self.max_out_of_orderness is not None else ""
        return f"WatermarkStrategy.{self.kind}({arg})"


class TimestampAssigner:
    """PyFlink's interface for extracting a record's event timestamp (event time is not supported yet)."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError
