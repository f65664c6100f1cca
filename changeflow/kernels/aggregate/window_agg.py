"""The event-time window aggregation kernel: Flink's WindowAggOperator for window TVFs.

Its input rows are already assigned to windows (the window table function ran
before it: a HOP or CUMULATE row arrives once per window it falls in), so a
window is part of the grouping key (``window_start``, ``window_end``, the
query's keys). The kernel

1. drops the rows of windows the watermark has closed already: a row is *late*
   when its window's end - 1 ms is at or before ``current_watermark`` (Flink's
   ``isWindowFired``), and is counted in the state table ``late_records`` (one
   row under the all-null key: ``records``), which the job's state metrics sum
   (``get_state_metrics()``: ``late_records_dropped``, Flink's ``numLateRecordsDropped``);
2. folds the other rows per key into the accumulators of a
   :class:`~changeflow.kernels.aggregate.group_agg.GroupAggregate` (mini-batch
   folding: nothing is emitted per row) and keeps each key's current result in
   the state table ``pending``;
3. on a watermark (:meth:`on_watermark`), emits, insert-only, the result of every
   window whose end - 1 ms the watermark has reached, ordered by window end, and
   drops those windows' state: it stays bounded by the windows still open.

In a session time zone (``zone``: a window over a TIMESTAMP_LTZ, aligned to the zone's wall
clock) ``window_end`` is a wall clock, and "end - 1 ms" above is the instant Flink fires it at
(:class:`~changeflow.kernels.window.zone_time.WindowClock`).

The ends of the windows the bucket holds state for are kept in the state table
``open_ends`` (one row per end under the all-null key, as a timer service keeps
its timers), so a watermark that closes no window reads those few rows instead of
every page of ``pending``; an end stays there until a watermark reaches it, even
if the window's rows were all retracted (a scan then finds nothing to fire).

A micro-batch on Spark carries a watermark every 200 ms of event time among
its rows: over a fast source, thousands. :meth:`process_with_watermarks` takes
them in one pass instead of one ``process`` and ``on_watermark`` per segment:
each row is late against the watermark in force at its position; the others fold
at once (a window's rows after the watermark that fires it are late, so its
accumulators when it fires are its final ones); each due window fires at the
first watermark that reaches its end - 1 ms, stamped at that watermark's
position, the windows of one watermark ordered by end as :meth:`on_watermark`
orders them.

A window that has no state yet and fires within the same call (over a fast
source, nearly every window of a micro-batch: one spans many windows of event
time) never touches the state: its rows fold against no state (the windows'
accumulators start empty) and its result is emitted directly: ``open_ends``
tells which of a batch's windows are new. Only the windows still open after the
batch, and those with state from earlier batches, are loaded and stored.

Output stamps of :meth:`on_watermark`: ``_seq`` is the window's end (ms),
``_sub`` the row's place among the rows that watermark fired in its bucket, so
the windows reach the next operator in the order of their ends, as Flink fires
them (a host restamps them at the watermark's position).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.base import COUNT_COLUMN
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.changelog import DELETE, INSERT, KIND, SEQ, SUB, UPDATE_AFTER
from changeflow.kernels.contract import MAX_WATERMARK, KernelBase
from changeflow.kernels.state import OPEN_ENDS, KeyedState, count_late_records, late_record_total, null_key
from changeflow.kernels.watermark_batch import FIRED_SUB, rank_within, segment_of
from changeflow.kernels.window.zone_time import WindowClock

PENDING = "pending"


def epoch_ms(values: Any) -> np.ndarray:
    """Timestamps (datetime objects or datetime64) as epoch milliseconds (int64), read as UTC.

    >>> import datetime
    >>> epoch_ms(pd.Series([datetime.datetime(1970, 1, 1, 0, 0, 1, 500000)], dtype=object)).tolist()
    [1500]
    """
    dtype = getattr(values, "dtype", None)
    if dtype is not None and dtype.kind == "M" and getattr(dtype, "tz", None) is None:
        # Naive datetime64 (time keys as the Spark runtime gives them): no parsing; NaT stays
        # the int64 minimum, as pd.to_datetime gives it.
        return np.asarray(values).astype("datetime64[ms]").astype(np.int64)
    stamps = pd.to_datetime(values)
    if getattr(stamps.dt, "tz", None) is not None:
        stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
    return stamps.to_numpy(dtype="datetime64[ms]").astype(np.int64)


class WindowAggregate(KernelBase):
    """``GROUP BY window_start, window_end, keys`` emitted when the watermark passes ``window_end``.

    ``keys`` are all grouping columns (the window's included). Over an updating
    input (``input_insert_only`` False) retractions fold into the window's
    accumulators like any row, and are late like any row once the window fired;
    a window whose rows are all retracted emits nothing.

    ``fire_at_end`` False: the final watermark of the end of input (``MAX_WATERMARK``) fires
    nothing, as Flink's legacy processing-time group window, which never fires the windows
    still open when its input ends.
    """

    event_time = True

    def __init__(self, keys: list[str], calls: list[AggCall], window_end: str, input_insert_only: bool = True,
                 partial_input: bool = False, fire_at_end: bool = True, zone: str | None = None) -> None:
        if window_end not in keys:
            raise ValueError(f"the window end column {window_end!r} must be a grouping key")
        self.keys = list(keys)
        self.calls = list(calls)
        self.window_end = window_end
        self.input_insert_only = input_insert_only
        # The global phase of a two-phase window aggregation (.local_window): input rows are partial
        # rows, each standing for ``_count`` input rows that are all late or all on time at its stamp.
        self.partial_input = partial_input
        self.fire_at_end = fire_at_end
        self.window_clock = WindowClock(zone)   # when a window end fires: end - 1 ms, or its instant in the zone
        self.aggregate = GroupAggregate(self.keys, self.calls, mini_batch=True, input_insert_only=input_insert_only,
                                        partial_input=partial_input)

    @property
    def operator_name(self) -> str:
        return "WindowAggregate"

    @property
    def output_columns(self) -> list[str]:
        return self.aggregate.output_columns

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        ends = epoch_ms(batch[self.window_end]) if len(batch) else np.zeros(0, dtype=np.int64)
        open_ends = self._open_ends(state)
        fire = self.window_clock.fire_at(ends)
        self._fold(batch, ends, fire <= self.current_watermark, state)
        self._store_open_ends(open_ends, np.unique(ends[fire > self.current_watermark]), None, state)
        return self.aggregate.process(batch.iloc[:0], NO_STATE).iloc[:0]   # nothing before a window closes

    def process_with_watermarks(self, frames: list[pd.DataFrame], watermarks: list[tuple[int, int]],
                                state: KeyedState) -> pd.DataFrame | None:
        """The batch and its watermarks in one pass (the module docstring): same output as segment by segment."""
        if not watermarks:
            return self.process_frames(frames, state) if frames else None
        positions = np.asarray([p for p, _ in watermarks], dtype=np.int64)
        values = np.asarray([w for _, w in watermarks], dtype=np.int64)
        parts = [f for f in frames if len(f)]
        open_ends = self._open_ends(state)
        apart, kept = None, np.zeros(0, dtype=np.int64)
        if parts:
            batch = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
            ends = epoch_ms(batch[self.window_end])
            in_force = np.concatenate([[self.current_watermark], values])[
                segment_of(batch[SEQ].to_numpy(dtype=np.int64), positions)]
            fire = self.window_clock.fire_at(ends)
            late = fire <= in_force
            # Rows of windows without state that fire by the last watermark: folded apart, never stored.
            fresh = ~late & (fire <= values[-1]) & ~np.isin(ends, open_ends)
            if fresh.any():
                self._check_kinds(batch)
                apart = self._results(self.aggregate.process(batch.loc[fresh].reset_index(drop=True), NO_STATE))
                batch, ends, late = batch.loc[~fresh].reset_index(drop=True), ends[~fresh], late[~fresh]
            self._fold(batch, ends, late, state)
            kept = np.unique(ends[~late])
        fired = self._fire(values, state, open_ends, kept)
        self.current_watermark = int(values[-1])
        if apart is not None and len(apart):
            index = np.searchsorted(values, self.window_clock.fire_at(epoch_ms(apart[self.window_end])), side="left")
            fired = _merge_fired(fired, self._fired_rows(apart), index, self.window_end)
        if fired is None:
            return None
        fired, index = fired
        fired[SEQ] = positions[index]
        fired[SUB] = FIRED_SUB + rank_within(index)
        return fired

    def _check_kinds(self, batch: pd.DataFrame) -> None:
        kinds = batch[KIND].to_numpy()
        if self.input_insert_only and (kinds != INSERT).any():
            raise ValueError("this window aggregation was planned for an insert-only input; got a "
                             f"{'-D' if (kinds == DELETE).any() else 'retraction'} for window end "
                             f"{batch[self.window_end].iloc[int(np.flatnonzero(kinds != INSERT)[0])]}")

    def _fold(self, batch: pd.DataFrame, ends: np.ndarray, late: np.ndarray, state: KeyedState) -> None:
        """Drop (and count) the ``late`` rows of ``batch`` (window ends ``ends``), fold the others into state."""
        if not len(batch):
            return
        self._check_kinds(batch)
        if late.any():
            count_late_records(state, self.keys, self._records(batch, late))
            batch = batch.loc[~late].reset_index(drop=True)
        changes = self.aggregate.process(batch, state)
        if len(changes):
            last, alive = self._latest(changes)
            state.store(PENDING, pd.DataFrame(last[self.keys]).reset_index(drop=True),
                        pd.DataFrame(alive).reset_index(drop=True))

    def _records(self, batch: pd.DataFrame, late: np.ndarray) -> int:
        """How many input rows the ``late`` rows of ``batch`` stand for (a partial row for its ``_count``)."""
        if not self.partial_input:
            return int(late.sum())
        return int(batch[COUNT_COLUMN].to_numpy(dtype=np.int64)[late].sum())

    def _latest(self, changes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Each changed key's last change, and the latest results among them (the last +I/+U, none after a -D;
        output columns without bookkeeping)."""
        last = changes.sort_values([SEQ, SUB], kind="stable").drop_duplicates(self.keys, keep="last")
        return last, pd.DataFrame(last[last[KIND].isin([INSERT, UPDATE_AFTER])].drop(columns=[KIND, SEQ, SUB]))

    def _results(self, changes: pd.DataFrame) -> pd.DataFrame:
        """The latest result of each key of ``changes`` (:meth:`_latest`)."""
        return self._latest(changes)[1].reset_index(drop=True)

    def _open_ends(self, state: KeyedState) -> np.ndarray:
        """The ends (ms) of the windows this bucket holds state for (:data:`OPEN_ENDS`), ascending."""
        rows = state.load(OPEN_ENDS, null_key(self.keys))
        return np.sort(rows["end"].to_numpy(dtype=np.int64)) if len(rows) else np.zeros(0, dtype=np.int64)

    def _store_open_ends(self, before: np.ndarray, added: np.ndarray, watermark: int | None,
                         state: KeyedState) -> np.ndarray:
        """Store ``before`` and ``added`` less the ends ``watermark`` reaches (when it changed); return it."""
        after = np.union1d(before, added)
        if watermark is not None:
            after = after[self.window_clock.fire_at(after) > watermark]
        if not np.array_equal(after, before):
            key = null_key(self.keys)
            rows = key.iloc[np.zeros(len(after), dtype=np.intp)].reset_index(drop=True)
            state.store(OPEN_ENDS, key, rows.assign(end=after))
        return after

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        if watermark >= MAX_WATERMARK and not self.fire_at_end:
            return None
        fired = self._fire(np.asarray([watermark], dtype=np.int64), state, self._open_ends(state))
        if fired is None:
            return None
        out = fired[0]
        out[SEQ] = epoch_ms(out[self.window_end])
        out[SUB] = np.arange(len(out), dtype=np.int64)
        return out

    def _fire(self, watermarks: np.ndarray, state: KeyedState, open_ends: np.ndarray,
              added: np.ndarray | None = None) -> tuple[pd.DataFrame, np.ndarray] | None:
        """Fire the windows with state that the ascending ``watermarks`` close; drop their state.

        ``open_ends`` are the windows with state before this call, ``added`` those
        the call's rows gave state. Returns the fired rows (output columns,
        ``+I``), ordered by the watermark that fires each (its index, also
        returned) and then by window end, or None.
        """
        before = np.union1d(open_ends, added) if added is not None else open_ends
        self._store_open_ends(open_ends, before, watermarks[-1], state)
        if not (self.window_clock.fire_at(before) <= watermarks[-1]).any():
            return None   # no window with state ends by the last watermark: no scan
        pending = state.scan(PENDING)
        if not len(pending):
            return None
        ends = epoch_ms(pending[self.window_end])
        fire = self.window_clock.fire_at(ends)
        due = fire <= watermarks[-1]
        if not due.any():
            return None
        index = np.searchsorted(watermarks, fire[due], side="left")
        order = np.lexsort((ends[due], index))   # by watermark, then by end (stable: scan order among equals)
        fired = pending.loc[due].iloc[order].reset_index(drop=True)
        keys = fired[self.keys]
        empty = keys.iloc[:0]
        for table in [PENDING, *self.aggregate.state_tables]:
            state.store(table, keys, empty)
        return self._fired_rows(fired), index[order]

    def _fired_rows(self, results: pd.DataFrame) -> pd.DataFrame:
        """Results (keys and values) as the ``+I`` rows a watermark fires (stamped by the caller)."""
        out = results.assign(**{KIND: np.full(len(results), INSERT, dtype=np.int8),
                                SEQ: np.zeros(len(results), dtype=np.int64),
                                SUB: np.zeros(len(results), dtype=np.int64)})
        return pd.DataFrame(out[list(self.output_columns)])

    def late_records(self, state: KeyedState) -> int:
        """How many rows this kernel dropped as late (in ``state``'s buckets)."""
        return late_record_total(state)


def _merge_fired(fired: tuple[pd.DataFrame, np.ndarray] | None, apart: pd.DataFrame, index: np.ndarray,
                 window_end: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The windows fired from state and those folded apart, in one order: by watermark, then by window end."""
    if fired is not None:
        apart = pd.concat([fired[0], apart], ignore_index=True)
        index = np.concatenate([fired[1], index])
    order = np.lexsort((epoch_ms(apart[window_end]), index))   # stable: state's windows first among equals
    return apart.iloc[order].reset_index(drop=True), index[order]


class _NoState:
    """A :class:`KeyedState` that holds nothing and keeps nothing: the state of windows folded apart."""

    def load(self, table: str, keys: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({c: keys[c].iloc[:0] for c in keys.columns})

    def store(self, table: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
        pass

    def scan(self, table: str) -> pd.DataFrame:
        return pd.DataFrame()


NO_STATE = _NoState()

__all__ = ["WindowAggregate", "epoch_ms"]
