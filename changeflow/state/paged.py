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
from typing import Callable, Protocol, cast

import numpy as np
import pandas as pd
from pandas.util import hash_array

from changeflow.kernels.frames import array_of, column, same_dtype_values

# pandas.util hands hash_array out from a module __getattr__, which pyright reads as the
# union of everything that __getattr__ returns; this is the function's real signature.
_hash_array = cast(Callable[..., np.ndarray], hash_array)


def _hash_columns(values: list) -> np.ndarray:
    """``hash_pandas_object(frame, index=False)`` of a frame of these columns' values, without the frame.

    A page is where its keys hash, so the numbers must stay those of ``hash_pandas_object``
    (a checkpoint written before must still be read; a test compares the two): each column
    hashed by pandas' public ``hash_array``, the columns' hashes then mixed into one as pandas
    mixes a frame's (a multiply-xor chain over the columns in order). Building the sub-frame
    and its Series cost more than the hashing on a bucket's few hundred keys, at every state
    load and store.
    """
    mixed = np.full(len(values[0]), 0x345678, dtype=np.uint64)
    factor = np.uint64(1000003)
    for position, column_values in enumerate(values):
        mixed ^= _hash_array(column_values)
        mixed *= factor
        factor += np.uint64(82520 + 2 * (len(values) - position))
    return mixed + np.uint64(97531)


# Rows per page of growing paged state (the materializer's multiset tables): large
# enough that a micro-batch of a few thousand records touches tens of pages (one
# state round trip each, about 70 µs on Spark), small enough that reading one
# element's page stays cheap.
ROWS_PER_GROWING_PAGE = 256


class PageStore(Protocol):
    def getValue(self, key: tuple) -> tuple | None: ...
    def updateValue(self, key: tuple, value: tuple) -> None: ...
    def removeKey(self, key: tuple) -> None: ...


class PagedKeyedState:
    """:class:`~changeflow.kernels.state.KeyedState` over a :class:`PageStore`.

    ``key_columns`` is the grouping key (the columns of the operator's key,
    with which every table's keys start). A table may extend it: the ordered
    multiset's node table is keyed by the key plus ``_sqn``. Rows are matched
    on *every* column of the keys frame a call is given, and each row lives in
    the page its full key hashes to, so an operation on one element of a long
    history reads that element's page, not the whole history.

    Pages: a fixed ``pages`` per bucket (the group aggregation, joins, ranks:
    a batch touches many keys, so a few large pages mean few round trips), or,
    with ``rows_per_page``, a page count that doubles whenever the bucket holds
    more than ``rows_per_page`` rows per page on average (every page is then
    split in two: O(rows) once per doubling, amortised O(1) per row, as a hash
    table's resize). The page count and row count live in a directory value
    under page id -1, read once per batch. Growing pages keep the state one
    record touches bounded however long a key's history gets; with them, the
    multiset's ``_sqn`` is hashed in blocks of 64, so that neighbouring elements
    (a batch's appends at a history's tail, its retractions at the head) share
    pages.

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

    A table keyed by ``k`` plus ``n`` keeps each ``(k, n)`` row on its own:

    >>> state = PagedKeyedState(store, ["k"], pages=1, rows_per_page=2)
    >>> nodes = pd.DataFrame({"k": [1, 1, 1], "n": [0, 1, 2], "v": ["a", "b", "c"]})
    >>> state.store("node", nodes[["k", "n"]], nodes)
    >>> state.commit()
    >>> state = PagedKeyedState(store, ["k"], pages=1, rows_per_page=2)
    >>> state.load("node", pd.DataFrame({"k": [1], "n": [1]})).to_dict("list"), state.page_count
    ({'k': [1], 'n': [1], 'v': ['b']}, 2)

    :meth:`scan` reads a table's rows on every page (for work on every key):

    >>> sorted(state.scan("node")["v"])
    ['a', 'b', 'c']
    """

    def __init__(self, store: PageStore, key_columns: list[str], pages: int,
                 rows_per_page: int | None = None, operator: str | None = None) -> None:
        if rows_per_page is not None and rows_per_page < 1:
            raise ValueError(f"rows_per_page must be at least 1, got {rows_per_page}")
        self._store = store
        self._operator = operator  # written once per bucket under page id -2, for state metrics
        self._keys = list(key_columns)
        self._base_pages = pages
        self._rows_per_page = rows_per_page
        self._cache: dict[int, dict[str, pd.DataFrame]] = {}
        self._loaded_rows: dict[int, int] = {}  # rows a page held when read (for the directory's count)
        self._dirty: set[int] = set()
        self._directory: dict | None = None

    @property
    def page_count(self) -> int:
        """The number of pages rows are spread over now."""
        return self._base_pages << self._dir()["level"] if self._rows_per_page else self._base_pages

    # --- KeyedState -------------------------------------------------------------------
    def load(self, table: str, keys: pd.DataFrame) -> pd.DataFrame:
        columns = self._key_columns(keys)
        rows = self._stored(table, np.unique(self._page_of(keys, columns)))
        if rows is None:
            return pd.DataFrame({k: keys[k].iloc[:0] for k in columns})
        return _rows_of(rows, keys, columns, keep=True)

    def store(self, table: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
        # One merge, one sort and one copy per call, whatever the number of pages: per-page
        # pandas calls would cost more than the aggregation itself. A kept row stays on the
        # page it was read from, so only the new rows are hashed.
        columns = self._key_columns(keys)
        if self._rows_per_page:
            self._dir()["keys"].setdefault(table, columns)
        row_pages = self._page_of(rows, columns)
        touched = np.unique(np.concatenate([self._page_of(keys, columns), row_pages]))
        old, old_pages = self._stored_with_pages(table, touched)
        parts, pages = [rows], [row_pages]
        if old is not None:
            kept = ~_hits(old, keys, columns)
            if kept.all():
                parts, pages = [old, rows], [old_pages, row_pages]
            elif kept.any():
                parts, pages = [old.loc[kept], rows], [old_pages[kept], row_pages]
        parts_pages = [(f, p) for f, p in zip(parts, pages, strict=True) if len(f)]
        if not parts_pages:
            merged, merged_pages = rows.iloc[:0], np.zeros(0, dtype=np.int64)
        elif len(parts_pages) == 1:
            merged, merged_pages = parts_pages[0]
        else:
            merged = pd.concat([f for f, _ in parts_pages], ignore_index=True)
            merged_pages = np.concatenate([p for _, p in parts_pages])
        by_page = _split_by_page(merged, merged_pages)
        empty: pd.DataFrame = merged.iloc[:0].reset_index(drop=True)
        for p in touched:
            p = int(p)
            self._page(p)[table] = by_page.get(p, empty)
            self._dirty.add(p)

    def scan(self, table: str) -> pd.DataFrame:
        """Every row of ``table`` in the bucket: reads every page once (one round trip each).

        Pages hold every table's rows, so a scan reads the bucket's whole state;
        later loads and stores in the same batch then find the pages cached.
        """
        rows = self._stored(table, np.arange(self.page_count))
        return pd.DataFrame() if rows is None else rows.reset_index(drop=True)

    def _key_columns(self, keys: pd.DataFrame) -> list[str]:
        columns = list(keys.columns)
        if columns[:len(self._keys)] != self._keys:
            raise ValueError(f"state keys {columns} do not start with the operator's key columns {self._keys}")
        return columns

    def _stored(self, table: str, page_ids: np.ndarray) -> pd.DataFrame | None:
        """All stored rows of ``table`` in the given pages, or None."""
        return self._stored_with_pages(table, page_ids)[0]

    def _stored_with_pages(self, table: str, page_ids: np.ndarray) -> tuple[pd.DataFrame | None, np.ndarray]:
        """All stored rows of ``table`` in the given pages (or None), and the page of each."""
        found = [(int(p), f) for p in page_ids if (f := self._page(p).get(table)) is not None and len(f)]
        if not found:
            return None, np.zeros(0, dtype=np.int64)
        pages = np.repeat(np.asarray([p for p, _ in found], dtype=np.int64), [len(f) for _, f in found])
        return concat_rows([f for _, f in found]), pages

    # --- persistence ------------------------------------------------------------------
    def commit(self) -> None:
        """Write every page changed since this object was made (splitting pages first if they grew full)."""
        if self._rows_per_page and self._dirty:
            directory = self._dir()
            directory["rows"] += sum(_row_count(self._cache[p]) - self._loaded_rows[p] for p in self._dirty)
            while directory["rows"] > self._rows_per_page * self.page_count:
                self._split()
        for p in sorted(self._dirty):
            page = {t: f for t, f in self._cache[p].items() if len(f)}
            if page:
                self._store.updateValue((p,), (pickle.dumps(page, protocol=5),))
            else:
                self._store.removeKey((p,))
        if self._rows_per_page and self._dirty:
            self._store.updateValue((_DIRECTORY,), (pickle.dumps(self._directory, protocol=5),))
        if self._operator is not None and self._dirty and self._store.getValue((INFO_PAGE,)) is None:
            # What the pages belong to, so that state metrics read from a checkpoint can
            # count the operator's keys (rows of every table, by the key columns).
            info = {"operator": self._operator, "key_columns": self._keys}
            self._store.updateValue((INFO_PAGE,), (pickle.dumps(info, protocol=5),))
        self._dirty.clear()

    def _split(self) -> None:
        """Double the page count: every row moves to page ``hash % 2P`` (its old page or that plus P)."""
        old_count = self.page_count
        self._dir()["level"] += 1
        for p in range(old_count):
            page = self._page(p)
            # Pages past the old count hold nothing yet: no need to read them.
            self._cache[p + old_count], self._loaded_rows[p + old_count] = {}, 0
            for table, frame in list(page.items()):
                if not len(frame):
                    continue
                columns = self._dir()["keys"][table]
                by_page = _split_by_page(frame, self._page_of(frame, columns))
                empty: pd.DataFrame = frame.iloc[:0]
                for q in (p, p + old_count):
                    self._page(q)[table] = by_page.get(q, empty)
            self._dirty.update((p, p + old_count))

    def _dir(self) -> dict:
        directory = self._directory
        if directory is None:
            value = self._store.getValue((_DIRECTORY,))
            if value is None and self._store.getValue((INFO_PAGE,)) is not None:
                # Growing pages always write their directory with their first page: this state was
                # written with a fixed page count (an earlier layout of the operator), and reading it
                # with another page count would miss its rows.
                raise ValueError("this checkpoint's state was written with a fixed number of pages per bucket "
                                 f"({self._operator or 'operator'}: an earlier changeflow's layout); start the "
                                 "job afresh (a new directory or job name)")
            directory = self._directory = pickle.loads(value[0]) if value is not None else {
                "level": 0, "rows": 0, "keys": {}, "sequence_block": SEQUENCE_BLOCK}
        return directory

    def _page(self, page_id: int) -> dict[str, pd.DataFrame]:
        page_id = int(page_id)
        if page_id not in self._cache:
            value = self._store.getValue((page_id,))
            self._cache[page_id] = pickle.loads(value[0]) if value is not None else {}
            self._loaded_rows[page_id] = _row_count(self._cache[page_id])
        return self._cache[page_id]

    def _page_of(self, frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
        # One page (a growing state before its first split): every hash would land on page 0.
        if not columns or not len(frame) or self.page_count == 1:
            return np.zeros(len(frame), dtype=np.int64)
        values = [array_of(column(frame, c)) for c in columns]
        block = self._dir().get("sequence_block", 1) if self._rows_per_page else 1
        if SEQUENCE_COLUMN in columns and block > 1:
            # Neighbouring sequence numbers share a page: a multiset's history grows at its
            # tail and shrinks mostly at its head, so a batch's elements sit in a few pages
            # instead of one page each. (State written before blocks has none in its
            # directory and keeps hashing every sequence number on its own.)
            values[columns.index(SEQUENCE_COLUMN)] = frame[SEQUENCE_COLUMN].to_numpy() // block
        return (_hash_columns(values) % np.uint64(self.page_count)).astype(np.int64)


SEQUENCE_COLUMN = "_sqn"  # the ordered multiset's node sequence numbers (kernels/multiset)
SEQUENCE_BLOCK = 64  # sequence numbers per block of neighbours hashed together (growing pages)

_DIRECTORY = -1  # page id of the directory (page count, row count, key columns per table, sequence block)
INFO_PAGE = -2  # page id of the operator's name and key columns (state metrics)


def _row_count(page: dict[str, pd.DataFrame]) -> int:
    return sum(len(f) for f in page.values())


def _split_by_page(frame: pd.DataFrame, pages: np.ndarray) -> dict[int, pd.DataFrame]:
    """``frame``'s rows by page: one reordering copy, then a slice per page (sharing its memory)."""
    if not len(frame):
        return {}
    order = np.argsort(pages, kind="stable")
    sorted_pages = pages[order]
    frame = frame.take(order)
    bounds = np.flatnonzero(np.diff(sorted_pages)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(frame)]])
    by_page = {}
    for a, b in zip(starts, ends, strict=True):
        part = frame.iloc[a:b]
        part.index = pd.RangeIndex(b - a)   # on the slice only; no copy of its values
        by_page[int(sorted_pages[a])] = part
    return by_page


def concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """``pd.concat(frames, ignore_index=True)``, column by column when the frames' columns and dtypes agree.

    Pages of one table nearly always agree; pandas' general concat then costs
    about five times more per frame than copying the values.

    >>> concat_rows([pd.DataFrame({"k": [1], "v": ["a"]}), pd.DataFrame({"k": [2], "v": [None]})]).to_dict("list")
    {'k': [1, 2], 'v': ['a', None]}

    Dtypes stay as stored (Timestamp objects are not inferred as datetime64):

    >>> stamps = pd.DataFrame({"t": pd.Series([pd.Timestamp(0)], dtype=object)})
    >>> concat_rows([stamps, stamps])["t"].dtype
    dtype('O')
    """
    if len(frames) == 1:
        return frames[0]
    first = frames[0]
    if not first.columns.is_unique or not hasattr(first, "_get_column_array"):
        return pd.concat(frames, ignore_index=True)
    width = first.shape[1]
    arrays: list[list] = [[] for _ in range(width)]
    for frame in frames:
        if frame.shape[1] != width or not frame.columns.equals(first.columns):
            return pd.concat(frames, ignore_index=True)
        for i in range(width):
            # The column's values as its block holds them (ndarray or ExtensionArray): no Series made.
            arrays[i].append(frame._get_column_array(i))
    data = {}
    for name, values in zip(first.columns, arrays, strict=True):
        if any(v.dtype != values[0].dtype for v in values):
            return pd.concat(frames, ignore_index=True)
        joined = np.concatenate(values) if isinstance(values[0], np.ndarray) else \
            type(values[0])._concat_same_type(values)
        # A Series of the explicit dtype: a bare object ndarray of Timestamps would be inferred as datetime64.
        data[name] = pd.Series(joined, dtype=values[0].dtype, copy=False)
    # copy=False: the concatenated arrays are new already; no consolidation into blocks.
    return pd.DataFrame(data, columns=first.columns, copy=False)


def _hits(rows: pd.DataFrame, keys: pd.DataFrame, key_columns: list[str]) -> np.ndarray:
    """Whether each row's key is among ``keys`` (on ``key_columns``); a null equals any null, as in a merge."""
    if not key_columns:
        return np.ones(len(rows), dtype=bool)
    if not len(rows) or not len(keys):
        return np.zeros(len(rows), dtype=bool)
    codes = _joint_key_codes(rows, keys, key_columns)
    if codes is not None:
        return np.isin(codes[:len(rows)], codes[len(rows):])
    marker = keys[key_columns].drop_duplicates().assign(__hit=True)
    merged = rows.merge(marker, on=key_columns, how="left", sort=False)
    return merged["__hit"].notna().to_numpy()


def _joint_key_codes(rows: pd.DataFrame, keys: pd.DataFrame, key_columns: list[str]) -> np.ndarray | None:
    """One integer per row of ``rows`` then of ``keys``, equal exactly where the key columns' values are.

    A pandas merge costs milliseconds per call whatever its size, and the state tables of
    one row per bucket (a window's next end, the late-record count) are stored every batch;
    factorizing the columns costs microseconds. Only for columns of the same dtype on both
    sides (None: use a merge, which reconciles dtypes).
    """
    combined: np.ndarray | None = None
    for name in key_columns:
        left, right = column(rows, name), column(keys, name)
        values = same_dtype_values(left, right)
        if values is None:
            return None
        codes, uniques = pd.factorize(values)
        # Every kind of null (None, NaN, NaT) is one key value, as the merge matches them.
        codes = np.where(codes < 0, len(uniques), codes).astype(np.int64)
        if combined is None:
            combined = codes
        else:
            # Below (rows + keys)^2: no overflow; factorized again to stay below rows + keys.
            combined = pd.factorize(combined * (len(uniques) + 1) + codes)[0]
    return combined


def _rows_of(rows: pd.DataFrame, keys: pd.DataFrame, key_columns: list[str], keep: bool) -> pd.DataFrame:
    """Rows whose key is (keep=True) or is not (keep=False) among ``keys``."""
    hit = _hits(rows, keys, key_columns)
    return rows.loc[hit if keep else ~hit].reset_index(drop=True)


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


