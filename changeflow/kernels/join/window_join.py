"""The window join kernel: Flink's ``WindowJoinOperator``.

``left JOIN right ON left.window_start = right.window_start AND left.window_end =
right.window_end AND keys AND condition`` over two insert-only windowed inputs (of
the same window). Each side's rows wait in state under their join key and window
end; a row of a window the watermark has fired is late, dropped and counted
(:mod:`changeflow.kernels.window.window_buffer`). When the watermark reaches a
window's end - 1 ms, the window's rows are joined key by key, as Flink's
``onEventTime`` does, and its state dropped:

- INNER: for each left row (in arrival order) the right rows it matches (in arrival order);
- LEFT: the same, and a left row that matched nothing padded with nulls;
- RIGHT: for each right row the left rows it matches, or the right row padded;
- FULL: LEFT's output, then the right rows that matched nothing, padded.

A NULL join key matches nothing (Flink's null filters): such a row is only padded
by an outer join. Everything is emitted insert-only.

State tables ``window_join_left`` / ``window_join_right``: rows start with the join
key columns ``_jk0, ...`` and ``_wend`` (the window end, ms), then the side's
columns and the arrival stamps ``_row_seq``/``_row_sub``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.expressions import Expression
from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.window.zone_time import WindowClock
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.frames import column
from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.kernels.join.join_rows import LEFT, RIGHT, tuples
from changeflow.kernels.join.join_state import SIDE, key_column
from changeflow.kernels.state import KeyedState
from changeflow.kernels.window.window_buffer import WindowBuffered

TABLES = ("window_join_left", "window_join_right")
WEND, ROW_SEQ, ROW_SUB = "_wend", "_row_seq", "_row_sub"


class WindowJoin(WindowBuffered):
    """``left <join_type> JOIN right`` per window on equal keys and ``condition`` (the module docstring).

    ``left_columns`` / ``right_columns`` are the output names of each side's
    columns; ``left_end`` / ``right_end`` name each side's window end among them;
    ``condition`` is the rest of ON over the output names; ``key_dtypes`` the
    pandas dtype each key pair is compared in.

    >>> from changeflow.testing.harness import KernelHarness, insert_record, format_changes
    >>> import datetime as dt
    >>> at = lambda s: dt.datetime(2024, 1, 1, 0, 0, s)
    >>> join = WindowJoin("LEFT", ["k", "we"], ["k0", "we0"], ["k"], ["k0"], "we", "we0")
    >>> h = KernelHarness(join, ["_side", "k", "we", "k0", "we0"])
    >>> h.process([insert_record(0, "a", at(10), None, None), insert_record(0, "b", at(10), None, None),
    ...            insert_record(1, None, None, "a", at(10))])
    []
    >>> format_changes(h.watermark(at(10).replace(tzinfo=dt.timezone.utc).timestamp() * 1000 - 1))
    ['+I[a, 2024-01-01 00:00:10, a, 2024-01-01 00:00:10]', '+I[b, 2024-01-01 00:00:10, null, null]']
    """

    def __init__(self, join_type: str, left_columns: list[str], right_columns: list[str],
                 left_keys: list[str], right_keys: list[str], left_end: str, right_end: str,
                 condition: Expression | None = None, *, key_dtypes: list[Any] | None = None,
                 zone: str | None = None) -> None:
        join_type = join_type.upper()
        if join_type not in ("INNER", "LEFT", "RIGHT", "FULL"):
            raise ValueError(f"unknown join type {join_type!r}; expected INNER, LEFT, RIGHT or FULL")
        if len(left_keys) != len(right_keys):
            raise ValueError(f"join keys must pair up: left {list(left_keys)}, right {list(right_keys)}")
        self.join_type = join_type
        self.columns = (list(left_columns), list(right_columns))
        self.side_keys = (list(left_keys), list(right_keys))
        self.ends = (left_end, right_end)
        self.condition = condition
        self.window_clock = WindowClock(zone)
        self.key_dtypes = list(key_dtypes) if key_dtypes is not None else None
        self.key_columns = [key_column(i) for i in range(len(left_keys))]
        self.keys = self.key_columns + [WEND]
        self.outer = (join_type in ("LEFT", "FULL"), join_type in ("RIGHT", "FULL"))
        self._matches = compile_pair_condition(condition, *self.columns) if condition is not None else None

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_matches"}   # a closure: compiled again

    def __setstate__(self, values: dict) -> None:
        self.__dict__.update(values)
        self._matches = compile_pair_condition(self.condition, *self.columns) if self.condition is not None else None

    @property
    def operator_name(self) -> str:
        return "WindowJoin"

    @property
    def output_columns(self) -> list[str]:
        return self.columns[LEFT] + self.columns[RIGHT] + [KIND, SEQ, SUB]

    # --- input ----------------------------------------------------------------------------------
    def _fold(self, frames: list[pd.DataFrame], state: KeyedState) -> None:
        parts: tuple[list[pd.DataFrame], list[pd.DataFrame]] = ([], [])
        for frame in frames:
            if SIDE not in frame.columns:
                raise ValueError(f"window join input lacks the {SIDE!r} column (0 left, 1 right)")
            sides = frame[SIDE].to_numpy()
            for side in (LEFT, RIGHT):
                mask = sides == side
                if mask.any():
                    parts[side].append(frame.loc[mask] if not mask.all() else frame)
        for side in (LEFT, RIGHT):
            if parts[side]:
                self._add(side, pd.concat(parts[side], ignore_index=True), state)

    def _add(self, side: int, frame: pd.DataFrame, state: KeyedState) -> None:
        kinds = frame[KIND].to_numpy()
        if (kinds != INSERT).any():
            raise ValueError("a window join takes insert-only input; got a change of kind "
                             f"{int(kinds[kinds != INSERT][0])} on the {('left', 'right')[side]} side")
        frame = frame.loc[~self._late(frame, self.ends[side], state)]
        if not len(frame):
            return
        data: dict[str, Any] = {}
        for i, (name, source) in enumerate(zip(self.key_columns, self.side_keys[side], strict=True)):
            values = column(frame, source).reset_index(drop=True)
            if self.key_dtypes is not None and str(values.dtype) != str(self.key_dtypes[i]):
                values = values.astype(self.key_dtypes[i])
            data[name] = values
        ends = epoch_ms(frame[self.ends[side]])
        data[WEND] = ends
        for name in self.columns[side]:
            data[name] = column(frame, name).reset_index(drop=True)
        data[ROW_SEQ] = frame[SEQ].to_numpy(dtype=np.int64)
        data[ROW_SUB] = frame[SUB].to_numpy(dtype=np.int64)
        rows = pd.DataFrame(data)
        key_frame = pd.DataFrame(rows[self.keys]).drop_duplicates().reset_index(drop=True)
        stored = state.load(TABLES[side], key_frame)
        if len(stored) and ROW_SEQ in stored.columns:
            rows = pd.concat([pd.DataFrame(stored[list(rows.columns)]), rows], ignore_index=True)
        state.store(TABLES[side], key_frame, rows)
        self._note_end(int(ends.min()), state)

    # --- firing ---------------------------------------------------------------------------------
    def _take_due(self, watermark: int, state: KeyedState) -> tuple[pd.DataFrame, np.ndarray, int | None]:
        due: list[pd.DataFrame] = []
        remaining: int | None = None
        for side in (LEFT, RIGHT):
            rows = state.scan(TABLES[side])
            if not len(rows) or ROW_SEQ not in rows.columns:
                due.append(pd.DataFrame())
                continue
            ends = rows[WEND].to_numpy(dtype=np.int64)
            fired = self.window_clock.fire_at(ends) <= watermark
            if (~fired).any():
                later = int(ends[~fired].min())
                remaining = later if remaining is None else min(remaining, later)
            rows = rows.loc[fired].reset_index(drop=True)
            if len(rows):
                state.store(TABLES[side], rows[self.keys].drop_duplicates().reset_index(drop=True), rows.iloc[:0])
            due.append(rows.sort_values([WEND, ROW_SEQ, ROW_SUB], kind="stable", ignore_index=True))
        out, ends = self._join(due[LEFT], due[RIGHT])
        return out, ends, remaining

    def _join(self, left: pd.DataFrame, right: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        """The output of the fired windows' rows of each side, windows by end, each as Flink's ``join``."""
        groups = self._groups(left, right)
        n_left = len(left)
        matched = (np.zeros(len(left), dtype=bool), np.zeros(len(right), dtype=bool))
        rows = (tuples(left, self.columns[LEFT]) if len(left) else [],
                tuples(right, self.columns[RIGHT]) if len(right) else [])
        right_outside = self.join_type == "RIGHT"   # Flink's RightOuterJoinOperator loops over the right rows
        # Each output row as (window end, outer loop's row, 0 pair / 1 padding, inner row, left, right index).
        out: list[tuple[int, int, int, int, int, int]] = []
        for (end, key), (li, ri) in groups.items():
            if key is None:
                continue  # a NULL key matches nothing
            for i in li:
                for j in ri:
                    if self._matches is None or self._matches(rows[LEFT][i], rows[RIGHT][j]):
                        out.append((end, j, 0, i, i, j) if right_outside else (end, i, 0, j, i, j))
                        matched[LEFT][i] = matched[RIGHT][j] = True
        if self.outer[LEFT]:
            out += [(int(left[WEND].iat[i]), int(i), 1, 0, int(i), -1) for i in np.flatnonzero(~matched[LEFT])]
        if self.outer[RIGHT]:
            # FULL: the right rows that matched nothing after the window's left rows.
            base = 0 if right_outside else n_left
            out += [(int(right[WEND].iat[j]), base + int(j), 1, 0, -1, int(j)) for j in np.flatnonzero(~matched[RIGHT])]
        out.sort()
        frame: dict[str, Any] = {}
        for side, index in ((LEFT, [t[4] for t in out]), (RIGHT, [t[5] for t in out])):
            source = (left, right)[side]
            for name in self.columns[side]:
                values = column(source, name) if len(source) else pd.Series([], dtype=object)
                picked = np.asarray(index, dtype=np.int64)
                taken = values.take(np.where(picked >= 0, picked, 0)).reset_index(drop=True) if len(values) \
                    else pd.Series([None] * len(out), dtype=object)
                if (picked < 0).any():
                    taken = taken.astype(object).where(pd.Series(picked >= 0), None)
                frame[name] = taken
        result = pd.DataFrame(frame, index=range(len(out)))
        result[KIND] = np.full(len(out), INSERT, dtype=np.int8)
        return result, np.asarray([t[0] for t in out], dtype=np.int64)

    def _groups(self, left: pd.DataFrame, right: pd.DataFrame) -> dict[tuple, tuple[list[int], list[int]]]:
        """The row indexes of each side by (window end, join key); a key with a NULL part is None."""
        groups: dict[tuple, tuple[list[int], list[int]]] = {}
        for side, frame in ((LEFT, left), (RIGHT, right)):
            if not len(frame):
                continue
            ends = frame[WEND].to_numpy(dtype=np.int64).tolist()
            keys = tuples(frame, self.key_columns)
            for i, (end, key) in enumerate(zip(ends, keys, strict=True)):
                groups.setdefault((end, None if any(v is None for v in key) else key), ([], []))[side].append(i)
        return groups


__all__ = ["TABLES", "WindowJoin"]
