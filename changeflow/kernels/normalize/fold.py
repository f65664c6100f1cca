"""The vectorised fold of ChangelogNormalize: a batch's changes per key, with array operations only.

Flink's ``processLastRowOnChangelog`` decides each change from the key's row at hand, which the
change before it left. Three facts make the whole batch one pass of numpy:

* whether a key has a row *before* a change depends only on the change before it: an upsert
  (``+I``/``+U``) leaves a row (its own, or an equal one when it was dropped as a repeat), a
  retraction (``-U``/``-D``) leaves none, and the first change of a key sees the stored row;
* an upsert over a row is dropped (without a TTL) when its values equal the row at hand's, whose
  values are those of the change just before it, so each test compares two neighbours;
* the row at hand itself is the last change before that was not dropped (a forward fill).

The batch's changes are laid out key by key (a stable radix sort of the key codes), each key's
run led by a *head* that stands for its stored row, so "the change before" is the previous array
position and the forward fill never crosses keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.segments import group_order
from changeflow.kernels.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from changeflow.kernels.frames import column

EqualRows = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Folded:
    """What one batch emits and leaves: emitted changes in the order of (input row, index among its outputs)."""

    ids: np.ndarray  # the row id (in the rows at hand) each change carries
    kinds: np.ndarray  # its kind, int8
    parent: np.ndarray  # the input row (position in the batch) it descends from
    index: np.ndarray  # its index among that row's outputs
    at_hand: np.ndarray  # per key code: the id of its row after the batch, -1 none


def fold(codes: np.ndarray, kinds: np.ndarray, rows: np.ndarray, stored: np.ndarray, first_id: int,
         equal: EqualRows | None, generate_update_before: bool) -> Folded:
    """Fold the batch rows ``rows`` (positions, in order) into the keys' stored rows.

    ``codes``/``kinds``: per batch position, the key code (``0..K-1``) and change kind;
    ``stored``: per key, the id of its stored row, -1 none; a batch position ``i``'s row id is
    ``first_id + i``; ``equal(a, b)``: whether rows ``a`` and ``b`` hold equal values (None: never
    drop a repeat, as with a state TTL).

    >>> f = fold(np.array([0, 0, 0, 1]), np.array([INSERT, UPDATE_AFTER, DELETE, DELETE]), np.arange(4),
    ...          np.array([-1, -1]), 10, lambda a, b: np.zeros(len(a), bool), True)
    >>> f.ids.tolist(), f.kinds.tolist(), f.parent.tolist(), f.at_hand.tolist()
    ([10, 10, 11, 11], [0, 1, 2, 3], [0, 1, 1, 2], [-1, -1])
    """
    n_keys = len(stored)
    ext_code = np.concatenate([np.arange(n_keys, dtype=np.int64), np.asarray(codes, dtype=np.int64)[rows]])
    perm = group_order(ext_code, n_keys)  # stable: each key's head, then its changes in order
    head = perm < n_keys
    code = ext_code[perm]
    src = np.where(head, -1, np.asarray(rows, dtype=np.int64)[np.maximum(perm - n_keys, 0)])  # batch position
    kind = np.where(head, -1, np.asarray(kinds, dtype=np.int64)[np.maximum(src, 0)])
    row_id = np.where(head, stored[code], first_id + src)
    upsert = np.where(head, row_id >= 0, (kind == INSERT) | (kind == UPDATE_AFTER))
    live = np.zeros(len(perm), dtype=bool)  # the key has a row before this change
    live[1:] = upsert[:-1]
    live &= ~head
    dropped = np.zeros(len(perm), dtype=bool)
    repeat = np.flatnonzero(upsert & live)
    if equal is not None and len(repeat):
        dropped[repeat] = equal(row_id[repeat - 1], row_id[repeat])
    # The row at hand before position p: the id of the last position before p that was not dropped.
    position = np.arange(len(perm), dtype=np.int64)
    last_kept = np.maximum.accumulate(np.where(dropped, 0, position))
    before = np.full(len(perm), -1, dtype=np.int64)
    before[1:] = row_id[last_kept[:-1]]
    change = np.flatnonzero(~head)
    upsert_c, live_c, src_c = upsert[change], live[change], src[change]
    insert = upsert_c & ~live_c
    update = upsert_c & live_c & ~dropped[change]
    delete = ~upsert_c & live_c
    # Two output slots per input row, in input order: no sort. An update's first slot is its -U
    # (or, without update-befores, its +U); its second its +U.
    carries_new = insert | (update & (not generate_update_before))
    slot0_id = np.where(carries_new, row_id[change], before[change])
    first_kind = np.where(insert, INSERT, np.where(update, UPDATE_BEFORE if generate_update_before else UPDATE_AFTER,
                                                   DELETE))
    n = int(np.max(rows, initial=-1)) + 1
    slot_id = np.zeros((n, 2), dtype=np.int64)
    slot_kind = np.zeros((n, 2), dtype=np.int8)
    used = np.zeros((n, 2), dtype=bool)
    slot_id[src_c, 0], slot_kind[src_c, 0], used[src_c, 0] = slot0_id, first_kind, insert | update | delete
    if generate_update_before:
        slot_id[src_c, 1], slot_kind[src_c, 1], used[src_c, 1] = row_id[change], UPDATE_AFTER, update
    taken = np.flatnonzero(used.reshape(-1))
    # Each key's last position: its row after the batch is the last kept one's, if the key has a row.
    end = np.flatnonzero(np.append(code[1:] != code[:-1], True))
    at_hand = np.full(n_keys, -1, dtype=np.int64)
    alive = upsert[end]
    at_hand[code[end[alive]]] = row_id[last_kept[end[alive]]]
    return Folded(slot_id.reshape(-1)[taken], slot_kind.reshape(-1)[taken], taken // 2, taken % 2, at_hand)


def equal_rows(frame: pd.DataFrame, columns: list[str]) -> EqualRows:
    """``equal(a, b)``: whether rows ``a`` and ``b`` of ``frame`` hold equal ``columns``, column by column.

    Nulls of any kind are equal to each other and to nothing else (the row-tuple comparison of
    :func:`~changeflow.kernels.rank.rows.row_tuples`); other values compare with ``==``: in numpy for
    numbers and times, element by element for objects (strings, decimals, lists, maps).

    >>> eq = equal_rows(pd.DataFrame({"a": [1.0, 1.0, None], "b": ["x", "x", None]}), ["a", "b"])
    >>> eq(np.array([0, 2]), np.array([1, 2])).tolist()
    [True, True]
    """
    def equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        same = np.ones(len(a), dtype=bool)
        for name in columns:
            series = column(frame, name)
            nulls = series.isna().to_numpy()
            na, nb = nulls[a], nulls[b]
            same &= na == nb
            both = np.flatnonzero(same & ~na)  # still equal so far, neither null: compare values
            if not len(both):
                continue
            values = _comparable(series)
            same[both] = _equal_values(values[a[both]], values[b[both]])
        return same

    return equal


def _comparable(series: pd.Series) -> np.ndarray:
    """The column's values as a numpy array to compare with ``==`` (its nulls masked by the caller)."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iufbmM":
        return series.to_numpy()
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # pandas' masked Int64, Float64, boolean
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind in "iufb":
        return series.to_numpy(dtype=numpy_dtype, na_value=numpy_dtype.type(0))
    return series.to_numpy(dtype=object)


def _equal_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    try:
        result = np.asarray(x == y)
        if result.dtype == bool and result.shape == x.shape:
            return result
    except (TypeError, ValueError):  # an element whose == is not a truth value (an array)
        pass
    return np.fromiter((_same(u, v) for u, v in zip(x, y, strict=True)), dtype=bool, count=len(x))


def _same(u, v) -> bool:
    try:
        return bool(u == v)
    except (TypeError, ValueError):  # arrays: equal when of one shape with equal elements
        return bool(np.array_equal(np.asarray(u, dtype=object), np.asarray(v, dtype=object)))
