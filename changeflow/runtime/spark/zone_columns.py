"""The session time zone's conversions (:mod:`changeflow.plan.time_zone`) as Spark Columns.

changeflow's queries run with Spark's session zone at UTC (:mod:`.query_settings`): a
TIMESTAMP_LTZ is a Spark TIMESTAMP holding the instant, a TIMESTAMP a TIMESTAMP_NTZ holding the
wall clock. The zone comes as a literal argument of each call, never from the session.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeflow.expressions import Call, Literal

__all__ = ["ZONE_COLUMNS"]


def _zone(expr: Call) -> str:
    zone = expr.args[-1]
    assert isinstance(zone, Literal) and isinstance(zone.value, str), expr  # written by plan/time_zone.py
    return zone.value


def _ltz_to_local(expr: Call, args: list[Column]) -> Column:
    # from_utc_timestamp reads the instant's UTC wall clock (the session zone) as UTC and gives the
    # instant whose UTC wall clock is the wall clock in the zone; NTZ keeps that wall clock.
    return F.from_utc_timestamp(args[0], _zone(expr)).cast("timestamp_ntz")


def _local_to_ltz(expr: Call, args: list[Column]) -> Column:
    # Spark resolves the wall clock with java.time's atZone, as Flink's CAST does: forward by the gap
    # in a daylight-saving gap, the earlier offset in an overlap.
    return F.to_utc_timestamp(args[0].cast("timestamp"), _zone(expr))


# An offset change lies at least this far from the next one in every zone of the TZDB (used to read the
# offset after an overlap).
_AFTER_SECONDS = 3 * 3600


def _local_seconds_to_epoch(expr: Call, args: list[Column]) -> Column:
    """Epoch seconds of a wall clock given as its seconds since 1970-01-01 00:00 (what Spark's
    UNIX_TIMESTAMP gives under the session zone UTC). Flink parses UNIX_TIMESTAMP's text with
    java.util.TimeZone, which takes the later (standard-time) offset in an overlap, where java.time
    takes the earlier one: the later reading is used when it gives the same wall clock."""
    zone, local = _zone(expr), args[0]
    earlier = F.unix_seconds(F.to_utc_timestamp(F.timestamp_seconds(local), zone))
    after = earlier + _AFTER_SECONDS
    offset_after = F.unix_seconds(F.from_utc_timestamp(F.timestamp_seconds(after), zone)) - after
    later = local - offset_after
    same_wall = F.unix_seconds(F.from_utc_timestamp(F.timestamp_seconds(later), zone)) == local
    # Long.MIN_VALUE is UNIX_TIMESTAMP's "could not parse" and no wall clock: kept as it is, as Flink's.
    return F.when(local == F.lit(-(2**63)), local).when(same_wall & (later > earlier), later).otherwise(earlier)


ZONE_COLUMNS = {"ltz_to_local": _ltz_to_local, "local_to_ltz": _local_to_ltz,
                "local_seconds_to_epoch": _local_seconds_to_epoch}
