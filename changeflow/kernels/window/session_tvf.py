"""The SESSION window table function in a streaming query: Flink's UnalignedWindowTableFunctionOperator.

Unlike TUMBLE, HOP and CUMULATE, a row's session is known only once the rows
around it are: a row at ``ts`` opens the window ``[ts, ts + gap)``, and windows
that intersect (touching counts, as Flink's ``TimeWindow.intersects``) merge. So
the kernel buffers each partition key's rows and releases a session's rows, with
``window_start`` (its first row's time), ``window_end`` (its last row's time +
gap) and ``window_time`` (``window_end`` - 1 ms), when the watermark reaches
``window_end`` - 1. A row whose own window ``[ts, ts + gap)`` the watermark has
passed on arrival is late: dropped and counted (``late_records``).

A session's rows leave in the order they arrived; sessions in the order of their
ends. State: ``rows`` (the buffered rows per partition key, with their arrival
stamps) and ``oldest`` (under the all-null key: the earliest buffered time, so a
watermark that cannot close any session costs one read).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import KeyedState, count_late_records, null_key

ROWS = "rows"
OLDEST = "oldest"
_MS = "_ms"


class SessionWindowTableFunction(KernelBase):
    """``TABLE(SESSION(TABLE t [PARTITION BY keys], DESCRIPTOR(time_column), gap))`` over insert-only rows.

    ``columns`` are the input's data columns (in order); the output is them plus
    ``window_start``, ``window_end`` and ``window_time`` (naive UTC datetimes).
    """

    event_time = True

    def __init__(self, columns: list[str], time_column: str, gap_ms: int, keys: list[str]) -> None:
        self.columns = list(columns)
        self.time_column = time_column
        self.gap_ms = int(gap_ms)
        self.keys = list(keys)

    @property
    def operator_name(self) -> str:
        return "SessionWindowTableFunction"

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame | None:
        if not len(batch):
            return None
        if (batch[KIND].to_numpy() != INSERT).any():
            raise ValueError(f"SESSION windows over an updating input are not supported (column {self.time_column})")
        ms = epoch_ms(batch[self.time_column])
        late = ms + self.gap_ms - 1 <= self.current_watermark
        if late.any():
            count_late_records(state, self.keys, int(late.sum()))
        # State rows start with the key columns (KeyedState), then the row's other columns.
        stored = self.keys + [c for c in self.columns if c not in self.keys]
        rows = batch.loc[~late, stored + [SEQ, SUB]].assign(**{_MS: ms[~late]}).reset_index(drop=True)
        if not len(rows):
            return None
        keys = rows[self.keys].drop_duplicates().reset_index(drop=True) if self.keys else _no_key(rows)
        before = state.load(ROWS, keys)
        state.store(ROWS, keys, pd.concat([before, rows], ignore_index=True) if len(before) else rows)
        self._set_oldest(state, min(int(rows[_MS].min()), self._oldest(state) or int(rows[_MS].min())))
        return None

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        oldest = self._oldest(state)
        if oldest is None or oldest + self.gap_ms - 1 > watermark:
            return None
        rows = state.scan(ROWS)
        if not len(rows):
            return None
        rows = rows.sort_values(self.keys + [_MS, SEQ, SUB], kind="stable").reset_index(drop=True)
        ms = rows[_MS].to_numpy(dtype=np.int64)
        new_key = _key_changes(rows, self.keys)
        starts = new_key | np.r_[True, np.diff(ms) > self.gap_ms]
        session = np.cumsum(starts) - 1
        first = ms[starts]
        last = np.maximum.reduceat(ms, np.flatnonzero(starts))
        ends = last + self.gap_ms
        closed = (ends - 1 <= watermark)[session]
        fired = rows.loc[closed].assign(_start=first[session][closed], _end=ends[session][closed])
        kept = rows.loc[~closed]
        keys = pd.DataFrame(rows[self.keys]).drop_duplicates().reset_index(drop=True) if self.keys else _no_key(rows)
        state.store(ROWS, keys, pd.DataFrame(kept).reset_index(drop=True))
        self._set_oldest(state, int(kept[_MS].min()) if len(kept) else None)
        if not len(fired):
            return None
        fired = fired.sort_values(["_end", SEQ, SUB], kind="stable").reset_index(drop=True)
        out = fired[self.columns].copy()
        out["window_start"] = pd.to_datetime(fired["_start"].to_numpy(), unit="ms")
        out["window_end"] = pd.to_datetime(fired["_end"].to_numpy(), unit="ms")
        out["window_time"] = pd.to_datetime(fired["_end"].to_numpy() - 1, unit="ms")
        out[KIND] = np.full(len(out), INSERT, dtype=np.int8)
        out[SEQ] = fired[SEQ].to_numpy(dtype=np.int64)
        out[SUB] = np.arange(len(out), dtype=np.int64)
        return out

    def _oldest(self, state: KeyedState) -> int | None:
        row = state.load(OLDEST, null_key(self.keys))
        return int(row["ms"].iloc[0]) if len(row) else None

    def _set_oldest(self, state: KeyedState, ms: int | None) -> None:
        key = null_key(self.keys)
        state.store(OLDEST, key, key.iloc[:0] if ms is None else key.assign(ms=np.asarray([ms], dtype=np.int64)))



def _no_key(rows: pd.DataFrame) -> pd.DataFrame:
    """The one key of an unpartitioned SESSION: every row belongs to it."""
    return pd.DataFrame(index=pd.RangeIndex(1))


def _key_changes(rows: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Where a new partition key starts in rows sorted by key (nulls are a key like any other)."""
    if not keys:
        return np.arange(len(rows)) == 0
    codes = rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
    return np.r_[True, codes[1:] != codes[:-1]] if len(rows) else np.zeros(0, dtype=bool)


__all__ = ["SessionWindowTableFunction"]
