"""CSV text to typed values and back, as Flink 2.3's ``CsvRowDeserializationSchema`` and
``CsvRowSerializationSchema`` convert them (the goldens of ``conformance/csv_row_cases.py``).

Reading: Jackson's CSV parser reads the first record of the text (what follows its line end is
ignored): fields split by the field delimiter; a field that starts with the quote character runs to
the closing quote (a doubled quote is a quote; line ends inside it are kept); the escape character
makes the next character literal; a field equal to the null literal is null; with comments allowed,
lines starting with ``#`` are skipped (nothing left: no record). More fields than the row type has
fail; fewer fail unless parse errors are ignored (the missing ones are null). Each field converts from
its text as Flink's converters do: numbers and BOOLEAN from the trimmed text with Java's rules
(``Integer.parseInt``, ``Double.parseDouble``, ``new BigDecimal``; BOOLEAN is true only for "true" in
any case), STRING as it is, SQL_DATE by ``java.sql.Date.valueOf`` and SQL_TIMESTAMP by
``Timestamp.valueOf`` (``yyyy-[m]m-[d]d hh:mm:ss[.f...]``), an array by splitting on the array
element delimiter (an empty text is an empty array).

Writing, as Jackson's CSV generator: numbers and booleans as Java prints them, unquoted; a text (a
string, a date, a timestamp as Java's ``Timestamp.toString``, an array's elements joined) is quoted
when it holds a character below the delimiters' and the quote's (Jackson's conservative check), its
quotes doubled; a null is the null literal (default empty); the line delimiter ends the record.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

from changeflow.common.typeinfo import (BasicArrayTypeInfo, BasicTypeInfo, PrimitiveArrayTypeInfo, RowTypeInfo,
                                        TypeInformation, to_float32)
from changeflow.connectors.values import float32_digits, java_double
from changeflow.datastream.formats.json_values import JsonFieldError, java_int

__all__ = ["CsvDialect", "CsvFieldError", "check_csv_type", "read_record", "write_record"]

_INTEGERS = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
_SCALARS = ("BOOLEAN", "BYTE", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "BIG_DEC", "STRING", "SQL_DATE",
            "SQL_TIMESTAMP")
_ARRAYS = (BasicArrayTypeInfo, PrimitiveArrayTypeInfo)
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")
_BIG_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?")


class CsvFieldError(ValueError):
    """A CSV field that does not convert to its type, or a record that does not parse."""


@dataclass(frozen=True)
class CsvDialect:
    """The builders' options: delimiters, quote and escape characters (None: disabled), null literal."""

    field_delimiter: str = ","
    array_element_delimiter: str = ";"
    quote_character: Optional[str] = '"'
    escape_character: Optional[str] = None
    null_literal: Optional[str] = None
    allow_comments: bool = False
    line_delimiter: str = "\n"


def check_csv_type(type_info: TypeInformation, where: str) -> None:
    """Refuse, naming it, a field type the CSV row formats do not convert here."""
    if not isinstance(type_info, RowTypeInfo):
        raise TypeError(f"{where}: the type information must be a row type (Types.ROW_NAMED), got {type_info!r}")
    for t in type_info.get_field_types():
        element = t.element_type if isinstance(t, _ARRAYS) else t
        if not (isinstance(element, BasicTypeInfo) and element.name in _SCALARS):
            raise NotImplementedError(f"{where}: a field of type {t!r} is not supported by changeflow's CSV row "
                                      f"format (supported: {', '.join(_SCALARS)} and arrays of them)")


# --- reading -----------------------------------------------------------------------------


def _fields(text: str, dialect: CsvDialect) -> Optional[List[Optional[str]]]:
    """The first record's fields (None for a null literal); None when only comment lines are left."""
    sep, quote, escape = dialect.field_delimiter, dialect.quote_character, dialect.escape_character
    i, n = 0, len(text)
    while dialect.allow_comments and i < n and text[i] == "#":
        end = min((p for p in (text.find("\n", i), text.find("\r", i)) if p >= 0), default=n)
        i = end + 1 if end < n else n
        if text.startswith("\n", i) and end < n and text[end] == "\r":
            i += 1
        if i >= n:
            return None
    if i >= n:
        raise CsvFieldError("No content to map due to end-of-input")
    fields: List[Optional[str]] = []
    while True:
        out: List[str] = []
        quoted = quote is not None and i < n and text[i] == quote
        if quote is not None and quoted:
            i += 1
            while i < n:
                c = text[i]
                if c == escape and i + 1 < n:
                    out.append(text[i + 1])
                    i += 2
                elif c == quote:
                    if text.startswith(quote, i + 1):
                        out.append(quote)
                        i += 2
                    else:
                        i += 1
                        break
                else:
                    out.append(c)
                    i += 1
        while i < n and text[i] not in (sep, "\n", "\r"):
            if text[i] == escape and i + 1 < n:
                i += 1
            out.append(text[i])
            i += 1
        value = "".join(out)
        fields.append(None if not quoted and dialect.null_literal is not None and value == dialect.null_literal
                      else value)
        if i < n and text[i] == sep:
            i += 1
            continue
        return fields


def _date(text: str) -> datetime.date:
    match = _DATE.fullmatch(text)
    if not match or not 1 <= int(match[2]) <= 12 or not 1 <= int(match[3]) <= 31:
        raise CsvFieldError(f"Date format must be yyyy-mm-dd: {text!r}")
    # java.sql.Date is lenient past a month's end (2024-02-30 is 2024-03-01).
    return datetime.date(int(match[1]), int(match[2]), 1) + datetime.timedelta(days=int(match[3]) - 1)


def _timestamp(text: str) -> datetime.datetime:
    match = _TIMESTAMP.fullmatch(text.strip())
    if not match:
        raise CsvFieldError("Timestamp format must be yyyy-mm-dd hh:mm:ss[.fffffffff]")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    micros = int((match[7] or "0").ljust(9, "0")[:6])   # changeflow's timestamps hold microseconds
    return datetime.datetime.combine(_date(f"{year:04d}-{month}-{day}"), datetime.time()) + datetime.timedelta(
        hours=hour, minutes=minute, seconds=second, microseconds=micros)


def _scalar(name: str, text: str) -> Any:
    trimmed = text.strip()
    if name in _INTEGERS:
        try:
            return java_int(trimmed, _INTEGERS[name])
        except JsonFieldError as error:   # Java's Integer.parseInt, as the JSON format reads a text
            raise CsvFieldError(str(error)) from None
    if name in ("DOUBLE", "FLOAT"):
        if not _JAVA_DOUBLE.fullmatch(trimmed):
            raise CsvFieldError(f'For input string: "{text}"' if trimmed else "empty String")
        value = float(trimmed.rstrip("fFdD"))
        return to_float32(value) if name == "FLOAT" else value
    if name == "BIG_DEC":
        if not _BIG_DECIMAL.fullmatch(trimmed):
            raise CsvFieldError(f"Character array is missing \"exponent\" mark: {text!r}")
        return decimal.Decimal(trimmed)
    if name == "BOOLEAN":
        return trimmed.lower() == "true"
    if name == "SQL_DATE":
        return _date(text)
    if name == "SQL_TIMESTAMP":
        return _timestamp(text)
    return text


def _converter(type_info: TypeInformation, dialect: CsvDialect, ignore: bool) -> Callable[[Optional[str]], Any]:
    def guarded(convert: Callable[[str], Any]) -> Callable[[Optional[str]], Any]:
        def one(text: Optional[str]) -> Any:
            if text is None:
                return None
            try:
                return convert(text)
            except CsvFieldError:
                if ignore:   # ignore_parse_errors: the value that does not convert is null
                    return None
                raise
        return one

    if isinstance(type_info, _ARRAYS):
        element = _converter(type_info.element_type, dialect, ignore)
        null = dialect.null_literal
        return guarded(lambda text: [] if text == "" else [
            None if null is not None and part == null else element(part)
            for part in text.split(dialect.array_element_delimiter)])
    name = type_info.name  # type: ignore[attr-defined]
    return guarded(lambda text: _scalar(name, text))


def read_record(type_info: RowTypeInfo, dialect: CsvDialect, ignore: bool) -> Callable[[str], Optional[list]]:
    """A function reading a record's text into the row's values (None: no record), raising
    ``CsvFieldError`` for a record or value that does not read."""
    converters = [_converter(t, dialect, ignore) for t in type_info.get_field_types()]

    def read(text: str) -> Optional[list]:
        fields = _fields(text, dialect)
        if fields is None:
            return None
        if len(fields) > len(converters):
            raise CsvFieldError(f"Too many entries: expected at most {len(converters)}")
        if len(fields) < len(converters):
            if not ignore:
                raise CsvFieldError(f"Row length mismatch. {len(converters)} fields expected but was {len(fields)}.")
            fields = fields + [None] * (len(converters) - len(fields))
        return [convert(f) for convert, f in zip(converters, fields, strict=True)]
    return read


# --- writing -----------------------------------------------------------------------------


def _timestamp_text(value: datetime.datetime) -> str:
    # Java's Timestamp.toString: the fraction's significant digits, at least one.
    return value.strftime("%Y-%m-%d %H:%M:%S.") + (f"{value.microsecond:06d}".rstrip("0") or "0")


def _text(type_info: TypeInformation, value: Any, dialect: CsvDialect) -> tuple[str, bool]:
    """A value's text and whether it is a string (quoted when needed) rather than a number."""
    if isinstance(type_info, _ARRAYS):
        null = dialect.null_literal or ""
        return dialect.array_element_delimiter.join(
            null if v is None else _text(type_info.element_type, v, dialect)[0] for v in value), True
    name = type_info.name  # type: ignore[attr-defined]
    if name in _INTEGERS:
        return str(int(value)), False
    if name == "DOUBLE":
        return java_double(float(value)), False
    if name == "FLOAT":
        return (java_double(float32_digits(value)) if math.isfinite(value) else java_double(value)), False
    if name == "BIG_DEC":
        value = decimal.Decimal(value)
        return str(value.copy_abs() if value.is_zero() else value), False   # BigDecimal has no -0
    if name == "BOOLEAN":
        return ("true" if value else "false"), False
    if name == "SQL_DATE":
        return value.isoformat(), True
    if name == "SQL_TIMESTAMP":
        return _timestamp_text(value), True
    return str(value), True


def write_record(type_info: RowTypeInfo, dialect: CsvDialect) -> Callable[[list], str]:
    """A function writing a row's values as Flink's ``CsvRowSerializationSchema`` does."""
    types = type_info.get_field_types()
    quote = dialect.quote_character
    # Jackson quotes a text holding any character below the highest of the delimiter, the quote and the
    # line delimiter's characters plus one (its check is conservative, not exact).
    safe = max(ord(c) for c in dialect.field_delimiter + (quote or "") + dialect.line_delimiter) + 1

    def field(type_info: TypeInformation, value: Any) -> str:
        if value is None:
            return dialect.null_literal or ""
        text, is_string = _text(type_info, value, dialect)
        if quote is None or not is_string or not any(ord(c) < safe for c in text):
            return text
        return quote + text.replace(quote, quote + quote) + quote

    def write(values: list) -> str:
        if len(values) != len(types):
            raise ValueError(f"{len(values)} fields for a row of {len(types)}")
        return dialect.field_delimiter.join(field(t, v) for t, v in zip(types, values, strict=True)) \
            + dialect.line_delimiter
    return write
