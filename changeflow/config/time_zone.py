"""``table.local-time-zone``: Flink's validation of the value, and which values changeflow runs.

Flink 2.3 takes ``default`` (the JVM's zone), a Time Zone Database ID (``America/Los_Angeles``,
``UTC``, ``Etc/UTC``) or a fixed offset written ``GMT+08:00`` / ``GMT-3``; it refuses Java's
three-letter short IDs (``EST``, ``PST``), ``UTC+08:00``, ``+08:00``, ``Z`` and a misspelt case
(``utc``) with a ``ValidationException`` (checked with PyFlink 2.3). changeflow runs every query
with Spark's session zone at UTC and keeps TIMESTAMP_LTZ values as instants shown in UTC, so it
runs a session zone that is UTC at every instant (``UTC``, ``GMT``, ``Etc/UTC``, ``GMT+00:00``
...); another valid zone is refused, naming the key, until the session-zone semantics (display,
casts, window alignment in that zone) are implemented.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo

__all__ = ["check_local_time_zone"]

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
    """True when changeflow runs ``table.local-time-zone = value`` (``default`` or a zone that is UTC).

    False for a valid zone that changeflow does not run yet; ValueError (Flink's message) for a
    value Flink refuses.
    """
    zone = value.strip()
    if zone.lower() == "default":
        return True
    return _offset_minutes(zone) == 0
