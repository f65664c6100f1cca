"""Flink-style changelog records for tests: builders, printing, comparison, materialization.

Build input with :func:`insert_record`, :func:`update_before_record`,
:func:`update_after_record`, :func:`delete_record`; compare changelogs row by
row, kinds included, with :func:`assert_changelog`; :func:`materialize` applies
a changelog to an empty table, which is how the streaming result is compared
with a batch result.

>>> format_changes([insert_record("a", 1), update_after_record("a", None)])
['+I[a, 1]', '+U[a, null]']
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.kernels.changelog import KIND


def insert_record(*values: Any) -> Row:
    """A ``+I`` row (Flink's ``insertRecord``)."""
    return Row.of(RowKind.INSERT, values)


def update_before_record(*values: Any) -> Row:
    """A ``-U`` row (Flink's ``updateBeforeRecord``)."""
    return Row.of(RowKind.UPDATE_BEFORE, values)


def update_after_record(*values: Any) -> Row:
    """A ``+U`` row (Flink's ``updateAfterRecord``)."""
    return Row.of(RowKind.UPDATE_AFTER, values)


def delete_record(*values: Any) -> Row:
    """A ``-D`` row (Flink's ``deleteRecord``)."""
    return Row.of(RowKind.DELETE, values)


def row_of_kind(kind: RowKind | str, *values: Any) -> Row:
    """A row of any kind, e.g. ``row_of_kind("+U", "a", 2)`` (Flink's ``rowOfKind``)."""
    if isinstance(kind, str):
        kind = RowKind.from_short_string(kind)
    return Row.of(kind, values)


def rows_of(frame: pd.DataFrame, columns: Sequence[str]) -> list[Row]:
    """The rows of a changelog frame as :class:`Row` values with their kinds (nulls as None).

    A frame without ``_kind`` (a DataStream kernel's records) gives ``+I`` rows.
    """
    if KIND in frame.columns:
        kinds = frame[KIND].tolist() if len(frame) else []
    else:
        kinds = [RowKind.INSERT.value] * len(frame)
    by_name = dict(frame.items())
    cols = [_python_values(by_name[c]) for c in columns]
    return [Row.of(RowKind(k), values) for k, values in zip(kinds, zip(*cols, strict=True), strict=True)] if cols else [
        Row.of(RowKind(k), ()) for k in kinds
    ]


def format_change(row: Row) -> str:
    """Flink's printed form of a change: ``+U[a, 2]``."""
    return f"{row.get_row_kind()}[{', '.join(_format_value(v) for v in row)}]"


def format_changes(rows: Iterable[Row]) -> list[str]:
    return [format_change(r) for r in rows]


def assert_changelog(actual: Iterable[Row], expected: Iterable[Row]) -> None:
    """Assert two changelogs are equal row by row, kinds included (floats to 1e-9 relative).

    >>> assert_changelog([insert_record("a", 1)], [insert_record("a", 1)])
    >>> assert_changelog([insert_record("a", 1)], [update_after_record("a", 1)])
    Traceback (most recent call last):
    ...
    AssertionError: changelogs differ
      actual:   ['+I[a, 1]']
      expected: ['+U[a, 1]']
    """
    actual, expected = list(actual), list(expected)
    same = len(actual) == len(expected) and all(
        a.get_row_kind() == e.get_row_kind() and _values_equal(tuple(a), tuple(e))
        for a, e in zip(actual, expected, strict=True)
    )
    if not same:
        raise AssertionError(
            f"changelogs differ\n  actual:   {format_changes(actual)}\n  expected: {format_changes(expected)}"
        )


def materialize(changes: Iterable[Row]) -> list[Row]:
    """Apply a changelog to an empty table; return the table's rows (as +I rows, sorted).

    Raises ``ValueError`` when a ``-U`` / ``-D`` retracts a row the table does not hold.

    >>> materialize([insert_record("a", 1), update_before_record("a", 1), update_after_record("a", 2)])
    [<Row('a', 2)>]
    >>> materialize([delete_record("a", 1)])
    Traceback (most recent call last):
    ...
    ValueError: -D[a, 1] retracts a row that is not in the table
    """
    table: dict[str, list[tuple]] = {}
    for change in changes:
        values = tuple(change)
        key = _canonical(values)  # values may be unhashable (COLLECT's dicts)
        if change.get_row_kind().is_retraction():
            held = table.get(key)
            if not held:
                raise ValueError(f"{format_change(change)} retracts a row that is not in the table")
            held.pop()
            if not held:
                del table[key]
        else:
            table.setdefault(key, []).append(values)
    rows = [Row(*values) for held in table.values() for values in held]
    return sorted(rows, key=_canonical)


def materialize_table(table) -> list[Row]:
    """Run a Table API / SQL ``table`` and materialize its changelog (see :func:`materialize`).

    In batch mode that is the result itself; in streaming mode it is the table the
    changelog builds, which the invariant requires to equal the batch result.
    """
    with table.execute().collect() as changes:
        return materialize(changes)


# --- helpers ----------------------------------------------------------------------------


def infer_dtype(values: list[Any]) -> Any:
    """The pandas dtype a column of these Python values gets: ``Int64``, ``Float64``, ``boolean`` or object."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "boolean"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "Int64"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "Float64"
    return object


def object_array(values: list[Any]) -> np.ndarray:
    """An object array of ``values`` (list values stay whole)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _python_values(column: pd.Series) -> list[Any]:
    values = column.astype(object).tolist()
    return [None if _is_null(v) else (v.item() if isinstance(v, np.generic) else v) for v in values]


def _is_null(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _format_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format_value(k)}={c}" for k, c in value.items()) + "}"
    return str(value)


def _values_equal(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if type(x) is not type(y):  # 3 and 3.0 differ: result types are part of the contract
            return False
        if isinstance(x, float):
            if not (math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(x) and math.isnan(y))):
                return False
        elif x != y:
            return False
    return True


def _canonical(values: tuple) -> str:
    """A text key equal for equal rows (dicts compare regardless of insertion order)."""

    def canon(v: Any) -> Any:
        if isinstance(v, dict):
            return ("dict", sorted((repr(k), c) for k, c in v.items()))
        return (type(v).__name__, repr(v))

    return repr([canon(v) for v in values])
