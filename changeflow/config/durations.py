"""Durations written the way Flink writes them: ``"5 s"``, ``"2 min"``, ``"500 ms"``.

Parsing follows Flink's ``TimeUtils.parseDuration``: a whole number made of the digits 0-9,
optional whitespace, then an optional unit label matched case-insensitively. No label means
milliseconds. There is no sign, no fraction and no compound form (``"1 min 30 s"``), as in
Flink.

Two differences from Flink:

- ``"μs"`` spelt with the Greek letter mu (U+03BC) is read as ``"µs"`` with the micro sign
  (U+00B5), the only spelling Flink accepts; the two look the same.
- changeflow holds durations as ``datetime.timedelta``, whose resolution is a microsecond, so
  a nanosecond value that is not a whole number of microseconds (``"1500 ns"``) is rejected
  instead of being rounded silently. ``parse_duration_nanos`` gives the exact value.

>>> parse_duration("5 s")
datetime.timedelta(seconds=5)
>>> to_millis("2 min")
120000
>>> format_duration(parse_duration("1500ms"))
'1500 ms'
"""

from __future__ import annotations

import datetime
import re

__all__ = [
    "DURATION_UNITS",
    "format_duration",
    "parse_duration",
    "parse_duration_nanos",
    "to_millis",
]

_NANOS_PER_MICRO = 1_000
_NANOS_PER_MILLI = 1_000_000
_NANOS_PER_SECOND = 1_000_000_000
_NANOS_PER_MINUTE = 60 * _NANOS_PER_SECOND
_NANOS_PER_HOUR = 60 * _NANOS_PER_MINUTE
_NANOS_PER_DAY = 24 * _NANOS_PER_HOUR

# Unit name -> (labels, length in nanoseconds), largest unit first. The first label is the one
# format_duration writes, as Flink's TimeUtils.formatWithHighestUnit does. "m" means minutes.
DURATION_UNITS: dict[str, tuple[tuple[str, ...], int]] = {
    "DAYS": (("d", "day", "days"), _NANOS_PER_DAY),
    "HOURS": (("h", "hour", "hours"), _NANOS_PER_HOUR),
    "MINUTES": (("min", "m", "minute", "minutes"), _NANOS_PER_MINUTE),
    "SECONDS": (("s", "sec", "secs", "second", "seconds"), _NANOS_PER_SECOND),
    "MILLISECONDS": (
        ("ms", "milli", "millis", "millisecond", "milliseconds"),
        _NANOS_PER_MILLI,
    ),
    "MICROSECONDS": (
        ("µs", "micro", "micros", "microsecond", "microseconds"),
        _NANOS_PER_MICRO,
    ),
    "NANOSECONDS": (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1),
}

_NANOS_BY_LABEL = {
    label: nanos for labels, nanos in DURATION_UNITS.values() for label in labels
}

ACCEPTED_UNITS_TEXT = ", ".join(
    f"{name}: ({' | '.join(labels)})" for name, (labels, _) in DURATION_UNITS.items()
)
"""The accepted unit labels, spelt out for error messages (Flink lists them the same way)."""

# Only ASCII digits count, as in Flink's parser; str.isdigit would also accept "²" or "٣".
_LEADING_DIGITS = re.compile(r"[0-9]*")

_MAX_NANOS = (
    datetime.timedelta.max // datetime.timedelta(microseconds=1)
) * _NANOS_PER_MICRO


def _fail(text: str, reason: str) -> ValueError:
    return ValueError(
        f"Cannot parse duration {text!r}: {reason}. Expected a whole number followed by an "
        f"optional unit, e.g. '5 s', '2 min' or '500 ms' (no unit means milliseconds); "
        f"accepted units (case-insensitive): {ACCEPTED_UNITS_TEXT}"
    )


def parse_duration_nanos(text: str) -> int:
    """Parse a Flink duration string to a whole number of nanoseconds.

    >>> parse_duration_nanos("3 µs")
    3000
    >>> parse_duration_nanos(" 42 ")
    42000000
    """
    if not isinstance(text, str):
        raise TypeError(f"a duration string is required, got {type(text).__name__}: {text!r}")
    trimmed = text.strip()
    if not trimmed:
        raise _fail(text, "the text is empty")
    leading = _LEADING_DIGITS.match(trimmed)
    assert leading is not None  # the pattern matches any text (possibly with no digits)
    number = leading.group()
    if not number:
        raise _fail(text, "it does not start with a number")
    # The Greek small mu looks exactly like the micro sign Flink expects; take it as that.
    label = trimmed[len(number) :].strip().lower().replace("\u03bc", "\u00b5")
    if not label:
        unit_nanos = _NANOS_PER_MILLI
    else:
        try:
            unit_nanos = _NANOS_BY_LABEL[label]
        except KeyError:
            raise _fail(text, f"unit {label!r} is not a known time unit") from None
    return int(number) * unit_nanos


def parse_duration(text: str) -> datetime.timedelta:
    """Parse a Flink duration string such as ``"5 s"`` or ``"500ms"`` to a ``timedelta``.

    Raises ``ValueError`` naming the text and listing the accepted units.

    >>> parse_duration("1 d") == datetime.timedelta(days=1)
    True
    >>> parse_duration("10 MIN")
    datetime.timedelta(seconds=600)
    >>> parse_duration("5 weeks")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Cannot parse duration '5 weeks': unit 'weeks' is not a known time unit. ...
    """
    nanos = parse_duration_nanos(text)
    if nanos % _NANOS_PER_MICRO:
        raise ValueError(
            f"Cannot represent duration {text!r}: changeflow holds durations with microsecond "
            f"resolution (Python's timedelta), and {nanos} ns is not a whole number of "
            f"microseconds"
        )
    if nanos > _MAX_NANOS:
        raise ValueError(
            f"Cannot represent duration {text!r}: it is longer than the longest timedelta "
            f"({datetime.timedelta.max.days} days)"
        )
    return datetime.timedelta(microseconds=nanos // _NANOS_PER_MICRO)


def to_millis(duration: datetime.timedelta | str) -> int:
    """Whole milliseconds in a duration (a ``timedelta`` or a duration string).

    Sub-millisecond parts are dropped, as Java's ``Duration.toMillis`` drops them.

    >>> to_millis(datetime.timedelta(seconds=1, microseconds=999))
    1000
    >>> to_millis("5 s")
    5000
    """
    if isinstance(duration, str):
        duration = parse_duration(duration)
    if not isinstance(duration, datetime.timedelta):
        raise TypeError(
            f"a timedelta or a duration string is required, got "
            f"{type(duration).__name__}: {duration!r}"
        )
    return duration // datetime.timedelta(milliseconds=1)


def format_duration(duration: datetime.timedelta) -> str:
    """Write a duration in the largest unit that holds it exactly, as Flink does.

    Zero is written ``"0 ms"``. For a duration that is not negative, the result parses back to
    the same duration.

    >>> format_duration(datetime.timedelta(seconds=5))
    '5 s'
    >>> format_duration(datetime.timedelta(minutes=2))
    '2 min'
    >>> format_duration(datetime.timedelta(milliseconds=500))
    '500 ms'
    >>> format_duration(datetime.timedelta(0))
    '0 ms'
    """
    if not isinstance(duration, datetime.timedelta):
        raise TypeError(
            f"a timedelta is required, got {type(duration).__name__}: {duration!r}"
        )
    nanos = (duration // datetime.timedelta(microseconds=1)) * _NANOS_PER_MICRO
    if nanos == 0:
        return "0 ms"
    for labels, unit_nanos in DURATION_UNITS.values():
        if nanos % unit_nanos == 0:
            return f"{nanos // unit_nanos} {labels[0]}"
    raise AssertionError("unreachable: every duration is a whole number of nanoseconds")
