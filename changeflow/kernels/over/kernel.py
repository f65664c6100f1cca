"""The OVER aggregation kernel: Flink's RowTime*/ProcTime* over functions in one.

Keyed by the window's ``PARTITION BY`` columns. Ordered by a **rowtime** attribute
(``event_time``), as ``RowTimeRowsBoundedPrecedingFunction``,
``RowTimeRowsUnboundedPrecedingFunction``, ``RowTimeRangeBoundedPrecedingFunction``
and ``RowTimeRangeUnboundedPrecedingFunction``:

1. a late row is dropped and counted in the state table ``late``. Late, as Flink: for
   an unbounded frame, a row at or before ``current_watermark`` when it arrives
   (``AbstractRowTimeUnboundedPrecedingOver``); for a bounded frame (n rows or a
   RANGE offset), a row at or before the last timestamp its key fired (the state table
   ``fired``, Flink's keyed ``lastTriggeringTsState``, 0 before the first), which
   may be behind the watermark: such a row still comes out, at the next watermark;
2. the other rows wait in the state table ``buffer``;
3. on a watermark (:meth:`on_watermark`) the buffered rows whose timestamp the
   watermark has reached come out, per key in timestamp order (tied rows in arrival
   order), each with its aggregates over its frame (:func:`.frames.frame_results`),
   insert-only; the state table ``history`` keeps what later frames need (the last n
   rows, the rows within the RANGE offset of the newest, or one accumulator per key
   for an unbounded frame).

Ordered by a **processing-time** attribute (``ProcTime*PrecedingFunction``) every
row comes out as it arrives, with the batch's processing time as its timestamp:
a batch's rows share one instant, so a RANGE frame gives them the same frame.
Flink evaluates an unbounded processing-time frame row by row whether it says
ROWS or RANGE (``ProcTimeUnboundedPrecedingFunction``), and so does this kernel.

Output: the input columns, one column per call, then the bookkeeping columns;
``_seq`` is the row's timestamp (event time; its input ``_seq`` in processing
time) and ``_sub`` its place among the rows of that call.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import BOOKKEEPING, DELETE, INSERT, KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.over.frames import frame_results, row_partial
from changeflow.kernels.state import KeyedState

BUFFER = "buffer"
HISTORY = "history"
LATE = "late"
FIRED = "fired"
_TS = "_ts"


class OverAggregate(KernelBase):
    """``calls`` over ``PARTITION BY keys ORDER BY order_by`` with a frame ``rows``/``preceding``.

    ``columns`` are the input columns (the output repeats them, then the calls'
    outputs); ``preceding`` is a row count (ROWS) or milliseconds (RANGE), None
    for UNBOUNDED PRECEDING; ``proctime`` orders by arrival instead of event time.
    """

    def __init__(self, keys: list[str], columns: list[str], order_by: str, calls: list[AggCall], *,
                 rows: bool, preceding: int | None, proctime: bool = False) -> None:
        missing = [k for k in keys + [order_by] if k not in columns]
        if missing:
            raise ValueError(f"OVER aggregation: columns {missing} are not among the input columns {columns}")
        self.keys = list(keys)
        self.columns = list(columns)
        self.order_by = order_by
        self.calls = list(calls)
        self.proctime = proctime
        # An unbounded processing-time frame is evaluated row by row (Flink's ProcTimeUnboundedPrecedingFunction).
        self.rows = rows or (proctime and preceding is None)
        self.preceding = preceding
        self.event_time = not proctime

    _batch = False  # in process_bounded: all the input at once, nothing late (Flink's batch OVER sorts it)

    @property
    def operator_name(self) -> str:
        return "OverAggregate"

    def process_bounded(self, batch: pd.DataFrame) -> pd.DataFrame:
        self._batch = True
        try:
            return super().process_bounded(batch)
        finally:
            self._batch = False

    @property
    def output_columns(self) -> list[str]:
        return self.columns + [c.output for c in self.calls] + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        if not len(batch):
            return self._empty()
        kinds = batch[KIND].to_numpy()
        if (kinds != INSERT).any():
            raise ValueError("an OVER aggregation takes insert-only input; got a "
                             f"{'-D' if (kinds == DELETE).any() else 'retraction'}")
        batch = batch.reset_index(drop=True)
        if self.proctime:
            stamped = batch.assign(**{_TS: np.full(len(batch), int(self.clock()), dtype=np.int64)})
            return self._emit(stamped, state, keep_input_order=True)
        ts = epoch_ms(cast(pd.Series, batch[self.order_by]))
        bounded_frame = self.preceding is not None and not self._batch
        late = ts <= self._last_fired(batch, state) if bounded_frame else ts <= self.current_watermark
        if late.any():
            self._count_late(int(late.sum()), state)
        rows = batch.loc[~late].assign(**{_TS: ts[~late]}).reset_index(drop=True)
        if len(rows):
            rows = rows[self.columns + [_TS, SEQ, SUB]]
            keys = rows[self.keys].drop_duplicates().reset_index(drop=True)
            before = state.load(BUFFER, keys)
            merged = pd.concat([before, rows], ignore_index=True) if len(before) else rows
            state.store(BUFFER, keys, _key_first(merged, self.keys))
        return self._empty()

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        if self.proctime:
            return None
        buffered = state.scan(BUFFER)
        if not len(buffered):
            return None
        due = buffered[_TS].to_numpy(dtype=np.int64) <= watermark
        if not due.any():
            return None
        fired = buffered.loc[due].reset_index(drop=True)
        keys = fired[self.keys].drop_duplicates().reset_index(drop=True)
        waiting = buffered.loc[~due]
        # The waiting rows of the fired keys stay (every waiting row when there is no key).
        kept = waiting.merge(keys, on=self.keys, how="inner") if len(waiting) and self.keys else waiting
        state.store(BUFFER, keys, _key_first(kept.reset_index(drop=True), self.keys))
        if self.preceding is not None and not self._batch:
            self._store_fired(fired, keys, state)
        return self._emit(fired, state, keep_input_order=False)

    # --- a bounded frame's lateness: the last timestamp each key fired ------------------------
    def _last_fired(self, batch: pd.DataFrame, state: KeyedState) -> pd.Series:
        """Per row of ``batch``, the last timestamp its key fired (0 before the first, as Flink's default)."""
        if not self.keys:
            stored = state.scan(FIRED)
            last = int(stored["_last"].iloc[0]) if len(stored) else 0
            return pd.Series(np.full(len(batch), last, dtype=np.int64), index=batch.index)
        keys = cast(pd.DataFrame, batch[self.keys].drop_duplicates().reset_index(drop=True))
        stored = state.load(FIRED, keys)
        by_key = {} if not len(stored) or "_last" not in stored.columns else {
            _norm(tuple(r[:-1])): int(r[-1]) for r in stored[self.keys + ["_last"]].itertuples(index=False, name=None)}
        values = [by_key.get(_norm(k), 0) for k in batch[self.keys].itertuples(index=False, name=None)]
        return pd.Series(np.asarray(values, dtype=np.int64), index=batch.index)

    def _store_fired(self, fired: pd.DataFrame, keys: pd.DataFrame, state: KeyedState) -> None:
        """Remember, per key of ``fired``, the newest timestamp that came out (Flink's lastTriggeringTs)."""
        ts = fired[_TS].to_numpy(dtype=np.int64)
        if not self.keys:
            one = pd.DataFrame(index=pd.RangeIndex(1))
            state.store(FIRED, one, one.assign(_last=np.asarray([int(ts.max())], dtype=np.int64)))
            return
        newest: dict[tuple, int] = {}
        for k, t in zip(fired[self.keys].itertuples(index=False, name=None), ts, strict=True):
            newest[_norm(k)] = max(newest.get(_norm(k), int(t)), int(t))
        last = [newest[_norm(k)] for k in keys.itertuples(index=False, name=None)]
        state.store(FIRED, keys, keys.assign(_last=np.asarray(last, dtype=np.int64)))

    # --- evaluation --------------------------------------------------------------------------
    def _emit(self, rows: pd.DataFrame, state: KeyedState, keep_input_order: bool) -> pd.DataFrame:
        """``rows`` (with ``_ts``) with their aggregates, history updated; ordered per key by time."""
        rows = rows.sort_values([_TS, SEQ, SUB], kind="stable").reset_index(drop=True)
        keys = cast(pd.DataFrame, rows[self.keys].drop_duplicates().reset_index(drop=True))
        history = state.load(HISTORY, keys) if self.keys else state.scan(HISTORY)
        past = _by_key(history, self.keys)
        results: list[list] = [[] for _ in range(len(rows))]
        kept_rows: list[dict[str, Any]] = []
        groups = rows.groupby(self.keys, sort=False, dropna=False).indices if self.keys else {(): np.arange(len(rows))}
        args = [_py_values(cast(pd.Series, rows[c.arg])) if c.arg is not None else [None] * len(rows)
                for c in self.calls]
        ts = rows[_TS].to_numpy(dtype=np.int64)
        for key, positions in groups.items():
            key_tuple = key if isinstance(key, tuple) else (key,)
            new = [(int(ts[p]), [row_partial(c, args[i][p]) for i, c in enumerate(self.calls)]) for p in positions]
            out, keep = frame_results(self.calls, self.rows, self.preceding,
                                      past.get(_norm(key_tuple), []), new)
            for p, values in zip(positions, out, strict=True):
                results[p] = values
            for t, partials in keep:
                record = dict(zip(self.keys, key_tuple, strict=True))
                record[_TS] = t
                for i, (v, n) in enumerate(partials):
                    record[f"_v{i}"], record[f"_n{i}"] = v, n
                kept_rows.append(record)
        names = self.keys + [_TS] + [f"_{x}{i}" for i in range(len(self.calls)) for x in "vn"]
        new_history = pd.DataFrame(kept_rows, columns=cast(Any, names)) if kept_rows else \
            pd.DataFrame(columns=cast(Any, names))
        # Values as objects, whatever the first stored rows held: a column all integers in one
        # batch and holding a null in the next must keep one dtype in state.
        for name in new_history.columns:
            if name not in (_TS, SEQ, SUB):
                new_history[name] = new_history[name].astype(object)
        state.store(HISTORY, keys.astype(object), new_history)
        out = rows[self.columns].copy()
        for i, c in enumerate(self.calls):
            out[c.output] = pd.Series([r[i] for r in results], dtype=object)
        out[KIND] = np.full(len(rows), INSERT, dtype=np.int8)
        if keep_input_order:
            out[SEQ], out[SUB] = rows[SEQ].to_numpy(dtype=np.int64), rows[SUB].to_numpy(dtype=np.int64)
            out = cast(pd.DataFrame, out).sort_values(by=[SEQ, SUB], kind="stable").reset_index(drop=True)
        else:
            out[SEQ] = ts
            out[SUB] = np.arange(len(rows), dtype=np.int64)
        return cast(pd.DataFrame, out[self.output_columns])

    def _empty(self) -> pd.DataFrame:
        return pd.DataFrame({c: pd.Series([], dtype=np.int64 if c in (SEQ, SUB) else np.int8 if c == KIND else object)
                             for c in self.output_columns})

    def _count_late(self, n: int, state: KeyedState) -> None:
        key = pd.DataFrame({k: pd.Series([None], dtype=object) for k in self.keys}) if self.keys else \
            pd.DataFrame(index=pd.RangeIndex(1))
        before = state.load(LATE, key) if self.keys else state.scan(LATE)
        total = n + (int(before["records"].iloc[0]) if len(before) else 0)
        state.store(LATE, key, key.assign(records=np.asarray([total], dtype=np.int64)))

    def late_records(self, state: KeyedState) -> int:
        """How many rows this kernel dropped as late (in ``state``'s buckets)."""
        rows = state.scan(LATE)
        return int(rows["records"].sum()) if len(rows) else 0


def _key_first(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``frame`` with the key columns first (state rows start with their key)."""
    return cast(pd.DataFrame, frame[keys + [c for c in frame.columns if c not in keys]])


def _py_values(column: pd.Series) -> list:
    """A column as Python values, null as None."""
    return [None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else
            (v.item() if isinstance(v, np.generic) else v) for v in column.astype(object)]


def _norm(key: tuple) -> tuple:
    return tuple(None if k is None or k is pd.NA or (isinstance(k, float) and np.isnan(k)) else k for k in key)


def _by_key(history: pd.DataFrame, keys: list[str]) -> dict[tuple, list[tuple[int, list]]]:
    """Stored history rows as ``{key: [(ts, [partial per call])]}`` in stored order."""
    out: dict[tuple, list[tuple[int, list]]] = {}
    if not len(history) or _TS not in history.columns:
        return out
    calls = sum(1 for c in history.columns if c.startswith("_v"))
    for record in history.astype(object).itertuples(index=False):
        values = dict(zip(history.columns, record, strict=True))
        key = _norm(tuple(values[k] for k in keys))
        partials = [(_none(values[f"_v{i}"]), int(values[f"_n{i}"])) for i in range(calls)]
        out.setdefault(key, []).append((int(values[_TS]), partials))
    return out


def _none(v: Any) -> Any:
    return None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v


__all__ = ["OverAggregate"]
