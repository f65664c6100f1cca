"""Drive a kernel with Flink-style records and assert the exact changelog it emits.

Mirrors Flink's operator test harness: build input with :func:`insert_record`,
:func:`update_before_record`, :func:`update_after_record`,
:func:`delete_record`; feed a list of them as one batch with
:meth:`KernelHarness.process`; compare the emitted rows, kinds included, with
:func:`assert_changelog`. :func:`materialize` applies a changelog to an empty
table, which is how the streaming result is compared with a batch result.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.kernels.aggregate import AggCall, GroupAggregate
>>> agg = GroupAggregate(["k"], [AggCall("count_star", None, None, "n")],
...                      mini_batch=False, input_insert_only=False)
>>> h = KernelHarness(agg, ["k"])
>>> format_changes(h.process([insert_record("a"), insert_record("a"), delete_record("a")]))
['+I[a, 1]', '-U[a, 1]', '+U[a, 2]', '-U[a, 2]', '+U[a, 1]']
>>> materialize(h.changes)
[<Row('a', 1)>]
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Protocol, Sequence

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.state import InMemoryKeyedState, KeyedState


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


class Kernel(Protocol):
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame: ...


class KernelHarness:
    """Feeds batches of records to a kernel and collects the changes it emits.

    ``columns`` names the input fields in record order. ``dtypes`` optionally
    fixes a column's pandas dtype; otherwise it is inferred from the values
    (int -> ``Int64``, float -> ``Float64``, bool -> ``boolean``, else object).
    Records get increasing ``_seq`` stamps across batches. The harness keeps
    one :class:`InMemoryKeyedState` (or the ``state`` given) for its lifetime.
    """

    def __init__(
        self,
        kernel: Kernel,
        columns: Sequence[str],
        *,
        dtypes: dict[str, Any] | None = None,
        state: KeyedState | None = None,
    ) -> None:
        self.kernel = kernel
        self.columns = list(columns)
        self.dtypes = dict(dtypes or {})
        self.state = state if state is not None else InMemoryKeyedState()
        self.changes: list[Row] = []  # everything emitted so far
        self._next_seq = 0
        self.now = 0  # processing time (ms) of a kernel with a state TTL, once set_time is called

    def set_time(self, now_ms: int) -> None:
        """Set the processing time (ms) a kernel with a state TTL reads from its ``clock``.

        The kernels take time from the caller (the Spark runtime gives them the
        micro-batch's timestamp); this drives it by hand, e.g. to let a key expire.
        """
        self.now = int(now_ms)
        self.kernel.clock = lambda: self.now

    def sweep(self) -> int | None:
        """Run the kernel's state TTL sweep at the harness's time (:meth:`set_time`).

        Returns what the kernel's ``sweep`` returns: when the next sweep is due, or None.
        """
        return self.kernel.sweep(self.state, self.now)

    def process(self, records: Iterable[Row]) -> list[Row]:
        """Feed ``records`` as one batch; return the changes it emitted."""
        out = self.process_frame(self.frame(records))
        rows = rows_of(out, [c for c in out.columns if c not in (KIND, SEQ, SUB)])
        self.changes.extend(rows)
        return rows

    def process_each(self, records: Iterable[Row]) -> list[Row]:
        """Feed ``records`` one batch per record; return all changes emitted."""
        out: list[Row] = []
        for record in records:
            out.extend(self.process([record]))
        return out

    def process_frame(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Feed a ready changelog frame (with bookkeeping columns) as one batch.

        Returns the kernel's output frame as is; it is not added to :attr:`changes`.
        """
        return self.kernel.process(batch, self.state)

    def frame(self, records: Iterable[Row]) -> pd.DataFrame:
        """The changelog frame of ``records``, stamped with the next ``_seq`` values."""
        records = list(records)
        for r in records:
            if len(r) != len(self.columns):
                raise ValueError(f"record {r!r} has {len(r)} fields, expected {len(self.columns)}: {self.columns}")
        data = {}
        for i, name in enumerate(self.columns):
            values = [r[i] for r in records]
            dtype = self.dtypes.get(name) or _infer_dtype(values)
            data[name] = _objects(values) if dtype == object else pd.array(values, dtype=dtype)
        data[KIND] = np.array([r.get_row_kind().value for r in records], dtype=np.int8)
        data[SEQ] = np.arange(self._next_seq, self._next_seq + len(records), dtype=np.int64)
        data[SUB] = np.zeros(len(records), dtype=np.int64)
        self._next_seq += len(records)
        return pd.DataFrame(data)


def rows_of(frame: pd.DataFrame, columns: Sequence[str]) -> list[Row]:
    """The rows of a changelog frame as :class:`Row` values with their kinds (nulls as None)."""
    kinds = frame[KIND].tolist() if len(frame) else []
    cols = [_python_values(frame[c]) for c in columns]
    return [Row.of(RowKind(k), values) for k, values in zip(kinds, zip(*cols))] if cols else [
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
        a.get_row_kind() == e.get_row_kind() and _values_equal(tuple(a), tuple(e)) for a, e in zip(actual, expected)
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


def _infer_dtype(values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "boolean"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "Int64"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "Float64"
    return object


def _objects(values: list[Any]) -> np.ndarray:
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
    for x, y in zip(a, b):
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
