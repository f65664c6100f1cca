"""Java's lenient ``SimpleDateFormat`` parsing as Spark columns: Flink's ``UNIX_TIMESTAMP(text[, format])``
and ``TO_DATE(text, format)``.

Flink 2.3 parses these texts with ``SimpleDateFormat.parse(text)``: it reads the pattern's fields from
the start of the text and ignores whatever follows them (``UNIX_TIMESTAMP('2024-01-01 00:00:00',
'yyyy-MM-dd')`` is 1704067200), fails only when a field or literal of the pattern is missing (then
UNIX_TIMESTAMP is Long.MIN_VALUE), and is lenient: a field may be out of range and carries over
(``2024-13-45`` is 2025-02-14), may have any number of digits and a minus sign, and spaces and tabs
before a field are skipped. Dates before 1582-10-15 are Julian (``GregorianCalendar``'s cutover).

The pattern (a literal) is compiled once into a regular expression anchored at the text's start, one
or a few groups per field; Spark's JVM extracts the groups and computes the instant, so no row goes to Python.
Pattern letters of other fields (time zones, weeks, day names, eras) are refused, naming the letter.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Dict, List, Tuple

from pyspark.sql import Column
from pyspark.sql import functions as F

LONG_MIN = -(2**63)

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
# Numeric fields, and the text fields read here (a month of three letters or more, the AM/PM marker).
_NUMERIC = set("yMdDHkKhmsS")
_SUPPORTED = _NUMERIC | {"a"}
_MILLIS = {"H": 3_600_000, "k": 3_600_000, "K": 3_600_000, "h": 3_600_000, "m": 60_000, "s": 1000, "S": 1}
# 1582-10-15, the first Gregorian day of Java's default GregorianCalendar, in days since 1970-01-01.
_GREGORIAN_CUTOVER_DAY = -141427


@dataclass(frozen=True)
class Field:
    """One pattern field: its letter, its count and its groups in the compiled expression (one matches,
    the others are empty)."""

    letter: str
    count: int
    groups: Tuple[int, ...]

    @property
    def numeric(self) -> bool:
        return self.letter in _NUMERIC and not (self.letter == "M" and self.count >= 3)


def pattern_tokens(pattern: str, what: str) -> List[Tuple[str, int]]:
    """(letter, count) for each field and (character, 0) for each literal character, as Java reads a
    pattern: a run of one ASCII letter is a field, '...' quotes literal text, '' is a quote."""
    tokens: List[Tuple[str, int]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            if pattern[i + 1:i + 2] == "'":
                tokens.append(("'", 0))
                i += 2
                continue
            end = i + 1
            while True:
                end = pattern.find("'", end)
                if end < 0:
                    raise ValueError(f"{what}: unterminated quote in {pattern!r}")
                if pattern[end + 1:end + 2] != "'":
                    break
                end += 2
            tokens.extend((ch, 0) for ch in pattern[i + 1:end].replace("''", "'"))
            i = end + 1
        elif c.isascii() and c.isalpha():
            run = i
            while run < len(pattern) and pattern[run] == c:
                run += 1
            if c not in _SUPPORTED:
                raise NotImplementedError(f"{what}: the pattern letter {c!r} ({pattern!r}) is not supported; "
                                          f"supported: {''.join(sorted(_SUPPORTED))} and quoted text")
            tokens.append((c, run - i))
            i = run
        else:
            tokens.append((c, 0))
            i += 1
    return tokens


def _abutting(count: int) -> str:
    """A numeric field followed by another: Java reads the number within the next ``count`` characters,
    the spaces it skips first included, and fails unless ``count`` characters remain. One alternative
    (and group) per number of leading spaces."""
    alternatives = []
    for spaces in range(count):
        width = count - spaces
        number = f"\\d{{1,{width}}}+" + (f"|-\\d{{1,{width - 1}}}+" if width > 1 else "")
        alternatives.append(f"[ \\t]{{{spaces}}}(?![ \\t])({number})")
    return f"(?=[\\s\\S]{{{count}}})(?:" + "|".join(alternatives) + ")"


def compile_pattern(pattern: str, what: str) -> Tuple[str, Dict[str, Field]]:
    """A Java regular expression matching the prefix of a text ``pattern`` reads, and its fields by
    letter. A numeric field followed directly by another numeric field reads at most its count of
    characters (Java's abutting fields); otherwise it reads all its digits. Quantifiers are possessive
    and names atomic: like Java's parser, a field never gives back what it read."""
    tokens = pattern_tokens(pattern, what)
    fields: Dict[str, Field] = {}
    parts = ["^"]
    group = 1
    for i, (letter, count) in enumerate(tokens):
        if not count:
            parts.append(letter if letter.isalnum() else "\\" + letter)
            continue
        if letter in fields:
            raise NotImplementedError(f"{what}: the pattern letter {letter!r} appears twice in {pattern!r}")
        abutting = (letter in _NUMERIC and not (letter == "M" and count >= 3) and i + 1 < len(tokens)
                    and tokens[i + 1][1] and tokens[i + 1][0] in _NUMERIC
                    and not (tokens[i + 1][0] == "M" and tokens[i + 1][1] >= 3))
        field = Field(letter, count, tuple(range(group, group + (count if abutting else 1))))
        group += len(field.groups)
        fields[letter] = field
        if abutting:
            parts.append(_abutting(count))
            continue
        parts.append("[ \\t]*+")   # SimpleDateFormat skips spaces and tabs before a field
        if letter == "a":
            parts.append("(?i:(AM|PM))")
        elif not field.numeric:
            names = sorted(MONTHS + tuple(m[:3] for m in MONTHS if len(m) > 3), key=len, reverse=True)
            parts.append("(?i:((?>" + "|".join(names) + ")))")
        else:
            parts.append("(-?\\d++)")
    hours = {"H", "k"} & fields.keys(), {"h", "K"} & fields.keys()
    if all(hours) or (hours[0] and "a" in fields) or ("D" in fields and {"M", "d"} & fields.keys()):
        raise NotImplementedError(f"{what}: the pattern {pattern!r} sets a field twice (hour of day and "
                                  "hour of AM/PM, or day of year and month/day), which is not supported")
    return "".join(parts), fields


def _floor_div(x: Column, y: int) -> Column:
    # Integer floor division (Spark's div truncates toward zero, as Java's).
    return F.call_function("div", x - F.pmod(x, F.lit(y)), F.lit(y))


def epoch_day(year: Column, month: Column, day: Column, julian: bool) -> Column:
    """Days since 1970-01-01 of ``day`` (any integer) in ``month`` (1-12) of ``year`` (astronomical),
    by the Julian or the proleptic Gregorian calendar: the Julian day number's arithmetic, linear in the
    day so a lenient day carries over."""
    a = _floor_div(14 - month, 12)
    y = year + 4800 - a
    m = month + 12 * a - 3
    days = day + _floor_div(153 * m + 2, 5) + 365 * y + _floor_div(y, 4)
    if julian:
        return days - 32083 - 2440588
    return days - _floor_div(y, 100) + _floor_div(y, 400) - 32045 - 2440588


def _two_digit_year(year: Column, digits: Column, month: Column, day: Column) -> Column:
    """Two digits read by y or yy: the year within the century that starts 80 years before today
    (SimpleDateFormat's default century); the start year's own two digits are the later century's
    year for a date before the start's day (compared by month and day, not lenient carry-overs)."""
    start = datetime.date.today()
    start = start.replace(year=start.year - 80, day=min(start.day, 28))
    century, first = (start.year // 100) * 100, start.year % 100
    before_start = (month < start.month) | ((month == start.month) & (day < start.day))
    later = (year < first) | ((year == first) & before_start)
    return F.when(digits.rlike("^[0-9]{2}$"), year + century + F.when(later, 100).otherwise(0)).otherwise(year)


def _value(text: Column, regex: str, field: Field) -> Column:
    values = [F.regexp_extract(text, regex, g) for g in field.groups]
    return values[0] if len(values) == 1 else F.concat(*values)


def local_millis(text: Column, pattern: str, what: str) -> Tuple[Column, Column]:
    """(whether ``text`` starts with what ``pattern`` reads, the wall clock it reads as milliseconds
    since 1970-01-01 00:00), as ``SimpleDateFormat.parse`` computes it in a zone without offset."""
    regex, fields = compile_pattern(pattern, what)

    def number(letter: str, default: int) -> Column:
        field = fields.get(letter)
        # try_cast: the groups are empty where the text does not match (that row's result is not
        # used), and a number too large for a long gives NULL.
        return _value(text, regex, field).try_cast("long") if field else F.lit(default).cast("long")

    year = number("y", 1970)
    y_field = fields.get("y")
    if y_field is not None and y_field.count <= 2:
        year = _two_digit_year(year, _value(text, regex, y_field), number("M", 1), number("d", 1))
    month_field = fields.get("M")
    if month_field is not None and not month_field.numeric:
        name = F.lower(F.substring(_value(text, regex, month_field), 1, 3))
        month0 = F.lit(None).cast("long")
        for i, m in enumerate(MONTHS):
            month0 = F.when(name == m[:3].lower(), F.lit(i)).otherwise(month0)
    else:
        month0 = number("M", 1) - 1
    # Calendar's lenient month: years carry over, then the day counts from the month's first.
    year = year + _floor_div(month0, 12)
    month = F.pmod(month0, F.lit(12)) + 1
    day = number("D", 1) if "D" in fields else number("d", 1)
    if "D" in fields:
        month = F.lit(1)
    gregorian = epoch_day(year, month, day, julian=False)
    days = F.when(gregorian >= _GREGORIAN_CUTOVER_DAY, gregorian).otherwise(epoch_day(year, month, day, julian=True))
    millis = days * 86_400_000
    for letter, unit in _MILLIS.items():
        if letter in fields:
            value = number(letter, 0)
            limit = {"k": 24, "h": 12}.get(letter)
            if limit is not None:   # k reads 24 as 0, h reads 12 as 0
                value = F.when(value == limit, 0).otherwise(value)
            millis = millis + value * unit
    if "a" in fields:
        pm = F.upper(_value(text, regex, fields["a"])) == "PM"
        millis = millis + F.when(pm, 12 * 3_600_000).otherwise(0)
    return text.rlike(regex), millis


def unix_timestamp(text: Column, pattern: str) -> Column:
    """Flink's ``UNIX_TIMESTAMP(text, pattern)`` under a UTC zone: the seconds of the wall clock read
    (Java's long division: toward zero), Long.MIN_VALUE where the text does not start with what the
    pattern reads, NULL for a NULL text. The session zone's rule converts the wall clock's seconds."""
    matched, millis = local_millis(text, pattern, "UNIX_TIMESTAMP's format")
    seconds = F.call_function("div", millis, F.lit(1000))
    return F.when(text.isNull(), F.lit(None).cast("long")).when(matched, seconds) \
        .otherwise(F.lit(LONG_MIN).cast("long"))


def to_date(text: Column, pattern: str) -> Column:
    """Flink's ``TO_DATE(text, pattern)``: the day of the wall clock read (proleptic Gregorian, as
    java.time shows a Julian reading), NULL where the text does not start with what the pattern reads
    (Flink gives the date Long.MIN_VALUE milliseconds overflows to: docs/differences.md)."""
    matched, millis = local_millis(text, pattern, "TO_DATE's format")
    return F.when(matched, F.date_from_unix_date(_floor_div(millis, 86_400_000).cast("int")))
