"""``UNIX_TIMESTAMP(text[, format])`` and ``TO_DATE(text, format)``: Flink 2.3 reads the text with Java's
lenient ``SimpleDateFormat``.

Registered into :data:`conformance.sql_cases.CASES`, recorded by ``conformance/record_flink_sql.py``.
Probed with PyFlink 2.3 first: the pattern's fields are read from the start of the text and the rest is
ignored (``UNIX_TIMESTAMP('2024-01-01 00:00:00', 'yyyy-MM-dd')`` is 1704067200); a missing field or
literal gives Long.MIN_VALUE (-9223372036854775808); fields are lenient (``2024-13-45`` is 2025-02-14,
``25:61:61`` carries into the next day), take any number of digits and a minus sign, and spaces or tabs
before a field are skipped; dates before 1582-10-15 are Julian. The texts avoid two-digit years near
SimpleDateFormat's moving century boundary (80 years before today).
"""

from __future__ import annotations

from conformance.sql_cases import _write, case

TEXTS = [
    "2024-01-01 00:00:00", "2024-01-01", "2024-01-01 12:34:56", "2024-01-01 12:34:56.789",
    "2024-01-01 12:34", "nonsense", "", "2024-13-45", "2024-02-30 25:61:61", "2024-1-5", " 2024-01-05",
    "2024- 01-05", "2024-01-05T10:00:00", "20240105", "2024010512", "240105", "24-01-05", "99-01-05",
    "1969-12-31 23:59:59", "1969-12-31 23:59:59.500", "-2024-01-05", "+2024-01-05", "2024/01/05",
    "05 Jan 2024", "05 January 2024", "05 jAN 2024", "05 Janu 2024", "2024-01-05 10:00 PM",
    "2024-01-05 12:00 AM", "2024-01-05 '10'", "2024-01-05 at 10", "12345-01-05", "2024-001", "2024-366",
    "2024-01-05x", "2024-00-00", "0000-01-01", "2024-01-05 1.5", "2024-01-05\t10", "2024-01-05  10",
    "2024-01-05 -3", "2024-01-05 24:00", "2024-01-05 00:00:00.1234", "1582-10-15", "1582-10-14",
    "1582-10-04", "1582-13-01", "5-1-5-7", "2024-1-5-7",
]

# (column, format) for UNIX_TIMESTAMP; the format as Java writes it, quoted for SQL below.
FORMATS = [
    ("ymd", "yyyy-MM-dd"), ("ymd_hms", "yyyy-MM-dd HH:mm:ss"), ("ymd_hms_ms", "yyyy-MM-dd HH:mm:ss.SSS"),
    ("abutting", "yyyyMMddHH"), ("two_digit_year", "yy-MM-dd"), ("month_name", "dd MMM yyyy"),
    ("am_pm", "yyyy-MM-dd hh:mm a"), ("quoted_text", "yyyy-MM-dd 'at' HH"), ("quote", "yyyy-MM-dd ''HH''"),
    ("day_of_year", "yyyy-DDD"), ("hour_1_24", "yyyy-MM-dd kk:mm"), ("short_fields", "y-M-d-H"),
]


def _sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _texts(t_env, E, texts):
    """t(i INT, s STRING) from a CSV file, every text quoted (one has a tab, one is empty)."""
    quoted = ['"' + s.replace('"', '""') + '"' for s in texts]
    path = _write(E, "t", "".join(f"{i},{s}\n" for i, s in enumerate(quoted)))
    t_env.execute_sql(f"CREATE TABLE t (i INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                      "'format' = 'csv')")


@case("unix_timestamp_simple_date_format")
def unix_timestamp_simple_date_format(t_env, E):
    """UNIX_TIMESTAMP(s, format) for 12 formats and UNIX_TIMESTAMP(s) (format yyyy-MM-dd HH:mm:ss) over
    49 texts: prefixes read and the rest ignored, Long.MIN_VALUE for a text missing a field or literal,
    lenient fields carried over, abutting fields by their width, month names in any case, AM/PM,
    quoted text, day of year, kk's 24, Julian dates before 1582-10-15; NULL for a NULL text."""
    _texts(t_env, E, TEXTS)
    columns = ", ".join(f"UNIX_TIMESTAMP(s, {_sql(f)}) AS {name}" for name, f in FORMATS)
    return t_env.sql_query(f"SELECT i, s, {columns}, UNIX_TIMESTAMP(s) AS default_format, "
                           "UNIX_TIMESTAMP(NULLIF(s, 'nonsense'), 'yyyy-MM-dd') AS null_text FROM t")


@case("unix_timestamp_simple_date_format_zone", config={"table.local-time-zone": "America/Los_Angeles"})
def unix_timestamp_simple_date_format_zone(t_env, E):
    """UNIX_TIMESTAMP(s, format) in America/Los_Angeles: a prefix is read as a wall clock in the zone
    (standard time in the autumn overlap), Long.MIN_VALUE stays Long.MIN_VALUE."""
    _texts(t_env, E, ["2026-11-01 01:30:00 PDT", "2026-03-08 02:30", "2026-07-01", "nonsense", "2026-07-01x"])
    return t_env.sql_query("SELECT i, s, UNIX_TIMESTAMP(s, 'yyyy-MM-dd HH:mm') AS minutes, "
                           "UNIX_TIMESTAMP(s, 'yyyy-MM-dd') AS days FROM t")


# TO_DATE(s, format) of texts the format reads (Flink's TO_DATE of a text it cannot read is the date
# Long.MIN_VALUE milliseconds overflows to, 5471-09-27; changeflow's is NULL: docs/differences.md).
TO_DATE_TEXTS = {
    "yyyy-MM-dd": ["2024-01-01 00:00:00", "2024-13-45", "2024-1-5", "2024-01-05T10:00:00", "2024-00-00",
                   "1582-10-15", "1582-10-14", "1582-10-04", "1582-13-01"],
    "yyyy-MM-dd HH:mm:ss": ["2024-02-30 25:61:61", "1969-12-31 23:59:59", "2024-01-05 -3:00:00"],
    "dd MMM yyyy": ["05 Jan 2024", "05 January 2024", "29 feb 2023"],
    "y-M-d": ["5-1-5", "2024-1-5-7"],
    "yyyyMMdd": ["20240105", "2024010599"],
}


@case("to_date_simple_date_format", compare="multiset",
      why="a UNION ALL of one query per format: Flink emits the queries' rows in the order of its union's inputs")
def to_date_simple_date_format(t_env, E):
    """TO_DATE(s, format) reads a prefix of the text as UNIX_TIMESTAMP does, leniently, in UTC whatever
    the zone: the day of the wall clock read (a Julian date before 1582-10-15 shown in the proleptic
    Gregorian calendar, as java.time shows it)."""
    texts = [s for group in TO_DATE_TEXTS.values() for s in group]
    _texts(t_env, E, texts)
    return t_env.sql_query(" UNION ALL ".join(
        f"SELECT i, s, {_sql(f)} AS f, TO_DATE(s, {_sql(f)}) AS d FROM t WHERE s IN ({', '.join(map(_sql, group))})"
        for f, group in TO_DATE_TEXTS.items()))


# TO_TIMESTAMP's texts: not those before 1582, which Flink's Date.valueOf fallback reads in the Julian
# calendar (changeflow's fallback is proleptic Gregorian: docs/differences.md).
TO_TIMESTAMP_TEXTS = [t for t in TEXTS if not t.startswith(("1582", "0000", "-"))] + [
    "2024-02-30", "2023-366", "2024-366", "2024-01-05 10:00:00.1", "2024-1-5 7:5:3.12345"]


@case("to_timestamp_format")
def to_timestamp_format(t_env, E):
    """TO_TIMESTAMP(s, format) for the 12 formats: the whole text read strictly by java.time's pattern
    (fixed widths, case-sensitive names, a day past the month's end moved back to its last day, a month
    13 refused), and where that fails, the format ignored: the trimmed text read as Timestamp.valueOf
    (with a space; fields carried over) or Date.valueOf; NULL when neither reads it."""
    _texts(t_env, E, TO_TIMESTAMP_TEXTS)
    columns = ", ".join(f"TO_TIMESTAMP(s, {_sql(f)}) AS {name}" for name, f in FORMATS)
    return t_env.sql_query(f"SELECT i, s, {columns} FROM t")
