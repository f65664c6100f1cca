"""JSON lines read column by column with Arrow's JSON reader, where that gives exactly the rows of
:class:`~changeflow.connectors.formats.JsonFormat`'s own reader.

The record-by-record reader (``json.loads`` and a Python conversion per value)
takes about 20 µs per Nexmark event: 2 of the 2.8 CPU seconds the driver spent
on Nexmark q18 over 100,000 events went into reading the event file
(docs/benchmarks.md, "The driver's JSON read"). Arrow's reader parses in C++.

It is used only where it cannot differ from the record reader; anything else
returns None and the caller reads records (which also reports bad records as
it always did):

- every column is of a type read here (integers, DOUBLE, BOOLEAN, character
  strings, TIMESTAMP, ROWs of these); each JSON value must already have the
  JSON type the column reads without conversion (a number for an integer or
  DOUBLE column, a string for a string or TIMESTAMP column, ``true``/``false``,
  an object for a ROW): Arrow's reader, given those JSON types as an explicit
  schema, fails on any other (``"12"`` for an integer, ``2.0`` for an
  integer, a key given twice), so the conversions the record reader makes
  (numbers from strings, truncation, the last of two keys) never happen here;
- integers fit their column's range; a TIMESTAMP's text is exactly
  ``yyyy-MM-dd[ T]HH:mm[:ss[.S..S]]`` with a valid hour, minute and second and at
  most 6 fraction digits (the record reader strips spaces and truncates
  nanoseconds; Arrow's parser accepts more forms);
- every non-blank line holds one object: it begins with ``{`` and ends with
  ``}`` (so no object spans lines: a line continuing one would begin with
  ``,``, ``}``, ``]``, a key or ``:``...), and Arrow read as many rows as there are
  such lines (two objects on one line are two rows to Arrow, an error to the
  record reader);
- ``json.fail-on-missing-field`` is off: Arrow cannot tell a missing field from a null.
"""

from __future__ import annotations

import importlib
from typing import Any

import pyarrow as pa
import pyarrow.json as pa_json

from changeflow.common.type_values import arrow_type

# Arrow's compute functions are generated when the module is imported: a type checker cannot see them.
pc: Any = importlib.import_module("pyarrow.compute")
_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_STRINGS = {"STRING", "VARCHAR", "CHAR"}
# The record reader's timestamp pattern, without its stripping and nanoseconds, and with the
# ranges Python's datetime.time checks (RE2's \d is ASCII only, as the digits int() takes here).
_TIMESTAMP = r"^\d{4}-\d{2}-\d{2}[ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?$"
_YEAR_ONE_US = -62_135_596_800_000_000   # 0001-01-01 00:00:00 in microseconds since the epoch


def _json_type(t) -> pa.DataType | None:
    """The Arrow type Arrow's reader gives the JSON values of a column of type ``t``; None if not read here."""
    root = t.root
    if root in _INTEGER_BITS:
        return pa.int64()
    if root == "DOUBLE":
        return pa.float64()
    if root == "BOOLEAN":
        return pa.bool_()
    if root in _STRINGS or root == "TIMESTAMP":
        return pa.string()
    if root == "ROW":
        fields = [(name, _json_type(ft)) for name, ft in t.params]
        if any(ft is None for _, ft in fields) or len({n for n, _ in fields}) != len(fields):
            return None
        return pa.struct(fields)
    return None


def read_json_lines(data: bytes, schema: tuple) -> pa.Table | None:
    """The rows of JSON lines ``data`` as a table typed by ``schema`` (``(name, type)`` pairs, the
    engine's Arrow types), or None where the record reader must read them (see the module docstring)."""
    if len({name for name, _ in schema}) != len(schema):
        return None
    json_types = [_json_type(t) for _, t in schema]
    if any(jt is None for jt in json_types):
        return None
    lines = _object_lines(data)
    if lines is None:
        return None
    target = pa.schema([pa.field(n, arrow_type(t)) for n, t in schema])
    if lines == 0:
        return target.empty_table()
    options = pa_json.ParseOptions(
        explicit_schema=pa.schema([(name, jt) for (name, _), jt in zip(schema, json_types, strict=True)]),
        unexpected_field_behavior="ignore")   # Flink's JSON format ignores fields the table lacks
    try:
        table = pa_json.read_json(pa.BufferReader(data), parse_options=options)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    if table.num_rows != lines:
        return None
    columns = []
    for name, t in schema:
        column = _convert(table.column(name).combine_chunks(), t)
        if column is None:
            return None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=target)


def _object_lines(data: bytes) -> int | None:
    """How many non-blank lines ``data`` has, each beginning with ``{`` and ending with ``}``; None if one does
    not, or if ``data`` is not UTF-8 (Arrow's reader does not check the bytes of strings)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    count = 0
    for line in data.split(b"\n"):
        line = line.strip()
        if not line:
            continue
        if line[0] != 0x7B or line[-1] != 0x7D:   # '{' ... '}'
            return None
        count += 1
    return count


def _convert(values: pa.Array, t) -> pa.Array | None:
    """The JSON values of one column as the column's engine type, or None if the record reader would differ."""
    root = t.root
    target = arrow_type(t)
    if root in _INTEGER_BITS:
        bits = _INTEGER_BITS[root]
        if bits < 64 and values.null_count < len(values):
            low, high = pc.min_max(values).values()
            if low.as_py() < -(1 << (bits - 1)) or high.as_py() >= 1 << (bits - 1):
                return None   # the record reader's out-of-range error
        return values.cast(target)
    if root in ("DOUBLE", "BOOLEAN") or root in _STRINGS:
        return values.cast(target)
    if root == "TIMESTAMP":
        return _timestamps(values, target)
    # a ROW: its fields by name, null where the object was null
    assert isinstance(values, pa.StructArray)
    children = []
    for child_values, (_, ft) in zip(values.flatten(), t.params, strict=True):
        child = _convert(child_values, ft)
        if child is None:
            return None
        children.append(child)
    return pa.StructArray.from_arrays(children, fields=list(target), mask=values.is_null())


def _timestamps(values: pa.Array, target: pa.DataType) -> pa.Array | None:
    present = values.drop_null()
    if len(present) and not pc.all(pc.match_substring_regex(present, _TIMESTAMP)).as_py():
        return None
    try:
        out = values.cast(target)   # an invalid day (Feb 30) fails here, as in the record reader
    except pa.ArrowInvalid:
        return None
    if out.null_count < len(out) and pc.min(out.cast(pa.int64())).as_py() < _YEAR_ONE_US:
        return None   # year 0: Python's dates begin at year 1
    return out
