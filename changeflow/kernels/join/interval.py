"""The event-time interval join kernel: Flink's ``RowTimeIntervalJoin`` (``TimeIntervalJoin``).

``left JOIN right ON keys AND right.t + lower <= left.t <= right.t + upper``
over two insert-only inputs whose ``t`` are rowtime attributes. A row waits in
its side's state for rows of the other side that can still match it, and is
dropped once the watermark shows none can come any more; the output is
insert-only.

With ``W`` the operator's watermark (Flink's operator time: the watermark, or
0 while it is below 0), a left row of time ``t`` can match right rows up to
``t - lower`` and a right row of time ``r`` left rows up to ``r + upper``. So,
per side, a row of time ``x`` has a *reach* ``x + S`` (``S = -lower`` on the
left, ``upper`` on the right):

1. a row is joined with the other side's stored rows whose times are in range
   (and that meet the rest of the ON condition), every match emitted at once;
2. it is stored when its reach is after ``W`` (``x + S > W``); otherwise it is
   *late*: it joined what was still stored and is not kept, and an unmatched
   row of an outer side is emitted null-padded at once (as Flink does);
3. when the watermark advances to ``W`` (:meth:`on_watermark`), every stored row
   whose reach is before ``W`` (``x + S < W``) is dropped, and an outer side's
   row that never matched is emitted null-padded then. ``MAX_WATERMARK`` (end of
   input) drops every row.

Flink expires rows from one clean-up timer per side and key (registered for the
first row stored, re-registered for the earliest remaining one), and in passing
when it scans the state for a match; this kernel expires every row as soon as
the watermark passes its reach. Both keep every row for as long as a row that is
not late can match it, so they give the same pairs for rows that are not late;
a late row may find a row Flink had not cleaned up yet.

State tables ``interval_left`` / ``interval_right`` (rows start with the join key
columns ``_jk0, ...``): the side's columns, ``_time`` (ms), ``_matched`` (the row
was emitted in a pair) and ``_row_seq`` (its input position, the stamp of its
null-padded output). A row with a NULL key matches nothing and is never stored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.expressions import Expression
from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.contract import MAX_WATERMARK
from changeflow.kernels.frames import column
from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.kernels.join.join_rows import LEFT, RIGHT, JoinOutput, array, python_values, tuples
from changeflow.kernels.join.join_state import key_column
from changeflow.kernels.join.two_inputs import TwoInputs
from changeflow.kernels.state import KeyedState

TABLES = ("interval_left", "interval_right")
TIME, MATCHED, ROW_SEQ = "_time", "_matched", "_row_seq"

# A stored row: [time ms, row tuple, matched, input seq].
Entry = list


class IntervalJoin(TwoInputs):
    """``left <join_type> JOIN right`` on equal keys and ``lower <= left_time - right_time <= upper`` (ms).

    ``left_columns`` / ``right_columns`` are the output names of each side's
    columns; ``left_time`` / ``right_time`` name the rowtime columns among them;
    ``condition`` is the rest of the ON clause (without the time bounds) over the
    output names. ``dtypes`` gives the pandas dtype of each output column.

    >>> from changeflow.testing.harness import KernelHarness, insert_record, format_changes
    >>> import datetime as dt
    >>> at = lambda s: dt.datetime(2024, 1, 1, 0, 0, s)
    >>> join = IntervalJoin("LEFT", ["k", "t"], ["k0", "t0"], ["k"], ["k0"], "t", "t0", -5000, 5000)
    >>> h = KernelHarness(join, ["_side", "k", "t", "k0", "t0"])
    >>> h.process([insert_record(0, 1, at(10), None, None), insert_record(0, 2, at(11), None, None)])
    []
    >>> format_changes(h.process([insert_record(1, None, None, 1, at(14))]))
    ['+I[1, 2024-01-01 00:00:10, 1, 2024-01-01 00:00:14]']
    >>> format_changes(h.watermark(at(17).replace(tzinfo=dt.timezone.utc).timestamp() * 1000))
    ['+I[2, 2024-01-01 00:00:11, null, null]']
    """

    event_time = True

    def __init__(self, join_type: str, left_columns: list[str], right_columns: list[str],
                 left_keys: list[str], right_keys: list[str], left_time: str, right_time: str,
                 lower_ms: int, upper_ms: int, condition: Expression | None = None, *,
                 key_dtypes: list[Any] | None = None, dtypes: dict[str, Any] | None = None) -> None:
        join_type = join_type.upper()
        if join_type not in ("INNER", "LEFT", "RIGHT", "FULL"):
            raise ValueError(f"unknown join type {join_type!r}; expected INNER, LEFT, RIGHT or FULL")
        if len(left_keys) != len(right_keys):
            raise ValueError(f"join keys must pair up: left {list(left_keys)}, right {list(right_keys)}")
        if left_time not in left_columns or right_time not in right_columns:
            raise ValueError(f"the time columns {left_time!r} / {right_time!r} must be left / right columns")
        self.join_type = join_type
        self.columns = (list(left_columns), list(right_columns))
        self.keys = (list(left_keys), list(right_keys))
        self.times = (left_time, right_time)
        self.lower_ms, self.upper_ms = int(lower_ms), int(upper_ms)
        # How long after its own time a row of each side can still be matched (Flink's relative sizes).
        self.reach = (-self.lower_ms, self.upper_ms)
        # A pair can carry a time up to the larger reach before the watermark: hold the output watermark back
        # by it (Flink's RowTimeIntervalJoin.getMaxOutputDelay), so that the pairs are not late downstream.
        self.watermark_delay_ms = max(0, *self.reach)
        self.outer = (join_type in ("LEFT", "FULL"), join_type in ("RIGHT", "FULL"))
        self.condition = condition
        self._matches = (compile_pair_condition(condition, self.columns[LEFT], self.columns[RIGHT])
                         if condition is not None else None)
        self.key_columns = [key_column(i) for i in range(len(left_keys))]
        self.key_dtypes = list(key_dtypes) if key_dtypes is not None else None
        self.dtypes = dict(dtypes or {})

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_matches"}  # a closure: compiled again

    def __setstate__(self, values: dict) -> None:
        self.__dict__.update(values)
        self._matches = (compile_pair_condition(self.condition, self.columns[LEFT], self.columns[RIGHT])
                         if self.condition is not None else None)

    @property
    def operator_name(self) -> str:
        return "IntervalJoin"

    # --- input -----------------------------------------------------------------------------
    def process_sides(self, left: pd.DataFrame | None, right: pd.DataFrame | None,
                      state: KeyedState) -> pd.DataFrame:
        """Join one batch of each input (either may be None); return the pairs and late padded rows."""
        records = [self._records(side, frame) for side, frame in ((LEFT, left), (RIGHT, right))]
        # Rows of both inputs in input order (left first at an equal position), as the regular join.
        both = [(seq, side, i) for side in (LEFT, RIGHT) for i, (seq, *_rest) in enumerate(records[side])]
        both.sort()
        keys = list(dict.fromkeys(r[1] for side in (LEFT, RIGHT) for r in records[side] if r[1] is not None))
        key_frame = self._key_frame(keys)
        stores = (self._load(state, LEFT, key_frame), self._load(state, RIGHT, key_frame))
        watermark = self._operator_time(self.current_watermark)
        out = JoinOutput()
        for seq, side, i in both:
            _, key, row, time = records[side][i]
            out.advance(seq)
            other = 1 - side
            matched = False
            if key is not None:
                for entry in stores[other].get(key, []):
                    if self._in_range(side, time, entry[0]) and self._match(side, row, entry[1]):
                        out.pair(INSERT, side, row, entry[1])
                        entry[2] = True
                        matched = True
            if key is not None and time + self.reach[side] > watermark:
                stores[side].setdefault(key, []).append([time, row, matched, seq])
            elif not matched and self.outer[side]:
                out.padded(INSERT, side, row)  # late (or a NULL key): it can match nothing more
        if keys:
            for side in (LEFT, RIGHT):
                state.store(TABLES[side], key_frame, self._state_rows(side, stores[side], keys))
        return out.frame(self)  # type: ignore[arg-type]  # reads columns and dtypes, as of a join

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        """Drop the rows the watermark has put out of reach; emit an outer side's unmatched ones padded."""
        out = JoinOutput()
        now = self._operator_time(watermark)
        for side in (LEFT, RIGHT):
            rows = state.scan(TABLES[side])
            if not len(rows) or TIME not in rows.columns:
                continue
            times = rows[TIME].to_numpy(dtype=np.int64)
            expired = np.ones(len(rows), dtype=bool) if watermark == MAX_WATERMARK else \
                times + self.reach[side] < now
            if not expired.any():
                continue
            gone = rows.loc[expired]
            if self.outer[side]:
                unmatched = gone.loc[~gone[MATCHED].to_numpy(dtype=bool)]
                order = np.lexsort((unmatched[ROW_SEQ].to_numpy(dtype=np.int64),
                                    unmatched[TIME].to_numpy(dtype=np.int64)))
                unmatched = unmatched.iloc[order]
                for row, seq in zip(tuples(unmatched, self.columns[side]),
                                    unmatched[ROW_SEQ].to_numpy(dtype=np.int64).tolist(), strict=True):
                    out._seq = seq  # stamped with the row's own input position
                    out.padded(INSERT, side, row)
            touched = self._row_keys(rows)
            expired_keys = {k for k, e in zip(touched, expired.tolist(), strict=True) if e}
            in_touched = np.array([k in expired_keys for k in touched], dtype=bool)
            if self.key_columns:
                keys = rows.loc[in_touched, self.key_columns].drop_duplicates().reset_index(drop=True)
            else:
                keys = pd.DataFrame(index=range(1))
            state.store(TABLES[side], keys, rows.loc[in_touched & ~expired].reset_index(drop=True))
        return out.frame(self) if out.kinds else None  # type: ignore[arg-type]

    # --- pieces ----------------------------------------------------------------------------------
    @staticmethod
    def _operator_time(watermark: int) -> int:
        # Flink's RowTimeIntervalJoin.updateOperatorTime: a watermark below 0 counts as 0.
        return watermark if watermark > 0 else 0

    def _in_range(self, side: int, time: int, other_time: int) -> bool:
        left, right = (time, other_time) if side == LEFT else (other_time, time)
        return self.lower_ms <= left - right <= self.upper_ms

    def _match(self, side: int, row: tuple, other_row: tuple) -> bool:
        if self._matches is None:
            return True
        return self._matches(row, other_row) if side == LEFT else self._matches(other_row, row)

    def _records(self, side: int, frame: pd.DataFrame | None) -> list[tuple]:
        """``(seq, key or None, row, time ms)`` of each row (a NULL key or time: key None)."""
        if frame is None or not len(frame):
            return []
        missing = [c for c in self.columns[side] + [KIND, SEQ, SUB] if c not in frame.columns]
        if missing:
            raise ValueError(f"{TABLES[side]} input lacks columns {missing}; it has {list(frame.columns)}")
        frame = frame.sort_values([SEQ, SUB], kind="stable", ignore_index=True)
        kinds = frame[KIND].to_numpy(dtype=np.int64)
        if (kinds != INSERT).any():
            raise ValueError("an interval join takes insert-only input; got a change of kind "
                             f"{int(kinds[kinds != INSERT][0])} on the {('left', 'right')[side]} side")
        stamps = column(frame, self.times[side])
        null_time = stamps.isna().to_numpy()
        times = np.zeros(len(frame), dtype=np.int64)
        if (~null_time).any():
            times[~null_time] = epoch_ms(pd.Series(stamps.to_numpy()[~null_time]))
        key_values = []
        nulls = null_time.copy()
        for i, k in enumerate(self.keys[side]):
            values = column(frame, k)
            nulls |= values.isna().to_numpy()
            if self.key_dtypes is not None and str(values.dtype) != str(self.key_dtypes[i]):
                values = values.astype(self.key_dtypes[i])
            key_values.append(python_values(values))
        keys = list(zip(*key_values, strict=True)) if key_values else [()] * len(frame)
        rows = tuples(frame, self.columns[side])
        seqs = frame[SEQ].to_numpy(dtype=np.int64).tolist()
        return [(s, None if n else k, r, t) for s, k, r, t, n in
                zip(seqs, keys, rows, times.tolist(), nulls.tolist(), strict=True)]

    def _key_frame(self, keys: list[tuple]) -> pd.DataFrame:
        if not self.key_columns:
            return pd.DataFrame(index=range(1 if keys else 0))
        return pd.DataFrame({name: array([k[i] for k in keys], self.key_dtypes[i] if self.key_dtypes else None)
                             for i, name in enumerate(self.key_columns)})

    def _row_keys(self, frame: pd.DataFrame) -> list[tuple]:
        values = [python_values(column(frame, c)) for c in self.key_columns]
        return list(zip(*values, strict=True)) if values else [()] * len(frame)

    def _load(self, state: KeyedState, side: int, key_frame: pd.DataFrame) -> dict[tuple, list[Entry]]:
        stores: dict[tuple, list[Entry]] = {}
        if not len(key_frame):
            return stores
        frame = state.load(TABLES[side], key_frame)
        if not len(frame) or TIME not in frame.columns:
            return stores
        for key, row, time, matched, seq in zip(
                self._row_keys(frame), tuples(frame, self.columns[side]),
                frame[TIME].to_numpy(dtype=np.int64).tolist(), frame[MATCHED].to_numpy(dtype=bool).tolist(),
                frame[ROW_SEQ].to_numpy(dtype=np.int64).tolist(), strict=True):
            stores.setdefault(key, []).append([time, row, matched, seq])
        return stores

    def _state_rows(self, side: int, store: dict[tuple, list[Entry]], keys: list[tuple]) -> pd.DataFrame:
        entries = [(key, e) for key in keys for e in store.get(key, [])]
        data: dict[str, Any] = {}
        for i, name in enumerate(self.key_columns):
            data[name] = array([k[i] for k, _ in entries], self.key_dtypes[i] if self.key_dtypes else None)
        for j, name in enumerate(self.columns[side]):
            data[name] = array([e[1][j] for _, e in entries], self.dtypes.get(name))
        data[TIME] = np.array([e[0] for _, e in entries], dtype=np.int64)
        data[MATCHED] = np.array([e[2] for _, e in entries], dtype=bool)
        data[ROW_SEQ] = np.array([e[3] for _, e in entries], dtype=np.int64)
        return pd.DataFrame(data)

    def state_rows(self, state: KeyedState) -> tuple[int, int]:
        """How many rows each side keeps in ``state`` (for tests and metrics)."""
        return tuple(len(state.scan(t)) for t in TABLES)  # type: ignore[return-value]


__all__ = ["IntervalJoin", "TABLES"]
