"""The streaming Top-N kernel: Flink's AppendOnlyTopNFunction and RetractableTopNFunction.

``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY ...) BETWEEN rank_start AND
rank_end``, with or without the row number selected. One :class:`TopN` folds a
changelog batch of any number of partition keys with one state load and one
store per batch.

State (table ``topn``, rows start with the partition-key columns): the rows of
each partition in rank order, numbered by ``_pos``. Over insert-only input only
the top ``rank_end`` rows are kept (a row pushed out can never come back, as in
AppendOnlyTopNFunction); over retracting input every row is kept, since a
retraction can promote any row (RetractableTopNFunction).

Without mini-batch every input row emits its own changes, exactly as Flink
(:mod:`.partition` states the rules). With ``mini_batch`` a batch is one bundle:
each partition emits only the net change of its top N over the bundle, stamped
from its last input row, and nothing for ranks whose row did not change. Flink
2.3 has no mini-batch Top-N operator (its Rank ignores mini-batch), so this
output differs from Flink's changelog but materializes to the same table; it is
what the mini-batch seed describes for Top-N.

>>> from changeflow.kernels.state import InMemoryKeyedState
>>> top = TopN(["k", "v"], ["k"], [("v", False, False)], 1, 2, "rn", input_insert_only=True, mini_batch=False)
>>> batch = pd.DataFrame({"k": ["a", "a", "a"], "v": pd.array([1, 3, 2], dtype="Int64"),
...                       "_kind": pd.array([0, 0, 0], dtype="int8"), "_seq": [0, 1, 2], "_sub": [0, 0, 0]})
>>> print(top.process(batch, InMemoryKeyedState()).to_string(index=False))
k  v  rn  _kind  _seq  _sub
a  1   1      0     0     0
a  1   1      1     1     0
a  3   1      2     1     1
a  1   2      0     1     2
a  1   2      1     2     0
a  2   2      2     2     1
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.changelog import BOOKKEEPING, FANOUT, SEQ, SUB, is_retraction, sort_changes
from changeflow.kernels.rank.partition import Change, Partition, TopNRules
from changeflow.kernels.rank.rows import check_input, row_tuples, rows_at_hand, stamped_output
from changeflow.kernels.rank.sort_codes import sort_codes
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import KeyedState
from changeflow.kernels.frames import select

TABLE = "topn"
POS = "_pos"


class TopN(KernelBase):
    """A streaming Top-N over a changelog with Flink's exact output (see the module docstring).

    ``columns`` are the input's columns in order (the output's, before the rank
    column); ``partition_keys`` a subset of them (may be empty: one global
    ranking); ``order_by`` holds ``(column, ascending, nulls_first)`` triples;
    ranks are 1-based and inclusive. ``rank_column`` names the appended BIGINT row
    number, or is ``None``. ``input_insert_only`` picks the append-only algorithm
    (and rejects retractions); otherwise the retractable one.
    """

    def __init__(self, columns: list[str], partition_keys: list[str], order_by, rank_start: int, rank_end: int,
                 rank_column: str | None, *, input_insert_only: bool, mini_batch: bool) -> None:
        self.columns = list(columns)
        self.partition_keys = list(partition_keys)
        self.order_by = [(str(c), bool(a), bool(n)) for c, a, n in order_by]
        self.rank_start, self.rank_end = int(rank_start), int(rank_end)
        self.rank_column = rank_column
        self.input_insert_only = input_insert_only
        self.mini_batch = mini_batch
        _check_arguments(self)
        # Flink plans a Top-1 over insert-only input without the row number as
        # FastTop1Function, whose output is keyed by the partition key: a new
        # leader is an update (-U old, +U new), not -D/+I (golden top1_by_value).
        top1_updates = self.rank_end == 1 and input_insert_only
        self._rules = TopNRules(self.rank_start, self.rank_end, rank_column is not None or top1_updates)
        # State rows: the key columns first (the KeyedState contract), then the rest.
        self._stored = self.partition_keys + [c for c in self.columns if c not in self.partition_keys]
        self.fanout = max(FANOUT, 2 * self.rank_end + 2)

    @property
    def state_tables(self) -> list[str]:
        """The one state table: each partition's rows in rank order."""
        return [TABLE]

    @property
    def output_columns(self) -> list[str]:
        return self.columns + ([self.rank_column] if self.rank_column else []) + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Fold one changelog batch into ``state``; return the emitted changelog."""
        check_input(batch, self.columns, "Top-N", self.input_insert_only)
        batch = sort_changes(batch)
        if len(batch) == 0:
            empty = np.empty(0, dtype=np.int64)
            return stamped_output(batch, self.columns, empty, empty, empty, empty, self.rank_column, empty)
        keys = KeyIndex(batch, self.partition_keys)
        stored = state.load(TABLE, keys.frame)
        stored_codes = np.empty(0, dtype=np.intp)
        if len(stored):
            stored_codes = keys.lookup(stored)
            order = np.lexsort((stored[POS].to_numpy(dtype=np.int64), stored_codes))
            stored, stored_codes = stored.take(order).reset_index(drop=True), stored_codes[order]
        rows = rows_at_hand(stored, batch, self.columns)
        code_array = sort_codes(rows, self.order_by)
        codes = code_array.tolist()
        n_stored = len(stored)
        parts = [Partition([], []) for _ in range(keys.size)]
        for row, key in enumerate(stored_codes.tolist()):
            parts[key].codes.append(codes[row])
            parts[key].rows.append(row)
        needs_content = self.mini_batch or not self.input_insert_only
        contents = row_tuples(rows, self.columns) if needs_content else None

        retract = is_retraction(batch["_kind"].to_numpy(dtype=np.int8))
        batch_keys = np.asarray(keys.codes, dtype=np.int64)
        relevant = self._relevant(parts, batch_keys, code_array[n_stored:])
        seqs, subs = batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64)
        emitted: list[Change] = []
        emitters: list[int] = []  # the input row each run of changes is stamped from
        counts: list[int] = []

        def emit(changes: list[Change], i: int) -> None:
            emitted.extend(changes)
            emitters.append(i)
            counts.append(len(changes))

        keep_all = not self.input_insert_only
        retract_list = retract.tolist()
        if self.mini_batch and self.input_insert_only:
            assert contents is not None  # needs_content: mini-batch folding compares rows by content
            # Nothing is ever retracted: the bundle's final top N per partition is
            # the first N of the stored rows and the candidates, by sort key then
            # arrival (stored rows come first and are in rank order), selected
            # vectorised with no per-row loop.
            touched = np.unique(batch_keys[relevant])
            before = {key: parts[key].rows[: self.rank_end] for key in touched.tolist()}
            candidates = np.flatnonzero(relevant)
            ids = np.concatenate([np.arange(n_stored), n_stored + candidates])
            owner = np.concatenate([stored_codes, batch_keys[candidates]]).astype(np.int64)
            by_rank = np.lexsort((ids, code_array[ids], owner))
            order, owner = ids[by_rank], owner[by_rank]
            starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(order) else order
            within = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
            top = within < self.rank_end
            for key in touched.tolist():
                parts[key] = Partition([], [])
            for key, row in zip(owner[top].tolist(), order[top].tolist(), strict=True):
                if key in before:
                    parts[key].codes.append(codes[row])
                    parts[key].rows.append(row)
            last = np.full(keys.size, -1, dtype=np.int64)
            np.maximum.at(last, batch_keys, np.arange(len(batch)))
            for key, rows_before in before.items():
                if rows_before != parts[key].rows:
                    changes: list[Change] = []
                    self._rules.diff(rows_before, parts[key].rows, contents.__getitem__, changes)
                    emit(changes, int(last[key]))
        elif self.mini_batch:
            assert contents is not None  # needs_content (as above)
            before = {}
            for i in np.flatnonzero(relevant).tolist():
                key = batch_keys[i]
                if key not in before:
                    before[key] = parts[key].rows[: self.rank_end]
                self._step(parts[key], n_stored + i, retract_list[i], codes, contents, keep_all, [])
            # Stamp each partition's net change from its last input row of the bundle.
            last = np.full(keys.size, -1, dtype=np.int64)
            np.maximum.at(last, batch_keys, np.arange(len(batch)))
            for key, rows_before in before.items():
                changes: list[Change] = []
                self._rules.diff(rows_before, parts[key].rows, contents.__getitem__, changes)
                emit(changes, int(last[key]))
        else:
            for i in np.flatnonzero(relevant).tolist():
                changes = []
                self._step(parts[int(batch_keys[i])], n_stored + i, retract_list[i], codes, contents, keep_all,
                           changes)
                if changes:
                    emit(changes, i)

        self._store(state, keys, rows, parts)
        out = np.asarray(emitted, dtype=np.int64).reshape(-1, 3)
        count = np.asarray(counts, dtype=np.int64)
        source = np.asarray(emitters, dtype=np.int64)
        # The j-th change of a run gets the emitting row's _seq and _sub * fanout + j.
        within = np.arange(len(out)) - np.repeat(np.cumsum(count) - count, count)
        out_seq = np.repeat(seqs[source], count)
        out_sub = np.repeat(subs[source] * self.fanout, count) + within
        return stamped_output(rows, self.columns, out[:, 1], out[:, 0], out_seq, out_sub,
                              self.rank_column, out[:, 2])

    def _relevant(self, parts: list[Partition], batch_keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The batch rows that can change the top N; the rest skip the per-row loop.

        Over insert-only input a row whose sort key is not better than the
        N-th stored row of a full partition can never enter (the N-th row only
        gets better); under mini-batch only the rows of the bundle's final top
        N matter. Over retracting input every row can matter.
        """
        if not self.input_insert_only:
            return np.ones(len(batch_keys), dtype=bool)
        worst = np.full(len(parts), np.iinfo(np.int64).max, dtype=np.int64)
        for key, part in enumerate(parts):
            if len(part) >= self.rank_end:
                worst[key] = part.codes[self.rank_end - 1]
        relevant = codes < worst[batch_keys]
        if self.mini_batch and relevant.any():
            # Among the batch's rows, only those in their partition's first N (by
            # sort key, then arrival) can be in the bundle's final top N.
            candidates = np.flatnonzero(relevant)
            order = candidates[np.lexsort((candidates, codes[candidates], batch_keys[candidates]))]
            sorted_keys = batch_keys[order]
            starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
            within = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
            relevant = np.zeros(len(batch_keys), dtype=bool)
            relevant[order[within < self.rank_end]] = True
        return relevant

    def _step(self, part: Partition, row: int, retraction: bool, codes, contents, keep_all: bool,
              out: list[Change]) -> None:
        if not retraction:
            self._rules.accumulate(part, codes[row], row, keep_all, out)
            return
        wanted = contents[row]
        pos = part.find(codes[row], lambda r: contents[r] == wanted)
        # A retraction of a row the partition does not hold is ignored, as Flink's
        # RetractableTopNFunction does (it only logs it): the upstream operator
        # retracts only what it emitted, so this happens only after state expiry.
        if pos >= 0:
            self._rules.retract(part, pos, out)

    def _store(self, state: KeyedState, keys: KeyIndex, rows: pd.DataFrame, parts: list[Partition]) -> None:
        ids = [r for part in parts for r in part.rows]
        positions = [p for part in parts for p in range(len(part))]
        frame = select(rows.take(np.asarray(ids, dtype=np.intp)).reset_index(drop=True), self._stored)
        frame[POS] = np.asarray(positions, dtype=np.int64)
        state.store(TABLE, keys.frame, frame)


def _check_arguments(top: TopN) -> None:
    names = set(top.columns)
    missing = [c for c in top.partition_keys + [c for c, _, _ in top.order_by] if c not in names]
    if missing:
        raise ValueError(f"Top-N columns {missing} are not input columns {top.columns}")
    if not top.order_by:
        raise ValueError("Top-N needs at least one ORDER BY column")
    if not 1 <= top.rank_start <= top.rank_end:
        raise ValueError(f"Top-N rank range must satisfy 1 <= start <= end, got [{top.rank_start}, {top.rank_end}]")
    reserved = set(BOOKKEEPING) | {POS}
    named = names if top.rank_column is None else names | {top.rank_column}
    bad = sorted(named & reserved)
    if bad:
        raise ValueError(f"column names {bad} are reserved for changelog bookkeeping and Top-N state")
    if top.rank_column is not None and top.rank_column in names:
        raise ValueError(f"Top-N rank column {top.rank_column!r} clashes with an input column")
