"""Flink's ChangelogNormalize: the last row per primary key, an upsert changelog made a retract changelog.

:class:`ChangelogNormalize` keeps, per key, the row last inserted or updated, and
turns each input change into what Flink's ``DeduplicateFunctionHelper.processLastRowOnChangelog``
emits for it (``ProcTimeDeduplicateKeepLastRowFunction`` over a changelog input;
with mini-batch ``ProcTimeMiniBatchDeduplicateKeepLastRowFunction``, which keeps
only the bundle's last change per key):

* ``+I``/``+U`` of a key without a row: ``+I`` of the row;
* ``+I``/``+U`` of a key with a row: ``-U`` of the stored row (when the
  consumer needs update-befores) and ``+U`` of the new one; nothing when the
  change's values equal the stored row's, ``+I`` or ``+U`` alike (as Flink 2.3
  does: a recorded golden). With a state TTL nothing is dropped: the updates
  keep the state of the operators downstream from expiring too early (Flink's reason);
* ``-U``/``-D`` of a key with a row: ``-D`` of the *stored* row (the input's may
  hold only the key, as a Kafka tombstone does), and the key's row is gone;
* ``-U``/``-D`` of a key without a row: nothing.

Output stamps: the i-th change for the input row ``(_seq, _sub)`` is
``(_seq, _sub * FANOUT + i)``.

The batch is folded with array operations (:mod:`changeflow.kernels.normalize.fold`), one
state load and store per batch; :mod:`changeflow.kernels.normalize.rowwise` keeps the
row-by-row loop it replaced, as the reference its property tests compare with.

>>> from changeflow.common import Row, RowKind
>>> from changeflow.testing import KernelHarness
>>> h = KernelHarness(ChangelogNormalize(["k", "v"], ["k"]), ["k", "v"])
>>> def row(kind, k, v):
...     r = Row(k, v); r.set_row_kind(kind); return r
>>> for change in h.process([row(RowKind.INSERT, "a", 1), row(RowKind.UPDATE_AFTER, "a", 2),
...                          row(RowKind.INSERT, "a", 2), row(RowKind.UPDATE_AFTER, "a", 2),
...                          row(RowKind.DELETE, "a", None), row(RowKind.DELETE, "b", None)]):
...     print(change.get_row_kind(), tuple(change))
+I ('a', 1)
-U ('a', 1)
+U ('a', 2)
-D ('a', 2)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.changelog import FANOUT, SEQ, SUB, UPDATE_BEFORE, sort_changes
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.normalize.fold import equal_rows, fold
from changeflow.kernels.rank.rows import check_dedup_columns, check_input, rows_at_hand, stamped_output

TABLE = "normalize_last"

__all__ = ["ChangelogNormalize", "TABLE", "changelog_normalize_kernel"]


class ChangelogNormalize(KernelBase):
    """The last row per key of ``keys`` over a changelog of ``columns`` (see the module docstring).

    ``generate_update_before`` False emits ``+U`` without ``-U`` (Flink's node when its
    consumer needs no update-befores); ``mini_batch`` folds a batch to each key's last
    change first; ``state_ttl`` (``table.exec.state.ttl`` > 0) turns off the dropping of
    repeated rows, as in Flink (the expiry itself is :class:`~changeflow.kernels.ttl.KeyStateTtl`'s);
    ``drop_update_before`` drops ``-U`` input first (Flink's DropUpdateBefore before the node).
    """

    def __init__(self, columns: list[str], keys: list[str], *, generate_update_before: bool = True,
                 mini_batch: bool = False, state_ttl: bool = False, drop_update_before: bool = False) -> None:
        self.columns = list(columns)
        self.keys = list(keys)
        check_dedup_columns(self.columns, self.keys)
        self.generate_update_before = generate_update_before
        self.mini_batch = mini_batch
        self.state_ttl = state_ttl
        self.drop_update_before = drop_update_before
        self._stored = self.keys + [c for c in self.columns if c not in self.keys]

    @property
    def operator_name(self) -> str:
        return "ChangelogNormalize"

    @property
    def state_tables(self) -> list[str]:
        """One table: each key's last row."""
        return [TABLE]

    def process(self, batch: pd.DataFrame, state) -> pd.DataFrame:
        """Fold one changelog batch into ``state``; return the retract changelog it emits."""
        check_input(batch, self.columns, "ChangelogNormalize", insert_only=False)
        if not _in_order(batch):  # a batch read in order (a source's partition) needs no sort
            batch = sort_changes(batch)
        else:
            batch = batch.reset_index(drop=True)
        if self.drop_update_before:  # Flink's DropUpdateBefore under the node: it takes only +U
            batch = batch.loc[batch["_kind"].to_numpy() != UPDATE_BEFORE].reset_index(drop=True)
        empty = np.empty(0, dtype=np.int64)
        if len(batch) == 0:
            return stamped_output(batch, self.columns, empty, empty, empty, empty)
        keys = KeyIndex(batch, self.keys)
        codes = np.asarray(keys.codes, dtype=np.int64)
        stored = state.load(TABLE, keys.frame)
        n_stored = len(stored)
        current = np.full(keys.size, -1, dtype=np.int64)  # per key: the id of its stored row, -1 none
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
        # A change equal to the row at hand is dropped, except with a TTL (see the module docstring).
        equal = None if self.state_ttl else equal_rows(rows, self.columns)
        folded = fold(codes, kinds, order, current, n_stored, equal, self.generate_update_before)
        live = np.flatnonzero(folded.at_hand >= 0)
        frame = pd.DataFrame(rows.take(folded.at_hand[live]).reset_index(drop=True))
        for name in self.keys:  # stored under the key frame's own values (same dtypes as the keys)
            frame[name] = keys.frame[name].take(live).reset_index(drop=True)
        state.store(TABLE, keys.frame, pd.DataFrame(frame[self._stored]))
        seq, sub = batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64)
        return stamped_output(rows, self.columns, folded.ids, folded.kinds, seq[folded.parent],
                              sub[folded.parent] * FANOUT + folded.index)


def _in_order(batch: pd.DataFrame) -> bool:
    """Whether the batch's stamps ``(_seq, _sub)`` strictly increase already (sort_changes would keep it)."""
    seq, sub = batch[SEQ].to_numpy(), batch[SUB].to_numpy()
    step = np.diff(seq)
    return bool(np.all((step > 0) | ((step == 0) & (np.diff(sub) > 0))))


def changelog_normalize_kernel(columns: list[str], keys: list[str], *, generate_update_before: bool = True,
                               mini_batch: bool = False, ttl_ms: int = 0, drop_update_before: bool = False):
    """The kernel of a ChangelogNormalize node; with ``ttl_ms`` a key's row expires a TTL after its last write.

    >>> type(changelog_normalize_kernel(["k", "v"], ["k"], ttl_ms=1000)).__name__
    'KeyStateTtl'
    """
    kernel = ChangelogNormalize(columns, keys, generate_update_before=generate_update_before,
                                mini_batch=mini_batch, state_ttl=ttl_ms > 0, drop_update_before=drop_update_before)
    if ttl_ms > 0:
        from changeflow.kernels.ttl import KeyStateTtl

        return KeyStateTtl(kernel, keys, ttl_ms)
    return kernel
