"""The state rows of one batch of ordered-multiset operations: loaded in few rounds, written back once.

The state protocol (:class:`~changeflow.kernels.state.KeyedState`) reads and
writes whole batches of keys, so :class:`MultisetRows` caches the meta, node and
index rows (:mod:`.ordered` describes the layout) that one batch's operations
touch: :meth:`MultisetRows.prefetch` loads, in three rounds (meta and index rows;
the nodes they point at; those nodes' neighbours), every row they touch in the
usual case; anything else is loaded on demand (counted in ``lazy_loads``), and
:meth:`MultisetRows.flush` writes back only the rows that changed.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence

import numpy as np
import pandas as pd

from changeflow.kernels.frames import column
from changeflow.kernels.multiset.rows import python_values
from changeflow.kernels.state import KeyedState


class Layout(Protocol):
    """Where a multiset's rows live (:class:`~.ordered.OrderedMultiset` is one)."""

    name: str
    key_columns: list[str]
    key_dtypes: dict[str, Any]
    meta_table: str
    node_table: str
    index_table: str


NONE = -1
# Columns of the state tables holding sequence numbers, counts and timestamps.
_INT_COLUMNS = frozenset({"_sqn", "first", "last", "next_sqn", "size", "head", "tail", "prev", "next", "next_same",
                          "ts"})


def _ints(column: pd.Series) -> list[int]:
    """A sequence-number, count or time column as Python ints, whatever integer dtype the store returned."""
    return column.to_numpy(dtype=np.int64).tolist()


class Node:
    """One element: its neighbours, the next occurrence of an equal element, its insertion time and row."""

    __slots__ = ("prev", "next", "next_same", "ts", "row", "ident")

    def __init__(self, prev: int, next_: int, next_same: int, ts: int, row: tuple, ident: str) -> None:
        self.prev, self.next, self.next_same, self.ts, self.row, self.ident = prev, next_, next_same, ts, row, ident


class MultisetRows:
    """One batch's cached state rows of an :class:`~.ordered.OrderedMultiset`; keys are tuples of key values."""

    def __init__(self, layout: Layout, state: KeyedState) -> None:
        self.layout = layout
        self.state = state
        self._meta: dict[tuple, list[int] | None] = {}  # key -> [first, last, next_sqn, size]
        self._nodes: dict[tuple, Node | None] = {}  # key + (sqn,) -> node
        self._index: dict[tuple, list[int] | None] = {}  # key + (ident,) -> [head, tail]
        # Changed rows, as dicts so that flush stores them in a deterministic order
        # (first change first) without sorting the keys.
        self._dirty_meta: dict[tuple, None] = {}
        self._dirty_nodes: dict[tuple, None] = {}
        self._dirty_index: dict[tuple, None] = {}
        self.loads = 0
        self.lazy_loads = 0

    # --- loading ------------------------------------------------------------------------
    def prefetch(self, keys: Iterable[tuple], idents: Iterable[tuple[tuple, str]]) -> None:
        """Load what operations on ``keys`` with elements ``idents`` ((key, ident) pairs) will touch."""
        keys = [k for k in dict.fromkeys(keys) if k not in self._meta]
        pairs = [k + (i,) for k, i in dict.fromkeys(idents) if k + (i,) not in self._index]
        self._load_meta(keys)
        self._load_index(pairs)
        wanted = []
        for k in keys:
            m = self._meta.get(k)
            if m:
                wanted += [k + (m[0],), k + (m[1],)]
        for p in pairs:
            e = self._index.get(p)
            if e:
                wanted += [p[:-1] + (e[0],), p[:-1] + (e[1],)]
        self._load_nodes(wanted)
        neighbours = []
        for nk in wanted:
            n = self._nodes.get(nk)
            if n is not None:
                neighbours += [nk[:-1] + (s,) for s in (n.prev, n.next, n.next_same) if s != NONE]
        self._load_nodes(neighbours)

    def _frame(self, rows: list[tuple], extra: list[str], values: Sequence[str] = ()) -> pd.DataFrame:
        """The frame of ``rows`` (key columns, ``extra`` key columns, then ``values``), built in one go.

        Column by column into one constructor call: assigning columns to a
        frame one at a time (and casting them in place) cost more than the
        multiset's own work in the kernel benchmark.
        """
        names = self.layout.key_columns + extra + list(values)
        data = {}
        for i, c in enumerate(names):
            values_i = [r[i] for r in rows]
            if c in self.layout.key_columns:
                data[c] = pd.Series(values_i, dtype=self.layout.key_dtypes.get(c))
            elif c in _INT_COLUMNS:
                data[c] = np.asarray(values_i, dtype=np.int64)
            else:  # element by element: rows are tuples, which numpy would unpack
                objects = np.empty(len(values_i), dtype=object)
                for j, v in enumerate(values_i):
                    objects[j] = v
                data[c] = objects
        return pd.DataFrame(data)  # (no columns=: pandas then re-checks every object column, 4x slower)

    def _load(self, table: str, rows: list[tuple], extra: list[str]) -> pd.DataFrame:
        self.loads += 1
        return self.state.load(table, self._frame(rows, extra))

    def _tuples(self, frame: pd.DataFrame, n: int) -> list[tuple]:
        # The first n columns: the key columns (and the extra key column) the rows were loaded by.
        return list(zip(*(python_values(frame.iloc[:, i]) for i in range(n)), strict=True))

    def _load_meta(self, keys: list[tuple]) -> None:
        if not keys:
            return
        for k in keys:
            self._meta[k] = None
        for k, m in self._meta_rows(self._load(self.layout.meta_table, keys, [])):
            self._meta[k] = m

    def _meta_rows(self, got: pd.DataFrame) -> list[tuple[tuple, list[int]]]:
        """Loaded meta rows as ``(key, [first, last, next_sqn, size])``."""
        if not len(got):
            return []
        ints = [_ints(column(got, c)) for c in ("first", "last", "next_sqn", "size")]
        keys = self._tuples(got, len(self.layout.key_columns))
        return [(k, [first, last, n, size]) for k, first, last, n, size in zip(keys, *ints, strict=True)]

    def _load_index(self, pairs: list[tuple]) -> None:
        pairs = [p for p in dict.fromkeys(pairs) if p not in self._index]
        if not pairs:
            return
        for p in pairs:
            self._index[p] = None
        got = self._load(self.layout.index_table, pairs, ["_ident"])
        nk = len(self.layout.key_columns) + 1
        if len(got):
            for p, h, t in zip(self._tuples(got, nk), _ints(column(got, "head")), _ints(column(got, "tail")),
                               strict=True):
                self._index[p] = [h, t]

    def _load_nodes(self, node_keys: list[tuple]) -> None:
        node_keys = [n for n in dict.fromkeys(node_keys) if n not in self._nodes]
        if not node_keys:
            return
        for n in node_keys:
            self._nodes[n] = None
        got = self._load(self.layout.node_table, node_keys, ["_sqn"])
        nk = len(self.layout.key_columns) + 1
        if len(got):
            ints = [_ints(column(got, c)) for c in ("prev", "next", "next_same", "ts")]
            cols = zip(self._tuples(got, nk), *ints, got["row"].tolist(), got["ident"].tolist(), strict=True)
            for key, p, n, s, ts, row, ident in cols:
                self._nodes[key] = Node(p, n, s, ts, tuple(row), ident)

    def _meta_of(self, key: tuple) -> list[int] | None:
        if key not in self._meta:
            self.lazy_loads += 1
            self._load_meta([key])
        return self._meta[key]

    def _live_meta(self, key: tuple) -> list[int]:
        """The meta row of a key known to have elements (one of its elements or index rows was found)."""
        m = self._meta_of(key)
        if m is None:
            raise RuntimeError(f"ordered multiset {self.layout.name!r}: key {key!r} has elements but no meta row")
        return m

    def _node(self, key: tuple, sqn: int) -> Node:
        nk = key + (sqn,)
        if nk not in self._nodes:
            self.lazy_loads += 1
            self._load_nodes([nk])
        node = self._nodes[nk]
        if node is None:
            raise RuntimeError(f"ordered multiset {self.layout.name!r}: key {key!r} links to missing element {sqn}")
        return node

    def _entry(self, key: tuple, ident: str) -> list[int] | None:
        ik = key + (ident,)
        if ik not in self._index:
            self.lazy_loads += 1
            self._load_index([ik])
        return self._index[ik]

    # --- writing back -------------------------------------------------------------------
    def flush(self) -> None:
        """Store every changed row (one store per table)."""
        if self._dirty_meta:
            keys = list(self._dirty_meta)
            rows = [k + tuple(m) for k in keys if (m := self._meta[k])]
            self._store(self.layout.meta_table, keys, [], rows, ["first", "last", "next_sqn", "size"])
        if self._dirty_index:
            keys = list(self._dirty_index)
            rows = [k + tuple(e) for k in keys if (e := self._index[k])]
            self._store(self.layout.index_table, keys, ["_ident"], rows, ["head", "tail"])
        if self._dirty_nodes:
            keys = list(self._dirty_nodes)
            rows = []
            for k in keys:
                n = self._nodes[k]
                if n is not None:
                    rows.append(k + (n.prev, n.next, n.next_same, n.ts, n.row, n.ident))
            self._store(self.layout.node_table, keys, ["_sqn"], rows,
                        ["prev", "next", "next_same", "ts", "row", "ident"])
        self._dirty_meta.clear()
        self._dirty_index.clear()
        self._dirty_nodes.clear()

    def _store(self, table: str, keys: list[tuple], extra: list[str], rows: list[tuple], values: list[str]) -> None:
        self.state.store(table, self._frame(keys, extra), self._frame(rows, extra, values))
