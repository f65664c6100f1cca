"""The streaming ``GROUP BY`` kernel: Flink's GroupAggFunction and MiniBatchGroupAggFunction.

One :class:`GroupAggregate` folds a changelog batch (any number of keys, rows in
any order) into the changelog of the aggregate, reading and writing all per-key
state through a :class:`~changeflow.kernels.state.KeyedState`: one load and one
store per state table per batch, whatever the number of keys.

How a batch is processed:

1. code the grouping keys (:mod:`.keys`) and load the state of those keys;
2. plan the fold (:mod:`.fold`): sort by ``(_seq, _sub)``, group rows by key,
   apply Flink's record-counter rules to decide which rows touch accumulators;
3. let each aggregate call's accumulator fold its argument column, vectorised
   (:mod:`.additive`, :mod:`.extremum`, :mod:`.variance`) or key by key (:mod:`.retractable`),
   behind a shared DISTINCT filter where asked (:mod:`.distinct`);
4. decide and stamp the emitted changes (:mod:`.emit`), store the new state.

With ``partial_input`` the kernel is the global phase of two-phase
aggregation (Flink's GlobalGroupAggregate): its input rows are partial
accumulators from :class:`~changeflow.kernels.aggregate.local.LocalGroupAggregate`,
and step 3 merges them (``Accumulator.merge``) instead of folding argument
values. Everything else, state and emission included, is the mini-batch path,
so the output is the one-phase mini-batch output exactly.

State tables (every row starts with the key columns):

``acc``                one row per key: ``_count`` (the hidden record count), then
                       ``<output>.<field>`` scalars: ``rows`` / ``non_null`` / ``sum``
                       for the additive functions, ``n`` / ``mean`` / ``m2`` for VAR/
                       STDDEV, ``value`` for MIN/MAX/FIRST_VALUE/LAST_VALUE over
                       insert-only input
``agg.<output>``       retractable MIN/MAX and COLLECT: ``_value, _count`` per entry;
                       FIRST_VALUE/LAST_VALUE/LISTAGG: ``_pos, _value`` per surviving value
``distinct.<arg>``     DISTINCT calls on ``arg`` (shared): ``_value, _count`` per value
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.additive import ADDITIVE_FUNCTIONS, AdditiveAccumulator
from changeflow.kernels.aggregate.base import ACC_TABLE, CODE, COUNT_COLUMN, Accumulator, StateView
from changeflow.kernels.aggregate.distinct import DistinctFilter
from changeflow.kernels.aggregate.emit import Changes, changes_per_key, changes_per_row
from changeflow.kernels.aggregate.extremum import InsertOnlyFirstLast, InsertOnlyMinMax
from changeflow.kernels.aggregate.fold import plan_fold
from changeflow.kernels.aggregate.functions import VARIANCE_FUNCTIONS, AggCall
from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.retractable import PerKeyAccumulator
from changeflow.kernels.aggregate.user import UserAccumulator, UserAggCall, argument_rows, output_arrays
from changeflow.kernels.aggregate.values import Values, from_series
from changeflow.kernels.aggregate.variance import WelfordAccumulator
from changeflow.kernels.changelog import BOOKKEEPING, DELETE, INSERT, KIND, SEQ, SUB, is_retraction
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import KeyedState
from changeflow.kernels.frames import column


class GroupAggregate(KernelBase):
    """A streaming group aggregation over a changelog, with Flink's exact output.

    ``keys`` are the grouping columns, ``calls`` the aggregates (output columns in
    this order). ``mini_batch`` folds each batch as one bundle per key, as
    Flink's MiniBatchGroupAggFunction; otherwise every input row produces its own
    changes, as GroupAggFunction. ``input_insert_only`` promises the input holds
    no retractions, which lets MIN/MAX/FIRST_VALUE/LAST_VALUE keep only their
    current value. ``partial_input`` makes it the global phase of two-phase
    aggregation (see the module docstring); it needs ``mini_batch``,
    ``input_insert_only`` and mergeable calls. ``state_ttl`` says the operator
    runs with a state TTL (:class:`~changeflow.kernels.ttl.KeyStateTtl` keeps
    it): without mini-batch an update that leaves every value unchanged then
    still emits ``-U``/``+U``, as Flink's GroupAggFunction with state retention.

    The instance holds no per-key state, so one instance can serve any number of
    batches and hash buckets; all state lives in the ``state`` passed to
    :meth:`process`.

    >>> from changeflow.common.types import DataTypes
    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> agg = GroupAggregate(["k"], [AggCall("sum", "v", DataTypes.BIGINT(), "total")],
    ...                      mini_batch=False, input_insert_only=False)
    >>> batch = pd.DataFrame({"k": ["a", "a", "b"], "v": pd.array([1, 2, 5], dtype="Int64"),
    ...                       "_kind": pd.array([0, 0, 0], dtype="int8"),
    ...                       "_seq": [0, 1, 2], "_sub": [0, 0, 0]})
    >>> print(agg.process(batch, InMemoryKeyedState()).to_string(index=False))
    k  total  _kind  _seq  _sub
    a      1      0     0     0
    a      1      1     1     0
    a      3      2     1     1
    b      5      0     2     0
    """

    def __init__(self, keys: list[str], calls: list[AggCall], *, mini_batch: bool, input_insert_only: bool,
                 partial_input: bool = False, state_ttl: bool = False) -> None:
        self.keys = list(keys)
        self.state_ttl = state_ttl
        self.calls = list(calls)
        self.mini_batch = mini_batch
        self.input_insert_only = input_insert_only
        self.partial_input = partial_input
        self._accumulators = [accumulator_for(call, input_insert_only) for call in self.calls]
        _check_names(self.keys, self.calls, self._accumulators)
        if partial_input:
            _check_mergeable(self.calls, self._accumulators, mini_batch, input_insert_only)
        self._distinct: dict[str, DistinctFilter] = {}
        for call in self.calls:
            if call.distinct:
                arg, arg_type = call.typed_arg
                known = self._distinct.setdefault(arg, DistinctFilter(arg, arg_type))
                if known.arg_type.with_nullable(True) != arg_type.with_nullable(True):
                    raise ValueError(f"DISTINCT calls on {call.arg!r} disagree on its type")
        self._tables = [ACC_TABLE] + [t for a in self._accumulators for t in a.tables] + [
            d.table for d in self._distinct.values()
        ]
        self._needs_order = any(a.needs_order for a in self._accumulators)
        self._needs_grouping = bool(self._distinct) or any(a.needs_grouping for a in self._accumulators)

    @property
    def state_tables(self) -> list[str]:
        """The state tables, ``acc`` (the primary one: a key without a row there has no state) first."""
        return list(self._tables)

    @property
    def output_columns(self) -> list[str]:
        """Names of the output columns, in order (types: the keys', then each ``call.result_type``)."""
        return self.keys + [n for c in self.calls for n in output_arrays(c, None)] + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Fold one changelog batch into ``state``; return the emitted changelog."""
        self._check_batch(batch)
        if len(batch) == 0:
            return self._empty_output(batch)
        kinds = batch[KIND].to_numpy(dtype=np.int8)
        unknown = (kinds < INSERT) | (kinds > DELETE)
        if unknown.any():
            bad = int(np.flatnonzero(unknown)[0])
            raise ValueError(
                f"group aggregate got a record with unknown _kind {kinds[bad]}: {batch.iloc[bad].to_dict()}"
            )
        if self.input_insert_only and is_retraction(kinds).any():
            bad = int(np.flatnonzero(is_retraction(kinds))[0])
            raise ValueError(
                f"group aggregate declared insert-only input but got retraction record "
                f"{batch.iloc[bad].to_dict()}"
            )
        keys = KeyIndex(batch, self.keys)
        loaded = {table: state.load(table, keys.frame) for table in self._tables}
        view = StateView(keys, loaded.pop(ACC_TABLE), loaded)
        fold = plan_fold(
            kinds,
            batch[SEQ].to_numpy(dtype=np.int64),
            batch[SUB].to_numpy(dtype=np.int64),
            keys,
            view.exists,
            view.column(COUNT_COLUMN),
            mini_batch=self.mini_batch,
            needs_order=self._needs_order,
            needs_grouping=self._needs_grouping,
            records=batch[COUNT_COLUMN].to_numpy(dtype=np.int64) if self.partial_input else None,
        )
        if self.partial_input:
            results = [acc.merge(fold, _partials(batch, fold, acc), view) for acc in self._accumulators]
            changes = changes_per_key(fold, results)
            self._store(state, keys, fold, results, {})
            return self._output(keys, changes)
        args = self._arguments(batch, fold)
        distinct_signs, distinct_rows = {}, {}
        for arg, distinct in self._distinct.items():
            column = args[(arg, distinct.arg_type)]
            distinct_signs[arg], distinct_rows[distinct.table] = distinct.fold(fold, column, view)
        results = []
        for call, acc in zip(self.calls, self._accumulators, strict=True):
            sign = distinct_signs[call.arg] if call.distinct else fold.sign
            arg = argument_rows(batch, call, fold.rows) if isinstance(call, UserAggCall) else \
                args.get((call.arg, call.arg_type))
            results.append(acc.fold(fold, arg, sign, view))
        changes = changes_per_key(fold, results) if self.mini_batch else \
            changes_per_row(fold, results, emit_unchanged=self.state_ttl)
        self._store(state, keys, fold, results, distinct_rows)
        return self._output(keys, changes)

    # --- steps ------------------------------------------------------------------------

    def _arguments(self, batch: pd.DataFrame, fold) -> dict[tuple, Values]:
        """Each argument column in fold order, read once per (column, type)."""
        args = {}
        for call in self.calls:
            if call.arg is not None and (call.arg, call.arg_type) not in args:
                name, arg_type = call.typed_arg
                values = from_series(column(batch, name), arg_type)
                args[(call.arg, call.arg_type)] = values if fold.rows is None else values.take(fold.rows)
        return args

    def _store(self, state: KeyedState, keys: KeyIndex, fold, results, distinct_rows) -> None:
        alive = fold.alive
        acc = {COUNT_COLUMN: fold.count_after[alive]}
        for result in results:
            for name, values in result.acc.items():
                acc[name] = values[alive]
        key_rows = keys.frame[alive].reset_index(drop=True)
        state.store(ACC_TABLE, keys.frame, pd.concat([key_rows, pd.DataFrame(acc)], axis=1))
        tables = dict(distinct_rows)
        for result in results:
            tables.update(result.tables)
        for table, rows in tables.items():
            rows = rows[alive[rows[CODE].to_numpy()]] if len(rows) else rows
            payload = rows.drop(columns=[CODE]).reset_index(drop=True)
            codes = rows[CODE].to_numpy() if len(rows) else np.empty(0, dtype=np.intp)
            key_part = keys.frame.take(codes).reset_index(drop=True)
            state.store(table, keys.frame, pd.concat([key_part, payload], axis=1))

    def _output(self, keys: KeyIndex, changes: Changes) -> pd.DataFrame:
        key_part = keys.frame.take(changes.code).reset_index(drop=True)
        data = {name: key_part[name] for name in self.keys}
        for call, values in zip(self.calls, changes.values, strict=True):
            data.update(output_arrays(call, values))
        data[KIND] = changes.kind.astype(np.int8)
        data[SEQ] = changes.seq.astype(np.int64)
        data[SUB] = changes.sub.astype(np.int64)
        # copy=False: no consolidation of same-dtype columns into one block (a full copy).
        return pd.DataFrame(data, copy=False)

    def _empty_output(self, batch: pd.DataFrame) -> pd.DataFrame:
        data = {name: batch[name].iloc[:0].reset_index(drop=True) for name in self.keys}
        for call in self.calls:
            data.update(output_arrays(call, Values.nulls(0, call.result_type)))
        data[KIND] = np.empty(0, dtype=np.int8)
        data[SEQ] = np.empty(0, dtype=np.int64)
        data[SUB] = np.empty(0, dtype=np.int64)
        # copy=False: no consolidation of same-dtype columns into one block (a full copy).
        return pd.DataFrame(data, copy=False)

    def _check_batch(self, batch: pd.DataFrame) -> None:
        if self.partial_input:
            fields = [COUNT_COLUMN] + [a.column(f) for a in self._accumulators for f in a.acc_fields]
        else:
            fields = sorted({a for c in self.calls for a in c.arg_columns})
        needed = self.keys + fields + list(BOOKKEEPING)
        missing = [c for c in needed if c not in batch.columns]
        if missing:
            raise ValueError(f"group aggregate input lacks columns {missing}; it has {list(batch.columns)}")


def accumulator_for(call: AggCall, input_insert_only: bool) -> Accumulator:
    if isinstance(call, UserAggCall):
        return UserAccumulator(call)
    if call.function in ADDITIVE_FUNCTIONS:
        return AdditiveAccumulator(call)
    if call.function in VARIANCE_FUNCTIONS:
        return WelfordAccumulator(call)
    if call.function in ("min", "max") and input_insert_only:
        return InsertOnlyMinMax(call)
    if call.function in ("first_value", "last_value") and input_insert_only:
        return InsertOnlyFirstLast(call)
    return PerKeyAccumulator(call)


def _partials(batch: pd.DataFrame, fold, acc: Accumulator) -> dict[str, Values]:
    """One accumulator's partial fields, read from the batch in fold order."""
    out = {}
    for name, type_ in acc.field_types().items():
        values = from_series(column(batch, acc.column(name)), type_)
        out[name] = values if fold.rows is None else values.take(fold.rows)
    return out


def _check_mergeable(calls: list[AggCall], accumulators: list[Accumulator], mini_batch: bool,
                     input_insert_only: bool) -> None:
    # Flink plans the local/global split only under these conditions; the
    # kernel states them again rather than merge partials wrongly.
    if not (mini_batch and input_insert_only):
        raise ValueError("partial input (two-phase aggregation) needs mini_batch and insert-only input")
    bad = [c.output for c, a in zip(calls, accumulators, strict=True) if c.distinct or not a.mergeable]
    if bad:
        raise ValueError(f"aggregate calls {bad} cannot merge partial accumulators (two-phase aggregation)")


def _check_names(keys: list[str], calls: list[AggCall], accumulators: list[Accumulator]) -> None:
    outputs = [c.output for c in calls]
    clashes = sorted({o for o in outputs if outputs.count(o) > 1} | (set(outputs) & set(keys)))
    if clashes:
        raise ValueError(f"group aggregate output columns must be distinct, repeated: {clashes}")
    reserved = set(BOOKKEEPING) | {COUNT_COLUMN, CODE}
    bad = sorted((set(keys) | set(outputs)) & reserved)
    if bad:
        raise ValueError(f"column names {bad} are reserved for changelog bookkeeping and state")
    # Key columns share the acc state table with the accumulators' "<output>.<field>" columns.
    state_columns = {a.column(f) for a in accumulators for f in a.acc_fields}
    if set(keys) & state_columns:
        raise ValueError(f"grouping keys {sorted(set(keys) & state_columns)} clash with aggregate state columns")
    for call in calls:
        if call.distinct and call.function == "count_star":
            raise ValueError("COUNT(DISTINCT *) is not an aggregate; use count with an argument")
