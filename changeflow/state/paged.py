"""Kernel state kept in pages of keys, for state stores with costly round trips.

Spark's state API costs a socket round trip (about 70 µs here) per call, so one
value per group key would cost more than the aggregation itself. Instead each
hash bucket of keys keeps a map ``page id -> pickled page``; a page holds the
rows of a few hundred keys for every state table of the kernel. A batch reads
each page it needs once and writes each changed page once.

The store only needs ``getValue((page,))``, ``updateValue((page,), (blob,))``
and ``removeKey((page,))``: Spark's ``MapState``, or a dict-backed fake in tests.
"""

from __future__ import annotations

import pickle
from typing import Protocol

import numpy as np
import pandas as pd


class PageStore(Protocol):
    def getValue(self, key: tuple) -> tuple | None: ...
    def updateValue(self, key: tuple, value: tuple) -> None: ...
    def removeKey(self, key: tuple) -> None: ...


class PagedKeyedState:
    """:class:`~changeflow.kernels.state.KeyedState` over a :class:`PageStore`.

    Reads go through a per-batch page cache; :meth:`commit` writes the pages the
    batch changed. Create one per batch (the processor object Spark gives us is
    recreated every micro-batch, so nothing is cached across batches).

    >>> store = DictPageStore()
    >>> state = PagedKeyedState(store, ["k"], pages=4)
    >>> keys = pd.DataFrame({"k": [1, 2]})
    >>> state.store("acc", keys, pd.DataFrame({"k": [1, 2], "s": [10, 20]}))
    >>> state.commit()
    >>> PagedKeyedState(store, ["k"], pages=4).load("acc", pd.DataFrame({"k": [2]})).to_dict("list")
    {'k': [2], 's': [20]}
    """

    def __init__(self, store: PageStore, key_columns: list[str], pages: int) -> None:
        self._store = store
        self._keys = list(key_columns)
        self._pages = pages
        self._cache: dict[int, dict[str, pd.DataFrame]] = {}
        self._dirty: set[int] = set()

    # --- KeyedState -------------------------------------------------------------------
    def load(self, table: str, keys: pd.DataFrame) -> pd.DataFrame:
        rows = self._stored(table, np.unique(self._page_of(keys)))
        if rows is None:
            return pd.DataFrame({k: keys[k].iloc[:0] for k in self._keys})
        return _rows_of(rows, keys, self._keys, keep=True)

    def store(self, table: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
        # One merge and one sort per call, whatever the number of pages: per-page
        # pandas calls would cost more than the aggregation itself.
        touched = np.unique(np.concatenate([self._page_of(keys), self._page_of(rows)]))
        old = self._stored(table, touched)
        kept = _rows_of(old, keys, self._keys, keep=False) if old is not None else None
        parts = [f for f in (kept, rows) if f is not None and len(f)]
        merged = pd.concat(parts, ignore_index=True) if len(parts) > 1 else (
            parts[0].reset_index(drop=True) if parts else rows.iloc[:0])
        by_page = _split_by_page(merged, self._page_of(merged))
        empty = merged.iloc[:0]
        for p in touched:
            p = int(p)
            self._page(p)[table] = by_page.get(p, empty)
            self._dirty.add(p)

    def _stored(self, table: str, page_ids: np.ndarray) -> pd.DataFrame | None:
        """All stored rows of ``table`` in the given pages, or None."""
        frames = [self._page(p).get(table) for p in page_ids]
        frames = [f for f in frames if f is not None and len(f)]
        if not frames:
            return None
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    # --- persistence ------------------------------------------------------------------
    def commit(self) -> None:
        """Write every page changed since this object was made."""
        for p in sorted(self._dirty):
            page = {t: f for t, f in self._cache[p].items() if len(f)}
            if page:
                self._store.updateValue((p,), (pickle.dumps(page, protocol=5),))
            else:
                self._store.removeKey((p,))
        self._dirty.clear()

    def _page(self, page_id: int) -> dict[str, pd.DataFrame]:
        page_id = int(page_id)
        if page_id not in self._cache:
            value = self._store.getValue((page_id,))
            self._cache[page_id] = pickle.loads(value[0]) if value is not None else {}
        return self._cache[page_id]

    def _page_of(self, frame: pd.DataFrame) -> np.ndarray:
        if not self._keys or not len(frame):
            return np.zeros(len(frame), dtype=np.int64)
        hashes = pd.util.hash_pandas_object(frame[self._keys], index=False).to_numpy()
        return (hashes % np.uint64(self._pages)).astype(np.int64)


def _split_by_page(frame: pd.DataFrame, pages: np.ndarray) -> dict[int, pd.DataFrame]:
    if not len(frame):
        return {}
    order = np.argsort(pages, kind="stable")
    sorted_pages = pages[order]
    frame = frame.iloc[order].reset_index(drop=True)
    bounds = np.flatnonzero(np.diff(sorted_pages)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(frame)]])
    return {int(sorted_pages[a]): frame.iloc[a:b].reset_index(drop=True) for a, b in zip(starts, ends)}


def _rows_of(rows: pd.DataFrame, keys: pd.DataFrame, key_columns: list[str], keep: bool) -> pd.DataFrame:
    """Rows whose key is (keep=True) or is not (keep=False) among ``keys``."""
    if not key_columns:
        return rows if keep else rows.iloc[:0]
    marker = keys[key_columns].drop_duplicates().assign(__hit=True)
    merged = rows.merge(marker, on=key_columns, how="left", sort=False)
    hit = merged["__hit"].notna().to_numpy()
    return rows[hit if keep else ~hit].reset_index(drop=True)


class DictPageStore:
    """An in-memory :class:`PageStore`, for tests and the pure-Python harness."""

    def __init__(self) -> None:
        self.pages: dict[tuple, tuple] = {}
        self.calls = 0

    def getValue(self, key: tuple) -> tuple | None:
        self.calls += 1
        return self.pages.get(key)

    def updateValue(self, key: tuple, value: tuple) -> None:
        self.calls += 1
        self.pages[key] = value

    def removeKey(self, key: tuple) -> None:
        self.calls += 1
        self.pages.pop(key, None)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"DictPageStore({len(self.pages)} pages)"


