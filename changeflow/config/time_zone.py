"""``table.local-time-zone``: Flink's validation of the value, and which values changeflow runs.

Flink 2.3 takes ``default`` (the JVM's zone), a Time Zone Database ID (``America/Los_Angeles``,
``UTC``, ``Etc/UTC``) or a fixed offset written ``GMT+08:00`` / ``GMT-3``; it refuses Java's
three-letter short IDs (``EST``, ``PST``), ``UTC+08:00``, ``+08:00``, ``Z`` and a misspelt case
(``utc``) with a ``ValidationException`` (checked with PyFlink 2.3). changeflow accepts every value Flink accepts;
``default`` is UTC (the JVM's zone in Flink; changeflow runs its queries with Spark's session zone
at UTC whatever the machine's). A zone other than UTC is applied to the plan by
:mod:`changeflow.plan.time_zone`, which refuses by name what it does not compute in that zone yet.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo

__all__ = ["check_local_time_zone", "is_utc", "tzinfo_of"]

# Java's ZoneId.SHORT_IDS: Flink refuses them (ambiguous abbreviations).
_SHORT_IDS = frozenset(["ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT",
                        "EST", "HST", "IET", "IST", "JST", "MIT", "MST", "NET", "NST", "PLT", "PNT", "PRT", "PST",
                        "SST", "VST"])
_GMT_OFFSET = re.compile(r"GMT([+-])(\d{1,2})(?::?(\d{2}))?")
_INVALID = ("Invalid time zone. The value should be a Time Zone Database (TZDB) ID such as "
            "'America/Los_Angeles' to include daylight saving time. Fixed offsets are supported using "
            "'GMT-03:00' or 'GMT+03:00'. Or use 'UTC' without time zone and daylight saving time.")


def _offset_minutes(zone: str) -> int | None:
    """The fixed offset of ``zone`` in minutes when it is one at every instant, else None; ValueError if invalid."""
    if zone == "GMT" or zone == "UTC":
        return 0
    match = _GMT_OFFSET.fullmatch(zone)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise ValueError(_INVALID)
        return (hours * 60 + minutes) * (-1 if sign == "-" else 1)
    if zone in _SHORT_IDS:
        raise ValueError(_INVALID)
    try:
        info = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(_INVALID) from None
    # Sample the zone's offset over the years a job's data lives in (DST rules and historic changes).
    offsets = {info.utcoffset(datetime.datetime(year, month, 1)) for year in range(1900, 2101, 3)
               for month in (1, 7)}
    if len(offsets) != 1:
        return None
    (offset,) = offsets
    return int(offset.total_seconds() // 60) if offset is not None else None


def check_local_time_zone(value: str) -> bool:
    """True for a ``table.local-time-zone`` value Flink accepts; ValueError (Flink's message) for one it refuses."""
    zone = value.strip()
    if zone.lower() != "default":
        _offset_minutes(zone)
    return True


def is_utc(zone: str) -> bool:
    """Whether the valid zone ``zone`` is UTC at every instant (``UTC``, ``Etc/UTC``, ``GMT+00:00``, ...)."""
    return _offset_minutes(zone.strip()) == 0


def tzinfo_of(zone: str) -> datetime.tzinfo:
    """The Python zone of a valid ``table.local-time-zone`` value other than ``default``."""
    zone = zone.strip()
    minutes = _offset_minutes(zone) if _GMT_OFFSET.fullmatch(zone) else None
    if minutes is not None:
        return datetime.timezone(datetime.timedelta(minutes=minutes), zone)
    return zoneinfo.ZoneInfo(zone)
