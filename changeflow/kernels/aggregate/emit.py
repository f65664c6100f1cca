"""Which changes a group aggregate emits, and how they are stamped.

Flink's rule (GroupAggFunction / MiniBatchGroupAggFunction with
``generateUpdateBefore``), applied per input row without mini-batch and per key
and bundle with it:

* the key had no accumulator and now has one: ``+I(new)``;
* the record count fell to zero: ``-D(previous)`` (and the state is cleared);
* otherwise ``-U(previous), +U(new)``, unless every aggregate value is equal
  (null equals null), in which case nothing is emitted. Without mini-batch and
  with a state TTL the pair is emitted even then (``emit_unchanged``): Flink's
  GroupAggFunction does so "to prevent too early state eviction of downstream
  operators", which a write refreshes; MiniBatchGroupAggFunction does not.

The i-th change emitted for an input row carries that row's ``_seq`` and
``child_sub(_sub, i)``. A mini-batch key's changes are stamped from the key's
last input row of the bundle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from changeflow.kernels.aggregate.base import Folded
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.values import Values, equal
from changeflow.kernels.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, child_sub


@dataclass
class Changes:
    """Emitted changes in output order: key code, kind, stamps, one Values per call."""

    code: np.ndarray
    kind: np.ndarray
    seq: np.ndarray
    sub: np.ndarray
    values: list[Values]


def changes_per_row(fold: Fold, results: list[Folded], emit_unchanged: bool = False) -> Changes:
    """Non-mini-batch: the changes each applied input row causes, in source order.

    ``emit_unchanged`` (a state TTL) emits ``-U``/``+U`` also where the values did not change.
    """
    n = fold.size
    before, after = fold.row_count_before, fold.row_count_after
    if before is None or after is None:
        raise ValueError("per-row emission needs the per-row counts of a fold without mini-batch")
    applied = fold.sign != 0
    insert = applied & (before == 0)
    delete = applied & (before > 0) & (after == 0)
    update = applied & (before > 0) & (after > 0)
    key_start = np.ones(n, dtype=bool)
    key_start[1:] = fold.code[1:] != fold.code[:-1]
    if update.any() and not emit_unchanged:
        same = update.copy()
        for r in results:
            same &= _same_as_previous(r, fold.code, key_start)
        update &= ~same
    first_kind = np.where(insert, INSERT, np.where(delete, DELETE, UPDATE_BEFORE)).astype(np.int8)
    emitted = (insert | delete).astype(np.int8) + 2 * update.astype(np.int8)

    # Visit the emitting rows in source order.
    if fold.source_rank is None:
        emitting = np.flatnonzero(emitted)
        rows = emitting
    else:
        fold_row_at = np.empty(n, dtype=np.int64)
        fold_row_at[fold.source_rank] = np.arange(n)
        emitting = np.flatnonzero(emitted[fold_row_at])
        rows = fold_row_at[emitting]
    per_row = emitted[rows].astype(np.int64)
    first = np.cumsum(per_row) - per_row
    pairs = per_row == 2
    second = first[pairs] + 1
    total = int(per_row.sum())

    kind = np.empty(total, dtype=np.int8)
    kind[first] = first_kind[rows]
    kind[second] = UPDATE_AFTER
    # -U and -D show the value before the row: the value after the key's previous
    # row (fold row - 1) or, for the key's first row, the stored value. +I and +U
    # show the value after the row.
    source_row = np.empty(total, dtype=np.int64)
    source_row[first] = rows
    source_row[second] = rows[pairs]
    shows_prev = (kind == UPDATE_BEFORE) | (kind == DELETE)
    stored = np.flatnonzero(shows_prev & key_start[source_row])
    stored_code = fold.code[source_row[stored]]
    value_row = source_row
    value_row -= shows_prev  # in place: these arrays are the size of the output
    values = []
    for r in results:
        if r.running is None:
            raise ValueError("per-row emission needs every accumulator's running values")
        v = r.running.take(value_row)
        v.data[stored] = r.before.data[stored_code]
        v.valid[stored] = r.before.valid[stored_code]
        values.append(v)
    sub = np.repeat(child_sub(fold.source_sub[emitting], 0), per_row)
    sub[second] += 1
    return Changes(
        code=np.repeat(fold.source_code[emitting], per_row),
        kind=kind,
        seq=np.repeat(fold.source_seq[emitting], per_row),
        sub=sub,
        values=values,
    )


def changes_per_key(fold: Fold, results: list[Folded]) -> Changes:
    """Mini-batch: at most one change (or -U/+U pair) per key for the whole bundle."""
    touched, existed, count = fold.touched, fold.exists, fold.count_after
    insert = touched & ~existed & (count != 0)
    delete = touched & existed & (count == 0)
    update = touched & existed & (count != 0)
    candidates = np.flatnonzero(update)
    same = np.ones(len(candidates), dtype=bool)
    for r in results:
        for before_value, after_value in zip(r.compared("before"), r.compared("after"), strict=True):
            same &= equal(before_value.take(candidates), after_value.take(candidates))
    update[candidates[same]] = False

    seq, sub, keys = last_stamps(fold, np.flatnonzero(insert | delete | update))
    per_key = 1 + update[keys].astype(np.int64)
    first = np.cumsum(per_key) - per_key
    second = first[per_key == 2] + 1
    code = np.repeat(keys, per_key)
    kind = np.empty(len(code), dtype=np.int8)
    kind[first] = np.where(insert[keys], INSERT, np.where(delete[keys], DELETE, UPDATE_BEFORE))
    kind[second] = UPDATE_AFTER
    shows_prev = (kind == UPDATE_BEFORE) | (kind == DELETE)
    values = []
    for r in results:
        # Index into [before per key; after per key].
        index = np.where(shows_prev, code, fold.keys.size + code)
        values.append(Values.concat([r.before, r.after]).take(index))
    out_sub = np.repeat(child_sub(sub, 0), per_key)
    out_sub[second] += 1
    return Changes(code=code, kind=kind, seq=np.repeat(seq, per_key), sub=out_sub, values=values)


def _same_as_previous(result: Folded, code: np.ndarray, key_start: np.ndarray) -> np.ndarray:
    """Per fold row: what the emission check compares is equal after and before the row."""
    same = np.ones(len(code), dtype=bool)
    starts = np.flatnonzero(key_start)
    for running, before in zip(result.compared("running"), result.compared("before"), strict=True):
        # Within a key the previous value is the previous row's: compare shifted views.
        same[1:] &= equal(Values(running.data[1:], running.valid[1:]), Values(running.data[:-1], running.valid[:-1]))
        same[starts] &= equal(running.take(starts), before.take(code[starts]))
    return same


def last_stamps(fold: Fold, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (_seq, _sub) of each key's last input row, and ``keys`` sorted by it.

    A mini-batch key's changes are stamped from its last row in the bundle.
    """
    if fold.grouped:
        position = fold.source_position()[fold.grouping().key_last_row[keys]]
    elif fold.ordered:  # fold order is source order
        last = np.full(fold.keys.size, -1, dtype=np.int64)
        np.maximum.at(last, fold.code, np.arange(fold.size, dtype=np.int64))
        position = last[keys]
    else:
        # Unordered bundle: take the largest (_seq, _sub) of each key directly.
        seq = np.full(fold.keys.size, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(seq, fold.code, fold.source_seq)
        latest = np.flatnonzero(fold.source_seq == seq[fold.code])
        sub = np.full(fold.keys.size, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(sub, fold.code[latest], fold.source_sub[latest])
        seq, sub = seq[keys], sub[keys]
        order = np.lexsort((sub, seq))
        return seq[order], sub[order], keys[order]
    order = np.argsort(position)
    position = position[order]
    return fold.source_seq[position], fold.source_sub[position], keys[order]
