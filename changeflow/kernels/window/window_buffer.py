"""What Flink's window operators share: rows buffered per window until the watermark passes its end.

A window Top-N, window deduplication and window join (Flink's ``WindowRankOperator``,
``WindowDeduplicateOperator``, ``WindowJoinOperator``) take rows already assigned to
windows (a ``window_end`` column), keep them in state per key and window, and when
the watermark reaches a window's end - 1 ms (Flink's ``isWindowFired``) compute the
window's output once, insert-only, and drop its state. A row whose window has fired
is *late*: dropped and counted in ``late_records`` (``get_state_metrics()``).

:class:`WindowBuffered` is that loop; a subclass says how rows are kept
(:meth:`WindowBuffered._fold`) and what a due window emits
(:meth:`WindowBuffered._take_due`). A Spark micro-batch carries many watermarks among
its rows: :meth:`WindowBuffered.process_with_watermarks` takes them in one pass, as
the window aggregation does (``kernels/aggregate/window_agg.py``): each row is late
against the watermark in force at its position, every other row is kept at once (a
window's rows after the watermark that fires it are late, so its state when it fires
is its final one), and each due window fires at the first watermark reaching its end,
stamped at that watermark's position.

The earliest end among the buffered windows is kept in the state table ``next_end``
(as the window aggregation keeps it), so a watermark that closes no window reads one
value instead of the buffered rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.window.zone_time import WindowClock
from changeflow.kernels.changelog import SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import (KeyedState, count_late_records, late_record_total, load_next_end,
                                      store_next_end)
from changeflow.kernels.watermark_batch import FIRED_SUB, rank_within, segment_of



class WindowBuffered(KernelBase):
    """A kernel that buffers rows per window and emits each window once, when the watermark passes its end.

    Subclasses set ``keys`` (the state's key columns, which hold the window) and
    implement :meth:`_fold` and :meth:`_take_due`.
    """

    event_time = True
    keys: list[str]
    output_columns: list[str]   # a property of each subclass
    _positions: np.ndarray | None = None
    _values: np.ndarray | None = None
    # When a window end fires: end - 1 ms, or in a session zone (a window over a TIMESTAMP_LTZ) its instant.
    window_clock: WindowClock = WindowClock(None)

    # --- for subclasses ----------------------------------------------------------------------
    def _fold(self, frames: list[pd.DataFrame], state: KeyedState) -> None:
        """Keep the rows of ``frames`` that are not late (:meth:`_late`) in state; emit nothing."""
        raise NotImplementedError

    def _take_due(self, watermark: int, state: KeyedState) -> tuple[pd.DataFrame, np.ndarray, int | None]:
        """Drop the windows whose end - 1 ms is at or before ``watermark`` from state.

        Returns their output rows (the output columns with ``_kind``, ordered by window
        end), each row's window end (ms), and the earliest end still buffered (None: none).
        """
        raise NotImplementedError

    def _late(self, frame: pd.DataFrame, end_column: str, state: KeyedState) -> np.ndarray:
        """Which rows of ``frame`` belong to a window the watermark in force at their position has fired;
        they are counted as late rows."""
        if not len(frame):
            return np.zeros(0, dtype=bool)
        ends = epoch_ms(frame[end_column])
        if self._positions is None or self._values is None:
            in_force = np.full(len(frame), self.current_watermark, dtype=np.int64)
        else:
            in_force = np.concatenate([[self.current_watermark], self._values])[
                segment_of(frame[SEQ].to_numpy(dtype=np.int64), self._positions)]
        late = self.window_clock.fire_at(ends) <= in_force
        if late.any():
            count_late_records(state, self.keys, int(late.sum()))
        return late

    def _note_end(self, earliest: int, state: KeyedState) -> None:
        """A window ending at ``earliest`` (ms) was buffered: keep the earliest buffered end."""
        known = load_next_end(state, self.keys)
        if known is None or earliest < known:
            store_next_end(state, self.keys, earliest)

    # --- the kernel contract -----------------------------------------------------------------
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        return self.process_frames([batch], state)

    def process_frames(self, frames: list[pd.DataFrame], state: KeyedState) -> pd.DataFrame:
        self._positions = self._values = None
        self._fold([f for f in frames if len(f)], state)
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in self.output_columns})

    def process_with_watermarks(self, frames: list[pd.DataFrame], watermarks: list[tuple[int, int]],
                                state: KeyedState) -> pd.DataFrame | None:
        """The batch and its watermarks in one pass (the module docstring): same output as segment by segment."""
        if not watermarks:
            return self.process_frames(frames, state) if frames else None
        positions = np.asarray([p for p, _ in watermarks], dtype=np.int64)
        values = np.asarray([w for _, w in watermarks], dtype=np.int64)
        self._positions, self._values = positions, values
        try:
            self._fold([f for f in frames if len(f)], state)
        finally:
            self._positions = self._values = None
        fired = self._fire(values, state)
        self.current_watermark = int(values[-1])
        if fired is None:
            return None
        out, index = fired
        out[SEQ] = positions[index]
        out[SUB] = FIRED_SUB + rank_within(index)
        return out

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        fired = self._fire(np.asarray([watermark], dtype=np.int64), state)
        if fired is None:
            return None
        out, _ = fired
        out[SEQ] = self._fired_ends
        out[SUB] = np.arange(len(out), dtype=np.int64)
        return out

    def _fire(self, watermarks: np.ndarray, state: KeyedState) -> tuple[pd.DataFrame, np.ndarray] | None:
        known = load_next_end(state, self.keys)
        if known is not None and self.window_clock.fire_at(np.asarray([known], dtype=np.int64))[0] > watermarks[-1]:
            return None   # no buffered window ends by the last watermark: no scan
        out, ends, remaining = self._take_due(int(watermarks[-1]), state)
        store_next_end(state, self.keys, remaining)
        if not len(out):
            return None
        out = out.assign(**{SEQ: np.zeros(len(out), dtype=np.int64), SUB: np.zeros(len(out), dtype=np.int64)})
        index = np.searchsorted(watermarks, self.window_clock.fire_at(ends), side="left")
        order = np.argsort(index, kind="stable")   # already by end; by the watermark firing each
        self._fired_ends = ends[order]
        return out.iloc[order].reset_index(drop=True)[self.output_columns], index[order]

    def late_records(self, state: KeyedState) -> int:
        """How many rows this kernel dropped as late (in ``state``'s buckets)."""
        return late_record_total(state)


__all__ = ["WindowBuffered"]
