"""Deduplication on row time: ``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY rowtime DESC|ASC) = 1``.

Flink plans this as a Deduplicate, not a Top-1, and its functions differ from a
Top-1 on ties and in when they emit:

* **Eager** (keep last; keep first with mini-batch on: Flink's
  ``RowTimeDeduplicateFunction`` and ``RowTimeMiniBatchDeduplicateFunction``): a
  row replaces its key's row when its time is later *or equal* (keep last) or
  strictly earlier (keep first) -- ``DeduplicateFunctionHelper.shouldKeepCurrentRow``
  -- and the replacement is emitted at once: ``+I`` for a key's first row, else
  ``-U`` of the replaced row and ``+U`` of the new one. Other rows are ignored.
  Nothing waits for the watermark and no row is late. Mini-batch changes nothing
  here: Flink's mini-batch function still emits every replacement of a bundle (a
  versioned table of a temporal join needs them all), so each row is checked
  against the running best of its key in arrival order either way.
* **On the watermark** (keep first without mini-batch, Flink 2.1+'s
  ``RowTimeDeduplicateKeepFirstRowFunction``, insert-only output): a row behind
  the watermark is late (dropped and counted); a key keeps its earliest row in
  ``pending`` (a strictly earlier row replaces it) until the watermark reaches
  that row's time, then emits it as ``+I`` and ignores the key from then on.

Everything is vectorised: per batch one load and one store of the keys' rows; a
row's fate follows from the running maximum (minimum) of its key's times, which
is always the time of the key's current row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import BOOKKEEPING, FANOUT, INSERT, KIND, SEQ, SUB, UPDATE_AFTER, UPDATE_BEFORE, \
    sort_changes
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.rank.rows import check_dedup_columns, check_input, rows_at_hand, stamped_output
from changeflow.kernels.state import (KeyedState, count_late_records, late_record_total, load_next_end,
                                      store_next_end)

ROWS_TABLE = "dedup_rowtime"      # eager: each key's current row
PENDING_TABLE = "dedup_pending"   # on the watermark: each key's earliest row not yet emitted
EMITTED_TABLE = "dedup_emitted"   # on the watermark: a marker per key whose row was emitted
EMITTED = "_emitted"


class RowtimeDeduplicate(KernelBase):
    """Keep each key's row of the latest (``keep_last``) or earliest row time, as Flink does.

    ``columns`` are the input's (and output's) columns, ``keys`` the deduplication
    keys among them, ``time`` the rowtime column. ``on_watermark`` selects Flink's
    insert-only keep-first function (keep first without mini-batch).

    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> dedup = RowtimeDeduplicate(["k", "ts"], ["k"], "ts", keep_last=True)
    >>> batch = pd.DataFrame({"k": ["a", "a", "a"], "ts": pd.to_datetime([2000, 1000, 2000], unit="ms"),
    ...                       "_kind": pd.array([0, 0, 0], dtype="int8"), "_seq": [0, 1, 2], "_sub": [0, 0, 0]})
    >>> out = dedup.process(batch, InMemoryKeyedState())
    >>> [(str(k), str(t.time())) for k, t in zip(out["_kind"], out["ts"])]   # an older row ignored, a tie taken
    [('0', '00:00:02'), ('1', '00:00:02'), ('2', '00:00:02')]
    """

    datetime_columns = True   # its time column is read through epoch_ms; rows are passed on as they are

    def __init__(self, columns: list[str], keys: list[str], time: str, *, keep_last: bool,
                 on_watermark: bool = False) -> None:
        if on_watermark and keep_last:
            raise ValueError("only keep-first deduplication emits on the watermark")
        if time not in columns:
            raise ValueError(f"the rowtime column {time!r} is not among the columns {columns}")
        self.columns = list(columns)
        self.keys = list(keys)
        self.time = time
        self.keep_last = keep_last
        self.event_time = on_watermark
        check_dedup_columns(self.columns, self.keys, {EMITTED})
        self._stored = self.keys + [c for c in self.columns if c not in self.keys]

    @property
    def operator_name(self) -> str:
        return "Deduplicate"

    @property
    def state_tables(self) -> list[str]:
        return [PENDING_TABLE, EMITTED_TABLE] if self.event_time else [ROWS_TABLE]

    @property
    def output_columns(self) -> list[str]:
        return self.columns + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        check_input(batch, self.columns, "deduplicate", insert_only=True)
        batch = sort_changes(batch).reset_index(drop=True)
        if self.event_time:
            self._hold(batch, state)
            return batch[self.output_columns].iloc[:0]
        return self._replace(batch, state)

    def _running_best(self, times: np.ndarray, codes: np.ndarray, initial: np.ndarray) -> tuple[np.ndarray, ...]:
        """Rows in key-then-arrival order, and each row's best time before it (``initial`` per key code).

        The best is the maximum (keep last) or minimum (keep first) of the key's
        earlier times and its stored row's; NaN where the key has none.
        """
        order = np.lexsort((np.arange(len(times)), codes))
        sorted_codes, sorted_times = codes[order], times[order].astype(np.float64)
        series = pd.Series(sorted_times)
        running = (series.groupby(sorted_codes).cummax() if self.keep_last else
                   series.groupby(sorted_codes).cummin()).to_numpy()
        before = np.empty(len(order), dtype=np.float64)
        before[1:] = running[:-1]
        first = np.ones(len(order), dtype=bool)
        first[1:] = sorted_codes[1:] != sorted_codes[:-1]
        before[first] = np.nan
        start = initial[sorted_codes]  # fmax/fmin take the other value where one is NaN
        return order, sorted_codes, sorted_times, np.fmax(before, start) if self.keep_last else np.fmin(before, start)

    def _keeps(self, times: np.ndarray, best: np.ndarray) -> np.ndarray:
        """Whether a row of time ``times`` replaces its key's row of time ``best`` (Flink's shouldKeepCurrentRow)."""
        none = np.isnan(best)
        return none | (best <= times) if self.keep_last else none | (times < best)

    def _replace(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        empty = np.empty(0, dtype=np.int64)
        if len(batch) == 0:
            return stamped_output(batch, self.columns, empty, empty, empty, empty)
        keys = KeyIndex(batch, self.keys)
        codes = np.asarray(keys.codes, dtype=np.int64)
        stored = state.load(ROWS_TABLE, keys.frame)
        n_stored = len(stored)
        initial = np.full(keys.size, np.nan)
        stored_of_key = np.full(keys.size, -1, dtype=np.int64)
        if n_stored:
            at = keys.lookup(stored)
            initial[at] = epoch_ms(stored[self.time])
            stored_of_key[at] = np.arange(n_stored)
        times = epoch_ms(batch[self.time])
        order, sorted_codes, sorted_times, best = self._running_best(times, codes, initial)
        kept = self._keeps(sorted_times, best)
        if not kept.any():
            return stamped_output(batch, self.columns, empty, empty, empty, empty)
        current = order[kept]                      # kept rows, by key then arrival
        kept_codes = sorted_codes[kept]
        previous = np.empty(len(current), dtype=np.int64)
        previous[1:] = n_stored + current[:-1]
        first_kept = np.ones(len(current), dtype=bool)
        first_kept[1:] = kept_codes[1:] != kept_codes[:-1]
        previous[first_kept] = stored_of_key[kept_codes[first_kept]]
        # The key's new row: its last kept row.
        last_kept = np.append(first_kept[1:], True)
        new_rows = pd.DataFrame(batch.take(current[last_kept]).reset_index(drop=True)[self._stored])
        state.store(ROWS_TABLE, keys.frame.take(kept_codes[last_kept]).reset_index(drop=True), new_rows)
        by_arrival = np.argsort(current, kind="stable")
        current, previous = current[by_arrival], previous[by_arrival]
        has_previous = previous >= 0
        count = np.where(has_previous, 2, 1)       # -U(previous), +U(row); or +I(row)
        ids = np.repeat(n_stored + current, count)
        kinds = np.repeat(np.where(has_previous, UPDATE_AFTER, INSERT), count)
        starts = np.cumsum(count) - count
        ids[starts[has_previous]] = previous[has_previous]
        kinds[starts[has_previous]] = UPDATE_BEFORE
        seq, sub = batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64)
        out_sub = np.repeat(sub[current], count) * FANOUT + (np.arange(len(ids)) - np.repeat(starts, count))
        return stamped_output(rows_at_hand(stored, batch, self.columns), self.columns, ids, kinds,
                              np.repeat(seq[current], count), out_sub)

    def _hold(self, batch: pd.DataFrame, state: KeyedState) -> None:
        """Keep first on the watermark: drop late rows and emitted keys, keep each key's earliest row."""
        times = epoch_ms(batch[self.time]) if len(batch) else np.zeros(0, dtype=np.int64)
        late = times < self.current_watermark
        if late.any():
            count_late_records(state, self.keys, int(late.sum()))
            batch, times = batch.loc[~late].reset_index(drop=True), times[~late]
        if not len(batch):
            return
        keys = KeyIndex(batch, self.keys)
        codes = np.asarray(keys.codes, dtype=np.int64)
        emitted = state.load(EMITTED_TABLE, keys.frame)
        done = np.zeros(keys.size, dtype=bool)
        if len(emitted):
            done[keys.lookup(emitted)] = True
        pending = state.load(PENDING_TABLE, keys.frame)
        initial = np.full(keys.size, np.nan)
        if len(pending):
            initial[keys.lookup(pending)] = epoch_ms(pending[self.time])
        order, sorted_codes, sorted_times, best = self._running_best(times, codes, initial)
        kept = self._keeps(sorted_times, best) & ~done[sorted_codes]
        if not kept.any():
            return
        current, kept_codes = order[kept], sorted_codes[kept]
        last_kept = np.append(kept_codes[1:] != kept_codes[:-1], True)
        rows = batch.take(current[last_kept]).reset_index(drop=True)
        state.store(PENDING_TABLE, keys.frame.take(kept_codes[last_kept]).reset_index(drop=True),
                    rows[self._stored].assign(**{SEQ: rows[SEQ].to_numpy(dtype=np.int64)}))
        earliest = int(epoch_ms(rows[self.time]).min())
        known = load_next_end(state, self.keys)
        if known is None or earliest < known:
            store_next_end(state, self.keys, earliest)

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        """Emit (``+I``) every pending row whose time the watermark reached, by time then arrival."""
        known = load_next_end(state, self.keys)
        if known is None or known > watermark:
            return None    # no pending row is due: no scan
        pending = state.scan(PENDING_TABLE)
        if not len(pending):
            store_next_end(state, self.keys, None)
            return None
        times = epoch_ms(pending[self.time])
        due = times <= watermark
        store_next_end(state, self.keys, int(times[~due].min()) if (~due).any() else None)
        if not due.any():
            return None
        order = np.lexsort((pending[SEQ].to_numpy(dtype=np.int64)[due], times[due]))
        fired = pending.loc[due].iloc[order].reset_index(drop=True)
        keys = fired[self.keys].reset_index(drop=True)
        state.store(PENDING_TABLE, keys, keys.iloc[:0])
        state.store(EMITTED_TABLE, keys, keys.assign(**{EMITTED: True}))
        out = fired[self.columns].assign(**{SEQ: times[due][order], SUB: np.arange(len(fired), dtype=np.int64)})
        out.insert(len(self.columns), KIND, np.full(len(out), INSERT, dtype=np.int8))
        return out[self.output_columns]

    def late_records(self, state: KeyedState) -> int:
        """How many rows this kernel dropped as late (in ``state``'s buckets)."""
        return late_record_total(state)


__all__ = ["RowtimeDeduplicate"]
