"""The streaming deduplication kernel on processing time: keep the first or the last row per key.

``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY proctime ASC|DESC) = 1``. In
changeflow processing-time order is arrival order, the ``(_seq, _sub)`` order.

* Keep first (Flink's ProcTimeDeduplicateKeepFirstRowFunction and its mini-batch
  variant): the first row of a key is emitted as ``+I``; every later row is
  dropped. State: one marker row per key. Insert-only output. With mini-batch
  Flink keeps the first row of the bundle, which is the same row.
* Keep last (ProcTimeDeduplicateKeepLastRowFunction): the first row of a key is
  ``+I``; each later row emits ``-U(previous), +U(row)``, also when the row
  equals the previous one. (Flink 2.3 drops such an update only when the rows
  are equal *including their materialized proctime*, i.e. when the repeat
  arrives in the same millisecond -- timing, not semantics; changeflow gives
  every arrival its own time.) State: the last row per key. With mini-batch
  (ProcTimeMiniBatchDeduplicateKeepLastRowFunction) only the bundle's last row
  per key is compared with the stored row, so a bundle emits at most ``+I`` or
  one ``-U``/``+U`` pair per key.

Both need insert-only input (Flink's deduplication functions reject other
input); a retraction fails with an error naming the record. The planner runs
deduplication over a retracting input with
:class:`~changeflow.kernels.rank.deduplicate_retract.RetractingDeduplicate`
instead, which keeps every live row per key.

Everything is vectorised: one state load and store per batch, no per-key Python.

>>> from changeflow.kernels.state import InMemoryKeyedState
>>> dedup = InsertOnlyDeduplicate(["k", "v"], ["k"], keep_last=True, mini_batch=False)
>>> batch = pd.DataFrame({"k": ["a", "b", "a"], "v": pd.array([1, 2, 3], dtype="Int64"),
...                       "_kind": pd.array([0, 0, 0], dtype="int8"), "_seq": [0, 1, 2], "_sub": [0, 0, 0]})
>>> print(dedup.process(batch, InMemoryKeyedState()).to_string(index=False))
k  v  _kind  _seq  _sub
a  1      0     0     0
b  2      0     1     0
a  1      1     2     0
a  3      2     2     1
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.changelog import BOOKKEEPING, FANOUT, INSERT, SEQ, SUB, UPDATE_AFTER, UPDATE_BEFORE, \
    sort_changes
from changeflow.kernels.rank.rows import check_dedup_columns, check_input, rows_at_hand, stamped_output
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import KeyedState

FIRST_TABLE = "dedup_first"
LAST_TABLE = "dedup_last"
SEEN = "_seen"


class InsertOnlyDeduplicate(KernelBase):
    """Keep the first (``keep_last=False``) or last row per key in arrival order.

    ``columns`` are the input's (and output's) columns in order; ``keys`` the
    deduplication keys among them. ``mini_batch`` folds each batch as one bundle
    (see the module docstring).
    """

    def __init__(self, columns: list[str], keys: list[str], *, keep_last: bool, mini_batch: bool) -> None:
        self.columns = list(columns)
        self.keys = list(keys)
        self.keep_last = keep_last
        self.mini_batch = mini_batch
        check_dedup_columns(self.columns, self.keys, {SEEN})
        self._stored = self.keys + [c for c in self.columns if c not in self.keys]

    @property
    def state_tables(self) -> list[str]:
        """The one state table (per key: a marker for keep first, the last row for keep last)."""
        return [LAST_TABLE if self.keep_last else FIRST_TABLE]

    @property
    def output_columns(self) -> list[str]:
        return self.columns + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Fold one changelog batch into ``state``; return the emitted changelog."""
        check_input(batch, self.columns, "deduplicate", insert_only=True)
        batch = sort_changes(batch)
        empty = np.empty(0, dtype=np.int64)
        if len(batch) == 0:
            return stamped_output(batch, self.columns, empty, empty, empty, empty)
        keys = KeyIndex(batch, self.keys)
        codes = np.asarray(keys.codes, dtype=np.int64)
        # Position of each row within its key (rows are in arrival order).
        order = np.lexsort((np.arange(len(batch)), codes))
        first_of_key = np.ones(len(batch), dtype=bool)
        sorted_codes = codes[order]
        first_of_key[1:] = sorted_codes[1:] != sorted_codes[:-1]
        if self.keep_last:
            return self._keep_last(batch, state, keys, order, first_of_key)
        return self._keep_first(batch, state, keys, order, first_of_key)

    def _keep_first(self, batch, state, keys, order, first_of_key) -> pd.DataFrame:
        stored = state.load(FIRST_TABLE, keys.frame)
        seen = np.zeros(keys.size, dtype=bool)
        if len(stored):
            seen[keys.lookup(stored)] = True
        firsts = order[first_of_key]  # the first row of each key, in key-code order
        new = firsts[~seen[keys.codes[firsts]]]
        new.sort()
        marker = keys.frame.take(keys.codes[new]).reset_index(drop=True)
        if len(new):
            marker[SEEN] = True
            state.store(FIRST_TABLE, marker[self.keys], marker)
        seq, sub = batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64)
        return stamped_output(batch.reset_index(drop=True), self.columns, new,
                              np.full(len(new), INSERT), seq[new], sub[new] * FANOUT)

    def _keep_last(self, batch, state, keys, order, first_of_key) -> pd.DataFrame:
        stored = state.load(LAST_TABLE, keys.frame)
        n_stored = len(stored)
        previous_of_key = np.full(keys.size, -1, dtype=np.int64)
        if n_stored:
            previous_of_key[keys.lookup(stored)] = np.arange(n_stored)
        rows = rows_at_hand(stored, batch, self.columns)
        if self.mini_batch:
            # Only the last row of each key in the bundle counts.
            last_of_key = np.ones(len(batch), dtype=bool)
            last_of_key[:-1] = first_of_key[1:]
            current = np.sort(order[last_of_key])
            previous = previous_of_key[keys.codes[current]]
        else:
            # Each row's predecessor: the row before it of the same key, or the stored row.
            current = order
            previous = np.empty(len(batch), dtype=np.int64)
            previous[1:] = n_stored + order[:-1]
            previous[first_of_key] = previous_of_key[keys.codes[order[first_of_key]]]
            by_arrival = np.argsort(current, kind="stable")
            current, previous = current[by_arrival], previous[by_arrival]
        seq, sub = batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64)
        has_previous = previous >= 0
        # Per row: -U(previous), +U(row) when there is a previous row, else +I(row).
        count = np.where(has_previous, 2, 1)
        ids = np.repeat(n_stored + current, count)
        kinds = np.repeat(np.where(has_previous, UPDATE_AFTER, INSERT), count)
        starts = np.cumsum(count) - count
        before_at = starts[has_previous]
        ids[before_at] = previous[has_previous]
        kinds[before_at] = UPDATE_BEFORE
        index_in_row = np.arange(len(ids)) - np.repeat(starts, count)
        out_seq = np.repeat(seq[current], count)
        out_sub = np.repeat(sub[current], count) * FANOUT + index_in_row
        # The new state: the last row of every key of the batch.
        last_rows = order[np.append(first_of_key[1:], True)]
        frame = batch.take(last_rows).reset_index(drop=True)[self._stored]
        state.store(LAST_TABLE, keys.frame, frame)
        return stamped_output(rows, self.columns, ids, kinds, out_seq, out_sub)
