"""The regular streaming join kernel: Flink 2.3's StreamingJoinOperator and its mini-batch variant.

:class:`StreamingJoin` joins two changelogs on equality of their join keys plus an
optional non-equi condition, for ``INNER``, ``LEFT``, ``RIGHT`` and ``FULL`` joins,
emitting exactly the changes Flink 2.3 emits for each input record:

* Each side keeps, per join key, the multiset of its rows (row -> count). An *outer*
  side also keeps, per row, its number of associations: how many rows of the other
  side it currently matches. Rows with a NULL in a join key never match (``=`` is
  UNKNOWN on NULL); they are not stored, an outer side just pads them with NULLs.
* An accumulating record (+I/+U) of an outer side with no match emits ``+I[row, null]``;
  with matches it emits, per matching other row (one per copy), ``-D[null, other]``
  when that outer row had no association yet, then ``+I[row, other]``.
* An accumulating record of an inner side emits the pairs with the *input's* kind
  (``+I`` or ``+U``) when the other side is inner too, else ``-D[null, other]`` where
  needed and ``+I`` pairs.
* A retracting record (-U/-D) emits its pairs as ``-D`` (outer input) or with the
  input's kind (inner input); each other outer row that loses its last association
  is re-inserted as ``+I[null, other]`` right after its pair; an outer row without
  matches emits ``-D[row, null]``.

Order of the two inputs within a batch: Flink interleaves its two inputs as records
arrive, which is not deterministic. changeflow orders a batch's changes by source
position, ``(_seq, side, _sub)``: the two sources advance together, and the left
side's change goes first when both sources' rows have the same position. Within a
side, input order always holds.

Mini-batch (``mini_batch=True``): the batch is one bundle. Each side's records are
folded per join key (:mod:`.bundle`), then Flink's order applies: the right bundle
first, then the left one (the left bundle first for a RIGHT join).

A folded ``retract, accumulate`` pair of a unique key is joined with Flink's
suppression: the other outer side's rows that the retraction un-matches and the
accumulation matches again are not padded in between. Flink 2.3 suppresses the
padding for *every* row the pair touches, which is only right when both records
match the same rows (its source notes it as a TODO, FLINK-40841); with a non-equi
condition the update can change the matches, and Flink then leaves an outer row
without its padded row, or padded while matched. changeflow emits the padding
changes for exactly those rows (at the end of the pair), so the result stays the
batch result; where both records match the same rows the output is Flink's.

Output stamps: each change carries ``_seq`` = the largest source position processed
so far in this batch and ``_sub`` = its position in the batch's output, so sorting
by ``(_seq, _sub)`` gives the emission order, which downstream operators rely on.

State tables (rows start with the join key columns ``_jk0, _jk1, ...``): ``left`` and
``right``, one row per distinct row value: the side's columns, ``_count`` (copies)
and ``_assoc`` (associations; 0 on an inner side), and with a state TTL ``_ts``.

State TTL (``ttl_ms``: one per side, from ``table.exec.state.ttl`` or the
``STATE_TTL`` hint): as Flink's join state views, whose map entries carry
StateTtlConfig (OnCreateAndWrite, NeverReturnExpired, processing time), each
stored row value of a side expires independently, ``ttl`` after its last write
(``_ts``: adding or retracting a copy, or a change of its association count). An
expired row is never matched again: loading a key drops it (and the store that
follows removes it), and :meth:`StreamingJoin.sweep` removes the expired rows of
every key (the runtime calls it from a timer). As in Flink, expiry emits
nothing, and an outer row's association count is not lowered when the rows it
matched expire on the other side (so it is not padded with nulls again).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import DELETE, INSERT, KIND, SEQ, SUB
from changeflow.kernels.join.bundle import Record, fold_bundle
from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.kernels.join.condition_arrays import compile_array_condition, condition_columns
from changeflow.kernels.join.join_rows import JoinOutput, add_copy, checked_side, python_values, retract_copy, tuples
from changeflow.kernels.join.vector_join import join_batch
from changeflow.kernels.join.join_state import ASSOC, COUNT, LEFT, RIGHT, SIDE, TABLES, TS, SideStates, key_column
from changeflow.kernels.contract import KernelBase, wall_clock
from changeflow.kernels.state import KeyedState
from changeflow.expressions import Expression
from changeflow.kernels.frames import column

JOIN_TYPES = ("INNER", "LEFT", "RIGHT", "FULL")
# Below this many changes in a batch the per-record path is cheaper: the array path's fixed cost
# (a few dozen pandas calls, about 40 ms of CPU on this machine) is what about 1,000 records cost
# per record (benchmarks/join_kernel.py). Both paths emit the same changes.
VECTOR_MIN_ROWS = 1000
__all__ = ["ASSOC", "COUNT", "JOIN_TYPES", "LEFT", "RIGHT", "SIDE", "StreamingJoin", "TABLES", "TS", "key_column"]
class StreamingJoin(SideStates, KernelBase):
    """A regular join of two changelogs with Flink 2.3's exact output.

    ``left_columns`` / ``right_columns`` name each side's columns as the join outputs
    them (right columns already renamed where they clash); ``left_keys`` /
    ``right_keys`` name the equi-join columns pairwise; ``key_dtypes`` is the common
    pandas dtype each key pair is compared in (None: as the input has it).
    ``condition`` is the rest of the ON clause over the output columns. ``dtypes``
    gives the pandas dtype of each output column (None: inferred from the values).
    ``left_unique_key`` / ``right_unique_key`` name a side's unique key, which only
    changes mini-batch folding (as Flink's bundles). Batches of at least
    ``vector_min_rows`` changes are joined with array operations where
    :mod:`.vector_join` can derive the per-record output (``vectorised=False``: never).

    >>> from changeflow.testing.harness import KernelHarness, insert_record, format_changes
    >>> join = StreamingJoin("LEFT", ["id", "name"], ["id0", "region"], ["id"], ["id0"])
    >>> h = KernelHarness(join, ["_side", "id", "name", "id0", "region"])
    >>> format_changes(h.process([insert_record(0, 1, "a", None, None)]))
    ['+I[1, a, null, null]']
    >>> format_changes(h.process([insert_record(1, None, None, 1, "eu")]))
    ['-D[1, a, null, null]', '+I[1, a, 1, eu]']
    """

    # Row values are compared, stored and emitted as they come; a TIMESTAMP column in datetime64 is converted
    # to Python values only where a record or a condition needs them (the vectorised path takes it as it is).
    datetime_columns = True

    def __init__(self, join_type: str, left_columns: list[str], right_columns: list[str],
                 left_keys: list[str], right_keys: list[str], condition: Expression | None = None, *,
                 key_dtypes: list[Any] | None = None, dtypes: dict[str, Any] | None = None,
                 mini_batch: bool = False, left_unique_key: list[str] | None = None,
                 right_unique_key: list[str] | None = None, ttl_ms: tuple[int, int] | int = 0,
                 clock: Callable[[], int] | None = None, vectorised: bool = True,
                 vector_min_rows: int = VECTOR_MIN_ROWS) -> None:
        join_type = join_type.upper()
        if join_type not in JOIN_TYPES:
            raise ValueError(f"unknown join type {join_type!r}; expected one of {', '.join(JOIN_TYPES)}")
        if len(left_keys) != len(right_keys):
            raise ValueError(f"join keys must pair up: left {list(left_keys)}, right {list(right_keys)}")
        self.join_type = join_type
        self.columns = (list(left_columns), list(right_columns))
        self.keys = (list(left_keys), list(right_keys))
        for side, name in ((LEFT, "left"), (RIGHT, "right")):
            missing = [k for k in self.keys[side] if k not in self.columns[side]]
            if missing:
                raise ValueError(f"{name} join keys {missing} are not {name} columns {self.columns[side]}")
        clash = set(self.columns[LEFT]) & set(self.columns[RIGHT])
        if clash:
            raise ValueError(f"join output columns must be distinct; both sides have {sorted(clash)}")
        reserved = {SIDE, COUNT, ASSOC, TS, KIND, SEQ, SUB} | {key_column(i) for i in range(len(left_keys))}
        bad = sorted(reserved & (set(left_columns) | set(right_columns)))
        if bad:
            raise ValueError(f"column names {bad} are reserved for the join's bookkeeping and state")
        self.key_dtypes = list(key_dtypes) if key_dtypes is not None else None
        self.dtypes = dict(dtypes or {})
        self.mini_batch = mini_batch
        # Join whole batches with array operations where the output can be derived (see .vector_join);
        # False keeps every batch on the per-record path (tests compare the two).
        self.vectorised = vectorised
        self.vector_min_rows = vector_min_rows
        self.outer = (join_type in ("LEFT", "FULL"), join_type in ("RIGHT", "FULL"))
        self.unique_key = tuple(
            None if uk is None else [self.columns[side].index(c) for c in uk]
            for side, uk in ((LEFT, left_unique_key), (RIGHT, right_unique_key))
        )
        self._matches = (compile_pair_condition(condition, self.columns[LEFT], self.columns[RIGHT])
                         if condition is not None else None)
        self.condition = condition
        self.array_condition = (compile_array_condition(condition, self.columns[LEFT], self.columns[RIGHT])
                                if condition is not None else None)
        self.condition_columns = condition_columns(condition) if condition is not None else set()
        self.key_columns = [key_column(i) for i in range(len(left_keys))]
        ttl = (ttl_ms, ttl_ms) if isinstance(ttl_ms, int) else tuple(ttl_ms)
        if len(ttl) != 2 or any(t < 0 for t in ttl):
            raise ValueError(f"join state TTL must be one or two (left, right) non-negative ms values, got {ttl_ms!r}")
        self.ttl_ms = (int(ttl[LEFT]), int(ttl[RIGHT]))
        self.clock = clock or wall_clock
        # A sweep reads the bucket's every page: at most once per (shortest) TTL; None without TTL.
        ttls = [t for t in self.ttl_ms if t > 0]
        self.sweep_interval_ms: int | None = min(ttls) if ttls else None
        self._now = 0

    @property
    def output_columns(self) -> list[str]:
        return self.columns[LEFT] + self.columns[RIGHT] + [KIND, SEQ, SUB]

    # --- entry points ------------------------------------------------------------------
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Join one batch holding both inputs, told apart by a ``_side`` column (0 left, 1 right).

        Each row carries its side's columns; the other side's columns are ignored.
        """
        if SIDE not in batch.columns:
            raise ValueError(f"join input lacks the {SIDE!r} column (0 left, 1 right); it has {list(batch.columns)}")
        sides = batch[SIDE].to_numpy()
        unknown = ~np.isin(sides, (LEFT, RIGHT))
        if unknown.any():
            raise ValueError(f"join input row has {SIDE}={sides[unknown][0].item()!r}; expected 0 (left) or 1 (right): "
                             f"{batch[unknown].iloc[0].to_dict()}")
        parts = []
        for side in (LEFT, RIGHT):
            rows = batch[sides == side]
            parts.append(rows[[c for c in self.columns[side] + [KIND, SEQ, SUB] if c in rows.columns]])
        return self.process_sides(parts[LEFT], parts[RIGHT], state)

    def process_frames(self, frames: list[pd.DataFrame], state: KeyedState) -> pd.DataFrame:
        """Join a batch that arrived as frames of one input each (its ``_side`` column says which)."""
        sides: tuple[list[pd.DataFrame], list[pd.DataFrame]] = ([], [])
        for frame in frames:
            if len(frame):
                if SIDE not in frame.columns:
                    raise ValueError(f"join input lacks the {SIDE!r} column (0 left, 1 right); "
                                     f"it has {list(frame.columns)}")
                sides[int(frame[SIDE].iloc[0])].append(frame)
        left, right = (None if not parts else parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
                       for parts in sides)
        return self.process_sides(left, right, state)

    def process_sides(self, left: pd.DataFrame | None, right: pd.DataFrame | None, state: KeyedState) -> pd.DataFrame:
        """Join one batch of each input (either may be None or empty); return the changes emitted."""
        # Row write times only with a TTL (without one the state keeps its old layout and never reads them).
        self._now = int(self.clock()) if any(self.ttl_ms) else 0
        rows = (0 if left is None else len(left)) + (0 if right is None else len(right))
        if self.vectorised and not self.mini_batch and rows >= self.vector_min_rows:
            joined = join_batch(self, left, right, state)
            if joined is not None:
                return joined
        records = (self._records(LEFT, left), self._records(RIGHT, right))
        keys = list(dict.fromkeys(r.key for side in records for r in side if not r.null_key))
        key_frame = self._key_frame(keys)
        stores = (self._load(state, LEFT, key_frame), self._load(state, RIGHT, key_frame))
        out = JoinOutput()
        pending: Counter = Counter()
        for record, side, suppress in self._schedule(records):
            self._element(side, record, suppress, stores, out, pending)
            if suppress and not record.retracts:
                # The end of a suppressed pair: other rows whose last match the
                # retraction took and the accumulation did not give back.
                for other_row, n in pending.items():
                    for _ in range(n):
                        out.padded(INSERT, 1 - side, other_row)
                pending.clear()
        for side in (LEFT, RIGHT):
            if keys:
                state.store(TABLES[side], key_frame, self._state_rows(side, stores[side], keys))
        return out.frame(self)

    # --- order -------------------------------------------------------------------------
    def _schedule(self, records: tuple[list[Record], list[Record]]) -> Iterable[tuple[Record, int, bool]]:
        if not self.mini_batch:
            # Each side is already in (_seq, _sub) order; merge the two by (_seq, side).
            both = records[LEFT] + records[RIGHT]
            sides = np.repeat(np.array([LEFT, RIGHT], dtype=np.int64), [len(records[LEFT]), len(records[RIGHT])])
            seqs = np.fromiter((r.seq for r in both), dtype=np.int64, count=len(both))
            order = np.lexsort((np.arange(len(both)), sides, seqs))
            return [(both[i], int(sides[i]), False) for i in order.tolist()]
        first = LEFT if self.join_type == "RIGHT" else RIGHT
        out = []
        for side in (first, 1 - first):
            out.extend((f.record, side, f.suppress) for f in fold_bundle(records[side], self.unique_key[side]))
        return out

    # --- Flink's processElement ---------------------------------------------------------
    def _element(self, side: int, record: Record, suppress: bool, stores: tuple[dict, dict], out: "JoinOutput",
                 pending: Counter) -> None:
        other = 1 - side
        input_outer, other_outer = self.outer[side], self.outer[other]
        out.advance(record.seq)
        row = record.row
        null_key = record.null_key
        mine = None if null_key else stores[side].setdefault(record.key, {})
        theirs = {} if null_key else stores[other].get(record.key, {})
        matches = [(other_row, entry[1], entry[0]) for other_row, entry in theirs.items()
                   if self._match(side, row, other_row)]
        if not record.retracts:
            if not matches:
                if input_outer:
                    out.padded(INSERT, side, row)
                if mine is not None:
                    add_copy(mine, row, 0, self._now)
                return
            n = 0
            for other_row, assoc, copies in matches:
                for _ in range(copies):
                    if other_outer:
                        if assoc == 0:
                            if not suppress:
                                out.padded(DELETE, other, other_row)
                            elif pending[other_row]:
                                pending[other_row] -= 1  # padding withheld by the retraction: stays away
                            else:
                                out.padded(DELETE, other, other_row)  # a new match (Flink 2.3 omits it)
                        theirs[other_row][1] = assoc + 1
                        theirs[other_row][2] = self._now  # a write: its TTL starts again
                    kind = record.kind if not (input_outer or other_outer) else INSERT
                    out.pair(kind, side, row, other_row)
                    n += 1
            assert mine is not None  # a null key matches nothing: it returned above
            add_copy(mine, row, n if input_outer else 0, self._now)
        else:
            if mine is not None:
                retract_copy(mine, row, self._now)
            if not matches:
                if input_outer:
                    out.padded(DELETE, side, row)
                return
            kind = DELETE if input_outer else record.kind
            for other_row, assoc, copies in matches:
                for _ in range(copies):
                    out.pair(kind, side, row, other_row)
                    if other_outer:
                        if assoc == 1:
                            if suppress:
                                pending[other_row] += 1  # decided at the end of the pair
                            else:
                                out.padded(INSERT, other, other_row)
                        theirs[other_row][1] = assoc - 1
                        theirs[other_row][2] = self._now

    def _match(self, side: int, row: tuple, other_row: tuple) -> bool:
        if self._matches is None:
            return True
        return self._matches(row, other_row) if side == LEFT else self._matches(other_row, row)

    # --- input conversion (state: .join_state) -----------------------------------------------------
    def _records(self, side: int, frame: pd.DataFrame | None) -> list[Record]:
        if frame is None or not len(frame):
            return []
        frame, kinds = checked_side(frame, self.columns[side], TABLES[side])
        rows = tuples(frame, self.columns[side])
        key_values = []
        nulls = np.zeros(len(frame), dtype=bool)  # whether a record has a null key (it matches nothing)
        for i, k in enumerate(self.keys[side]):
            values = column(frame, k)
            nulls |= values.isna().to_numpy()
            if self.key_dtypes is not None and str(values.dtype) != str(self.key_dtypes[i]):
                values = values.astype(self.key_dtypes[i])
            key_values.append(python_values(values))
        keys = list(zip(*key_values, strict=True)) if key_values else [()] * len(frame)
        seqs = frame[SEQ].to_numpy(dtype=np.int64).tolist()
        return [Record(k, key, row, s, n)
                for k, key, row, s, n in zip(kinds.tolist(), keys, rows, seqs, nulls.tolist(), strict=True)]
