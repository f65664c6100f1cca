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

Output stamps: ``_seq`` is the window's end (ms), ``_sub`` the row's place
among the rows that watermark fired in its bucket, so the windows reach the next
operator in the order of their ends, as Flink fires them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.changelog import DELETE, INSERT, KIND, SEQ, SUB, UPDATE_AFTER
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import LATE_RECORDS, KeyedState, count_late_records

PENDING = "pending"


def epoch_ms(values: Any) -> np.ndarray:
    """Timestamps (datetime objects or datetime64) as epoch milliseconds (int64), read as UTC.

    >>> import datetime
    >>> epoch_ms(pd.Series([datetime.datetime(1970, 1, 1, 0, 0, 1, 500000)], dtype=object)).tolist()
    [1500]
    """
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
        if len(batch):
            kinds = batch[KIND].to_numpy()
            if self.input_insert_only and (kinds != INSERT).any():
                raise ValueError("this window aggregation was planned for an insert-only input; got a "
                                 f"{'-D' if (kinds == DELETE).any() else 'retraction'} for window end "
                                 f"{batch[self.window_end].iloc[int(np.flatnonzero(kinds != INSERT)[0])]}")
            late = epoch_ms(batch[self.window_end]) - 1 <= self.current_watermark
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

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        pending = state.scan(PENDING)
        if not len(pending):
            return None
        ends = epoch_ms(pending[self.window_end])
        due = ends - 1 <= watermark
        if not due.any():
            return None
        fired = pending.loc[due].assign(_end=ends[due]).sort_values("_end", kind="stable").reset_index(drop=True)
        keys = fired[self.keys]
        empty = keys.iloc[:0]
        for table in [PENDING, *self.aggregate.state_tables]:
            state.store(table, keys, empty)
        out = fired.drop(columns=["_end"]).assign(**{KIND: np.full(len(fired), INSERT, dtype=np.int8)})
        out[SEQ] = fired["_end"].to_numpy(dtype=np.int64)
        out[SUB] = np.arange(len(fired), dtype=np.int64)
        return out[[c for c in self.output_columns]]

    def late_records(self, state: KeyedState) -> int:
        """How many rows this kernel dropped as late (in ``state``'s buckets)."""
        rows = state.scan(LATE_RECORDS)
        return int(rows["records"].sum()) if len(rows) else 0


__all__ = ["WindowAggregate", "epoch_ms"]
