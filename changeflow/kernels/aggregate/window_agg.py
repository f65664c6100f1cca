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

The earliest end among the windows in ``pending`` is kept in the state table
``next_end`` (one row under the all-null key, as a timer service keeps its
earliest timer), so a watermark that closes no window reads one value instead of
every page of ``pending``; it may be earlier than the real earliest (after a
window's rows were all retracted), which costs a scan, never a missed window.

A micro-batch on Spark carries a watermark every 200 ms of event time among
its rows: over a fast source, thousands. :meth:`process_with_watermarks` takes
them in one pass instead of one ``process`` and ``on_watermark`` per segment:
each row is late against the watermark in force at its position; the others fold
at once (a window's rows after the watermark that fires it are late, so its
accumulators when it fires are its final ones); each due window fires at the
first watermark that reaches its end - 1 ms, stamped at that watermark's
position, the windows of one watermark ordered by end as :meth:`on_watermark`
orders them.

Output stamps of :meth:`on_watermark`: ``_seq`` is the window's end (ms),
``_sub`` the row's place among the rows that watermark fired in its bucket, so
the windows reach the next operator in the order of their ends, as Flink fires
them (a host restamps them at the watermark's position).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.changelog import DELETE, INSERT, KIND, SEQ, SUB, UPDATE_AFTER
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import (KeyedState, count_late_records, late_record_total, load_next_end,
                                      store_next_end)
from changeflow.kernels.watermark_batch import FIRED_SUB, rank_within, segment_of

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
    """

    event_time = True

    def __init__(self, keys: list[str], calls: list[AggCall], window_end: str, input_insert_only: bool = True) -> None:
        if window_end not in keys:
            raise ValueError(f"the window end column {window_end!r} must be a grouping key")
        self.keys = list(keys)
        self.calls = list(calls)
        self.window_end = window_end
        self.input_insert_only = input_insert_only
        self.aggregate = GroupAggregate(self.keys, self.calls, mini_batch=True, input_insert_only=input_insert_only)

    @property
    def operator_name(self) -> str:
        return "WindowAggregate"

    @property
    def output_columns(self) -> list[str]:
        return self.aggregate.output_columns

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        ends = epoch_ms(batch[self.window_end]) if len(batch) else np.zeros(0, dtype=np.int64)
        return self._fold(batch, ends - 1 <= self.current_watermark, state)

    def process_with_watermarks(self, frames: list[pd.DataFrame], watermarks: list[tuple[int, int]],
                                state: KeyedState) -> pd.DataFrame | None:
        """The batch and its watermarks in one pass (the module docstring): same output as segment by segment."""
        if not watermarks:
            return self.process_frames(frames, state) if frames else None
        positions = np.asarray([p for p, _ in watermarks], dtype=np.int64)
        values = np.asarray([w for _, w in watermarks], dtype=np.int64)
        parts = [f for f in frames if len(f)]
        if parts:
            batch = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
            ends = epoch_ms(batch[self.window_end])
            in_force = np.concatenate([[self.current_watermark], values])[
                segment_of(batch[SEQ].to_numpy(dtype=np.int64), positions)]
            self._fold(batch, ends - 1 <= in_force, state)
        fired = self._fire(values, state)
        self.current_watermark = int(values[-1])
        if fired is None:
            return None
        fired, index = fired
        fired[SEQ] = positions[index]
        fired[SUB] = FIRED_SUB + rank_within(index)
        return fired

    def _fold(self, batch: pd.DataFrame, late: np.ndarray, state: KeyedState) -> pd.DataFrame:
        """Drop (and count) the ``late`` rows of ``batch``, fold the others; nothing is emitted yet."""
        if len(batch):
            kinds = batch[KIND].to_numpy()
            if self.input_insert_only and (kinds != INSERT).any():
                raise ValueError("this window aggregation was planned for an insert-only input; got a "
                                 f"{'-D' if (kinds == DELETE).any() else 'retraction'} for window end "
                                 f"{batch[self.window_end].iloc[int(np.flatnonzero(kinds != INSERT)[0])]}")
            if late.any():
                count_late_records(state, self.keys, int(late.sum()))
                batch = batch.loc[~late].reset_index(drop=True)
        changes = self.aggregate.process(batch, state)
        if len(changes):
            self._keep_results(changes, state)
        return changes.iloc[:0]   # nothing before the watermark closes a window

    def _keep_results(self, changes: pd.DataFrame, state: KeyedState) -> None:
        """Each changed key's latest result into ``pending``: its last +I/+U, or none after a -D."""
        last = changes.sort_values([SEQ, SUB], kind="stable").drop_duplicates(self.keys, keep="last")
        alive = last[last[KIND].isin([INSERT, UPDATE_AFTER])].drop(columns=[KIND, SEQ, SUB])
        state.store(PENDING, pd.DataFrame(last[self.keys]).reset_index(drop=True),
                    pd.DataFrame(alive).reset_index(drop=True))
        if len(alive):
            earliest = int(epoch_ms(alive[self.window_end]).min())
            known = load_next_end(state, self.keys)
            if known is not None and earliest < known:
                store_next_end(state, self.keys, earliest)

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        fired = self._fire(np.asarray([watermark], dtype=np.int64), state)
        if fired is None:
            return None
        out = fired[0]
        out[SEQ] = epoch_ms(out[self.window_end])
        out[SUB] = np.arange(len(out), dtype=np.int64)
        return out

    def _fire(self, watermarks: np.ndarray, state: KeyedState) -> tuple[pd.DataFrame, np.ndarray] | None:
        """Fire the windows the ascending ``watermarks`` close; drop their state.

        Returns the fired rows (output columns, ``+I``), ordered by the watermark
        that fires each (its index, also returned) and then by window end, or None.
        """
        known = load_next_end(state, self.keys)
        if known is not None and known - 1 > watermarks[-1]:
            return None   # no pending window ends by the last watermark: no scan
        pending = state.scan(PENDING)
        if not len(pending):
            store_next_end(state, self.keys, None)
            return None
        ends = epoch_ms(pending[self.window_end])
        due = ends - 1 <= watermarks[-1]
        store_next_end(state, self.keys, int(ends[~due].min()) if (~due).any() else None)
        if not due.any():
            return None
        index = np.searchsorted(watermarks, ends[due] - 1, side="left")
        order = np.lexsort((ends[due], index))   # by watermark, then by end (stable: scan order among equals)
        fired = pending.loc[due].iloc[order].reset_index(drop=True)
        keys = fired[self.keys]
        empty = keys.iloc[:0]
        for table in [PENDING, *self.aggregate.state_tables]:
            state.store(table, keys, empty)
        out = fired.assign(**{KIND: np.full(len(fired), INSERT, dtype=np.int8),
                              SEQ: np.zeros(len(fired), dtype=np.int64), SUB: np.zeros(len(fired), dtype=np.int64)})
        return out[list(self.output_columns)], index[order]

    def late_records(self, state: KeyedState) -> int:
        """How many rows this kernel dropped as late (in ``state``'s buckets)."""
        return late_record_total(state)


__all__ = ["WindowAggregate", "epoch_ms"]
