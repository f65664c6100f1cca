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
ends. In a session time zone (``zone``, a SESSION over a TIMESTAMP_LTZ) the times are the
zone's wall clocks and "``window_end`` - 1" the instant Flink fires the session at
(:class:`~changeflow.kernels.window.zone_time.WindowClock`). State: ``rows`` (the buffered rows per
partition key, with their arrival stamps) and ``oldest`` (under the all-null key: the earliest buffered time, so a
watermark that cannot close any session costs one read).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import KeyedState, count_late_records, null_key
from changeflow.kernels.watermark_batch import FIRED_SUB, segment_of
from changeflow.kernels.window.zone_time import WindowClock

ROWS = "rows"
OLDEST = "oldest"
_MS = "_ms"
_FIRING = "_firing"  # an output row's watermark, while _fire_in_turn builds the output of several


class SessionWindowTableFunction(KernelBase):
    """``TABLE(SESSION(TABLE t [PARTITION BY keys], DESCRIPTOR(time_column), gap))`` over insert-only rows.

    ``columns`` are the input's data columns (in order); the output is them plus
    ``window_start``, ``window_end`` and ``window_time`` (naive UTC datetimes).
    """

    event_time = True

    def __init__(self, columns: list[str], time_column: str, gap_ms: int, keys: list[str],
                 zone: str | None = None) -> None:
        self.columns = list(columns)
        self.time_column = time_column
        self.gap_ms = int(gap_ms)
        self.keys = list(keys)
        self.window_clock = WindowClock(zone)

    def _fires(self, end: int) -> int:
        """The instant a session ending at ``end`` (on the window axis) fires at."""
        return int(self.window_clock.fire_at(np.asarray([end], dtype=np.int64))[0])

    @property
    def operator_name(self) -> str:
        return "SessionWindowTableFunction"

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame | None:
        rows, _ = self._arrivals([batch], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), state)
        if len(rows):
            self._append(rows, state)
        return None

    def process_with_watermarks(self, frames: list[pd.DataFrame], watermarks: list[tuple[int, int]],
                                state: KeyedState) -> pd.DataFrame | None:
        """The batch and its watermarks in one pass: the state read and written once, not per watermark.

        Segment by segment, every segment's rows were appended to their keys' buffered rows
        (a read and a write of every page they touch: the whole state, once per watermark,
        so a micro-batch cost its state size times its watermarks). Here each row is late
        against the watermark in force at its position, the rows that stay are buffered in
        memory, and each watermark fires the sessions closed among the rows arrived before it
        (:meth:`_fire_in_turn`); if no row's own window ends by the last watermark nothing
        can fire, and the rows are appended to their keys' state once.
        """
        if not watermarks:
            return self.process_frames(frames, state) if frames else None
        positions = np.asarray([p for p, _ in watermarks], dtype=np.int64)
        values = np.asarray([w for _, w in watermarks], dtype=np.int64)
        rows, arrival = self._arrivals([f for f in frames if len(f)], positions, values, state)
        self.current_watermark = int(values[-1])
        oldest = self._oldest(state)
        earliest = [int(rows[_MS].min())] if len(rows) else []
        earliest += [oldest] if oldest is not None else []
        if not earliest or self._fires(min(earliest) + self.gap_ms) > values[-1]:
            if len(rows):
                self._append(rows, state)
            return None
        before = state.scan(ROWS)
        if not len(rows):
            buffered = before
        else:
            buffered = pd.concat([before.loc[:, list(rows.columns)], rows], ignore_index=True) if len(before) else rows
        arrival = np.concatenate([np.full(len(before), -1, dtype=np.int64), arrival])
        fired, alive = self._fire_in_turn(buffered, arrival, watermarks)
        state.store(ROWS, self._keys_of(buffered), buffered.loc[alive].reset_index(drop=True))
        self._set_oldest(state, int(buffered[_MS].to_numpy()[alive].min()) if alive.any() else None)
        return pd.concat(fired, ignore_index=True) if fired else None

    def _arrivals(self, frames: list[pd.DataFrame], positions: np.ndarray, values: np.ndarray,
                  state: KeyedState) -> tuple[pd.DataFrame, np.ndarray]:
        """The rows of ``frames`` that are not late (as state rows: key columns first, then the others,
        the stamps and ``_ms``), and for each how many of the watermarks at ``positions`` precede it;
        the late ones counted. A row is late when its own window ``[ts, ts + gap)`` ends at or before
        the watermark in force at its position."""
        stored = self.keys + [c for c in self.columns if c not in self.keys] + [SEQ, SUB]
        batch = (frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)) if frames else None
        if batch is None or not len(batch):
            return pd.DataFrame(columns=pd.Index([*stored, _MS])), np.zeros(0, dtype=np.int64)
        if (batch[KIND].to_numpy() != INSERT).any():
            raise ValueError(f"SESSION windows over an updating input are not supported (column {self.time_column})")
        ms = self.window_clock.local(epoch_ms(batch[self.time_column]))
        arrival = segment_of(batch[SEQ].to_numpy(dtype=np.int64), positions)
        in_force = np.concatenate([[self.current_watermark], values])[arrival]
        late = self.window_clock.fire_at(ms + self.gap_ms) <= in_force
        if late.any():
            count_late_records(state, self.keys, int(late.sum()))
        rows = batch.loc[~late, stored].assign(**{_MS: ms[~late]}).reset_index(drop=True)
        return rows, arrival[~late]

    def _append(self, rows: pd.DataFrame, state: KeyedState) -> None:
        """Add ``rows`` to their keys' buffered rows."""
        keys = self._keys_of(rows)
        before = state.load(ROWS, keys)
        state.store(ROWS, keys, pd.concat([before, rows], ignore_index=True) if len(before) else rows)
        oldest, earliest = self._oldest(state), int(rows[_MS].min())
        self._set_oldest(state, earliest if oldest is None else min(oldest, earliest))

    def _fire_in_turn(self, buffered: pd.DataFrame, arrival: np.ndarray,
                      watermarks: list[tuple[int, int]]) -> tuple[list[pd.DataFrame], np.ndarray]:
        """What each watermark fires among ``buffered`` (rows arrived after ``arrival`` watermarks; -1:
        from state), stamped at its position, and which rows stay buffered.

        Per key, ``due`` is at most its earliest session's end - 1 (a timer): a row arriving
        lowers it to its own window's end - 1 at most, and a watermark reaching it works out
        that key's sessions anew. A watermark reaching no key's ``due`` costs a comparison,
        one that does costs the rows of the keys it reaches. A session fired is gone: a row
        arriving later starts a new one, as :meth:`on_watermark` leaves it.
        """
        codes = (buffered.groupby(self.keys, dropna=False, sort=True).ngroup().to_numpy(dtype=np.int64)
                 if self.keys else np.zeros(len(buffered), dtype=np.int64))
        ms = buffered[_MS].to_numpy(dtype=np.int64)
        seq, sub = buffered[SEQ].to_numpy(dtype=np.int64), buffered[SUB].to_numpy(dtype=np.int64)
        due = np.full(int(codes.max()) + 1 if len(codes) else 0, np.iinfo(np.int64).max, dtype=np.int64)
        by_arrival = np.argsort(arrival, kind="stable")
        bounds = np.searchsorted(arrival[by_arrival], np.arange(-1, len(watermarks) + 1), side="left")
        alive = np.ones(len(buffered), dtype=bool)
        # What each firing watermark released: its rows, their sessions' first times and ends,
        # and the watermark's index. The output is built once after the loop: a frame per
        # firing watermark cost more than the firing itself (hundreds of watermarks a batch).
        picked: list[np.ndarray] = []
        starts: list[np.ndarray] = []
        finishes: list[np.ndarray] = []
        firing: list[np.ndarray] = []
        for i, (_, watermark) in enumerate(watermarks):
            come = by_arrival[bounds[0 if i == 0 else i + 1]:bounds[i + 2]]   # rows arrived before this watermark
            np.minimum.at(due, codes[come], self.window_clock.fire_at(ms[come] + self.gap_ms))
            reached = due <= watermark
            if not reached.any():
                continue
            pick = np.flatnonzero(alive & (arrival <= i) & reached[codes])
            pick = pick[np.lexsort((sub[pick], seq[pick], ms[pick], codes[pick]))]
            first, ends, session = _sessions(codes[pick], ms[pick], self.gap_ms)
            closed = self.window_clock.fire_at(ends) <= watermark
            due[reached] = np.iinfo(np.int64).max
            open_first = pick[np.flatnonzero(np.r_[True, np.diff(session) != 0])][~closed]
            np.minimum.at(due, codes[open_first], self.window_clock.fire_at(ends[~closed]))
            out = closed[session]
            alive[pick[out]] = False
            if out.any():
                picked.append(pick[out])
                starts.append(first[session][out])
                finishes.append(ends[session][out])
                firing.append(np.full(int(out.sum()), i, dtype=np.int64))
        if not picked:
            return [], alive
        rows = buffered.iloc[np.concatenate(picked)].reset_index(drop=True)
        which = np.concatenate(firing)
        released = self._released(rows, np.concatenate(starts), np.concatenate(finishes), which)
        # Stamped as stamp_fired stamps each watermark's output: at the watermark's position,
        # counting up from FIRED_SUB within that watermark's rows.
        which = released.pop(_FIRING).to_numpy(dtype=np.int64)
        first_of_firing = np.searchsorted(which, which, side="left")
        positions = np.asarray([p for p, _ in watermarks], dtype=np.int64)
        released[SEQ] = positions[which]
        released[SUB] = FIRED_SUB + np.arange(len(released), dtype=np.int64) - first_of_firing
        return [released], alive

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        oldest = self._oldest(state)
        if oldest is None or self._fires(oldest + self.gap_ms) > watermark:
            return None
        rows = state.scan(ROWS)
        if not len(rows):
            return None
        rows = rows.sort_values(self.keys + [_MS, SEQ, SUB], kind="stable").reset_index(drop=True)
        ms = rows[_MS].to_numpy(dtype=np.int64)
        first, ends, session = _sessions(_key_codes(rows, self.keys), ms, self.gap_ms)
        closed = (self.window_clock.fire_at(ends) <= watermark)[session]
        kept = rows.loc[~closed]
        state.store(ROWS, self._keys_of(rows), pd.DataFrame(kept).reset_index(drop=True))
        self._set_oldest(state, int(kept[_MS].min()) if len(kept) else None)
        if not closed.any():
            return None
        return self._released(rows.loc[closed].reset_index(drop=True), first[session][closed], ends[session][closed])

    def _released(self, rows: pd.DataFrame, start: np.ndarray, end: np.ndarray,
                  firing: np.ndarray | None = None) -> pd.DataFrame:
        """Fired ``rows`` (in key and time order) with their sessions' ``start`` and ``end`` (ms): the
        output rows, sessions in the order of their ends, a session's rows in arrival order. With
        ``firing`` (each row's watermark index, ascending) the rows of several watermarks at once,
        each watermark's in that order, its index kept in column ``_FIRING``."""
        keys = (rows[SUB].to_numpy(dtype=np.int64), rows[SEQ].to_numpy(dtype=np.int64), end)
        order = np.lexsort(keys if firing is None else (*keys, firing))
        fired = rows.iloc[order].reset_index(drop=True)
        start, end = start[order], end[order]
        out = fired[self.columns].copy()
        out["window_start"] = pd.to_datetime(start, unit="ms")
        out["window_end"] = pd.to_datetime(end, unit="ms")
        out["window_time"] = pd.to_datetime(self.window_clock.window_time(end), unit="ms")
        out[KIND] = np.full(len(out), INSERT, dtype=np.int8)
        out[SEQ] = fired[SEQ].to_numpy(dtype=np.int64)
        out[SUB] = np.arange(len(out), dtype=np.int64)
        if firing is not None:
            out[_FIRING] = firing[order]
        return out

    def _keys_of(self, rows: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(rows[self.keys]).drop_duplicates().reset_index(drop=True) if self.keys else _no_key(rows)

    def _oldest(self, state: KeyedState) -> int | None:
        row = state.load(OLDEST, null_key(self.keys))
        return int(row["ms"].iloc[0]) if len(row) else None

    def _set_oldest(self, state: KeyedState, ms: int | None) -> None:
        key = null_key(self.keys)
        state.store(OLDEST, key, key.iloc[:0] if ms is None else key.assign(ms=np.asarray([ms], dtype=np.int64)))



def _no_key(rows: pd.DataFrame) -> pd.DataFrame:
    """The one key of an unpartitioned SESSION: every row belongs to it."""
    return pd.DataFrame(index=pd.RangeIndex(1))


def _key_codes(rows: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """A number per partition key of ``rows`` (nulls are a key like any other)."""
    if not keys:
        return np.zeros(len(rows), dtype=np.int64)
    return rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)


def _sessions(codes: np.ndarray, ms: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sessions of rows sorted by key (``codes``) and time (``ms``): each session's first time and end
    (last time + gap), and each row's session. Windows that touch merge (Flink's ``intersects``).

    >>> [a.tolist() for a in _sessions(np.array([0, 0, 0, 1]), np.array([0, 10, 25, 5]), 10)]
    [[0, 25, 5], [20, 35, 15], [0, 0, 1, 2]]
    """
    if not len(ms):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    starts = np.r_[True, (codes[1:] != codes[:-1]) | (np.diff(ms) > gap)]
    at = np.flatnonzero(starts)
    return ms[at], np.maximum.reduceat(ms, at) + gap, np.cumsum(starts) - 1


__all__ = ["SessionWindowTableFunction"]
