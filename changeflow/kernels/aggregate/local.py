"""The local phase of two-phase aggregation: Flink's LocalGroupAggregate.

With mini-batch on, Flink splits a group aggregation over insert-only input
into a *local* phase before the shuffle and a *global* phase after it
(``table.optimizer.agg-phase-strategy``): the shuffle then carries one partial
accumulator per key and upstream partition instead of every input row. On
Spark the shuffle is most of the cost of an aggregation (every row is
serialised, sorted by bucket and converted to Arrow for the Python worker), so
this is the same trade.

:class:`LocalGroupAggregate` folds one partition's rows of a bundle into
*partial rows*, one per key: the key columns, the hidden record count
``_count`` and each call's accumulator fields, named as in the kernel's ``acc``
state table (``<output>.<field>``). A partial row is exactly the state row the
one-phase kernel would store for that key if those rows were its whole
history, so the global phase (``GroupAggregate(partial_input=True)``) merges
it with the same accumulators, and its output is the one-phase mini-batch
output: same values, kinds and stamps.

Stamps: a partial row carries the ``(_seq, _sub)`` of its key's last row in the
partition. The largest stamp over a key's partials is the key's last row in
the whole bundle, which is where a mini-batch aggregate stamps its changes from.

Which calls can be split is the accumulators' business (``Accumulator.mergeable``):
COUNT(*), COUNT, integral SUM/SUM0/AVG and MIN/MAX over insert-only input,
never DISTINCT. Float sums stay one-phase: Flink adds them one row at a time
in source order and partial sums would change the last bits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.common.types import DataType, DataTypes
from changeflow.kernels.aggregate.base import COUNT_COLUMN, StateView
from changeflow.kernels.aggregate.emit import last_stamps
from changeflow.kernels.aggregate.fold import plan_fold
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.group_agg import accumulator_for
from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.user import UserAggCall, argument_rows
from changeflow.kernels.aggregate.values import Values, from_series, numpy_dtype, to_array
from changeflow.kernels.changelog import BOOKKEEPING, INSERT, KIND, SEQ, SUB
from changeflow.kernels.frames import column


def mergeable(call: AggCall) -> bool:
    """Whether ``call`` over insert-only input can be split into local and global phases.

    >>> from changeflow.common.types import DataTypes
    >>> mergeable(AggCall("sum", "v", DataTypes.INT(), "s")), mergeable(AggCall("sum", "v", DataTypes.DOUBLE(), "s"))
    (True, False)
    >>> mergeable(AggCall("max", "v", DataTypes.STRING(), "m")), mergeable(
    ...     AggCall("count", "v", DataTypes.INT(), "c", distinct=True))
    (True, False)
    """
    if call.distinct:
        return False
    try:
        return accumulator_for(call, input_insert_only=True).mergeable
    except NotImplementedError:  # not supported at all (e.g. SUM over DECIMAL): one phase fails loudly
        return False


def partial_fields(call: AggCall) -> dict[str, DataType]:
    """The accumulator fields a partial row carries for ``call``, with their types.

    >>> from changeflow.common.types import DataTypes
    >>> {f: str(t) for f, t in partial_fields(AggCall("avg", "v", DataTypes.INT(), "a")).items()}
    {'sum': 'BIGINT NOT NULL', 'non_null': 'BIGINT NOT NULL'}
    """
    return accumulator_for(call, input_insert_only=True).field_types()


class LocalGroupAggregate:
    """Pre-aggregates one partition's rows of a bundle into one partial row per key.

    Stateless: every call starts from nothing. ``keys`` and ``calls`` are those
    of the aggregation; every call must be :func:`mergeable`.

    >>> from changeflow.common.types import DataTypes
    >>> local = LocalGroupAggregate(["k"], [AggCall("sum", "v", DataTypes.BIGINT(), "total")])
    >>> batch = pd.DataFrame({"k": ["a", "b", "a"], "v": pd.array([1, None, 2], dtype="Int64"),
    ...                       "_kind": pd.array([0, 0, 0], dtype="int8"),
    ...                       "_seq": [7, 8, 9], "_sub": [0, 0, 0]})
    >>> print(local.process(batch).to_string(index=False))
    k  _count  total.sum  total.non_null  _kind  _seq  _sub
    b       1          0               0      0     8     0
    a       2          3               2      0     9     0
    """

    def __init__(self, keys: list[str], calls: list[AggCall]) -> None:
        self.keys = list(keys)
        self.calls = list(calls)
        unmergeable = [c.output for c in self.calls if not mergeable(c)]
        if unmergeable:
            raise ValueError(f"aggregate calls {unmergeable} cannot be split into local and global phases")
        self._accumulators = [accumulator_for(c, input_insert_only=True) for c in self.calls]

    @property
    def partial_schema(self) -> list[tuple[str, DataType]]:
        """Name and type of every partial column after the keys (bookkeeping excluded)."""
        out = [(COUNT_COLUMN, DataTypes.BIGINT(False))]
        for acc in self._accumulators:
            out += [(acc.column(f), t) for f, t in acc.field_types().items()]
        return out

    @property
    def output_columns(self) -> list[str]:
        return self.keys + [n for n, _ in self.partial_schema] + list(BOOKKEEPING)

    def process(self, batch: pd.DataFrame) -> pd.DataFrame:
        """The partial rows of ``batch`` (insert-only rows, in any order), in stamp order."""
        self._check_batch(batch)
        if len(batch) == 0:
            return self._frame(batch[self.keys].iloc[:0].reset_index(drop=True),
                               {n: Values.nulls(0, t) for n, t in self.partial_schema},
                               np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        kinds = batch[KIND].to_numpy(dtype=np.int8)
        if (kinds != INSERT).any():
            bad = int(np.flatnonzero(kinds != INSERT)[0])
            raise ValueError(f"local aggregation needs insert-only input, got {batch.iloc[bad].to_dict()}")
        keys = KeyIndex(batch, self.keys)
        # Every key starts from nothing: the partial is that of this partition's rows only.
        nothing = StateView.empty(keys)
        fold = plan_fold(kinds, batch[SEQ].to_numpy(dtype=np.int64), batch[SUB].to_numpy(dtype=np.int64), keys,
                         nothing.exists, nothing.column(COUNT_COLUMN),
                         mini_batch=True, needs_order=False,
                         needs_grouping=any(a.needs_grouping for a in self._accumulators))  # a Python udaf
        fields = {COUNT_COLUMN: Values(fold.count_after, np.ones(keys.size, dtype=bool))}
        args: dict[tuple, Values] = {}
        for call, acc in zip(self.calls, self._accumulators, strict=True):
            arg = None
            if isinstance(call, UserAggCall):
                arg = argument_rows(batch, call, fold.rows)
            elif call.arg is not None:
                if (call.arg, call.arg_type) not in args:
                    name, arg_type = call.typed_arg
                    values = from_series(column(batch, name), arg_type)
                    args[(call.arg, call.arg_type)] = values if fold.rows is None else values.take(fold.rows)
                arg = args[(call.arg, call.arg_type)]
            folded = acc.fold(fold, arg, fold.sign, nothing)
            for name, type_ in acc.field_types().items():
                fields[acc.column(name)] = _values(folded.acc[acc.column(name)], type_)
        seq, sub, order = last_stamps(fold, np.arange(keys.size))
        key_rows = keys.frame.take(order).reset_index(drop=True)
        return self._frame(key_rows, {n: v.take(order) for n, v in fields.items()}, seq, sub)

    def _frame(self, key_rows: pd.DataFrame, fields: dict[str, Values], seq: np.ndarray,
               sub: np.ndarray) -> pd.DataFrame:
        data = {name: key_rows[name] for name in self.keys}
        for name, type_ in self.partial_schema:
            values = fields[name]
            if type_.nullable:
                data[name] = to_array(values, type_)
            else:
                # NOT NULL fields go out as plain numpy columns: no mask to build or ship.
                data[name] = values.data.astype(numpy_dtype(type_), copy=False)
        data[KIND] = np.full(len(seq), INSERT, dtype=np.int8)
        data[SEQ] = np.asarray(seq, dtype=np.int64)
        data[SUB] = np.asarray(sub, dtype=np.int64)
        # copy=False: no consolidation of same-dtype columns into one block (a full copy).
        return pd.DataFrame(data, copy=False)

    def _check_batch(self, batch: pd.DataFrame) -> None:
        needed = self.keys + sorted({a for c in self.calls for a in c.arg_columns}) + list(BOOKKEEPING)
        missing = [c for c in needed if c not in batch.columns]
        if missing:
            raise ValueError(f"local aggregation input lacks columns {missing}; it has {list(batch.columns)}")


def _values(column, type_: DataType) -> Values:
    """An accumulator's stored column (numpy array or pandas array) as Values."""
    if isinstance(column, np.ndarray) and column.dtype != object:
        return Values(column, np.ones(len(column), dtype=bool))
    return from_series(pd.Series(column, copy=False), type_)

