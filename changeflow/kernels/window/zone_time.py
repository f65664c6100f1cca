"""Window bounds in a session time zone: windows over a TIMESTAMP_LTZ aligned to the zone's wall clock.

Flink 2.3 assigns a window over a TIMESTAMP_LTZ time attribute on the row's *local*
milliseconds (its wall clock in ``table.local-time-zone`` counted as if it were UTC, Flink's
``TimeWindowUtil.toUtcTimestampMills``): a 1-day TUMBLE in Asia/Shanghai is a Shanghai day, and
``window_start``/``window_end`` are those wall clocks (TIMESTAMP). Two instants follow from a
window's end, checked with PyFlink 2.3 (conformance/sql_ltz_window_cases.py):

* when it fires (:meth:`WindowClock.fire_at`): when the watermark reaches the instant of its end -
  1 ms, read as Flink's ``toEpochMillsForTimer`` reads it in a zone with daylight saving time:
  an end - 1 ms inside a spring gap fires at the gap's first instant (the hour it starts), one
  inside an autumn overlap at its second occurrence (so both occurrences of the repeated hour
  count in the window);
* its ``window_time`` (:meth:`WindowClock.window_time`): the instant of end - 1 ms as
  ``java.time``'s ``atZone`` gives it (forward by the gap in a gap, the earlier offset in an
  overlap), Flink's ``toEpochMills``.

Every window kernel goes through one :class:`WindowClock`; with no zone (a TIMESTAMP attribute, or
UTC) it is the identity on times and end - 1 ms, with no conversion on the way.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable

import numpy as np

from changeflow.config.time_zone import tzinfo_of

__all__ = ["WindowClock"]

_HOUR_MS = 3_600_000
_EPOCH = datetime.datetime(1970, 1, 1)
_LIMIT_MS = 253_402_214_400_000   # 9999-12-31 00:00 UTC: a day inside the years a datetime holds


class WindowClock:
    """The time axis of a window operator: UTC (``zone`` None) or a session zone's wall clock.

    >>> clock = WindowClock("America/Los_Angeles")
    >>> gap = 1772964000000   # 2026-03-08 10:00 UTC: 02:00 PST becomes 03:00 PDT
    >>> wall = clock.local(np.array([gap - 1]))[0]   # 01:59:59.999 PST
    >>> int(wall) - (gap - 1) == -8 * 3_600_000
    True
    >>> int(clock.fire_at(np.array([wall + 1 + 30 * 60_000]))[0]) == gap   # a window ending 02:30: fires at 10:00Z
    True
    >>> int(clock.window_time(np.array([wall + 1 + 30 * 60_000]))[0]) == gap + 30 * 60_000 - 1   # 03:29:59.999 PDT
    True
    >>> WindowClock(None).fire_at(np.array([1000])).tolist()
    [999]
    """

    def __init__(self, zone: str | None) -> None:
        self.zone = zone
        self._info = tzinfo_of(zone) if zone is not None else None
        self._daylight = zone is not None and _uses_daylight_time(self._info)

    @property
    def utc(self) -> bool:
        return self._info is None

    def local(self, instants: np.ndarray) -> np.ndarray:
        """Epoch milliseconds as the zone's wall clock counted in milliseconds (a window's time axis)."""
        if self._info is None:
            return instants
        info = self._info
        return _per_value(instants, lambda ms: ms + _offset_ms(info, _utc(ms)), shift=0)

    def fire_at(self, ends: np.ndarray) -> np.ndarray:
        """The instants (ms) at which windows ending at ``ends`` (their time axis) fire: the watermark
        closes a window once it is at or past this."""
        if self._info is None:
            return ends - 1
        return _per_value(ends, self._timer, shift=-1)

    def window_time(self, ends: np.ndarray) -> np.ndarray:
        """The ``window_time`` instants (ms) of windows ending at ``ends``: their end - 1 ms as an instant."""
        if self._info is None:
            return ends - 1
        info = self._info
        return _per_value(ends, lambda end: _instant(info, end - 1), shift=-1)

    def _timer(self, end: int) -> int:
        info, last = self._info, end - 1
        assert info is not None
        first = _instant(info, last)
        if not self._daylight:
            return first
        # As Flink's toEpochMillsForTimer: the wall clock an hour later tells a gap (the same instant)
        # from an overlap (more than an hour later).
        later = _instant(info, last + _HOUR_MS)
        if later == first:
            return first - int(math.fmod(first, _HOUR_MS))   # Java's %, truncating toward zero
        if later - first > _HOUR_MS:
            return first + _HOUR_MS
        return first


def _per_value(values: np.ndarray, convert: Callable[[int], int], shift: int) -> np.ndarray:
    """``convert`` applied to each distinct value of ``values`` (window ends repeat over many rows). A value
    beyond the years a datetime holds is a flag (a kernel's "no window pending", the largest watermark), not a
    time: it is shifted by ``shift`` as on the UTC path, as Flink passes Long.MAX_VALUE through."""
    values = np.asarray(values, dtype=np.int64)
    if not len(values):
        return values
    distinct, inverse = np.unique(values, return_inverse=True)
    out = [convert(int(v)) if -_LIMIT_MS < v < _LIMIT_MS else int(v) + shift for v in distinct]
    return np.asarray(out, dtype=np.int64)[inverse.reshape(values.shape)]


def _utc(ms: int) -> datetime.datetime:
    return (_EPOCH + datetime.timedelta(milliseconds=ms)).replace(tzinfo=datetime.timezone.utc)


def _offset_ms(info: datetime.tzinfo, moment: datetime.datetime) -> int:
    offset = moment.astimezone(info).utcoffset()
    return int(offset.total_seconds() * 1000) if offset is not None else 0


def _instant(info: datetime.tzinfo, wall_ms: int) -> int:
    """The instant of a wall clock in the zone as java.time's ``atZone``: a time in a gap moves forward by
    the gap (Python's fold=0 reads it with the offset before the change, the same instant), one in an
    overlap takes the earlier offset (fold=0)."""
    wall = (_EPOCH + datetime.timedelta(milliseconds=wall_ms)).replace(tzinfo=info, fold=0)
    offset = wall.utcoffset()
    return wall_ms - (int(offset.total_seconds() * 1000) if offset is not None else 0)


def _uses_daylight_time(info: datetime.tzinfo | None) -> bool:
    """Whether the zone observes daylight saving time this year (Java's ``TimeZone.useDaylightTime``,
    which Flink's toEpochMillsForTimer asks): its offsets in January and July differ."""
    if info is None:
        return False
    year = datetime.date.today().year
    offsets = {datetime.datetime(year, month, 1, tzinfo=info).utcoffset() for month in (1, 4, 7, 10)}
    return len(offsets) > 1
