"""The streaming join of one batch with array operations, emitting exactly what the per-record path emits.

:class:`~.streaming_join.StreamingJoin` without mini-batch processes a batch's
changes one by one in source order (``_seq``, side). Flink's output for that order
can be derived for a whole batch at once when the state each change meets follows
from counting, which is what this module does:

* Every stored or new row value of a side is an *entry* (per join key, in the order
  the per-record path's dict keeps them: stored rows as loaded, then new rows as
  first added, a row re-added after its last copy went moves to the end).
* Every change at position ``p`` of the batch meets, for each entry of the other
  side with its join key, ``count(p)`` copies: the stored count plus that entry's
  own changes before ``p`` (a running sum per entry, looked up by binary search).
* The emitted pairs are those candidates with a copy and a true condition, ordered
  by (``p``, entry order), each repeated per copy.
* Outer joins: an outer row's association count before ``p`` is the matches its
  last own change found (or the stored count) plus the matching changes of the
  other side since; a zero means its null-padded row is retracted first. A change
  without a match pads its own row.

Which batches take this path (the others go through the per-record path):

* no mini-batch: mini-batch bundles fold and reorder per join key (:mod:`.bundle`);
* inner joins with any changes, as long as no retraction takes away a row its side
  does not hold (the per-record path then ignores it, a clamp a running sum has not);
* outer joins when no change of the batch retracts: with retractions an outer row's
  association count goes up and down and the padding it causes depends on the
  exact interleaving, which is kept per record;
* row values pandas can hash (not lists or maps).

A non-equi condition is evaluated on all candidate pairs at once over arrays of
Python values (:mod:`.condition_arrays`), with the per-record pair test's semantics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import DELETE, INSERT
from changeflow.kernels.frames import select
from changeflow.kernels.join.join_rows import LEFT, RIGHT, tuples
from changeflow.kernels.join.join_state import ASSOC, COUNT, TABLES, TS
from changeflow.kernels.join.vector_rows import (SideBatch, Source, group_ids, output_frame, side_batch,
                                                 state_frame, stored_rows)
from changeflow.kernels.state import KeyedState

if TYPE_CHECKING:
    from changeflow.kernels.join.streaming_join import StreamingJoin

_STORED = -(1 << 40)  # entry order of a stored row: before every position of the batch


class _Side:
    """One side's records and entries as arrays (positions are global: both sides in processing order)."""

    def __init__(self, batch: SideBatch, stored: pd.DataFrame, pos: np.ndarray, key_ids: np.ndarray,
                 stored_key_ids: np.ndarray, columns: list[str], key_columns: list[str]) -> None:
        self.batch, self.pos = batch, pos
        self.source = Source(stored, batch, columns, key_columns)
        n_stored = len(stored)
        valid = ~batch.null_key
        identity = pd.DataFrame({0: np.concatenate([stored_key_ids, key_ids[valid]])})
        for i, name in enumerate(columns, start=1):
            identity[i] = _concat([select(stored, [name]), select(select(batch.frame, [name]), valid)])[name]
        gid = group_ids(identity)
        entry_of = np.full(gid.max() + 1 if len(gid) else 0, -1, dtype=np.int64)
        entry_of[gid[:n_stored]] = np.arange(n_stored)
        new = pd.unique(gid[n_stored:][entry_of[gid[n_stored:]] < 0])
        entry_of[np.asarray(new, dtype=np.int64)] = n_stored + np.arange(len(new))
        self.records = np.flatnonzero(valid)  # the records with an entry
        self.record_entry = np.full(len(batch), -1, dtype=np.int64)
        self.record_entry[self.records] = entry_of[gid[n_stored:]]
        n = n_stored + len(new)
        # Per entry: its source row (stored row, or the batch record that first added it), join key, stored figures.
        first = np.full(n, -1, dtype=np.int64)
        rec_entries = self.record_entry[self.records]
        order = np.argsort(rec_entries, kind="stable")
        starts = np.r_[True, np.diff(rec_entries[order]) != 0] if len(order) else np.zeros(0, bool)
        first[rec_entries[order][starts]] = self.records[order][starts]
        self.entry_source = np.where(np.arange(n) < n_stored, np.arange(n), n_stored + first)
        self.entry_key = np.empty(n, dtype=np.int64)
        self.entry_key[:n_stored] = stored_key_ids
        self.entry_key[n_stored:] = key_ids[first[n_stored:]]
        self.n_stored, self.n = n_stored, n
        self.stored_count = np.zeros(n, dtype=np.int64)
        self.stored_assoc = np.zeros(n, dtype=np.int64)
        self.stored_ts = np.zeros(n, dtype=np.int64)
        if n_stored:
            self.stored_count[:n_stored] = stored[COUNT].to_numpy(dtype=np.int64)
            self.stored_assoc[:n_stored] = stored[ASSOC].to_numpy(dtype=np.int64)
            if TS in stored.columns:
                self.stored_ts[:n_stored] = stored[TS].to_numpy(dtype=np.int64)

    def own_events(self, width: int) -> bool:
        """Each entry's own changes sorted by (entry, position), with the running count after each and the
        position its current copy was added at. False when a retraction takes a copy the entry lacks."""
        recs = self.records
        ent = self.record_entry[recs]
        order = np.lexsort((self.pos[recs], ent))
        self.ev_record = recs[order]
        self.ev_entry = ent[order]
        self.ev_pos = self.pos[self.ev_record]
        self.ev_key = self.ev_entry * width + self.ev_pos
        delta = np.where(self.batch.retracts[self.ev_record], -1, 1)
        group_start = np.r_[True, np.diff(self.ev_entry) != 0] if len(order) else np.zeros(0, bool)
        running = np.cumsum(delta)
        # the running sum restarted at each entry (the sum before its first change is taken off), plus its stored count
        base = _forward_fill(group_start, running - delta)
        self.ev_count = running - base + self.stored_count[self.ev_entry]
        if (self.ev_count < 0).any():
            return False
        added = (self.ev_count - delta == 0) & (delta > 0)
        marker = np.where(added, self.ev_key, self.ev_entry * width - 1)
        self.ev_added = np.maximum.accumulate(marker) - self.ev_entry * width if len(order) else marker
        return True

    def at(self, entries: np.ndarray, positions: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For entries at positions: (index of the entry's last own change before it or -1, copies, dict order)."""
        idx = np.searchsorted(self.ev_key, entries * width + positions) - 1
        has = idx >= 0
        has[has] = self.ev_entry[idx[has]] == entries[has]
        idx = np.where(has, idx, -1)
        count = np.where(has, _take(self.ev_count, idx), self.stored_count[entries])
        added = np.where(has, _take(self.ev_added, idx), -1)
        order = np.where(added >= 0, added, _STORED + entries)
        return idx, count, order


def _take(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]`` where the index is not negative, 0 elsewhere (also when ``values`` is empty)."""
    if not len(values):
        return np.zeros(len(index), dtype=values.dtype)
    return np.where(index >= 0, values[np.maximum(index, 0)], 0)


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames one after the other, empty ones left out (their dtypes say nothing) unless all are."""
    present = [f for f in frames if len(f)]
    return pd.concat(present or frames[:1], ignore_index=True)


def _forward_fill(start: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per element, ``values`` at the last ``start`` at or before it."""
    if not len(start):
        return values
    last = np.maximum.accumulate(np.where(start, np.arange(len(start)), 0))
    return values[last]


def _candidates(records: np.ndarray, record_keys: np.ndarray, entry_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (record, entry) with the same join key."""
    order = np.argsort(entry_keys, kind="stable")
    sorted_keys = entry_keys[order]
    lo = np.searchsorted(sorted_keys, record_keys, "left")
    hi = np.searchsorted(sorted_keys, record_keys, "right")
    lengths = hi - lo
    total = int(lengths.sum())
    rec = np.repeat(records, lengths)
    ends = np.cumsum(lengths)
    within = np.arange(total) - np.repeat(ends - lengths, lengths)
    return rec, order[np.repeat(lo, lengths) + within]


def join_batch(join: "StreamingJoin", left: pd.DataFrame | None, right: pd.DataFrame | None,
               state: KeyedState) -> pd.DataFrame | None:
    """The changes of one batch (no mini-batch), or None when the batch needs the per-record path."""
    batches = (side_batch(join, LEFT, left), side_batch(join, RIGHT, right))
    any_outer = join.outer[LEFT] or join.outer[RIGHT]
    if any_outer and any(b.retracts.any() for b in batches):
        return None
    n = len(batches[LEFT]) + len(batches[RIGHT])
    sides_of = np.repeat(np.array([LEFT, RIGHT]), [len(batches[LEFT]), len(batches[RIGHT])])
    seqs = np.concatenate([batches[LEFT].seqs, batches[RIGHT].seqs])
    order = np.lexsort((np.arange(n), sides_of, seqs))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    width = n + 1
    # Join keys: one id per distinct key (NULL-free), in first appearance over left then right records.
    key_columns = join.key_columns
    valid_keys = [select(b.keys, ~b.null_key) for b in batches]
    batch_keys = _concat(valid_keys) if key_columns else pd.DataFrame(
        index=pd.RangeIndex(sum(len(k) for k in valid_keys)))
    if key_columns:
        distinct = batch_keys.drop_duplicates()
        key_frame = join._key_frame(tuples(distinct, key_columns))
    else:
        key_frame = join._key_frame([()] if len(batch_keys) else [])
    loaded = [stored_rows(join, side, state.load(TABLES[side], key_frame) if len(key_frame) else pd.DataFrame())
              for side in (LEFT, RIGHT)]
    try:
        all_keys = _concat([batch_keys] + [select(s, key_columns) for s in loaded]) if key_columns else pd.DataFrame(
            index=pd.RangeIndex(len(batch_keys) + sum(len(s) for s in loaded)))
        key_ids = group_ids(all_keys)
        sides = []
        start = len(batch_keys)
        at = 0
        for side in (LEFT, RIGHT):
            ids = np.full(len(batches[side]), -1, dtype=np.int64)
            ids[~batches[side].null_key] = key_ids[at:at + len(valid_keys[side])]
            at += len(valid_keys[side])
            stored_ids = key_ids[start:start + len(loaded[side])]
            start += len(loaded[side])
            sides.append(_Side(batches[side], loaded[side], pos[:len(batches[LEFT])] if side == LEFT
                               else pos[len(batches[LEFT]):], ids, stored_ids, join.columns[side], key_columns))
    except TypeError:  # row values pandas cannot hash
        return None
    if not all(s.own_events(width) for s in sides):
        return None
    return _emit(join, sides, batches, seqs[order], pos, width, state, key_frame)


def _emit(join: "StreamingJoin", sides: list[_Side], batches: tuple[SideBatch, SideBatch],
          seqs_in_order: np.ndarray, pos: np.ndarray, width: int, state: KeyedState,
          key_frame: pd.DataFrame) -> pd.DataFrame:
    cands = []
    for side in (LEFT, RIGHT):
        mine, theirs = sides[side], sides[1 - side]
        rec, ent = _candidates(mine.records, mine.entry_key[mine.record_entry[mine.records]], theirs.entry_key)
        p = mine.pos[rec]
        ev_idx, count, order = theirs.at(ent, p, width)
        alive = count > 0
        rec, ent, p, ev_idx, count, order = rec[alive], ent[alive], p[alive], ev_idx[alive], count[alive], order[alive]
        if join.condition is not None and len(rec):
            keep = _condition(join, side, mine, theirs, rec, ent)
            rec, ent, p, ev_idx, count, order = rec[keep], ent[keep], p[keep], ev_idx[keep], count[keep], order[keep]
        cands.append((rec, ent, p, ev_idx, count, order))
    # n: per record, how many copies it matched (an outer record's association count after it).
    matched = [np.bincount(c[0], weights=c[4], minlength=len(batches[s])).astype(np.int64)
               for s, c in enumerate(cands)]
    units = []  # per side: (position, order, record, entry, copies, pad) of emitted groups
    for side in (LEFT, RIGHT):
        rec, ent, p, ev_idx, count, order = cands[side]
        pad = np.zeros(len(rec), dtype=bool)
        if join.outer[1 - side]:
            pad = _assoc_before(sides, side, cands, matched, ent, p, ev_idx, width) == 0
        units.append((p, order, rec, ent, count, pad, np.full(len(rec), side)))
        lonely = np.flatnonzero(matched[side] == 0) if join.outer[side] else np.zeros(0, dtype=np.int64)
        sp = sides[side].pos[lonely]
        units.append((sp, np.full(len(lonely), _STORED * 4), lonely, np.full(len(lonely), -1),
                      np.ones(len(lonely), dtype=np.int64), np.zeros(len(lonely), bool), np.full(len(lonely), side)))
    p, order, rec, ent, count, pad, side_of = (np.concatenate(parts) for parts in zip(*units, strict=True))
    sort = np.lexsort((order, p))
    p, rec, ent, count, pad, side_of = p[sort], rec[sort], ent[sort], count[sort], pad[sort], side_of[sort]
    reps = count * np.where(pad, 2, 1)
    unit = np.repeat(np.arange(len(p)), reps)
    within = np.arange(len(unit)) - np.repeat(np.cumsum(reps) - reps, reps)
    is_pad = pad[unit] & (within % 2 == 0)
    lonely = ent[unit] < 0
    u_side = side_of[unit]
    own_row = np.empty(len(unit), dtype=np.int64)
    other_row = np.empty(len(unit), dtype=np.int64)
    for side in (LEFT, RIGHT):
        on = u_side == side
        own_row[on] = sides[side].n_stored + rec[unit[on]]
        ents = ent[unit[on]]
        other_row[on] = np.where(ents >= 0, _take(sides[1 - side].entry_source, ents), -1)
    own_row = np.where(is_pad, -1, own_row)
    other_row = np.where(lonely, -1, other_row)
    left_rows = np.where(u_side == LEFT, own_row, other_row)
    right_rows = np.where(u_side == LEFT, other_row, own_row)
    kinds = np.full(len(unit), INSERT, dtype=np.int64)
    kinds[is_pad] = DELETE
    if not (join.outer[LEFT] or join.outer[RIGHT]):  # an inner join's pairs carry their change's kind
        for side in (LEFT, RIGHT):
            on = u_side == side
            kinds[on] = batches[side].kinds[rec[unit[on]]]
    seq_upto = np.maximum.accumulate(seqs_in_order) if len(seqs_in_order) else seqs_in_order
    out = output_frame(join, (sides[LEFT].source, sides[RIGHT].source), (left_rows, right_rows),
                       kinds, seq_upto[p[unit]] if len(unit) else np.zeros(0, dtype=np.int64))
    if len(key_frame):
        for side in (LEFT, RIGHT):
            state.store(TABLES[side], key_frame, _state_rows(join, sides, side, cands, matched, width))
    return out


def _condition(join: "StreamingJoin", side: int, mine: _Side, theirs: _Side, rec: np.ndarray,
               ent: np.ndarray) -> np.ndarray:
    """Whether each candidate (record ``rec`` of ``side``, entry ``ent`` of the other side) meets the condition."""
    rows = {side: mine.n_stored + rec, 1 - side: theirs.entry_source[ent]}
    sources = {side: mine.source, 1 - side: theirs.source}
    columns = [{name: sources[s].values(name)[rows[s]] for name in join.columns[s] if name in join.condition_columns}
               for s in (LEFT, RIGHT)]
    assert join.array_condition is not None  # the caller checked there is a condition
    return join.array_condition(columns[LEFT], columns[RIGHT])


def _assoc_before(sides: list[_Side], side: int, cands: list, matched: list[np.ndarray], ent: np.ndarray,
                  p: np.ndarray, ev_idx: np.ndarray, width: int) -> np.ndarray:
    """Association count of the other side's entry ``ent`` just before the change at ``p`` (outer, no retractions)."""
    theirs = sides[1 - side]
    has = ev_idx >= 0
    last = _take(theirs.ev_record, ev_idx)
    base = np.where(has, _take(matched[1 - side], last), theirs.stored_assoc[ent])
    since = np.where(has, _take(theirs.ev_pos, ev_idx) + 1, 0)
    mine_ent, mine_p = cands[side][1], cands[side][2]
    keys = np.sort(mine_ent * width + mine_p)
    return base + np.searchsorted(keys, ent * width + p) - np.searchsorted(keys, ent * width + since)


def _state_rows(join: "StreamingJoin", sides: list[_Side], side: int, cands: list, matched: list[np.ndarray],
                width: int) -> pd.DataFrame:
    """A side's entries after the batch, per join key in key order then dict order."""
    me = sides[side]
    n = me.n
    entries = np.arange(n)
    ev_idx, count, order = me.at(entries, np.full(n, width - 1), width)
    has = ev_idx >= 0
    last_record = _take(me.ev_record, ev_idx)
    outer = join.outer[side]
    assoc = np.where(has, _take(matched[side], last_record) if outer else 0, me.stored_assoc)
    theirs_ent, theirs_p = cands[1 - side][1], cands[1 - side][2]
    touched = has.copy()
    if outer:
        since = np.where(has, _take(me.ev_pos, ev_idx), -1)
        keys = np.sort(theirs_ent * width + theirs_p)
        later = np.searchsorted(keys, entries * width + width - 1) - np.searchsorted(keys, entries * width + since + 1)
        assoc = assoc + later
        touched |= np.bincount(theirs_ent, minlength=n)[:n] > 0
    stamps = np.where(touched, join._now, me.stored_ts)
    alive = np.flatnonzero(count > 0)
    keep = alive[np.lexsort((order[alive], me.entry_key[alive]))]
    return state_frame(join, side, me.source, me.entry_source[keep], count[keep], assoc[keep], stamps[keep])
