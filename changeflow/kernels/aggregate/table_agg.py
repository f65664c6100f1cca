"""The streaming table aggregate (``flat_aggregate`` of a ``udtaf``): Flink's GroupTableAggFunction.

Per key, the user's :class:`~changeflow.functions.TableAggregateFunction` keeps one
accumulator; ``emit_value(acc)`` yields the key's current rows. When an input row
changes the accumulator, the rows emitted before for the key are taken back with
``-D`` (``emit_value`` of the accumulator before the change), then the new rows are
emitted with ``+I``. A key whose record count falls to zero retracts its rows and
forgets its accumulator, emitting nothing new. That is Flink's GroupTableAggFunction
per input row; with mini-batch (``mini_batch``) a key's rows of a bundle are folded
first and the key retracts and re-emits once per bundle, as PyFlink's Python
GroupTableAggFunction does for each of its bundles (even when the rows are unchanged).

Which rows apply, and when a key starts afresh, is the group aggregate's record
counter (:mod:`.fold`): a retraction for a key without an accumulator is ignored.

State (table ``acc``): per key ``_count`` and the pickled accumulator ``acc``.
Output: the keys, one column per field of the function's ROW result, bookkeeping.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.base import COUNT_COLUMN
from changeflow.kernels.aggregate.fold import plan_fold
from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.user import UserAggCall, _Runner, argument_rows, result_values
from changeflow.kernels.aggregate.values import to_array
from changeflow.kernels.changelog import BOOKKEEPING, DELETE, FANOUT, INSERT, KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import KeyedState

ACC = "acc"
STATE_TABLE = "acc"


class GroupTableAggregate(KernelBase):
    """``group_by(keys).flat_aggregate(call)``: ``call`` is a table aggregate's :class:`UserAggCall`.

    ``columns`` names the output columns of the result's fields (default: the ROW's field names).
    """

    def __init__(self, keys: list[str], call: UserAggCall, *, mini_batch: bool,
                 columns: list[str] | None = None) -> None:
        if call.function_def.kind != "table_aggregate":
            raise ValueError(f"{call.function_def.name} is not a table aggregate function")
        self.keys = list(keys)
        self.call = call
        self.mini_batch = mini_batch
        self.fields = list(call.fields)
        self.columns = list(columns) if columns is not None else [n for n, _ in self.fields]
        if len(self.columns) != len(self.fields):
            raise ValueError(f"{call.function_def.name}: {len(self.columns)} names for {len(self.fields)} fields")
        self._runner = _Runner(call.function_def)

    @property
    def state_tables(self) -> list[str]:
        return [STATE_TABLE]

    @property
    def output_columns(self) -> list[str]:
        return self.keys + self.columns + list(BOOKKEEPING)

    def _rows(self, acc: Any) -> list[tuple]:
        runner = self._runner
        try:
            emitted = runner.instance.emit_value(acc)
            rows = [] if emitted is None else list(emitted)
        except Exception as e:
            raise runner.fail("emit_value", e) from e
        return [_fields(row, len(self.fields), runner.user.name) for row in rows]

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        missing = [c for c in self.keys + list(self.call.args) + list(BOOKKEEPING) if c not in batch.columns]
        if missing:
            raise ValueError(f"table aggregate input lacks columns {missing}; it has {list(batch.columns)}")
        if len(batch) == 0:
            return self._frame(batch[self.keys].iloc[:0], [], [], [])
        keys = KeyIndex(batch, self.keys)
        stored = state.load(STATE_TABLE, keys.frame)
        exists = np.zeros(keys.size, dtype=bool)
        counts = np.zeros(keys.size, dtype=np.int64)
        blobs: list[Any] = [None] * keys.size
        if len(stored):
            codes = keys.lookup(stored)
            exists[codes] = True
            counts[codes] = stored[COUNT_COLUMN].to_numpy(dtype=np.int64)
            for code, blob in zip(codes.tolist(), stored[ACC].tolist(), strict=True):
                blobs[code] = blob
        kinds = batch[KIND].to_numpy(dtype=np.int8)
        fold = plan_fold(kinds, batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64), keys,
                         exists, counts, mini_batch=self.mini_batch, needs_order=True, needs_grouping=True)
        args = argument_rows(batch, self.call, fold.rows).data
        seq = batch[SEQ].to_numpy(dtype=np.int64)
        sub = batch[SUB].to_numpy(dtype=np.int64)
        rows_at = fold.rows if fold.rows is not None else np.arange(len(batch))
        g = fold.grouping()
        life = g.lifetimes
        runner = self._runner
        signs = fold.sign.tolist()
        out_codes: list[int] = []
        out_kinds: list[int] = []
        out_stamps: list[tuple[int, int]] = []
        out_rows: list[tuple] = []

        def emit(code: int, kind: int, rows: list[tuple], stamp: tuple[int, int]) -> None:
            for row in rows:
                out_codes.append(code)
                out_kinds.append(kind)
                out_stamps.append(stamp)
                out_rows.append(row)

        finals: dict[int, Any] = {}
        for seg in range(life.count):
            key = int(g.life_key[seg])
            from_state = bool(g.life_from_state[seg]) and blobs[key] is not None
            acc = runner.loads(blobs[key]) if from_state else runner.create()
            has_acc = from_state
            start, stop = int(life.starts[seg]), int(life.starts[seg] + life.lengths[seg])
            if self.mini_batch:
                applied = [i for i in range(start, stop) if signs[i]]
                if not applied:
                    continue
                if has_acc:
                    emit(key, DELETE, self._rows(acc), (-1, -1))
                for i in applied:
                    runner.apply(acc, args[i], signs[i])
                if fold.count_after[key] != 0:
                    emit(key, INSERT, self._rows(acc), (-1, -1))
                last = int(rows_at[applied[-1]])
                self._stamp_last(out_stamps, (int(seq[last]), int(sub[last])))
                finals[key] = acc
                continue
            after = fold.row_count_after
            assert after is not None  # a fold without mini-batch has per-row counts
            for i in range(start, stop):
                if not signs[i]:
                    continue
                stamp = (int(seq[rows_at[i]]), int(sub[rows_at[i]]))
                if has_acc:
                    emit(key, DELETE, self._rows(acc), stamp)
                runner.apply(acc, args[i], signs[i])
                has_acc = after[i] > 0
                if has_acc:
                    emit(key, INSERT, self._rows(acc), stamp)
            finals[key] = acc
        self._store(state, keys, fold, finals)
        return self._frame(keys.frame.take(np.asarray(out_codes, dtype=np.intp)).reset_index(drop=True),
                           out_kinds, out_stamps, out_rows)

    @staticmethod
    def _stamp_last(stamps: list[tuple[int, int]], stamp: tuple[int, int]) -> None:
        """Give the bundle's changes of one key (still unstamped) the key's last row's stamp."""
        for j in range(len(stamps) - 1, -1, -1):
            if stamps[j] != (-1, -1):
                break
            stamps[j] = stamp

    def _store(self, state: KeyedState, keys: KeyIndex, fold, finals: dict[int, Any]) -> None:
        alive = fold.alive
        codes = [k for k in sorted(finals) if alive[k]]
        frame = keys.frame.take(np.asarray(codes, dtype=np.intp)).reset_index(drop=True)
        frame[COUNT_COLUMN] = fold.count_after[codes].astype(np.int64)
        blobs = np.empty(len(codes), dtype=object)
        for j, k in enumerate(codes):
            blobs[j] = self._runner.dumps(finals[k])
        frame[ACC] = blobs
        state.store(STATE_TABLE, keys.frame, frame)

    def _frame(self, key_rows: pd.DataFrame, kinds: list[int], stamps: list[tuple[int, int]],
               rows: list[tuple]) -> pd.DataFrame:
        data: dict[str, Any] = {name: key_rows[name].reset_index(drop=True) for name in self.keys}
        for j, (name, (_, type_)) in enumerate(zip(self.columns, self.fields, strict=True)):
            data[name] = to_array(result_values([r[j] for r in rows], type_), type_)
        data[KIND] = np.asarray(kinds, dtype=np.int8)
        seq = np.asarray([s for s, _ in stamps], dtype=np.int64)
        sub = np.asarray([s for _, s in stamps], dtype=np.int64)
        data[SEQ] = seq
        data[SUB] = _child_subs(seq, sub)
        # Changes were made key by key; downstream reads them in source order.
        return pd.DataFrame(data, copy=False).sort_values([SEQ, SUB], kind="stable", ignore_index=True)


def _child_subs(seq: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """``sub * fanout + i`` for the i-th change of each stamp: distinct, in emission order.

    A table aggregate may emit any number of rows for one input row, more than
    the usual :data:`~changeflow.kernels.changelog.FANOUT`; the fanout is widened to
    the batch's largest count (as the Top-N kernel widens its own).
    """
    if len(seq) == 0:
        return sub.astype(np.int64)
    index = np.zeros(len(seq), dtype=np.int64)
    same = (seq[1:] == seq[:-1]) & (sub[1:] == sub[:-1])
    for i in np.flatnonzero(same).tolist():
        index[i + 1] = index[i] + 1
    fanout = max(FANOUT, int(index.max()) + 1)
    return sub * fanout + index


def _fields(row: Any, n: int, name: str) -> tuple:
    """An emitted row as a tuple of ``n`` fields (a Row, tuple, list, or a single value)."""
    if isinstance(row, (tuple, list)):
        values = tuple(row)
    else:
        values = (row,)
    if len(values) != n:
        raise RuntimeError(f"table aggregate function {name}: emit_value yielded {row!r} with {len(values)} "
                           f"fields, its result type has {n}")
    return values
