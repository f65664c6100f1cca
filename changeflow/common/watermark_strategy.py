"""PyFlink's ``WatermarkStrategy`` and ``TimestampAssigner``: event time for the DataStream API.

A strategy says how a stream's records get their event timestamps and how
watermarks follow them (``DataStream.assign_timestamps_and_watermarks`` or
``env.from_source(source, strategy, name)``), with Flink's semantics:

- a record's timestamp is ``timestamp_assigner.extract_timestamp(value, record_timestamp)``
  (``record_timestamp`` is the timestamp the record had, ``Long.MIN_VALUE`` for none);
- ``for_bounded_out_of_orderness(d)``: watermark = largest timestamp seen - d - 1 ms;
- ``for_monotonous_timestamps()``: watermark = largest timestamp seen - 1 ms;
- ``no_watermarks()``: timestamps only; event time advances only at the end of input.

Flink emits the watermark periodically (every 200 ms of processing time);
changeflow emits it once per micro-batch, after the micro-batch's records
(see ``changeflow.kernels.keyed.timestamps``).

``with_idleness`` is accepted and has no effect: Flink marks a source split
idle when it emits nothing for the timeout, so that it stops holding the
watermark back; a changeflow stream's watermark is the largest any partition of
a micro-batch saw (no partition holds it back), so there is nothing to release.
Watermark alignment (``with_watermark_alignment``) pauses source splits that
run ahead, which a micro-batch source cannot do: it is refused.

>>> WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(5)).watermark_for(100)
94
>>> WatermarkStrategy.for_monotonous_timestamps().watermark_for(100)
99
>>> WatermarkStrategy.no_watermarks().watermark_for(100) is None
True
>>> WatermarkStrategy.no_watermarks().with_watermark_alignment("g", Duration.of_seconds(1))
Traceback (most recent call last):
...
NotImplementedError: WatermarkStrategy.with_watermark_alignment(): watermark alignment is not supported by changeflow
"""

from __future__ import annotations

from typing import Any, Callable

from changeflow.common.time import Duration

__all__ = ["TimestampAssigner", "WatermarkStrategy"]

#: Flink's ``Long.MIN_VALUE``: the ``record_timestamp`` of a record without a timestamp.
NO_TIMESTAMP = -(2**63)


class TimestampAssigner:
    """PyFlink's interface for extracting a record's event timestamp (ms since the epoch)."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError


class WatermarkStrategy:
    """How a stream's records get event timestamps and its watermarks (see the module docstring)."""

    def __init__(self, kind: str, max_out_of_orderness: Duration | None = None,
                 timestamp_assigner: Any = None, idle_timeout: Duration | None = None) -> None:
        self.kind = kind
        self.max_out_of_orderness = max_out_of_orderness
        self.timestamp_assigner = timestamp_assigner
        self.idle_timeout = idle_timeout

    @staticmethod
    def for_monotonous_timestamps() -> "WatermarkStrategy":
        """Timestamps ascend: the watermark is the largest timestamp seen minus 1 ms."""
        return WatermarkStrategy("for_monotonous_timestamps")

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> "WatermarkStrategy":
        """Records are at most ``max_out_of_orderness`` late: the watermark is the largest timestamp
        seen minus it, minus 1 ms."""
        if not isinstance(max_out_of_orderness, Duration):
            raise TypeError(f"for_bounded_out_of_orderness takes a Duration, got {max_out_of_orderness!r}")
        if max_out_of_orderness.to_millis() < 0:
            raise ValueError(f"max_out_of_orderness must not be negative, got {max_out_of_orderness!r}")
        return WatermarkStrategy("for_bounded_out_of_orderness", max_out_of_orderness)

    @staticmethod
    def no_watermarks() -> "WatermarkStrategy":
        """No watermarks: event-time windows and timers fire only at the end of input."""
        return WatermarkStrategy("no_watermarks")

    def with_timestamp_assigner(self, timestamp_assigner: Any) -> "WatermarkStrategy":
        """This strategy, the records' timestamps taken by ``timestamp_assigner.extract_timestamp(value,
        record_timestamp)`` (a ``TimestampAssigner``, or a callable of the same two arguments)."""
        if not isinstance(timestamp_assigner, TimestampAssigner) and not callable(timestamp_assigner):
            raise TypeError("with_timestamp_assigner() takes a TimestampAssigner or a callable "
                            f"(value, record_timestamp), got {type(timestamp_assigner).__name__}")
        return WatermarkStrategy(self.kind, self.max_out_of_orderness, timestamp_assigner, self.idle_timeout)

    def with_idleness(self, idle_timeout: Duration) -> "WatermarkStrategy":
        """Accepted, without effect (see the module docstring: no partition holds the watermark back)."""
        if not isinstance(idle_timeout, Duration):
            raise TypeError(f"with_idleness takes a Duration, got {idle_timeout!r}")
        return WatermarkStrategy(self.kind, self.max_out_of_orderness, self.timestamp_assigner, idle_timeout)

    def with_watermark_alignment(self, watermark_group: str, max_allowed_watermark_drift: Duration,
                                 update_interval: Duration | None = None) -> "WatermarkStrategy":
        raise NotImplementedError("WatermarkStrategy.with_watermark_alignment(): watermark alignment is not "
                                  "supported by changeflow")

    # --- what the runtime asks (changeflow.kernels.keyed.timestamps) -------------------------
    @property
    def emits_watermarks(self) -> bool:
        return self.kind != "no_watermarks"

    def watermark_for(self, max_timestamp: int) -> int | None:
        """The watermark after records whose largest timestamp is ``max_timestamp`` (None: no watermarks)."""
        if self.kind == "no_watermarks":
            return None
        delay = self.max_out_of_orderness.to_millis() if self.max_out_of_orderness is not None else 0
        return max_timestamp - delay - 1

    def extractor(self) -> Callable[[Any, int], int] | None:
        """``(value, record_timestamp) -> timestamp``, or None when the records keep their timestamps."""
        assigner = self.timestamp_assigner
        if assigner is None:
            return None
        extract = getattr(assigner, "extract_timestamp", None)
        chosen: Any = extract if callable(extract) else assigner
        return chosen

    def __repr__(self) -> str:
        arg = repr(self.max_out_of_orderness) if self.max_out_of_orderness is not None else ""
        text = f"WatermarkStrategy.{self.kind}({arg})"
        if self.timestamp_assigner is not None:
            text += f".with_timestamp_assigner({type(self.timestamp_assigner).__name__})"
        return text
