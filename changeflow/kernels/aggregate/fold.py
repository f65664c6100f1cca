"""Which input rows touch which accumulator: Flink's hidden record counter, vectorised.

Flink's group aggregate keeps a hidden ``COUNT(*)`` per key. A key "has an
accumulator" while that count is non-zero; when it reaches zero the key's state
is cleared. Two rules follow:

* "Don't create a new accumulator for a retraction message. This might happen
  if the retraction message is the first message for the key or after a state
  clean up." (GroupAggFunction). Without mini-batch a retraction that arrives
  while the key has no accumulator is ignored; the count is therefore a running
  sum floored at zero. With prefix sums ``S_i`` seeded by the stored count
  ``S_0 = C``, the floored count is ``F_i = S_i - min(0, min_{j<=i} S_j)``, and
  row ``i`` is ignored exactly when ``F_{i-1} = 0`` and it is a retraction.
  Each time ``F`` returns to zero the accumulators restart empty: the rows
  between two such points form one *lifetime* of the key.
* With mini-batch (MiniBatchGroupAggFunction.finishBundle) a key without an
  accumulator drops only its *leading* retractions in the bundle; all other rows
  are applied to one accumulator, and the count may pass through zero (or even
  end negative on invalid input) without clearing anything.

:class:`Fold` records the outcome for a batch: the row order to fold in, each
row's effective sign (+1 accumulate, -1 retract, 0 ignored), the lifetimes, and
the count before and after every row (non-mini-batch) or every key (mini-batch).

Three orders appear: *batch order* (rows as given), *source order* (sorted by
``(_seq, _sub)``, the order Flink would see them in) and *fold order* (source
order, regrouped so each key's rows are contiguous, when the fold needs that).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.segments import Segments, group_order
from changeflow.kernels.changelog import DELETE, UPDATE_BEFORE


@dataclass(frozen=True)
class Grouping:
    """The lifetimes of a grouped fold: runs of rows sharing one accumulator."""

    lifetimes: Segments
    life_key: np.ndarray  # key code of each lifetime
    life_from_state: np.ndarray  # the lifetime continues the stored accumulator
    key_last_row: np.ndarray  # fold position of each key's last row


@dataclass
class Fold:
    """A batch arranged for folding. Row arrays are in fold order; key arrays by key code."""

    mini_batch: bool
    keys: KeyIndex
    rows: np.ndarray | None  # fold position -> batch row; None when fold order is batch order
    source_rank: np.ndarray | None  # fold position -> source position; None when they coincide
    ordered: bool  # source order is known (False only for an order-insensitive bundle)
    source_code: np.ndarray  # key code per source position
    source_seq: np.ndarray  # _seq per source position
    source_sub: np.ndarray  # _sub per source position
    code: np.ndarray  # key code per fold row
    retract: np.ndarray  # per fold row: the row is a -U / -D
    sign: np.ndarray  # per fold row, int64: +1 accumulate, -1 retract, 0 ignored or dropped
    exists: np.ndarray  # per key: had an accumulator before the batch
    count_before: np.ndarray  # per key: stored record count (0 when absent)
    count_after: np.ndarray  # per key: record count after the batch
    touched: np.ndarray  # per key: at least one row was applied
    grouped: bool  # rows of a key are contiguous, in source order within the key
    lifetimes: Segments | None = None  # grouped only: runs of rows sharing one accumulator
    life_key: np.ndarray | None = None  # key code of each lifetime
    life_from_state: np.ndarray | None = None  # the lifetime continues the stored accumulator
    key_last_row: np.ndarray | None = None  # grouped only: fold position of each key's last row
    row_count_before: np.ndarray | None = None  # non-mini-batch: record count before each row
    row_count_after: np.ndarray | None = None  # non-mini-batch: record count after each row

    @property
    def size(self) -> int:
        return len(self.code)

    @property
    def all_accumulate(self) -> bool:
        """Every row accumulates (+1): the common insert-only case, worth fast paths."""
        if not hasattr(self, "_all_accumulate"):
            self._all_accumulate = bool((self.sign == 1).all())
        return self._all_accumulate

    @property
    def alive(self) -> np.ndarray:
        """Per key: the key has accumulators after the batch, so its state is kept.

        Every key of a batch has rows, and an existing key's first row is always
        applied, so an untouched key never had state to keep.
        """
        return self.touched & (self.count_after != 0)

    def grouping(self) -> Grouping:
        """The lifetimes of a grouped fold (``grouped``); asking any other fold is a bug."""
        if self.lifetimes is None or self.life_key is None or self.life_from_state is None \
                or self.key_last_row is None:
            raise ValueError("this fold is not grouped: it has no lifetimes")
        return Grouping(self.lifetimes, self.life_key, self.life_from_state, self.key_last_row)

    @property
    def key_final_life(self) -> np.ndarray:
        """Per key: index of its last lifetime (grouped folds only)."""
        g = self.grouping()
        return g.lifetimes.of_row[g.key_last_row]

    def source_position(self) -> np.ndarray:
        """The source position of every fold row."""
        return np.arange(self.size) if self.source_rank is None else self.source_rank


def plan_fold(
    kinds: np.ndarray,
    seq: np.ndarray,
    sub: np.ndarray,
    keys: KeyIndex,
    exists: np.ndarray,
    count_before: np.ndarray,
    *,
    mini_batch: bool,
    needs_order: bool,
    needs_grouping: bool,
    records: np.ndarray | None = None,
) -> Fold:
    """Order the batch and apply the record-counter rules of the chosen mode.

    ``records`` (batch order) is how many input records each row stands for,
    when the rows are partial accumulators of two-phase aggregation: the record
    count then grows by a partial's count, not by one. Mini-batch only.
    """
    if records is not None and not mini_batch:
        raise ValueError("partial rows (records=...) are folded in mini-batch mode only")
    retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
    has_retractions = bool(retract.any())
    grouped = needs_grouping or not mini_batch
    # Leading retractions are found in source order, so they need ordering too.
    ordered = grouped or needs_order or has_retractions
    order = _source_order(seq, sub) if ordered else None

    def source(column: np.ndarray) -> np.ndarray:
        return column if order is None else column[order]

    source_code = source(keys.codes)
    rows, source_rank, code = order, None, source_code
    if grouped:
        source_rank = group_order(source_code, keys.size)
        rows = source_rank if order is None else order[source_rank]
        code = source_code[source_rank]
    fold = Fold(
        mini_batch=mini_batch,
        keys=keys,
        rows=rows,
        source_rank=source_rank,
        ordered=ordered,
        source_code=source_code,
        source_seq=source(seq),
        source_sub=source(sub),
        code=code,
        retract=retract if rows is None else retract[rows],
        sign=np.empty(0, dtype=np.int64),
        exists=exists,
        count_before=count_before,
        count_after=count_before.copy(),
        touched=np.zeros(keys.size, dtype=bool),
        grouped=grouped,
    )
    delta = np.where(fold.retract, -1, 1) if has_retractions else np.ones(len(kinds), dtype=np.int64)
    if mini_batch:
        weight = None if records is None else np.asarray(records if rows is None else records[rows], dtype=np.int64)
        _count_bundle(fold, delta, has_retractions, weight)
    else:
        _count_rows(fold, delta, has_retractions)
    return fold


def _source_order(seq: np.ndarray, sub: np.ndarray) -> np.ndarray | None:
    """The permutation sorting rows by (_seq, _sub), stable; None if already sorted."""
    if len(seq) < 2:
        return None
    step = np.diff(seq)
    if ((step > 0) | ((step == 0) & (np.diff(sub) >= 0))).all():
        return None
    return np.lexsort((sub, seq))


def _count_bundle(fold: Fold, delta: np.ndarray, has_retractions: bool, weight: np.ndarray | None) -> None:
    """MiniBatchGroupAggFunction: drop leading retractions of absent keys, apply the rest.

    ``weight`` (fold order) is the number of records each row stands for, if not one.
    """
    sign = delta
    if has_retractions:
        # Fold order keeps source order within each key, so "before the key's first
        # accumulate row" can be read from fold positions.
        n = fold.size
        first_accumulate = np.full(fold.keys.size, n, dtype=np.int64)
        acc_rows = np.flatnonzero(~fold.retract)
        np.minimum.at(first_accumulate, fold.code[acc_rows], acc_rows)
        leading = fold.retract & ~fold.exists[fold.code] & (np.arange(n) < first_accumulate[fold.code])
        sign = np.where(leading, 0, delta)
        fold.touched = np.bincount(fold.code[sign != 0], minlength=fold.keys.size) > 0
    else:
        fold.touched = np.ones(fold.keys.size, dtype=bool)  # every key of the batch has a row
    fold.sign = sign
    # (ufunc.at is fast only when all operands share one dtype: keep them int64.)
    np.add.at(fold.count_after, fold.code, sign if weight is None else sign * weight)
    if fold.grouped:
        by_key = Segments.from_sorted_ids(fold.code)
        fold.lifetimes = by_key
        fold.life_key = fold.code[by_key.starts]
        fold.life_from_state = fold.exists[fold.life_key]
        fold.key_last_row = _last_rows(by_key, fold.life_key, fold.keys.size)


def _count_rows(fold: Fold, delta: np.ndarray, has_retractions: bool) -> None:
    """GroupAggFunction, one row at a time: the floored running count and the lifetimes."""
    by_key = Segments.from_sorted_ids(fold.code)
    key_of_seg = fold.code[by_key.starts]
    # A stored count is positive in this mode (zero means the key was cleared).
    start = np.maximum(fold.count_before, 0)[key_of_seg]
    running = by_key.cumsum(delta, base=start)
    if has_retractions:
        lowest = by_key.scan(np.minimum, running, base=start)
        after = running - np.minimum(lowest, 0)
    else:
        after = running
    before = np.empty_like(after)
    before[1:] = after[:-1]
    before[by_key.starts] = start
    no_accumulator = before == 0
    fold.sign = np.where(no_accumulator & fold.retract, 0, delta) if has_retractions else delta
    fold.row_count_before = before
    fold.row_count_after = after
    fold.key_last_row = _last_rows(by_key, key_of_seg, fold.keys.size)
    fold.count_after = after[fold.key_last_row]
    applied = np.add.reduceat((fold.sign != 0).astype(np.int64), by_key.starts) if fold.size else []
    fold.touched = np.zeros(fold.keys.size, dtype=bool)
    fold.touched[key_of_seg] = np.asarray(applied) > 0
    # A new lifetime starts wherever the key had no accumulator before the row.
    restarts = no_accumulator & ~by_key.is_start
    lifetimes = by_key.refine(restarts) if restarts.any() else by_key
    fold.lifetimes = lifetimes
    fold.life_key = fold.code[lifetimes.starts]
    fold.life_from_state = by_key.is_start[lifetimes.starts] & (before[lifetimes.starts] > 0)


def _last_rows(by_key: Segments, key_of_seg: np.ndarray, keys: int) -> np.ndarray:
    last = np.zeros(keys, dtype=np.int64)
    last[key_of_seg] = by_key.ends
    return last
