"""Keyed state for kernels: the storage contract and an in-memory implementation.

A kernel keeps nothing between calls; everything it must remember lives in a
:class:`KeyedState`, organised as named *tables*. Every row of a table starts
with the grouping-key columns; the remaining columns belong to the kernel. A
table may hold several rows per key (an exploded multiset ``key, value, count``)
so that the kernel can merge it with a batch using vectorised operations.

Kernels read and write state a whole batch at a time: one :meth:`KeyedState.load`
and one :meth:`KeyedState.store` per table per ``process()`` call. Work that
concerns every key of a state rather than the keys of a batch (the sink upsert
materializer's TTL sweep) reads a whole table with :meth:`KeyedState.scan`. The Spark
runtime implements the protocol with pages of keys in RocksDB, where every call
is a socket round trip, so the per-call cost matters more than the row count.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd


LATE_RECORDS = "late_records"
"""The state table where an event-time kernel counts the rows it dropped as late: one row under the
all-null key with a ``records`` count (state metrics sum it; it is not a key of the operator)."""

NEXT_END = "next_end"
"""The state table where the window aggregation keeps the earliest end of its pending windows (its
next event-time timer): one row under the all-null key with an ``end``, not a key of the operator."""

OPEN_ENDS = "open_ends"
"""The state table where the window aggregation keeps the ends of the windows it holds state for: one
row per end (``end``) under the all-null key, so a micro-batch knows which of its windows have none."""

BUCKET_TABLES = frozenset({LATE_RECORDS, NEXT_END, OPEN_ENDS})
"""State tables of one row per bucket under the all-null key: state metrics count no key or row of them."""


def null_key(keys: list[str]) -> pd.DataFrame:
    """The all-null key of ``keys`` (the one empty key without key columns): where a kernel keeps what
    belongs to its bucket rather than to one key. No row of a real key is stored under it by
    kernels whose keys are never all null (a window's start and end are never null)."""
    if not keys:
        return pd.DataFrame(index=pd.RangeIndex(1))
    return pd.DataFrame({k: pd.Series([None], dtype=object) for k in keys})


def count_late_records(state: "KeyedState", keys: list[str], n: int) -> None:
    """Add ``n`` to the bucket's count of rows dropped as late (:data:`LATE_RECORDS`)."""
    key = null_key(keys)
    before = state.load(LATE_RECORDS, key)
    total = n + (int(before["records"].iloc[0]) if len(before) else 0)
    state.store(LATE_RECORDS, key, key.assign(records=np.asarray([total], dtype=np.int64)))


def late_record_total(state: "KeyedState") -> int:
    """How many rows were dropped as late, over ``state``'s buckets (:data:`LATE_RECORDS`)."""
    rows = state.scan(LATE_RECORDS)
    return int(rows["records"].sum()) if len(rows) else 0


# The stored earliest pending window end when no window is pending: no watermark reaches it.
NO_PENDING_END = np.iinfo(np.int64).max


def load_next_end(state: "KeyedState", keys: list[str]) -> int | None:
    """The earliest end (ms) a pending window of the bucket may have (:data:`NEXT_END`); None when not stored."""
    row = state.load(NEXT_END, null_key(keys))
    return int(row["end"].iloc[0]) if len(row) else None


def store_next_end(state: "KeyedState", keys: list[str], end: int | None) -> None:
    """Keep ``end`` as the bucket's earliest pending window end (None: no window pending)."""
    key = null_key(keys)
    state.store(NEXT_END, key, key.assign(end=np.asarray([NO_PENDING_END if end is None else end], dtype=np.int64)))


@runtime_checkable
class KeyedState(Protocol):
    """Tables of per-key rows, read and written a batch of keys at a time.

    A null in a key column is an ordinary key value: rows stored under a null
    key are found again by loading a null key.
    """

    def load(self, table: str, keys: pd.DataFrame) -> pd.DataFrame:
        """All stored rows of ``table`` whose key columns equal a row of ``keys``.

        Returns an empty frame when there are none (its columns may then be only
        the key columns).
        """
        ...

    def store(self, table: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
        """Replace every stored row of ``keys`` in ``table`` by ``rows``.

        Keys without a row in ``rows`` are deleted. ``rows`` starts with the key
        columns of ``keys`` and may only hold rows of those keys.
        """
        ...

    def scan(self, table: str) -> pd.DataFrame:
        """Every stored row of ``table``, whatever its key, in no particular order.

        Returns an empty frame when there are none (possibly without columns).
        It reads the whole table: for work on every key (a TTL sweep), not per batch.
        """
        ...


class InMemoryKeyedState:
    """A :class:`KeyedState` in a Python dict, for tests and single-process runs.

    Rows are kept as tuples under their key tuple; each table remembers the
    column names and pandas dtypes of its last store so loads return the same
    dtypes.

    >>> state = InMemoryKeyedState()
    >>> keys = pd.DataFrame({"k": ["a", None]})
    >>> state.store("acc", keys, pd.DataFrame({"k": ["a", None, None], "n": [1, 2, 3]}))
    >>> state.load("acc", pd.DataFrame({"k": [None]})).to_dict("list")
    {'k': [None, None], 'n': [2, 3]}
    >>> state.store("acc", pd.DataFrame({"k": [None]}), pd.DataFrame({"k": [], "n": []}))
    >>> state.load("acc", keys).to_dict("list")
    {'k': ['a'], 'n': [1]}
    >>> state.scan("acc").to_dict("list"), len(state.scan("nothing"))
    ({'k': ['a'], 'n': [1]}, 0)
    """

    def __init__(self) -> None:
        self._tables: dict[str, _Table] = {}

    def load(self, table: str, keys: pd.DataFrame) -> pd.DataFrame:
        stored = self._tables.get(table)
        if stored is None:
            return pd.DataFrame({c: pd.Series([], dtype=keys[c].dtype) for c in keys.columns})
        records: list[tuple] = []
        for key in set(_key_tuples(keys)):
            records.extend(stored.rows.get(key, ()))
        return stored.frame(records)

    def store(self, table: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
        key_names = list(keys.columns)
        if list(rows.columns[: len(key_names)]) != key_names:
            raise ValueError(
                f"rows of state table {table!r} must start with the key columns {key_names}, "
                f"got {list(rows.columns)}"
            )
        stored = self._tables.get(table)
        if stored is None or len(rows):
            stored = _Table(list(rows.columns), dict(rows.dtypes), stored.rows if stored else {})
            self._tables[table] = stored
        replaced = set(_key_tuples(keys))
        for key in replaced:
            stored.rows.pop(key, None)
        # Whole rows with nulls unified column by column (_key_tuples), the key being their first fields:
        # per-value null checks cost more than the kernels' own work in the materializer benchmark.
        nk = len(key_names)
        for record in _key_tuples(rows):
            key = record[:nk]
            if key not in replaced:
                raise ValueError(f"state table {table!r}: row {record!r} is not under one of the stored keys")
            stored.rows.setdefault(key, []).append(record)

    def scan(self, table: str) -> pd.DataFrame:
        stored = self._tables.get(table)
        if stored is None:
            return pd.DataFrame()
        return stored.frame([r for rows in stored.rows.values() for r in rows])

    def tables(self) -> list[str]:
        """Names of the tables stored so far (for tests and debugging)."""
        return sorted(self._tables)

    def row_count(self, table: str) -> int:
        """Number of rows stored in ``table`` over all keys."""
        stored = self._tables.get(table)
        return 0 if stored is None else sum(len(r) for r in stored.rows.values())


class _Table:
    def __init__(self, columns: list[str], dtypes: dict[str, Any], rows: dict[tuple, list[tuple]]):
        self.columns = columns
        self.dtypes = dtypes
        self.rows = rows

    def frame(self, records: list[tuple]) -> pd.DataFrame:
        columns = list(zip(*records, strict=True)) if records else [()] * len(self.columns)
        data = {}
        for name, values in zip(self.columns, columns, strict=True):
            dtype = self.dtypes[name]
            if dtype == np.dtype(object):
                # Build object columns by hand: pandas would try to unpack list values.
                series = pd.Series([None] * len(values), dtype=object)
                series[:] = _object_array(values)
            else:
                series = pd.Series(list(values), dtype=dtype)
            data[name] = series
        return pd.DataFrame(data)


def _object_array(values) -> Any:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _key_tuples(frame: pd.DataFrame) -> list[tuple]:
    """One hashable tuple per row, with every kind of null turned into None.

    pd.NA and NaN do not compare equal to themselves; None does, so stored rows
    compare and pickle predictably.
    """
    if len(frame.columns) == 0:
        return [()] * len(frame)
    columns = []
    for i in range(len(frame.columns)):
        col = frame.iloc[:, i]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iub":
            columns.append(col.tolist())  # cannot hold nulls
            continue
        values = col.astype(object).tolist()
        if col.hasnans:
            nulls = col.isna().tolist()
            values = [None if null else v for v, null in zip(values, nulls, strict=True)]
        columns.append(values)
    return list(zip(*columns, strict=True))

