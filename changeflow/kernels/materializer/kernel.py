"""The sink upsert materializer kernel (Flink's SinkUpsertMaterializerV2, FLINK-38461 / FLIP-558).

Changes for one sink primary key may arrive out of order after a shuffle, so
the kernel keeps each key's *history* (the rows added and not yet retracted, in
arrival order) and emits an upsert stream by primary key:

``DEDUPLICATE`` (``ON CONFLICT DO DEDUPLICATE``, Flink's behaviour without a clause)
    per record: ``+I``/``+U`` adds the row (with an upsert key, in place of the
    row with the same upsert key, else at the end) and emits it, ``+I`` when the
    history had been empty, ``+U`` otherwise; ``-U``/``-D`` removes the oldest
    equal row (equal on the upsert key when there is one): emptying the key emits
    ``-D``, removing the latest row emits ``+U`` of the new latest, removing a
    middle row emits nothing. Retracting a row the history does not hold (its
    state expired) emits nothing, as Flink (which only logs it).
``NOTHING`` / ``ERROR`` (``DO NOTHING`` / ``DO ERROR``)
    Flink decides these on watermarks; changeflow decides them at micro-batch
    boundaries: after a batch, ``NOTHING`` shows the first surviving row of each
    key (emitting ``+I``/``+U``/``-D`` when that changes); ``ERROR`` raises when a
    key holds more than one row, naming the key and two of its rows.

Strategies (``table.exec.sink.upsert-materialize-strategy.type``) change only the
cost: ``LEGACY`` and ``VALUE`` keep a key's history as one list value (each record
scans it with a row comparison: O(n)); ``MAP`` keeps it as an
:class:`~changeflow.kernels.multiset.OrderedMultiset` (O(1) state rows per
record); ``ADAPTIVE`` starts with VALUE and moves a key to MAP when its history
reaches ``threshold_high``, back when it falls to ``threshold_low``. LEGACY
and VALUE run the same algorithm; they are separate state tables because
Flink's VALUE is state-compatible with ADAPTIVE and LEGACY is not.

TTL (``table.exec.state.ttl``) is kept at the operator level, as FLIP-558
plans: every element carries its insertion time, and before a key's records
are processed in a batch, elements older than the TTL are removed from the
head of its history (silently: expiry emits nothing). Keys that see no more
records are cleaned by :meth:`SinkUpsertMaterializer.sweep` (FLIP-558's "every N
seconds", which the runtime calls from a timer): it expires the heads of every
key's history in the state it is given. A sweep changes only what is stored,
never the output: the next records of a key expire the same elements first.

Switching an ADAPTIVE key between representations copies its history (O(n)
once per crossing; MAP -> VALUE walks the links, loading one node per step).

>>> from changeflow.testing.harness import KernelHarness, insert_record, delete_record, format_changes
>>> k = SinkUpsertMaterializer(["id"], ["id", "v"], strategy="MAP")
>>> h = KernelHarness(k, ["id", "v"])
>>> format_changes(h.process([insert_record(1, "a"), insert_record(1, "b"), delete_record(1, "b")]))
['+I[1, a]', '+U[1, b]', '+U[1, a]']
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB, child_sub, sort_changes
from changeflow.kernels.multiset import OrderedMultiset, identity_of
from changeflow.kernels.multiset.rows import changes_frame, plain_rows
from changeflow.kernels.contract import KernelBase, wall_clock
from changeflow.kernels.multiset.rows import python_values as _python_values
from changeflow.kernels.state import KeyedState
from changeflow.kernels.frames import column

STRATEGIES = ("LEGACY", "VALUE", "MAP", "ADAPTIVE")
CONFLICTS = ("DEDUPLICATE", "NOTHING", "ERROR")
_INSERT, _UPDATE_AFTER, _DELETE = 0, 2, 3


class SinkUpsertMaterializer(KernelBase):
    """Reconcile an out-of-order changelog into an upsert stream by ``primary_key``.

    ``columns`` are the row's columns in order; ``upsert_key`` (column names or
    None) is the input's unique key when it has one. ``clock`` returns
    processing time in ms (for TTL).
    """

    def __init__(
        self,
        primary_key: list[str],
        columns: list[str],
        *,
        upsert_key: list[str] | None = None,
        strategy: str = "LEGACY",
        conflict: str = "DEDUPLICATE",
        threshold_high: int = 50,
        threshold_low: int = 40,
        ttl_ms: int = 0,
        clock: Callable[[], int] | None = None,
    ) -> None:
        strategy, conflict = strategy.upper(), conflict.upper()
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown upsert-materialize strategy {strategy!r}; expected one of {STRATEGIES}")
        if conflict not in CONFLICTS:
            raise ValueError(f"unknown ON CONFLICT mode {conflict!r}; expected one of {CONFLICTS}")
        if not 0 <= threshold_low < threshold_high:
            raise ValueError(f"adaptive thresholds need 0 <= low < high, got low={threshold_low}, "
                             f"high={threshold_high}")
        missing = [c for c in list(primary_key) + list(upsert_key or []) if c not in columns]
        if missing:
            raise ValueError(f"key columns {missing} are not among the sink's columns {columns}")
        self.primary_key = list(primary_key)
        self.columns = list(columns)
        self.upsert_key = list(upsert_key) if upsert_key else None
        self.strategy = strategy
        self.conflict = conflict
        self.threshold_high = threshold_high
        self.threshold_low = threshold_low
        self.ttl_ms = ttl_ms
        self.clock = clock or wall_clock
        self._pk_pos = [self.columns.index(c) for c in self.primary_key]
        self._ident_pos = [self.columns.index(c) for c in self.upsert_key] if self.upsert_key else None
        self._value_table = "legacy" if strategy == "LEGACY" else "value"
        # How often (at most) the runtime should sweep a bucket: the TTL (None without TTL, or
        # when the runtime cannot fire timers). A sweep reads every key of the bucket (on paged
        # state: every page), so it runs at most once per TTL; an idle key's elements are then
        # reclaimed within two TTLs of their insertion. Sweeping more often would reclaim sooner
        # at a proportionally higher read cost; the output is the same.
        self.sweep_interval_ms: int | None = ttl_ms if ttl_ms > 0 else None

    # --- identity -----------------------------------------------------------------------
    def _ident(self, row: tuple) -> str:
        """The identity of ``row``, whose values are already plain (see :func:`identity_of`).

        ``repr`` directly: the rows :meth:`process` builds hold plain values
        (nulls as None), so normalising them again per record would only cost.
        """
        if self._ident_pos is None:
            return repr(row)
        return repr(tuple([row[i] for i in self._ident_pos]))

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Fold a changelog batch into the histories; return the upsert changes."""
        batch = sort_changes(batch)
        dtypes = {c: batch[c].dtype for c in self.primary_key}
        multiset = OrderedMultiset("map", self.primary_key, dtypes)
        rows = plain_rows(batch, self.columns)
        kinds = batch[KIND].tolist()
        # Stamps as Python ints, and each record's first child stamp computed for the whole batch at once.
        seqs, children = batch[SEQ].tolist(), child_sub(batch[SUB].to_numpy(), 0).tolist()
        pks = [tuple(r[i] for i in self._pk_pos) for r in rows]
        idents = [self._ident(r) for r in rows]
        keys = list(dict.fromkeys(pks))
        now = int(self.clock())

        values = _ValueStore(state, self._value_table, self.primary_key, dtypes) \
            if self.strategy != "MAP" else None
        maps = multiset.session(state) if self.strategy in ("MAP", "ADAPTIVE") else None
        if values is not None:
            values.load(keys)
        if maps is not None:
            in_map = keys if values is None else [k for k in keys if not values.has(k)]  # None: MAP
            in_map_set = set(in_map)
            maps.prefetch(in_map, [(p, i) for p, i in zip(pks, idents, strict=True) if p in in_map_set])
        hist = _Histories(self, values, maps)

        out_rows: list[tuple] = []
        out_kind: list[int] = []
        out_seq: list[int] = []
        out_sub: list[int] = []

        def emit(kind: int, row: tuple, seq: int, sub: int) -> None:
            out_rows.append(row)
            out_kind.append(kind)
            out_seq.append(seq)
            out_sub.append(sub)

        if self.ttl_ms > 0:
            for k in keys:
                hist.expire(k, now)
        shown = {k: hist.first(k) for k in keys} if self.conflict != "DEDUPLICATE" else {}
        last_of: dict[tuple, tuple[int, int]] = {}  # key -> (seq, child stamp) of its last record
        for row, kind, pk, ident, seq, child in zip(rows, kinds, pks, idents, seqs, children, strict=True):
            last_of[pk] = (seq, child)
            if kind in (_INSERT, _UPDATE_AFTER):
                was_empty = hist.size(pk) == 0
                hist.add(pk, ident, row, now)
                if self.conflict == "DEDUPLICATE":
                    emit(_INSERT if was_empty else _UPDATE_AFTER, row, seq, child)
            else:
                removed, was_last = hist.remove(pk, ident)
                if removed and self.conflict == "DEDUPLICATE":
                    if hist.size(pk) == 0:
                        emit(_DELETE, row, seq, child)
                    elif was_last:
                        emit(_UPDATE_AFTER, hist.last(pk), seq, child)
            hist.rebalance(pk)
        if self.conflict != "DEDUPLICATE":
            for k in keys:
                if self.conflict == "ERROR" and hist.size(k) > 1:
                    a, b = hist.first_two(k)
                    raise ValueError(
                        "ON CONFLICT DO ERROR: primary key "
                        f"{dict(zip(self.primary_key, k, strict=True))} has more than one "
                        f"row: {a!r} and {b!r}")
                before, after = shown[k], hist.first(k)
                seq, child = last_of[k]
                if after is None and before is not None:
                    emit(_DELETE, before, seq, child)
                elif after is not None and before is None:
                    emit(_INSERT, after, seq, child)
                elif after is not None and before is not None and identity_of(after) != identity_of(before):
                    emit(_UPDATE_AFTER, after, seq, child)
        if values is not None:
            values.flush()
        if maps is not None:
            maps.flush()
        return changes_frame(batch, self.columns, out_rows, out_kind, out_seq, out_sub)

    def sweep(self, state: KeyedState, now: int | None = None) -> int | None:
        """Expire the heads of the histories of every key in ``state`` at ``now`` (default: the clock).

        For each key (list layouts: its list; MAP: its meta row and head node)
        the elements inserted at or before ``now - ttl`` are removed from the
        head, as before a key's records; ADAPTIVE then moves keys that fell to
        ``threshold_low`` back to VALUE. Emits nothing (as Flink's TTL), and a
        later retraction of an expired row emits nothing either.

        Returns when the oldest surviving element expires (its insertion time
        plus the TTL), or None when no history is left (or there is no TTL).
        """
        if self.ttl_ms <= 0:
            return None
        now = int(self.clock()) if now is None else int(now)
        cutoff = now - self.ttl_ms
        oldest: list[int] = []
        values = maps = None
        if self.strategy != "MAP":
            got = state.scan(self._value_table)
            dtypes = {c: got[c].dtype for c in self.primary_key} if len(got) else {}
            values = _ValueStore(state, self._value_table, self.primary_key, dtypes)
            if len(got):
                kcols = [_python_values(column(got, c)) for c in self.primary_key]
                for k, h in zip(zip(*kcols, strict=True), got["history"], strict=True):
                    lst = [tuple(e) for e in h]
                    if _drop_expired(lst, cutoff):
                        values.dirty.add(k)
                    values.lists[k] = lst
                    if lst:
                        oldest.append(lst[0][2])
        if self.strategy in ("MAP", "ADAPTIVE"):
            layout = OrderedMultiset("map", self.primary_key)
            meta = state.scan(layout.meta_table)
            if len(meta):
                layout.key_dtypes = {c: meta[c].dtype for c in self.primary_key}
            maps = layout.session(state)
            heads = maps.expire_all(cutoff, meta)
            hist = _Histories(self, values, maps)
            for k, ts in heads.items():
                hist.rebalance(k)  # ADAPTIVE: a key that fell to threshold_low goes back to VALUE
                oldest.append(ts)
            if values is not None and not values.dtypes:
                values.dtypes = layout.key_dtypes
        if values is not None:
            values.flush()
        if maps is not None:
            maps.flush()
        return min(oldest) + self.ttl_ms if oldest else None


def _drop_expired(history: list, cutoff: int) -> bool:
    """Remove the elements inserted at or before ``cutoff`` from the head of a list history.

    Elements are ``(row, ident, ts)`` in insertion order; returns whether any went.
    """
    n = 0
    while n < len(history) and history[n][2] <= cutoff:
        n += 1
    del history[:n]
    return n > 0


class _ValueStore:
    """Histories kept as one list value per key: ``[(row, ident, ts), ...]`` (LEGACY/VALUE)."""

    def __init__(self, state: KeyedState, table: str, key_columns: list[str], dtypes: dict[str, Any]) -> None:
        self.state, self.table, self.key_columns, self.dtypes = state, table, key_columns, dtypes
        self.lists: dict[tuple, list | None] = {}
        self.dirty: set[tuple] = set()

    def _keys(self, keys: list[tuple]) -> pd.DataFrame:
        frame = pd.DataFrame.from_records(keys, columns=self.key_columns) if keys else \
            pd.DataFrame({c: [] for c in self.key_columns})
        for c in self.key_columns:
            frame[c] = frame[c].astype(self.dtypes[c])
        return frame

    def load(self, keys: list[tuple]) -> None:
        for k in keys:
            self.lists[k] = None
        got = self.state.load(self.table, self._keys(keys))
        if len(got):
            kcols = [_python_values(column(got, c)) for c in self.key_columns]
            for k, h in zip(zip(*kcols, strict=True), got["history"], strict=True):
                self.lists[k] = [tuple(e) for e in h]

    def has(self, key: tuple) -> bool:
        return self.lists.get(key) is not None

    def flush(self) -> None:
        if not self.dirty:
            return
        keys = sorted(self.dirty, key=repr)
        live = [k for k in keys if self.lists.get(k)]
        frame = self._keys(live)
        col = np.empty(len(live), dtype=object)
        for j, k in enumerate(live):
            col[j] = list(self.lists[k] or ())  # live keys have a list
        frame["history"] = col
        self.state.store(self.table, self._keys(keys), frame)


class _Histories:
    """Dispatches history operations to the list or the multiset representation of each key."""

    def __init__(self, kernel: SinkUpsertMaterializer, values: _ValueStore | None, maps) -> None:
        self.k, self.values, self.maps = kernel, values, maps

    @property
    def _store(self) -> _ValueStore:
        # Only called for a key _in_map says is not in the multiset, and without a value store (MAP) every key is.
        assert self.values is not None, "a key outside the multiset needs the value store"
        return self.values

    def _in_map(self, key: tuple) -> bool:
        if self.values is None:
            return True
        if self.maps is None:
            return False
        return not self.values.has(key) and self.maps.size(key) > 0

    def size(self, key: tuple) -> int:
        if self._in_map(key):
            return self.maps.size(key)
        return len(self._store.lists.get(key) or ())

    def first(self, key: tuple):
        if self._in_map(key):
            f = self.maps.first(key)
            return f[0] if f else None
        lst = self._store.lists.get(key)
        return lst[0][0] if lst else None

    def first_two(self, key: tuple):
        if self._in_map(key):
            items = self.maps.items(key)
            return items[0][0], items[1][0]
        lst = self._store.lists[key]
        assert lst is not None, "first_two is asked for keys holding two rows"
        return lst[0][0], lst[1][0]

    def last(self, key: tuple) -> tuple:
        if self._in_map(key):
            return self.maps.last(key)[0]
        lst = self._store.lists[key]
        assert lst is not None, "last is asked for keys holding a row"
        return lst[-1][0]

    def add(self, key: tuple, ident: str, row: tuple, ts: int) -> None:
        if self._in_map(key) or (self.values is None):
            sqn = self.maps.find(key, ident) if self.k.upsert_key else None
            if sqn is not None:
                self.maps.replace(key, sqn, row, ts)
            else:
                self.maps.append(key, ident, row, ts)
            return
        lst = self._store.lists.get(key)
        if lst is None:
            lst = []
            self._store.lists[key] = lst
        self._store.dirty.add(key)
        if self.k.upsert_key:
            # Flink's findFirst: a linear scan comparing the upsert key of every row.
            for i, (_, idn, _) in enumerate(lst):
                if idn == ident:
                    lst[i] = (row, ident, ts)
                    return
        lst.append((row, ident, ts))

    def remove(self, key: tuple, ident: str) -> tuple[bool, bool]:
        if self._in_map(key):
            return self.maps.remove_value(key, ident)
        lst = self._store.lists.get(key)
        if not lst:
            return False, False
        # Flink's removeFirst: walk from the oldest row, compare, drop the first equal one.
        for i, (_, idn, _) in enumerate(lst):
            if idn == ident:
                del lst[i]
                self._store.dirty.add(key)
                return True, i == len(lst)
        return False, False

    def expire(self, key: tuple, now: int) -> None:
        cutoff = now - self.k.ttl_ms
        if self._in_map(key):
            self.maps.expire(key, cutoff)
        else:
            lst = self._store.lists.get(key)
            if lst and _drop_expired(lst, cutoff):
                self._store.dirty.add(key)
        self.rebalance(key)

    def rebalance(self, key: tuple) -> None:
        """ADAPTIVE: move a key between representations at the thresholds."""
        if self.k.strategy != "ADAPTIVE":
            return
        if self._in_map(key):
            if self.maps.size(key) <= self.k.threshold_low:
                items = self.maps.items(key)
                self.maps.clear(key)
                self._store.lists[key] = [(r, self.k._ident(r), ts) for r, ts in items]
                self._store.dirty.add(key)
        else:
            lst = self._store.lists.get(key)
            if lst and len(lst) >= self.k.threshold_high:
                for r, idn, ts in lst:
                    self.maps.append(key, idn, r, ts)
                self._store.lists[key] = None
                self._store.dirty.add(key)
