"""The latest-output-per-key buffer of FLIP-365, as pure functions over a buffer frame.

An operator whose output is idempotent (a later output for a key supersedes
the earlier ones) need not emit every intermediate value: it may keep the
latest output per key and emit it when flushed. :class:`LatestPerKey` holds
that logic; the buffer itself is a plain pandas frame that the caller keeps
(in memory, or in the operator's state so a restart loses nothing).

For a **changelog** output (``+I -U +U -D``, e.g. a group aggregation) the
buffer keeps, per key updated since the last flush, at most two rows:

``before`` (slot 0)  the value downstream holds for the key (the last value the
                     operator emitted before the interval), taken from the first
                     change of the interval: a ``-U``/``-D`` carries it, a ``+I``
                     says there is none;
``latest`` (slot 1)  the key's value now, from its last change: ``+I``/``+U``
                     carry it, after a ``-U``/``-D`` there is none.

A flush turns the pair into one consistent change per key: ``+I latest`` when
there was no value, ``-U before, +U latest`` when it changed, nothing when
``before == latest`` or when the key appeared and vanished within the interval,
``-D before`` when the key is gone. No table of every key ever emitted is
needed: the operator's own changelog says what downstream holds.

For an **append** output (records, e.g. the running value of a DataStream keyed
``reduce``) the buffer keeps the latest record per key and a flush emits it, as
the seed's ``BufferOutput`` does for a ``StreamRecord``. An append output is
insert-only (any other kind is refused), unless built with ``keep_kinds``: then
each record keeps its ``_kind``, as a DataStream record's kind is its value's
RowKind (:mod:`changeflow.kernels.keyed.records`), part of the record the flush
emits, not a change the buffer folds.

Every buffered row keeps the ``_seq``/``_sub`` stamp of the change it came
from, so emitted changes keep the source order downstream operators sort by.
A ``-U``/``+U`` pair takes the stamp of the interval's last change for both,
``-U`` first (every sort is stable), so the pair stays together and in order.
Stamping ``-U`` by the interval's first change instead put a pair in the wrong
order whenever stamps do not grow across micro-batches (a monitored
directory numbers each file's rows from 0): the ``+U`` came first and a
replay by key deleted the key.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import BOOKKEEPING, DELETE, INSERT, KIND, SEQ, SUB, UPDATE_AFTER, UPDATE_BEFORE
from changeflow.kernels.frames import select

SLOT = "_slot"
BEFORE, LATEST = 0, 1


class LatestPerKey:
    """Merges an operator's output into a buffer frame and drains it as consistent changes.

    ``key_columns`` identify an output record's key (the operator's grouping key);
    ``value_columns`` are the other output columns; ``changelog`` says whether the
    output is a changelog (see the module docstring) or append-only records;
    ``keep_kinds`` (append only) keeps each record's ``_kind`` instead of refusing all but ``+I``.

    >>> buf = LatestPerKey(["k"], ["n"])
    >>> out = pd.DataFrame({"k": ["a", "a", "a", "b"], "n": [1, 1, 2, 7], "_kind": [0, 1, 2, 0],
    ...                     "_seq": [0, 1, 1, 2], "_sub": [0, 0, 1, 0]})
    >>> buffered = buf.merge(buf.empty(out), out)
    >>> buf.drain(buffered)[["k", "n", "_kind"]].to_dict("list")
    {'k': ['a', 'b'], 'n': [2, 7], '_kind': [0, 0]}
    """

    def __init__(self, key_columns: list[str], value_columns: list[str], changelog: bool = True,
                 keep_kinds: bool = False) -> None:
        self.key_columns = list(key_columns)
        self.value_columns = list(value_columns)
        self.changelog = changelog
        self.keep_kinds = keep_kinds and not changelog
        self.columns = self.key_columns + self.value_columns
        # What a buffered row keeps: records keep their _kind (a changelog's is refolded, an insert's is +I).
        self._kept = self.columns + [SEQ, SUB] + ([KIND] if self.keep_kinds else [])

    def empty(self, like: pd.DataFrame) -> pd.DataFrame:
        """An empty buffer whose columns have the dtypes of the output frame ``like``."""
        frame = like[self._kept].iloc[:0].reset_index(drop=True)
        return frame.assign(**{SLOT: np.empty(0, dtype=np.int8)})

    def entries(self, buffered: pd.DataFrame) -> int:
        """The number of keys the buffer holds."""
        if not len(buffered):
            return 0
        return int(_key_codes(buffered, self.key_columns).max()) + 1 if self.key_columns else 1

    def merge(self, buffered: pd.DataFrame, changes: pd.DataFrame) -> pd.DataFrame:
        """The buffer after the operator emitted ``changes`` (any keys, any order)."""
        if not len(changes):
            return buffered
        changes = changes.sort_values([SEQ, SUB], kind="stable", ignore_index=True)
        kinds = changes[KIND].to_numpy(dtype=np.int8)
        if not self.changelog and not self.keep_kinds and (kinds != INSERT).any():
            bad = changes.iloc[int(np.flatnonzero(kinds != INSERT)[0])].to_dict()
            raise ValueError(f"flush buffer of an append-only output got a change that is not +I: {bad}")
        n_old = len(buffered)
        both = pd.concat([select(buffered, self.key_columns), select(changes, self.key_columns)], ignore_index=True)
        codes = _key_codes(both, self.key_columns)
        old_codes, new_codes = codes[:n_old], codes[n_old:]
        changed = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
        changed[new_codes] = True
        was_buffered = np.zeros_like(changed)
        was_buffered[old_codes] = True

        # Buffered rows survive unless superseded: a changed key keeps only its ``before``.
        old_slot = buffered[SLOT].to_numpy()
        keep_old = ~changed[old_codes] | (old_slot == BEFORE)
        parts = [select(buffered, keep_old)]

        first = _first_of_each(new_codes)
        if self.changelog:
            # A key's first change since the last flush tells what downstream holds.
            fresh = first[~was_buffered[new_codes[first]]]
            fresh_kinds = kinds[fresh]
            orphan = fresh_kinds == UPDATE_AFTER
            if orphan.any():
                bad = changes.iloc[int(fresh[orphan][0])].to_dict()
                raise ValueError("flush buffer needs a consistent changelog, but a key's first change "
                                 f"since the last flush is +U without a -U before it: {bad}")
            retracting = fresh[(fresh_kinds == UPDATE_BEFORE) | (fresh_kinds == DELETE)]
            parts.append(self._slot_rows(changes, retracting, BEFORE))
        last = _last_of_each(new_codes)
        if self.changelog:
            last = last[(kinds[last] == INSERT) | (kinds[last] == UPDATE_AFTER)]
        parts.append(self._slot_rows(changes, last, LATEST))
        return pd.concat([p for p in parts if len(p)] or [parts[0]], ignore_index=True)

    def drain(self, buffered: pd.DataFrame) -> pd.DataFrame:
        """The changes a flush emits for ``buffered`` (output columns plus bookkeeping), in stamp order."""
        out_columns = self.columns + list(BOOKKEEPING)
        if not len(buffered):
            return select(_with_kind(buffered, np.empty(0, dtype=np.int8)), out_columns)
        if self.keep_kinds:  # each key's latest record, as it was (its _kind included)
            return select(buffered.drop(columns=[SLOT]), out_columns)
        if not self.changelog:
            return select(_with_kind(buffered, np.full(len(buffered), INSERT, dtype=np.int8)), out_columns)
        codes = _key_codes(buffered, self.key_columns)
        slot = buffered[SLOT].to_numpy()
        size = int(codes.max()) + 1
        before_at = np.full(size, -1, dtype=np.int64)
        latest_at = np.full(size, -1, dtype=np.int64)
        before_at[codes[slot == BEFORE]] = np.flatnonzero(slot == BEFORE)
        latest_at[codes[slot == LATEST]] = np.flatnonzero(slot == LATEST)
        has_b, has_l = before_at >= 0, latest_at >= 0
        both = np.flatnonzero(has_b & has_l)
        same = _rows_equal(buffered, before_at[both], latest_at[both], self.value_columns)
        updated = both[~same]
        pieces = [
            (latest_at[has_l & ~has_b], INSERT),
            (before_at[updated], UPDATE_BEFORE),
            (latest_at[updated], UPDATE_AFTER),
            (before_at[has_b & ~has_l], DELETE),
        ]
        rows = np.concatenate([p for p, _ in pieces])
        kinds = np.concatenate([np.full(len(p), k, dtype=np.int8) for p, k in pieces])
        out = _with_kind(buffered.take(rows).reset_index(drop=True), kinds)
        # A -U takes its +U's stamp: the pieces put every -U before the +Us, the stable sort keeps it there.
        n_insert, n_pair = len(pieces[0][0]), len(updated)
        pair_before = np.arange(n_insert, n_insert + n_pair)
        after_rows = buffered.take(latest_at[updated])
        out.loc[pair_before, SEQ] = after_rows[SEQ].to_numpy()
        out.loc[pair_before, SUB] = after_rows[SUB].to_numpy()
        return select(out.sort_values([SEQ, SUB], kind="stable", ignore_index=True), out_columns)

    def _slot_rows(self, changes: pd.DataFrame, rows: np.ndarray, slot: int) -> pd.DataFrame:
        picked = changes.take(rows)[self._kept].reset_index(drop=True)
        return picked.assign(**{SLOT: np.full(len(picked), slot, dtype=np.int8)})


def _with_kind(frame: pd.DataFrame, kinds: np.ndarray) -> pd.DataFrame:
    out = frame.drop(columns=[SLOT]) if SLOT in frame.columns else frame
    return out.assign(**{KIND: kinds})


def _key_codes(frame: pd.DataFrame, key_columns: list[str]) -> np.ndarray:
    """A dense code per distinct key (nulls are ordinary key values)."""
    if not key_columns:
        return np.zeros(len(frame), dtype=np.int64)
    if len(key_columns) == 1:
        return pd.factorize(frame[key_columns[0]], use_na_sentinel=False)[0].astype(np.int64)
    return frame.groupby(key_columns, dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)


def _first_of_each(codes: np.ndarray) -> np.ndarray:
    """Positions of each code's first occurrence, in position order."""
    _, first = np.unique(codes, return_index=True)
    return np.sort(first)


def _last_of_each(codes: np.ndarray) -> np.ndarray:
    """Positions of each code's last occurrence, in position order."""
    _, last_rev = np.unique(codes[::-1], return_index=True)
    return np.sort(len(codes) - 1 - last_rev)


def _rows_equal(frame: pd.DataFrame, a: np.ndarray, b: np.ndarray, columns: list[str]) -> np.ndarray:
    """Whether rows ``a[i]`` and ``b[i]`` hold equal values (nulls equal each other)."""
    same = np.ones(len(a), dtype=bool)
    for name in columns:
        col = frame[name]
        left, right = col.take(a).reset_index(drop=True), col.take(b).reset_index(drop=True)
        left_null, right_null = left.isna().to_numpy(), right.isna().to_numpy()
        if col.dtype == object:
            # Lists, dicts and other objects: Python equality, element by element.
            pairs = zip(left.tolist(), right.tolist(), strict=True)
            equal = np.fromiter((x == y for x, y in pairs), dtype=bool, count=len(a))
        else:
            equal = (left == right).fillna(False).to_numpy(dtype=bool)
        same &= np.where(left_null | right_null, left_null & right_null, equal)
    return same
