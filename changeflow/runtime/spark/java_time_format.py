"""Flink's ``TO_TIMESTAMP(text, format)`` as Spark columns.

Flink 2.3 parses the whole text with ``java.time``'s ``DateTimeFormatter.ofPattern(format)`` (strict:
``MM`` is exactly two digits, ``yyyy`` four, ``SSS`` three; names case-sensitive; the SMART resolver,
which rejects a month 13 or an hour 24 and moves a day past the month's end back to its last day);
fields the format lacks default to 1970-01-01 00:00:00. When that fails it ignores the format and
reads the trimmed text as ``java.sql.Timestamp.valueOf`` (if it has a space: ``yyyy-[m]m-[d]d
h:m:s[.f]``, hours, minutes and seconds carried over leniently) or ``java.sql.Date.valueOf``
(``yyyy-[m]m-[d]d``, a day past the month's end carried over); NULL when that fails too. The result
keeps milliseconds.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeflow.runtime.spark.simple_date_format import MONTHS, epoch_day, pattern_tokens

_FIELDS = {"y": "year", "M": "month", "d": "day", "D": "day_of_year", "H": "hour", "k": "hour", "h": "hour12",
           "K": "hour12", "m": "minute", "s": "second", "S": "fraction", "a": "am_pm"}
# Spark's datetime-free fallbacks, on the trimmed text (Java's Timestamp.valueOf / Date.valueOf).
_TIMESTAMP = r"^(\d{4})-(\d{1,2})-(\d{1,2}) ([+-]?\d+):([+-]?\d+):([+-]?\d+)(?:\.(\d{1,9}))?$"
_DATE = r"^(\d{4})-(\d{1,2})-(\d{1,2})$"


def _compile(pattern: str) -> Tuple[str, Dict[str, Tuple[str, int, int]]]:
    """The full-text regular expression of ``pattern`` read strictly, and per field (its letter, count and
    group)."""
    parts: List[str] = ["^"]
    fields: Dict[str, Tuple[str, int, int]] = {}
    for letter, count in pattern_tokens(pattern, "TO_TIMESTAMP's format"):
        if not count:
            parts.append(letter if letter.isalnum() else "\\" + letter)
            continue
        name = _FIELDS[letter]
        if name in fields:
            raise NotImplementedError(f"TO_TIMESTAMP's format: {pattern!r} sets a field twice ({letter!r})")
        fields[name] = (letter, count, len(fields) + 1)
        if letter == "a":
            parts.append("(AM|PM)")
        elif letter == "M" and count >= 3:
            names = MONTHS if count >= 4 else tuple(m[:3] for m in MONTHS)
            parts.append("(" + "|".join(names) + ")")
        elif letter == "S":
            parts.append(f"(\\d{{{count}}})")
        elif letter == "y" and count == 2:
            parts.append("(\\d{2})")
        elif count == 1 or (letter == "D" and count < 3):
            parts.append("(\\d{1,19})" if letter != "D" else f"(\\d{{{count},3}})")
        else:
            parts.append(f"(\\d{{{count}}})")
    if ("hour" in fields and ("hour12" in fields or "am_pm" in fields)) or (("hour12" in fields) != (
            "am_pm" in fields)) or (
            "day_of_year" in fields and ({"month", "day"} & fields.keys())):
        raise NotImplementedError(f"TO_TIMESTAMP's format {pattern!r} mixes hour of day and hour of AM/PM, has one "
                                  "of h/K and a without the other, or day of year and month/day: not supported")
    return "".join(parts) + "$", fields


def _days(year: Column, month: Column, months: int) -> Column:
    """The number of days in the ``months`` months from ``month`` (1-12) of ``year``: arithmetic only, so a
    month out of range in a row that is not used raises nothing."""
    end = month - 1 + months
    return epoch_day(year + F.floor(end / 12).cast("long"), F.pmod(end, F.lit(12)) + 1, F.lit(1), julian=False) \
        - epoch_day(year, month, F.lit(1), julian=False)


def _micros(year: Column, month: Column, day: Column, hour: Column, minute: Column, second: Column,
            micros: Column) -> Column:
    return (epoch_day(year, month, day, julian=False) * 86_400 + hour * 3600 + minute * 60 + second) \
        * 1_000_000 + micros


def _formatted(text: Column, pattern: str) -> Tuple[Column, Column]:
    """(whether java.time reads ``text`` with ``pattern``, the epoch microseconds of the wall clock read)."""
    regex, fields = _compile(pattern)

    def get(name: str, default: int) -> Column:
        if name not in fields:
            return F.lit(default).cast("long")
        return F.regexp_extract(text, regex, fields[name][2]).try_cast("long")

    year = get("year", 1970)
    if "year" in fields and fields["year"][1] == 2:
        year = year + 2000   # java.time's two-digit year: 2000-2099
    if "month" in fields and fields["month"][1] >= 3:
        name = F.regexp_extract(text, regex, fields["month"][2])
        month = F.lit(None).cast("long")
        for i, m in enumerate(MONTHS):
            month = F.when(F.substring(name, 1, 3) == m[:3], F.lit(i + 1)).otherwise(month)
    else:
        month = get("month", 1)
    day = get("day", 1)
    hour = get("hour", 0)
    ok = (year >= 1) & month.between(1, 12) & day.between(1, 31) & get("minute", 0).between(0, 59) \
        & get("second", 0).between(0, 59)
    if "hour" in fields:
        letter = fields["hour"][0]
        ok = ok & (hour.between(1, 24) if letter == "k" else hour.between(0, 23))
        hour = F.when(hour == 24, 0).otherwise(hour)
    if "hour12" in fields:
        h12 = get("hour12", 0)
        ok = ok & (h12.between(1, 12) if fields["hour12"][0] == "h" else h12.between(0, 11))
        pm = F.regexp_extract(text, regex, fields["am_pm"][2]) == "PM" if "am_pm" in fields else F.lit(False)
        hour = F.pmod(h12, F.lit(12)) + F.when(pm, 12).otherwise(0)
    if "day_of_year" in fields:
        month, day = F.lit(1), get("day_of_year", 1)
        ok = ok & (day >= 1) & (day <= _days(year, F.lit(1), 12))
    else:
        day = F.least(day, _days(year, month, 1))   # SMART: a day past the month's end is its last day
    fraction = fields.get("fraction")
    micros = F.lit(0).cast("long")
    if fraction is not None:
        digits = F.rpad(F.regexp_extract(text, regex, fraction[2]), 3, "0").substr(1, 3)
        micros = digits.try_cast("long") * 1000   # TO_TIMESTAMP keeps milliseconds
    return text.rlike(regex) & ok, _micros(year, month, day, hour, get("minute", 0), get("second", 0), micros)


def _fallback(text: Column) -> Tuple[Column, Column]:
    """(whether Timestamp.valueOf / Date.valueOf read the trimmed ``text``, the epoch microseconds)."""
    trimmed = F.trim(text)
    spaced = F.instr(trimmed, " ") > 0

    def group(pattern: str, i: int) -> Column:
        return F.regexp_extract(trimmed, pattern, i).try_cast("long")

    def parts(pattern: str) -> Tuple[Column, Column, Column]:
        return group(pattern, 1), group(pattern, 2), group(pattern, 3)

    year, month, day = (F.when(spaced, a).otherwise(b) for a, b in zip(parts(_TIMESTAMP), parts(_DATE), strict=True))
    fraction = F.regexp_extract(trimmed, _TIMESTAMP, 7)
    millis = F.when(fraction == "", 0).otherwise(F.rpad(fraction, 3, "0").substr(1, 3).try_cast("long"))
    hms = [F.when(spaced, group(_TIMESTAMP, i)).otherwise(0) for i in (4, 5, 6)]
    ok = F.when(spaced, trimmed.rlike(_TIMESTAMP)).otherwise(trimmed.rlike(_DATE)) \
        & month.between(1, 12) & day.between(1, 31)
    # The deprecated Date(y, m, d, ...) constructor carries every field over (2024-02-30 is March 1).
    return ok, _micros(year, month, F.lit(1), F.lit(0), F.lit(0), F.lit(0), F.lit(0)) \
        + ((day - 1) * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2]) * 1_000_000 + millis * 1000


def to_timestamp(text: Column, pattern: str) -> Column:
    """Flink's ``TO_TIMESTAMP(text, pattern)`` (see the module): a TIMESTAMP of the wall clock read, or NULL."""
    formatted, formatted_micros = _formatted(text, pattern)
    fallback, fallback_micros = _fallback(text)
    micros = F.when(formatted, formatted_micros).when(fallback, fallback_micros)
    return F.timestamp_micros(micros)
