"""The row-by-row ChangelogNormalize: the reference the vectorised kernel is checked and benchmarked against.

:class:`RowwiseChangelogNormalize` is changeflow's earlier kernel, kept unchanged: a Python
loop over the batch that follows Flink's ``DeduplicateFunctionHelper.processLastRowOnChangelog``
one change at a time. It is easy to read against Flink's code, which is its use: the property
tests (tests/kernels/test_changelog_normalize.py) compare the vectorised
:class:`~changeflow.kernels.normalize.ChangelogNormalize`'s changelog with this one's, and
benchmarks/kernel_normalize.py times the two on the same batches. Nothing plans it.

>>> from changeflow.common import Row, RowKind
>>> from changeflow.testing import KernelHarness
>>> h = KernelHarness(RowwiseChangelogNormalize(["k", "v"], ["k"]), ["k", "v"])
>>> def row(kind, k, v):
...     r = Row(k, v); r.set_row_kind(kind); return r
>>> [str(c.get_row_kind()) for c in h.process([row(RowKind.INSERT, "a", 1), row(RowKind.DELETE, "a", None)])]
['+I', '-D']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.changelog import DELETE, FANOUT, INSERT, SEQ, SUB, UPDATE_AFTER, UPDATE_BEFORE, sort_changes
from changeflow.kernels.normalize import TABLE, ChangelogNormalize
from changeflow.kernels.rank.rows import check_input, row_tuples, rows_at_hand, stamped_output



class RowwiseChangelogNormalize(ChangelogNormalize):
    """The last row per key of ``keys``, decided one change at a time (the reference; the options,
    state table and everything but :meth:`process` are :class:`~changeflow.kernels.normalize.ChangelogNormalize`'s)."""

    def process(self, batch: pd.DataFrame, state) -> pd.DataFrame:
        """Fold one changelog batch into ``state``; return the retract changelog it emits."""
        check_input(batch, self.columns, "ChangelogNormalize", insert_only=False)
        batch = sort_changes(batch)
        if self.drop_update_before:  # Flink's DropUpdateBefore under the node: it takes only +U
            batch = batch.loc[batch["_kind"].to_numpy() != UPDATE_BEFORE].reset_index(drop=True)
        empty = np.empty(0, dtype=np.int64)
        if len(batch) == 0:
            return stamped_output(batch, self.columns, empty, empty, empty, empty)
        keys = KeyIndex(batch, self.keys)
        codes = np.asarray(keys.codes, dtype=np.int64)
        stored = state.load(TABLE, keys.frame)
        n_stored = len(stored)
        current = np.full(keys.size, -1, dtype=np.int64)  # per key: the id of its row at hand, -1 none
        if n_stored:
            current[keys.lookup(stored)] = np.arange(n_stored)
        rows = rows_at_hand(stored, batch, self.columns)
        kinds = batch["_kind"].to_numpy(dtype=np.int8)
        order = np.arange(len(batch))
        if self.mini_batch:  # the bundle's last change per key (Flink's bundle map keeps the latest)
            last = np.zeros(len(batch), dtype=bool)
            _, first_from_end = np.unique(codes[::-1], return_index=True)
            last[len(batch) - 1 - first_from_end] = True
            order = order[last]
        # A change equal to the stored row is dropped (values compared as tuples; none with a TTL).
        values = row_tuples(rows, self.columns) if not self.state_ttl else None
        emitted: list[tuple[int, int, int, int]] = []  # (row id, kind, input row, index among its outputs)
        at_hand: list[int] = current.tolist()
        key_of: list[int] = codes.tolist()
        kind_of: list[int] = kinds.tolist()
        for i in order.tolist():
            code, kind, row_id = key_of[i], kind_of[i], n_stored + i
            previous = at_hand[code]
            if kind in (INSERT, UPDATE_AFTER):
                if previous < 0:
                    emitted.append((row_id, INSERT, i, 0))
                elif values is not None and values[previous] == values[row_id]:
                    continue  # Flink returns before writing state: the stored row stays
                else:
                    if self.generate_update_before:
                        emitted.append((previous, UPDATE_BEFORE, i, 0))
                    emitted.append((row_id, UPDATE_AFTER, i, int(self.generate_update_before)))
                at_hand[code] = row_id
            elif previous >= 0:  # -U or -D: the stored row, complete, is deleted
                emitted.append((previous, DELETE, i, 0))
                at_hand[code] = -1
        current = np.asarray(at_hand, dtype=np.int64)
        live = np.flatnonzero(current >= 0)
        frame = pd.DataFrame(rows.take(current[live]).reset_index(drop=True))
        for name in self.keys:  # stored under the key frame's own values (same dtypes as the keys)
            frame[name] = keys.frame[name].take(live).reset_index(drop=True)
        state.store(TABLE, keys.frame, pd.DataFrame(frame[self._stored]))
        ids, out_kinds, parent, index = (np.asarray(c, dtype=np.int64).reshape(-1) for c in
                                         (zip(*emitted, strict=True) if emitted else ([], [], [], [])))
        seq, sub = batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64)
        return stamped_output(rows, self.columns, ids, out_kinds.astype(np.int8), seq[parent],
                              sub[parent] * FANOUT + index)
