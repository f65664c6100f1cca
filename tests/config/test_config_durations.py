"""Flink duration strings: every unit label, whitespace, errors, and formatting back."""

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from changeflow.config.durations import (
    DURATION_UNITS,
    format_duration,
    parse_duration,
    parse_duration_nanos,
    to_millis,
)

NS = 1
US = 1_000
MS = 1_000_000
S = 1_000_000_000
MIN = 60 * S
H = 60 * MIN
D = 24 * H

# Every label Flink's TimeUtils accepts, with the unit it means.
LABELS = {
    "d": D, "day": D, "days": D,
    "h": H, "hour": H, "hours": H,
    "min": MIN, "m": MIN, "minute": MIN, "minutes": MIN,
    "s": S, "sec": S, "secs": S, "second": S, "seconds": S,
    "ms": MS, "milli": MS, "millis": MS, "millisecond": MS, "milliseconds": MS,
    "µs": US, "micro": US, "micros": US, "microsecond": US, "microseconds": US,
    "ns": NS, "nano": NS, "nanos": NS, "nanosecond": NS, "nanoseconds": NS,
}


def test_the_unit_table_has_exactly_flinks_labels():
    table = {label: nanos for labels, nanos in DURATION_UNITS.values() for label in labels}
    assert table == LABELS


@pytest.mark.parametrize("label", sorted(LABELS))
@pytest.mark.parametrize("space", ["", " ", "\t", "   "])
def test_every_label_parses_with_or_without_space(label, space):
    assert parse_duration_nanos(f"7{space}{label}") == 7 * LABELS[label]


@pytest.mark.parametrize("label", sorted(LABELS))
def test_labels_are_case_insensitive(label):
    assert parse_duration_nanos(f"3 {label.upper()}") == 3 * LABELS[label]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5 s", datetime.timedelta(seconds=5)),
        ("2 min", datetime.timedelta(minutes=2)),
        ("500 ms", datetime.timedelta(milliseconds=500)),
        ("500", datetime.timedelta(milliseconds=500)),  # no unit: milliseconds
        ("  500  ", datetime.timedelta(milliseconds=500)),
        ("0", datetime.timedelta(0)),
        ("0 d", datetime.timedelta(0)),
        ("007 s", datetime.timedelta(seconds=7)),
        ("1 d", datetime.timedelta(days=1)),
        ("36 h", datetime.timedelta(hours=36)),
        ("15 m", datetime.timedelta(minutes=15)),  # "m" is minutes, as in Flink
        ("250 µs", datetime.timedelta(microseconds=250)),
        ("3000 ns", datetime.timedelta(microseconds=3)),
        ("\n5 s\n", datetime.timedelta(seconds=5)),
    ],
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("s", "does not start with a number"),
        ("-1 s", "does not start with a number"),  # Flink has no sign
        ("+1 s", "does not start with a number"),
        (".5 s", "does not start with a number"),
        ("1.5 s", "unit '.5 s' is not a known time unit"),  # no fractions either
        ("5 weeks", "unit 'weeks' is not a known time unit"),
        ("5 us", "unit 'us' is not a known time unit"),  # only the micro sign, as in Flink
        ("1 min 30 s", "unit 'min 30 s' is not a known time unit"),
        ("PT5S", "does not start with a number"),  # no ISO-8601
        ("\uff15 s", "does not start with a number"),  # full-width digit: ASCII digits only
    ],
)
def test_bad_text_is_named_and_units_are_listed(text, reason):
    with pytest.raises(ValueError) as error:
        parse_duration(text)
    message = str(error.value)
    assert repr(text) in message
    assert reason in message
    for label in LABELS:
        assert label in message
    assert "no unit means milliseconds" in message


def test_nanoseconds_that_are_not_whole_microseconds_are_rejected_not_rounded():
    assert parse_duration_nanos("1500 ns") == 1500
    with pytest.raises(ValueError, match=r"'1500 ns'.*microsecond"):
        parse_duration("1500 ns")


def test_too_long_for_a_timedelta():
    with pytest.raises(ValueError, match="longer than the longest timedelta"):
        parse_duration("1000000000 d")


def test_non_string_is_a_type_error():
    with pytest.raises(TypeError):
        parse_duration(5)


def test_to_millis():
    assert to_millis(datetime.timedelta(seconds=2)) == 2000
    assert to_millis(datetime.timedelta(microseconds=1999)) == 1  # truncates, like Java
    assert to_millis("1 min") == 60_000
    assert to_millis("42") == 42
    with pytest.raises(TypeError):
        to_millis(42)


@pytest.mark.parametrize(
    ("duration", "text"),
    [
        (datetime.timedelta(0), "0 ms"),
        (datetime.timedelta(seconds=5), "5 s"),
        (datetime.timedelta(minutes=2), "2 min"),
        (datetime.timedelta(milliseconds=500), "500 ms"),
        (datetime.timedelta(seconds=90), "90 s"),
        (datetime.timedelta(hours=1), "1 h"),
        (datetime.timedelta(hours=48), "2 d"),
        (datetime.timedelta(milliseconds=1500), "1500 ms"),
        (datetime.timedelta(microseconds=1500), "1500 µs"),
    ],
)
def test_format_duration_uses_the_largest_exact_unit(duration, text):
    assert format_duration(duration) == text


@given(st.timedeltas(min_value=datetime.timedelta(0)))
def test_format_then_parse_gives_the_same_duration(duration):
    assert parse_duration(format_duration(duration)) == duration


def test_greek_mu_is_taken_as_the_micro_sign():
    # U+03BC and U+00B5 render identically; rejecting one would be a baffling error.
    assert parse_duration_nanos("4 \u03bcs") == parse_duration_nanos("4 \u00b5s") == 4 * US
