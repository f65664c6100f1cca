"""A query's TIMESTAMP_LTZ results in the session time zone (``table.local-time-zone``).

A runtime hands a TIMESTAMP_LTZ value over as the instant (a naive datetime in UTC, or an
aware one). Flink shows such a value in the session zone (``print()``, the SQL client); under a
zone other than UTC changeflow hands it to the program as an aware ``datetime`` in that zone, so
its fields are the wall clock Flink shows and it still names one instant (a naive wall clock
would repeat an hour where daylight saving time ends). Under UTC the values stay naive UTC, as
before. A TIMESTAMP_LTZ inside a ROW, ARRAY, MAP or MULTISET is converted too.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from typing import Any

from changeflow.common.change import Change
from changeflow.common.types import DataType
from changeflow.config.time_zone import tzinfo_of
from changeflow.plan.time_zone import ZoneNotSupported, non_utc
from changeflow.runtime.changes import LiveChanges, QueryRun

__all__ = ["shown_in_zone"]

_Convert = Callable[[Any], Any]


def shown_in_zone(run: QueryRun, schema: tuple[tuple[str, DataType], ...], zone: str | None) -> QueryRun:
    """``run`` with its TIMESTAMP_LTZ values as aware datetimes in ``zone`` (``run`` itself under UTC)."""
    zone = non_utc(zone)
    if zone is None:
        return run
    converters = [_converter(t, zone) for _, t in schema]
    if not any(converters):
        return run
    row = _row_converter(converters)
    if run.live is not None:
        return QueryRun(live=_ZonedLive(run.live, row))
    return QueryRun([row(change) for change in run.changes])


def _row_converter(converters: list[_Convert | None]) -> Callable[[Change], Change]:
    def convert(change: Change) -> Change:
        values = tuple(v if f is None or v is None else f(v) for f, v in zip(converters, change.values, strict=True))
        return Change(change.kind, values)
    return convert


def _converter(t: DataType, zone: str) -> _Convert | None:
    """How to convert a (non-NULL) value of ``t``; None when ``t`` is no TIMESTAMP_LTZ."""
    if t.root == "TIMESTAMP_LTZ":
        info = tzinfo_of(zone)

        def instant(v: datetime.datetime) -> datetime.datetime:
            return (v if v.tzinfo is not None else v.replace(tzinfo=datetime.timezone.utc)).astimezone(info)
        return instant
    if _holds_ltz(t):
        raise ZoneNotSupported(f"A result column of type {t} (a TIMESTAMP_LTZ inside a {t.root})", zone)
    return None


def _holds_ltz(t: DataType) -> bool:
    return t.root == "TIMESTAMP_LTZ" or any(_holds_ltz(p) for p in _nested(t))


def _nested(t: DataType) -> list[DataType]:
    if t.root == "ROW":
        return [ft for _, ft in t.params]
    return [p for p in t.params if isinstance(p, DataType)]


class _ZonedLive:
    """A live query's changes, converted as they are read."""

    def __init__(self, live: LiveChanges, convert: Callable[[Change], Change]) -> None:
        self._live, self._convert = live, convert

    def changes(self) -> Iterator[Change]:
        return (self._convert(change) for change in self._live.changes())

    def stop(self) -> None:
        self._live.stop()
