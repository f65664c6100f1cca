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
from changeflow.kernels.frames import column, same_dtype_values
from changeflow.kernels.join.condition_arrays import compile_array_condition, condition_columns
from changeflow.kernels.join.join_rows import LEFT, RIGHT
from changeflow.kernels.join.vector_rows import object_values
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
        self._compile_condition()

    def _compile_condition(self) -> None:
        self._matches = compile_array_condition(self.condition, *self.columns) if self.condition is not None else None
        self._condition_columns = condition_columns(self.condition) if self.condition is not None else set()

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_matches"}   # a closure: compiled again

    def __setstate__(self, values: dict) -> None:
        self.__dict__.update(values)
        self._compile_condition()

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
        """The output of the fired windows' rows of each side, windows by end, each as Flink's ``join``.

        Array operations throughout: a window's rows are tens of thousands in Nexmark's q5
        (every auction's count in one window), and a Python loop over their pairs cost more
        than the rest of the firing.
        """
        n_left, n_right = len(left), len(right)
        pair_left, pair_right = _pairs(left, right, self.keys)
        if self._matches is not None and len(pair_left):
            ok = self._matches(*[{name: object_values(column(frame, name))[index]
                                  for name in self.columns[side] if name in self._condition_columns}
                                 for side, frame, index in ((LEFT, left, pair_left), (RIGHT, right, pair_right))])
            pair_left, pair_right = pair_left[ok], pair_right[ok]
        ends = (left[WEND].to_numpy(dtype=np.int64) if n_left else np.zeros(0, dtype=np.int64),
                right[WEND].to_numpy(dtype=np.int64) if n_right else np.zeros(0, dtype=np.int64))
        # Flink's RightOuterJoinOperator loops over the right rows, every other join over the left ones.
        right_outside = self.join_type == "RIGHT"
        # Each output row's sort key (window end, outer loop's row, 0 pair / 1 padding, inner row)
        # and its left and right row (-1: padded with nulls).
        parts = [(ends[LEFT][pair_left], pair_right if right_outside else pair_left, np.zeros(len(pair_left)),
                  pair_left if right_outside else pair_right, pair_left, pair_right)]
        if self.outer[LEFT]:
            unmatched = np.setdiff1d(np.arange(n_left), pair_left)
            none = np.full(len(unmatched), -1)
            parts.append((ends[LEFT][unmatched], unmatched, np.ones(len(unmatched)), np.zeros(len(unmatched)),
                          unmatched, none))
        if self.outer[RIGHT]:
            # FULL: the right rows that matched nothing after the window's left rows.
            unmatched = np.setdiff1d(np.arange(n_right), pair_right)
            none = np.full(len(unmatched), -1)
            base = 0 if right_outside else n_left
            parts.append((ends[RIGHT][unmatched], base + unmatched, np.ones(len(unmatched)),
                          np.zeros(len(unmatched)), none, unmatched))
        end, outer, flag, inner, left_rows, right_rows = (np.concatenate(c).astype(np.int64)
                                                          for c in zip(*parts, strict=True))
        order = np.lexsort((inner, flag, outer, end))
        frame: dict[str, Any] = {}
        for side, picked in ((LEFT, left_rows[order]), (RIGHT, right_rows[order])):
            source = (left, right)[side]
            for name in self.columns[side]:
                if not len(source):
                    frame[name] = pd.Series([None] * len(order), dtype=object)
                    continue
                taken = column(source, name).take(np.where(picked >= 0, picked, 0)).reset_index(drop=True)
                if (picked < 0).any():
                    taken = taken.astype(object).where(pd.Series(picked >= 0), None)
                frame[name] = taken
        result = pd.DataFrame(frame, index=range(len(order)))
        result[KIND] = np.full(len(order), INSERT, dtype=np.int8)
        return result, end[order]


def _pairs(left: pd.DataFrame, right: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every (left row, right row) with equal ``keys`` (window end and join key), a key with a NULL part
    matching nothing: by left row, then right row."""
    if not len(left) or not len(right):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    n_left = len(left)
    group: np.ndarray | None = None
    null = np.zeros(n_left + len(right), dtype=bool)
    for name in keys:
        a, b = column(left, name), column(right, name)
        # Integers, booleans and datetimes of one dtype compare as they are; anything else as the
        # Python values the per-record join compared (1 == 1.0; NaN is NULL).
        values = same_dtype_values(a, b) if a.dtype.kind in "iubmM" else None
        if values is None:
            values = np.concatenate([object_values(a), object_values(b)])
        codes, uniques = pd.factorize(values)
        null |= codes < 0
        codes = np.where(codes < 0, len(uniques), codes).astype(np.int64)
        # Codes stay below the row count: the product below cannot overflow.
        group = codes if group is None else pd.factorize(group * (len(uniques) + 1) + codes)[0]
    assert group is not None   # a window join's keys hold at least the window end
    lefts = np.flatnonzero(~null[:n_left])
    rights = np.flatnonzero(~null[n_left:])
    rights = rights[np.argsort(group[n_left:][rights], kind="stable")]
    right_groups = group[n_left:][rights]
    starts = np.searchsorted(right_groups, group[:n_left][lefts], side="left")
    counts = np.searchsorted(right_groups, group[:n_left][lefts], side="right") - starts
    pair_left = np.repeat(lefts, counts)
    # Each left row's run of right rows: its start repeated, plus 0, 1, ... within the run.
    within = np.arange(len(pair_left)) - np.repeat(np.cumsum(counts) - counts, counts)
    return pair_left.astype(np.int64), rights[np.repeat(starts, counts) + within].astype(np.int64)


__all__ = ["TABLES", "WindowJoin"]
