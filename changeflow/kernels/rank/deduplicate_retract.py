"""Deduplication on processing time over *retracting* input, on the ordered multiset.

``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY proctime ASC|DESC) = 1`` over an
input that emits ``-U``/``-D`` (a GROUP BY, an outer join...). Flink 2.3
refuses this query at planning; changeflow gives it the meaning the row
number has over the input's live rows in arrival order:

* Per key, the *history*: the rows added (``+I``/``+U``) and not yet retracted,
  in arrival order. A retraction (``-U``/``-D``) removes the oldest row equal to
  it (whole-row equality, nulls equal), as Flink's retracting Top-N and sink
  upsert materializer do; a retraction of a row the history does not hold
  changes nothing.
* The *shown* row: the newest row of the history for keep last (``DESC``), the
  oldest for keep first (``ASC``); none when the history is empty.
* Output, whenever the shown row changes from ``before`` to ``after``:
  none -> r: ``+I r``; a -> b: ``-U a``, ``+U b``; a -> none: ``-D a``. Rows are
  compared by content: when the shown row is replaced by an *equal* row (keep
  last: an equal row arrives; keep first: the shown row is retracted while an
  equal one follows it) nothing is emitted, since the visible result did not
  change. (The insert-only keep-last kernel,
  :class:`~changeflow.kernels.rank.deduplicate.InsertOnlyDeduplicate`, emits ``-U``/``+U``
  for an equal row, as Flink does; that is unchanged.)
* Without mini-batch ``before``/``after`` are taken around every record, so
  every record emits its own changes (at most two). With mini-batch they are
  taken around the whole batch (a bundle): at most one net change per key,
  stamped with the key's last record of the bundle.

The processing-time column itself is not part of the compared row: the
runtime does not ship it to the kernel and materializes it on output.

State: one :class:`~changeflow.kernels.multiset.OrderedMultiset` per key (the
FLIP-558 layout), so a record reads and writes a bounded number of state rows
however long its key's history is: an append touches the key's meta row, the
row's index entry and the last node; a retraction the index entry, the node
and its two neighbours; the shown row is an end of the list (meta row plus one
node, prefetched with the rest).

State TTL (``ttl_ms``, from ``table.exec.state.ttl``): as in the sink upsert
materializer, whose history this is, every row carries its insertion time
(``clock``, processing time in ms) and expires ``ttl`` after it: before a key's
records are processed, the expired rows are removed from the head of its
history (silently: the shown row may go without a retraction, as Flink's
expiry emits nothing), and :meth:`RetractingDeduplicate.sweep` does the same
for every key (the runtime calls it from a timer) so keys that see no more
records are reclaimed. Without a TTL rows are kept until retracted.

>>> from changeflow.testing.harness import KernelHarness, delete_record, format_changes, insert_record
>>> h = KernelHarness(RetractingDeduplicate(["k", "v"], ["k"], keep_last=True, mini_batch=False), ["k", "v"])
>>> format_changes(h.process([insert_record("a", 1), insert_record("a", 2), delete_record("a", 2),
...                          delete_record("a", 1)]))
['+I[a, 1]', '-U[a, 1]', '+U[a, 2]', '-U[a, 2]', '+U[a, 1]', '-D[a, 1]']
"""

from __future__ import annotations

from typing import Callable

import pandas as pd

from changeflow.kernels.changelog import BOOKKEEPING, DELETE, FANOUT, INSERT, KIND, SEQ, SUB, UPDATE_AFTER, \
    UPDATE_BEFORE, is_retraction, sort_changes
from changeflow.kernels.multiset import OrderedMultiset, identity_of
from changeflow.kernels.multiset.rows import changes_frame, plain_rows
from changeflow.kernels.rank.rows import check_dedup_columns, check_input
from changeflow.kernels.contract import KernelBase, wall_clock
from changeflow.kernels.state import KeyedState

HISTORY = "dedup_history"


class RetractingDeduplicate(KernelBase):
    """Keep the first (``keep_last=False``) or last surviving row per key of a retracting changelog.

    Same constructor as :class:`~changeflow.kernels.rank.deduplicate.InsertOnlyDeduplicate`;
    see the module docstring for the semantics.
    """

    def __init__(self, columns: list[str], keys: list[str], *, keep_last: bool, mini_batch: bool,
                 ttl_ms: int = 0, clock: Callable[[], int] | None = None) -> None:
        self.columns = list(columns)
        self.keys = list(keys)
        self.keep_last = keep_last
        self.mini_batch = mini_batch
        check_dedup_columns(self.columns, self.keys)
        self._key_pos = [self.columns.index(k) for k in self.keys]
        self.ttl_ms = int(ttl_ms)
        self.clock = clock or wall_clock
        # A sweep reads the bucket's every page: at most once per TTL (None: no TTL, no sweep).
        self.sweep_interval_ms: int | None = self.ttl_ms if self.ttl_ms > 0 else None

    @property
    def output_columns(self) -> list[str]:
        return self.columns + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Fold one changelog batch into the histories in ``state``; return the emitted changelog."""
        check_input(batch, self.columns, "deduplicate", insert_only=False)
        batch = sort_changes(batch)
        rows = plain_rows(batch, self.columns)
        keys = [tuple(row[i] for i in self._key_pos) for row in rows]
        idents = [identity_of(row) for row in rows]
        retracts = is_retraction(batch[KIND].to_numpy()).tolist()
        seqs, subs = batch[SEQ].tolist(), batch[SUB].tolist()

        layout = OrderedMultiset(HISTORY, self.keys, {k: batch[k].dtype for k in self.keys})
        history = layout.session(state)
        history.prefetch(keys, zip(keys, idents, strict=True))
        now = int(self.clock()) if self.ttl_ms > 0 else 0  # insertion time (0 without TTL: the old layout)
        if self.ttl_ms > 0:
            for key in dict.fromkeys(keys):
                history.expire(key, now - self.ttl_ms)
        shown_end = history.last if self.keep_last else history.first

        def shown(key: tuple) -> tuple | None:
            end = shown_end(key)
            return end[0] if end else None

        out = _Changes()
        before_bundle: dict[tuple, tuple | None] = {}  # mini-batch: each key's shown row before the bundle
        stamp_of: dict[tuple, tuple[int, int]] = {}  # mini-batch: each key's last record
        for row, key, ident, retract, seq, sub in zip(rows, keys, idents, retracts, seqs, subs, strict=True):
            before = shown(key)
            if self.mini_batch:
                before_bundle.setdefault(key, before)
                stamp_of[key] = (seq, sub)
            if retract:
                history.remove_value(key, ident)  # the oldest equal row, if any
            else:
                history.append(key, ident, row, now)
            if not self.mini_batch:
                out.transition(before, shown(key), seq, sub)
        for key in sorted(before_bundle, key=stamp_of.__getitem__):  # in stamp order
            out.transition(before_bundle[key], shown(key), *stamp_of[key])
        history.flush()
        return changes_frame(batch, self.columns, out.rows, out.kinds, out.seqs, out.subs)

    def sweep(self, state: KeyedState, now: int | None = None) -> int | None:
        """Remove every key's rows inserted at or before ``now - ttl`` (default: the clock).

        Emits nothing. Returns when the oldest surviving row expires, or None
        when no row is left (or there is no TTL).
        """
        if self.ttl_ms <= 0:
            return None
        now = int(self.clock()) if now is None else int(now)
        layout = OrderedMultiset(HISTORY, self.keys)
        meta = state.scan(layout.meta_table)
        if len(meta):
            layout.key_dtypes = {c: meta[c].dtype for c in self.keys}
        history = layout.session(state)
        heads = history.expire_all(now - self.ttl_ms, meta)
        history.flush()
        return min(heads.values()) + self.ttl_ms if heads else None


class _Changes:
    """The output changelog under construction."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.kinds: list[int] = []
        self.seqs: list[int] = []
        self.subs: list[int] = []

    def transition(self, before: tuple | None, after: tuple | None, seq: int, sub: int) -> None:
        """Emit the changes that take a key's shown row from ``before`` to ``after`` (None: no row)."""
        if before is None:
            if after is None:
                return
            changes = [(INSERT, after)]
        elif after is None:
            changes = [(DELETE, before)]
        elif identity_of(before) == identity_of(after):
            return
        else:
            changes = [(UPDATE_BEFORE, before), (UPDATE_AFTER, after)]
        # The i-th change of an input record with stamps (seq, sub) is stamped (seq, sub * FANOUT + i).
        for i, (kind, row) in enumerate(changes):
            self.rows.append(row)
            self.kinds.append(int(kind))
            self.seqs.append(seq)
            self.subs.append(sub * FANOUT + i)
