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
:class:`MultisetSession` works on one batch, over the rows :mod:`.state_rows`
caches for it (``prefetch`` loads them in a few rounds, ``flush`` writes back
the changed ones); this module holds the operations.

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

from typing import Any

import pandas as pd

from changeflow.kernels.multiset.rows import identity_of
from changeflow.kernels.multiset.state_rows import NONE, MultisetRows, Node
from changeflow.kernels.state import KeyedState

__all__ = ["NONE", "MultisetSession", "OrderedMultiset", "identity_of"]


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


class MultisetSession(MultisetRows):
    """One batch's view of an :class:`OrderedMultiset`: its queries and updates; keys are tuples of key values."""

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
        self._nodes[key + (sqn,)] = Node(m[1], NONE, NONE, ts, row, ident)
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
        m = self._live_meta(key)
        was_last = e[0] == m[1]
        self.remove(key, e[0])
        return True, was_last

    def remove(self, key: tuple, sqn: int) -> None:
        """Unlink the element at ``sqn``; it must be the oldest of its identity (index head)."""
        m = self._live_meta(key)
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
            live = [(k, m) for k in pending if (m := self._meta.get(k))]  # m: [first, last, next_sqn, size]
            self._load_nodes([k + (m[0],) for k, m in live])
            expiring = []
            for k, m in live:
                head = self._node(k, m[0])
                if head.ts <= cutoff:
                    expiring.append((k, head))
                else:
                    heads[k] = head.ts
            self._load_index([k + (n.ident,) for k, n in expiring])
            self._load_nodes([k + (n.next,) for k, n in expiring if n.next != NONE])
            for k, _ in expiring:
                self.remove(k, self._live_meta(k)[0])
            pending = [k for k, _ in expiring]
        return heads

    def clear(self, key: tuple) -> None:
        """Remove every element of ``key`` (O(n))."""
        while m := self._meta_of(key):
            self.remove(key, m[0])
