"""Window Top-N and window deduplication kernels: Flink's ``WindowRankOperator`` and ``WindowDeduplicateOperator``.

``ROW_NUMBER() OVER (PARTITION BY window_start, window_end, keys ORDER BY ...)``
over rows already assigned to windows. Per partition and window the state keeps
only the rows that can still rank at most ``rank_end`` (over insert-only input a
row pushed out can never come back, as Flink's ``TopNRecordsCombiner`` keeps its
buffer's range): the batch's rows and the stored ones are ranked together in one
vectorised sort (sort codes, :mod:`changeflow.kernels.rank.sort_codes`) and cut.
When the watermark passes a window's end (:mod:`.window_buffer`) its rows ranked
``rank_start`` to ``rank_end`` are emitted, insert-only, with the row number if
selected, and its state dropped.

Rows with equal sort keys rank in arrival order (Flink's ``TopNBuffer`` keeps
them in a list in the order they came). Window deduplication is the same with
one row and the rowtime as the sort key: ``FirstRow`` keeps the earliest time,
the first arrived among equal times; ``LastRow`` the latest time, the *last*
arrived among equal times (Flink's ``RowTimeDeduplicateRecordsCombiner``
replaces the kept row when the new one's time is at or after it).

State table ``window_rank``: rows start with the key columns (partition keys,
window start and end), then the other input columns and the arrival stamps
``_row_seq``/``_row_sub``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.rank.sort_codes import sort_codes
from changeflow.kernels.state import KeyedState
from changeflow.kernels.window.window_buffer import WindowBuffered
from changeflow.kernels.window.zone_time import WindowClock

TABLE = "window_rank"
ROW_SEQ, ROW_SUB = "_row_seq", "_row_sub"


class WindowRank(WindowBuffered):
    """Window Top-N (or, with ``deduplicate``, window deduplication) over insert-only windowed rows.

    ``columns`` are the input's columns (the output's, before the rank column);
    ``partition_keys`` the PARTITION BY columns besides the window's;
    ``window_start``/``window_end`` name the window columns; ``order_by`` holds
    ``(column, ascending, nulls_first)`` triples; ranks are 1-based, inclusive.
    ``latest_first`` breaks ties by latest arrival (window deduplication keeping the last row).

    >>> from changeflow.testing.harness import KernelHarness, insert_record, format_changes
    >>> import datetime as dt
    >>> at = lambda s: dt.datetime(2024, 1, 1, 0, 0, s)
    >>> top = WindowRank(["k", "v", "ws", "we"], [], "ws", "we", [("v", False, False)], 1, 2, "rn")
    >>> h = KernelHarness(top, ["k", "v", "ws", "we"])
    >>> h.process([insert_record(k, v, at(0), at(10)) for k, v in (("a", 1), ("b", 3), ("c", 2))])
    []
    >>> format_changes(h.watermark(at(10).replace(tzinfo=dt.timezone.utc).timestamp() * 1000 - 1))
    ['+I[b, 3, 2024-01-01 00:00:00, 2024-01-01 00:00:10, 1]', '+I[c, 2, 2024-01-01 00:00:00, 2024-01-01 00:00:10, 2]']
    """

    def __init__(self, columns: list[str], partition_keys: list[str], window_start: str, window_end: str,
                 order_by: list[tuple[str, bool, bool]], rank_start: int, rank_end: int,
                 rank_column: str | None = None, *, latest_first: bool = False,
                 name: str = "WindowRank", zone: str | None = None) -> None:
        if window_start not in columns or window_end not in columns:
            raise ValueError(f"the window columns {window_start!r}, {window_end!r} must be input columns")
        if not 1 <= rank_start <= rank_end:
            raise ValueError(f"rank range [{rank_start}, {rank_end}] is empty")
        self.columns = list(columns)
        self.keys = [*partition_keys, window_start, window_end]
        self.window_end = window_end
        self.order_by = list(order_by)
        self.rank_start, self.rank_end = int(rank_start), int(rank_end)
        self.rank_column = rank_column
        self.latest_first = latest_first
        self.name = name
        self.window_clock = WindowClock(zone)
        self._stored = self.keys + [c for c in self.columns if c not in self.keys] + [ROW_SEQ, ROW_SUB]

    @property
    def operator_name(self) -> str:
        return self.name

    @property
    def output_columns(self) -> list[str]:
        return self.columns + ([self.rank_column] if self.rank_column else []) + [KIND, SEQ, SUB]

    def _fold(self, frames: list[pd.DataFrame], state: KeyedState) -> None:
        if not frames:
            return
        batch = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        kinds = batch[KIND].to_numpy()
        if (kinds != INSERT).any():
            raise ValueError(f"{self.name} takes insert-only rows; got a change of kind "
                             f"{int(kinds[kinds != INSERT][0])}")
        batch = batch.loc[~self._late(batch, self.window_end, state)]
        if not len(batch):
            return
        rows = batch.assign(**{ROW_SEQ: batch[SEQ].to_numpy(dtype=np.int64),
                               ROW_SUB: batch[SUB].to_numpy(dtype=np.int64)})[self._stored]
        key_frame = rows[self.keys].drop_duplicates().reset_index(drop=True)
        stored = state.load(TABLE, key_frame)
        both = pd.concat([pd.DataFrame(stored[self._stored]), rows], ignore_index=True) \
            if len(stored) and ROW_SEQ in stored else pd.DataFrame(rows).reset_index(drop=True)
        ranked, ranks = self._ranked(both)
        state.store(TABLE, key_frame, ranked.loc[ranks <= self.rank_end].reset_index(drop=True))
        self._note_end(int(epoch_ms(rows[self.window_end]).min()), state)

    def _ranked(self, rows: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        """``rows`` sorted by partition and window, then rank; and each row's row number (1-based)."""
        groups = rows.groupby(self.keys, dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)
        codes = sort_codes(rows, self.order_by)
        seq, sub = rows[ROW_SEQ].to_numpy(dtype=np.int64), rows[ROW_SUB].to_numpy(dtype=np.int64)
        if self.latest_first:
            seq, sub = -seq, -sub
        order = np.lexsort((sub, seq, codes, groups))
        ordered = rows.iloc[order].reset_index(drop=True)
        sorted_groups = groups[order]
        starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
        ranks = np.arange(len(ordered)) - np.repeat(starts, np.diff(np.r_[starts, len(ordered)])) + 1
        return ordered, ranks

    def _no_rows(self) -> pd.DataFrame:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in self.output_columns})

    def _take_due(self, watermark: int, state: KeyedState) -> tuple[pd.DataFrame, np.ndarray, int | None]:
        rows = state.scan(TABLE)
        if not len(rows) or ROW_SEQ not in rows.columns:
            return self._no_rows(), np.zeros(0, dtype=np.int64), None
        ends = epoch_ms(rows[self.window_end])
        due = self.window_clock.fire_at(ends) <= watermark
        remaining = int(ends[~due].min()) if (~due).any() else None
        if not due.any():
            return self._no_rows(), np.zeros(0, dtype=np.int64), remaining
        fired = rows.loc[due].reset_index(drop=True)
        state.store(TABLE, fired[self.keys].drop_duplicates().reset_index(drop=True), fired.iloc[:0])
        ordered, ranks = self._ranked(fired)
        # Windows by end (the order their timers fire), each partition's rows by rank.
        ordered_ends = epoch_ms(ordered[self.window_end])
        by_end = np.argsort(ordered_ends, kind="stable")
        ordered, ranks, ordered_ends = ordered.iloc[by_end].reset_index(drop=True), ranks[by_end], ordered_ends[by_end]
        keep = ranks >= self.rank_start
        out = ordered.loc[keep, self.columns].reset_index(drop=True)
        if self.rank_column:
            out[self.rank_column] = ranks[keep].astype(np.int64)
        out[KIND] = np.full(len(out), INSERT, dtype=np.int8)
        return out, ordered_ends[keep], remaining


def window_deduplicate(columns: list[str], keys: list[str], window_start: str, window_end: str, order: str,
                       keep_last: bool, zone: str | None = None) -> WindowRank:
    """Window deduplication: per window and ``keys`` the row with the first (or last) ``order`` time."""
    return WindowRank(columns, keys, window_start, window_end, [(order, not keep_last, False)], 1, 1, None,
                      latest_first=keep_last, name="WindowDeduplicate", zone=zone)


__all__ = ["TABLE", "WindowRank", "window_deduplicate"]
