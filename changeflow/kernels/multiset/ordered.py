"""An ordered multiset per key over :class:`~changeflow.kernels.state.KeyedState` (FLIP-558's OrderedMultiSet).

Each key (for example a sink's primary key) owns a sequence of elements in
insertion order; equal elements may occur several times. The state is laid out
so that one operation touches a bounded number of state rows, whatever the
length of the key's history:

``<name>_meta``  keyed by the key columns: ``first``, ``last`` (sequence numbers
                 of the ends), ``next_sqn`` (the next sequence number to hand
                 out) and ``size``. FLIP-558 keeps the highest sequence number in
                 a ValueState; the two ends and the size live beside it here.
``<name>_node``  keyed by the key columns plus ``_sqn``: one row per element with
                 ``prev``/``next`` (the neighbours' sequence numbers, -1 at the
                 ends), ``next_same`` (the next occurrence of an equal element),
                 ``ts`` (insertion time, for TTL) and ``row`` (the element).
                 FLIP-558's ``MapState<SequenceNumber, Node>``.
``<name>_index`` keyed by the key columns plus ``_ident`` (the element's
                 identity, see :func:`identity_of`): ``head``/``tail``, the oldest
                 and newest occurrence. FLIP-558's ``MapState<RowData, SequenceNumber>``;
                 the head/tail pair plus ``next_same`` extends it to a multiset.

Why O(1): appending reads and writes the meta row, the index row of the
element, the old last node and the new node; removing an element reads its index
row, its node and its two neighbours and rewrites them (relinking over the
hole; sequence numbers are never reused, so holes are harmless). Neither
operation looks at any other element. Removal by value removes the *oldest*
occurrence, as Flink's SinkUpsertMaterializer does (``removeFirst`` walks the
history from its start), which the index's ``head`` gives directly.

The state protocol reads and writes whole batches of keys, so a
:class:`MultisetSession` works on one batch: :meth:`MultisetSession.prefetch`
loads, in three rounds (meta and index rows; the nodes they point at; those
nodes' neighbours), every row that the batch's operations touch in the usual
case; anything else is loaded on demand (counted in ``lazy_loads``), and
:meth:`MultisetSession.flush` writes back only the rows that changed.

Requirement on the state store: the node and index tables are keyed by the key
columns *plus* ``_sqn`` / ``_ident``, so ``load``/``store`` must match rows on
every column of the keys frame they are given (``InMemoryKeyedState`` does).
For O(1) to hold on a paged store, pages must also be chosen by that full key;
a store that pages by the grouping key alone reads a key's whole history with
its page.

>>> from changeflow.kernels.state import InMemoryKeyedState
>>> ms = OrderedMultiset("h", ["k"])
>>> s = ms.session(InMemoryKeyedState())
>>> for v in ["a", "b", "a"]:
...     _ = s.append(("x",), identity_of((v,)), (v,), 0)
>>> s.remove_value(("x",), identity_of(("a",)))  # oldest "a" goes
(True, False)
>>> [r for r, _ in s.items(("x",))], s.size(("x",)), s.last(("x",))
([('b',), ('a',)], 2, (('a',), 0))
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from changeflow.kernels.state import KeyedState

NONE = -1
# Columns of the state tables holding sequence numbers, counts and timestamps.
_INT_COLUMNS = frozenset({"_sqn", "first", "last", "next_sqn", "size", "head", "tail", "prev", "next", "next_same",
                          "ts"})


def identity_of(values: tuple) -> str:
    """The identity of an element (its field values, nulls unified) as a state key.

    Two elements are the same element when their identities are equal; the
    string form keeps the index's key column a plain value in every state store.

    >>> identity_of((1, None)) == identity_of((1, float("nan")))
    True
    """
    return repr(tuple(_plain(v) for v in values))


def _python_values(column: pd.Series) -> list:
    """A state column's values as plain Python values (nulls as None).

    Integer columns without nulls convert in one ``tolist()``; only other
    columns pay a :func:`_plain` call per value (a per-value cost the kernel
    benchmark showed among the multiset's largest).
    """
    dtype = column.dtype
    if dtype.kind in "iub":
        if isinstance(dtype, np.dtype):
            return column.tolist()
        if not column.hasnans:  # a nullable extension column (Int64, boolean) without nulls
            return column.to_numpy(dtype=dtype.numpy_dtype).tolist()
    return [_plain(v) for v in column.astype(object).tolist()]


def _ints(column: pd.Series) -> list[int]:
    """A sequence-number, count or time column as Python ints, whatever integer dtype the store returned."""
    return column.to_numpy(dtype=np.int64).tolist()


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()  # numpy scalar -> Python scalar, so repr is stable
        except (AttributeError, ValueError):
            return value
    return value


class OrderedMultiset:
    """The layout of one ordered multiset per key: state table names and key columns."""

    def __init__(self, name: str, key_columns: list[str], key_dtypes: dict[str, Any] | None = None) -> None:
        self.name = name
        self.key_columns = list(key_columns)
        self.key_dtypes = dict(key_dtypes or {})
        self.meta_table = f"{name}_meta"
        self.node_table = f"{name}_node"
        self.index_table = f"{name}_index"

    def session(self, state: KeyedState) -> "MultisetSession":
        """A working view for one batch; call :meth:`MultisetSession.flush` at its end."""
        return MultisetSession(self, state)


class _Node:
    __slots__ = ("prev", "next", "next_same", "ts", "row", "ident")

    def __init__(self, prev: int, next_: int, next_same: int, ts: int, row: tuple, ident: str) -> None:
        self.prev, self.next, self.next_same, self.ts, self.row, self.ident = prev, next_, next_same, ts, row, ident


class MultisetSession:
    """One batch's cached view of an :class:`OrderedMultiset`; keys are tuples of key values."""

    def __init__(self, layout: OrderedMultiset, state: KeyedState) -> None:
        self.layout = layout
        self.state = state
        self._meta: dict[tuple, list[int] | None] = {}  # key -> [first, last, next_sqn, size]
        self._nodes: dict[tuple, _Node | None] = {}  # key + (sqn,) -> node
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

    def _frame(self, rows: list[tuple], extra: list[str], values: list[str] = ()) -> pd.DataFrame:
        """The frame of ``rows`` (key columns, ``extra`` key columns, then ``values``), built in one go.

        Column by column into one constructor call: assigning columns to a
        frame one at a time (and casting them in place) cost more than the
        multiset's own work in the kernel benchmark.
        """
        names = self.layout.key_columns + extra + list(values)
        data = {}
        for i, c in enumerate(names):
            column = [r[i] for r in rows]
            if c in self.layout.key_columns:
                data[c] = pd.Series(column, dtype=self.layout.key_dtypes.get(c))
            elif c in _INT_COLUMNS:
                data[c] = np.asarray(column, dtype=np.int64)
            else:  # element by element: rows are tuples, which numpy would unpack
                objects = np.empty(len(column), dtype=object)
                for j, v in enumerate(column):
                    objects[j] = v
                data[c] = objects
        return pd.DataFrame(data)  # (no columns=: pandas then re-checks every object column, 4x slower)

    def _load(self, table: str, rows: list[tuple], extra: list[str]) -> pd.DataFrame:
        self.loads += 1
        return self.state.load(table, self._frame(rows, extra))

    def _tuples(self, frame: pd.DataFrame, n: int) -> list[tuple]:
        return list(zip(*(_python_values(frame[c]) for c in frame.columns[:n])))

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
        ints = [_ints(got[c]) for c in ("first", "last", "next_sqn", "size")]
        return [(k, [f, l, s, z]) for k, f, l, s, z in zip(self._tuples(got, len(self.layout.key_columns)), *ints)]

    def _load_index(self, pairs: list[tuple]) -> None:
        pairs = [p for p in dict.fromkeys(pairs) if p not in self._index]
        if not pairs:
            return
        for p in pairs:
            self._index[p] = None
        got = self._load(self.layout.index_table, pairs, ["_ident"])
        nk = len(self.layout.key_columns) + 1
        if len(got):
            for p, h, t in zip(self._tuples(got, nk), _ints(got["head"]), _ints(got["tail"])):
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
            ints = [_ints(got[c]) for c in ("prev", "next", "next_same", "ts")]
            cols = zip(self._tuples(got, nk), *ints, got["row"].tolist(), got["ident"].tolist())
            for key, p, n, s, ts, row, ident in cols:
                self._nodes[key] = _Node(p, n, s, ts, tuple(row), ident)

    def _meta_of(self, key: tuple) -> list[int] | None:
        if key not in self._meta:
            self.lazy_loads += 1
            self._load_meta([key])
        return self._meta[key]

    def _node(self, key: tuple, sqn: int) -> _Node:
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

    # --- queries ------------------------------------------------------------------------
    def size(self, key: tuple) -> int:
        """Number of elements under ``key``."""
        m = self._meta_of(key)
        return m[3] if m else 0

    def first(self, key: tuple) -> tuple[tuple, int] | None:
        """``(row, insertion_ts)`` of the oldest surviving element, or None when empty."""
        m = self._meta_of(key)
        if not m:
            return None
        n = self._node(key, m[0])
        return n.row, n.ts

    def last(self, key: tuple) -> tuple[tuple, int] | None:
        """``(row, insertion_ts)`` of the newest surviving element, or None when empty."""
        m = self._meta_of(key)
        if not m:
            return None
        n = self._node(key, m[1])
        return n.row, n.ts

    def find(self, key: tuple, ident: str) -> int | None:
        """Sequence number of the oldest element with identity ``ident``, or None."""
        e = self._entry(key, ident)
        return e[0] if e else None

    def items(self, key: tuple) -> list[tuple[tuple, int]]:
        """All ``(row, ts)`` in order: O(n), for switching representation and for tests."""
        m = self._meta_of(key)
        out = []
        sqn = m[0] if m else NONE
        while sqn != NONE:
            n = self._node(key, sqn)
            out.append((n.row, n.ts))
            sqn = n.next
        return out

    # --- updates ------------------------------------------------------------------------
    def append(self, key: tuple, ident: str, row: tuple, ts: int) -> int:
        """Add ``row`` (identity ``ident``) at the end; return its sequence number."""
        m = self._meta_of(key)
        if not m:
            m = [NONE, NONE, 0, 0]
        sqn = m[2]
        if m[1] != NONE:
            self._node(key, m[1]).next = sqn
            self._dirty_nodes[key + (m[1],)] = None
        e = self._entry(key, ident)
        if e:
            self._node(key, e[1]).next_same = sqn
            self._dirty_nodes[key + (e[1],)] = None
            e[1] = sqn
        else:
            self._index[key + (ident,)] = [sqn, sqn]
        self._dirty_index[key + (ident,)] = None
        self._nodes[key + (sqn,)] = _Node(m[1], NONE, NONE, ts, row, ident)
        self._dirty_nodes[key + (sqn,)] = None
        if m[0] == NONE:
            m[0] = sqn
        m[1], m[2], m[3] = sqn, sqn + 1, m[3] + 1
        self._meta[key] = m
        self._dirty_meta[key] = None
        return sqn

    def replace(self, key: tuple, sqn: int, row: tuple, ts: int) -> None:
        """Overwrite the element at ``sqn`` in place with ``row`` of the same identity."""
        n = self._node(key, sqn)
        n.row, n.ts = row, ts
        self._dirty_nodes[key + (sqn,)] = None

    def remove_value(self, key: tuple, ident: str) -> tuple[bool, bool]:
        """Remove the oldest element with identity ``ident``: ``(removed, was_last)``."""
        e = self._entry(key, ident)
        if not e:
            return False, False
        m = self._meta_of(key)
        was_last = e[0] == m[1]
        self.remove(key, e[0])
        return True, was_last

    def remove(self, key: tuple, sqn: int) -> None:
        """Unlink the element at ``sqn``; it must be the oldest of its identity (index head)."""
        m = self._meta_of(key)
        n = self._node(key, sqn)
        if n.prev != NONE:
            self._node(key, n.prev).next = n.next
            self._dirty_nodes[key + (n.prev,)] = None
        else:
            m[0] = n.next
        if n.next != NONE:
            self._node(key, n.next).prev = n.prev
            self._dirty_nodes[key + (n.next,)] = None
        else:
            m[1] = n.prev
        e = self._entry(key, n.ident)
        if e is None or e[0] != sqn:
            raise RuntimeError(f"ordered multiset {self.layout.name!r}: element {sqn} of key {key!r} is not "
                               f"the oldest of its value")
        if n.next_same == NONE:
            self._index[key + (n.ident,)] = None
        else:
            e[0] = n.next_same
        self._dirty_index[key + (n.ident,)] = None
        self._nodes[key + (sqn,)] = None
        self._dirty_nodes[key + (sqn,)] = None
        m[3] -= 1
        self._meta[key] = m if m[3] > 0 else None
        self._dirty_meta[key] = None

    def expire(self, key: tuple, cutoff: int) -> int:
        """Remove elements from the head while their insertion time is ≤ ``cutoff``; return how many.

        Insertion order is time order except where an upsert replaced an element
        in place (FLIP-558 accepts that such an element delays the expiry of
        the ones after it).
        """
        removed = 0
        while True:
            m = self._meta_of(key)
            if not m:
                return removed
            n = self._node(key, m[0])
            if n.ts > cutoff:
                return removed
            self.remove(key, m[0])
            removed += 1

    def expire_all(self, cutoff: int, meta: pd.DataFrame | None = None) -> dict[tuple, int]:
        """:meth:`expire` every key of the multiset (a TTL sweep); return each surviving key's oldest ``ts``.

        Finds the keys by scanning the meta table (:meth:`KeyedState.scan`),
        then works in rounds: each round loads the head node of every key
        still expiring, and the index rows and successors of the heads that
        expired, in one load per table. A key costs its meta row, its head node
        and, per expired element, that element's node, index row and successor:
        nothing of its surviving history beyond the head. ``meta`` is the meta
        table's scan when the caller has made it already.
        """
        got = self.state.scan(self.layout.meta_table) if meta is None else meta
        pending: list[tuple] = []
        for k, m in self._meta_rows(got):
            if k not in self._meta:  # this session's own changes win over the stored row
                self._meta[k] = m
            pending.append(k)
        heads: dict[tuple, int] = {}
        while pending:
            live = [k for k in pending if self._meta.get(k)]
            self._load_nodes([k + (self._meta[k][0],) for k in live])
            expiring = []
            for k in live:
                head = self._node(k, self._meta[k][0])
                if head.ts <= cutoff:
                    expiring.append((k, head))
                else:
                    heads[k] = head.ts
            self._load_index([k + (n.ident,) for k, n in expiring])
            self._load_nodes([k + (n.next,) for k, n in expiring if n.next != NONE])
            for k, _ in expiring:
                self.remove(k, self._meta[k][0])
            pending = [k for k, _ in expiring]
        return heads

    def clear(self, key: tuple) -> None:
        """Remove every element of ``key`` (O(n))."""
        while self._meta_of(key):
            self.remove(key, self._meta[key][0])

    # --- writing back -------------------------------------------------------------------
    def flush(self) -> None:
        """Store every changed row (one store per table)."""
        if self._dirty_meta:
            keys = list(self._dirty_meta)
            rows = [k + tuple(self._meta[k]) for k in keys if self._meta[k]]
            self._store(self.layout.meta_table, keys, [], rows, ["first", "last", "next_sqn", "size"])
        if self._dirty_index:
            keys = list(self._dirty_index)
            rows = [k + tuple(self._index[k]) for k in keys if self._index[k]]
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
