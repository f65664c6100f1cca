"""PyFlink's ``pyflink.common.time``: ``Time``, ``Duration`` and ``Instant``.

``Time`` is a number of milliseconds (what ``StateTtlConfig.new_builder`` takes);
``Duration`` is Java's ``java.time.Duration`` (seconds and nanoseconds; changeflow
keeps its total nanoseconds, as an exact int); ``Instant`` a point on the time
line in seconds and nanoseconds since the epoch.

>>> Time.seconds(1).to_milliseconds(), str(Time.minutes(2))
(1000, '120000 ms')
>>> Duration.of_seconds(90) == Duration.of_minutes(1).plus(Duration.of_seconds(30)), Duration.of_millis(1500)
(True, Duration.of_millis(1500))
>>> Instant.of_epoch_milli(1500), Instant.of_epoch_milli(-1).to_epoch_milli()
(Instant<1, 500000000>, -1)
"""

from __future__ import annotations

__all__ = ["Duration", "Instant", "Time"]

_NANOS_PER_MILLI = 1_000_000


class Duration:
    """A time-based amount of time (Java's ``Duration``), exact to the nanosecond."""

    def __init__(self, nanos: int) -> None:
        if not isinstance(nanos, int) or isinstance(nanos, bool):
            raise TypeError(f"a Duration is a whole number of nanoseconds, got {nanos!r}")
        self._nanos = nanos

    @staticmethod
    def of_days(days: int) -> "Duration":
        return Duration.of_hours(days * 24)

    @staticmethod
    def of_hours(hours: int) -> "Duration":
        return Duration.of_minutes(hours * 60)

    @staticmethod
    def of_minutes(minutes: int) -> "Duration":
        return Duration.of_seconds(minutes * 60)

    @staticmethod
    def of_seconds(seconds: int) -> "Duration":
        return Duration(seconds * 1_000_000_000)

    @staticmethod
    def of_millis(millis: int) -> "Duration":
        return Duration(millis * _NANOS_PER_MILLI)

    @staticmethod
    def of_nanos(nanos: int) -> "Duration":
        return Duration(nanos)

    def to_millis(self) -> int:
        """The length in whole milliseconds (Java's ``toMillis``: floored, as its seconds are)."""
        return self._nanos // _NANOS_PER_MILLI

    def to_nanos(self) -> int:
        return self._nanos

    def plus(self, other: "Duration") -> "Duration":
        return Duration(self._nanos + other._nanos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and self._nanos == other._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __repr__(self) -> str:
        if self._nanos % _NANOS_PER_MILLI == 0:
            return f"Duration.of_millis({self._nanos // _NANOS_PER_MILLI})"
        return f"Duration.of_nanos({self._nanos})"


class Instant:
    """An instant on the time line: ``seconds`` since the epoch and ``nanos`` (0..999,999,999) within the second."""

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds = seconds
        self.nanos = nanos

    def to_epoch_milli(self) -> int:
        """Milliseconds since the epoch (floored, as Java's ``toEpochMilli``)."""
        return self.seconds * 1000 + self.nanos // _NANOS_PER_MILLI

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> "Instant":
        return Instant(epoch_milli // 1000, (epoch_milli % 1000) * _NANOS_PER_MILLI)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and (self.seconds, self.nanos) == (other.seconds, other.nanos)

    def __hash__(self) -> int:
        return hash((self.seconds, self.nanos))

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"


class Time:
    """A time interval in milliseconds (Flink's ``Time``; what ``StateTtlConfig`` takes)."""

    def __init__(self, milliseconds: int) -> None:
        self._milliseconds = milliseconds

    def to_milliseconds(self) -> int:
        return self._milliseconds

    @staticmethod
    def milliseconds(milliseconds: int) -> "Time":
        return Time(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> "Time":
        return Time(seconds * 1000)

    @staticmethod
    def minutes(minutes: int) -> "Time":
        return Time.seconds(minutes * 60)

    @staticmethod
    def hours(hours: int) -> "Time":
        return Time.minutes(hours * 60)

    @staticmethod
    def days(days: int) -> "Time":
        return Time.hours(days * 24)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and self._milliseconds == other._milliseconds

    def __hash__(self) -> int:
        return hash(self._milliseconds)

    def __str__(self) -> str:
        return f"{self._milliseconds} ms"

    __repr__ = __str__
