"""Python aggregate functions (``udaf``) as one more accumulator of the group aggregate.

A :class:`UserAggCall` is an :class:`~changeflow.kernels.aggregate.functions.AggCall`
of a user's :class:`~changeflow.functions.AggregateFunction`: any number of argument
columns, the declared result type. :class:`UserAccumulator` folds it key by key: each
key's accumulator is the user's Python object, kept in the kernel's shared ``acc``
state table as one pickled ``BYTES`` field (``<output>.acc``). Rows that accumulate
(``+I``/``+U``) call ``accumulate``, rows that retract (``-U``/``-D``) ``retract``;
which rows apply, and when a key's state starts afresh, is the group aggregate's
record-counter logic (:mod:`.fold`), the same as for the built-in functions.

Two-phase aggregation: the local phase folds a bundle's rows per key from
``create_accumulator()`` and ships the pickled accumulator as the partial field; the
global phase unpickles the partials of a key and calls ``merge(acc, partials)``.
Only a function that implements ``merge`` is split (:attr:`UserAccumulator.mergeable`).

A pandas aggregate (``func_type="pandas"``) is the :mod:`changeflow.table.udf` wrapper
whose accumulator is the list of the group's argument tuples and whose ``get_value``
calls the function with one ``pandas.Series`` per argument. Flink allows it only where a group's rows
are complete (batch), which the planner checks (:func:`check_call`).

Accumulators are pickled with the standard :mod:`pickle` (kernels import no Spark):
lists, tuples, dicts, :class:`~changeflow.common.Row` and instances of importable
classes work; an instance of a class defined in ``__main__`` cannot be read back in
another process and fails, naming the function.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from changeflow.common.row import Row, RowKind
from changeflow.common.types import DataType
from changeflow.functions import ImperativeAggregateFunction, UserFunction
from changeflow.kernels.aggregate.base import Accumulator, Folded, StateView
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.values import Values, from_series, to_array
from changeflow.kernels.frames import column

USER_FUNCTION = "python_udaf"
ACC_FIELD = "acc"


@dataclass(frozen=True)
class UserAggCall(AggCall):
    """A call of a Python aggregate function: ``user(args...)`` into column ``output``.

    ``arg``/``arg_type`` of the base stay None (the call has ``args``/``arg_types``).
    """

    user: UserFunction | None = None
    args: tuple[str, ...] = ()
    arg_types: tuple[DataType, ...] = ()
    expand: tuple[str, ...] = ()  # output columns of the ROW result's fields, in order (Table.aggregate)
    row_fields: tuple[str, ...] = ()  # the function takes the whole row: one Row argument with these names

    def __post_init__(self) -> None:
        if self.user is None or self.user.kind not in ("aggregate", "table_aggregate"):
            raise ValueError(f"{self.output}: a UserAggCall needs an aggregate user function, got {self.user!r}")
        if len(self.args) != len(self.arg_types):
            raise ValueError(f"{self.user.name}: {len(self.args)} argument columns but {len(self.arg_types)} types")
        if self.user.result_type is None:
            raise ValueError(f"{self.user.name}: the aggregate function has no result type")
        if self.expand and (self.user.result_type.root != "ROW" or len(self.expand) != len(self.fields)):
            raise ValueError(f"{self.user.name}: {len(self.expand)} output columns for result {self.user.result_type}")

    @property
    def fields(self) -> tuple[tuple[str, DataType], ...]:
        """The (name, type) fields of a ROW result."""
        return tuple(self.function_def.result_type.params)  # type: ignore[union-attr]

    @property
    def function_def(self) -> UserFunction:
        assert self.user is not None  # checked in __post_init__
        return self.user

    @property
    def result_type(self) -> DataType:
        result = self.function_def.result_type
        assert result is not None  # checked in __post_init__
        return result

    @property
    def arg_columns(self) -> tuple[str, ...]:
        return self.args

    def __str__(self) -> str:
        return f"{self.function_def.name}({', '.join(self.args)})"


def is_user_call(call: AggCall) -> bool:
    return isinstance(call, UserAggCall)


def implements(instance: Any, method: str) -> bool:
    """Whether the user's class overrides ``method`` of the aggregate base class."""
    base = getattr(ImperativeAggregateFunction, method)
    return getattr(type(instance), method, base) is not base


def check_call(call: UserAggCall, *, streaming: bool, input_insert_only: bool) -> None:
    """Refuse a call where Flink refuses it (the planner calls this at plan time).

    Over retracting input, PyFlink fails at run time with "Method retract is not
    implemented"; changeflow refuses the plan with that message. A pandas
    aggregate in a streaming group aggregation is refused as Flink's planner does.
    """
    user = call.function_def
    if user.func_type == "pandas":
        if streaming:
            raise NotImplementedError(
                f"Pandas UDAFs are not supported in streaming mode currently: {user.name} in a streaming group "
                f"aggregation (as in Flink, pandas aggregate functions run in batch group aggregations)")
        return
    if not input_insert_only and not implements(user.instance, "retract"):
        raise ValueError(f"{user.name}: Method retract is not implemented, but the aggregate's input is an "
                         f"updating changelog; implement retract(accumulator, *args) in "
                         f"{type(user.instance).__name__}")


class _Runner:
    """Calls of the user's function, with errors that name it."""

    def __init__(self, user: UserFunction) -> None:
        self.user = user
        self.instance: Any = user.instance

    def fail(self, what: str, error: Exception, row: Any = None) -> RuntimeError:
        at = "" if row is None else f" on input {row!r}"
        return RuntimeError(f"aggregate function {self.user.name}: {what} failed{at}: "
                            f"{type(error).__name__}: {error}")

    def create(self) -> Any:
        try:
            return self.instance.create_accumulator()
        except Exception as e:
            raise self.fail("create_accumulator", e) from e

    def apply(self, acc: Any, row: tuple, sign: int) -> None:
        try:
            if sign > 0:
                self.instance.accumulate(acc, *row)
            else:
                self.instance.retract(acc, *row)
        except Exception as e:
            raise self.fail("accumulate" if sign > 0 else "retract", e, row) from e

    def merge(self, acc: Any, others: list[Any]) -> None:
        try:
            self.instance.merge(acc, others)
        except Exception as e:
            raise self.fail("merge", e) from e

    def value(self, acc: Any) -> Any:
        try:
            return self.instance.get_value(acc)  # type: ignore[attr-defined]
        except Exception as e:
            raise self.fail("get_value", e) from e

    def dumps(self, acc: Any) -> bytes:
        try:
            return pickle.dumps(acc, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:
            raise RuntimeError(
                f"aggregate function {self.user.name}: its accumulator {type(acc).__name__} cannot be pickled "
                f"for state ({e}); use lists, tuples, dicts, Row or a class defined in an importable module"
            ) from e

    @staticmethod
    def loads(blob: bytes) -> Any:
        return pickle.loads(blob)


def argument_rows(batch: pd.DataFrame, call: UserAggCall, rows: np.ndarray | None) -> Values:
    """The call's arguments as one tuple of Python values per row (None for null), in fold order."""
    columns = []
    for name, type_ in zip(call.args, call.arg_types, strict=True):
        values = from_series(column(batch, name), type_)
        if rows is not None:
            values = values.take(rows)
        items: list[Any] = values.data.tolist()
        if type_.root == "FLOAT" and call.function_def.func_type == "pandas":
            # PyFlink hands a pandas function a FLOAT column as a float32 Series: its sums and means round so.
            items = [np.float32(v) for v in items]
        for i in np.flatnonzero(~values.valid).tolist():
            items[i] = None
        columns.append(items)
    n = len(batch) if rows is None else len(rows)
    data = np.empty(n, dtype=object)
    tuples = list(zip(*columns, strict=True)) if columns else [()] * n
    if call.row_fields:  # aggregate(f) / flat_aggregate(f) with the function itself: a Row of the columns
        tuples = [(Row.of(RowKind.INSERT, values, call.row_fields),) for values in tuples]
    data[:] = tuples
    return Values(data, np.ones(n, dtype=bool))


def output_arrays(call: AggCall, values: Values | None) -> dict[str, Any]:
    """The output column(s) of ``call``: one, or one per field of an expanded ROW result.

    With ``values`` None, the names only (values None).
    """
    if not (isinstance(call, UserAggCall) and call.expand):
        return {call.output: None if values is None else to_array(values, call.result_type)}
    out: dict[str, Any] = {}
    for i, (name, (_, type_)) in enumerate(zip(call.expand, call.fields, strict=True)):
        if values is None:
            out[name] = None
            continue
        items = [None if not ok or row is None else _field(row, i) for row, ok in
                 zip(values.data.tolist(), values.valid.tolist(), strict=True)]
        out[name] = to_array(result_values(items, type_), type_)
    return out


def _field(row: Any, i: int) -> Any:
    """Field ``i`` of a ROW result (a Row, tuple or list; PyFlink accepts each)."""
    return row[i]


def result_values(items: list[Any], type_: DataType) -> Values:
    """Python results as the Values the kernel computes with (numeric types as numpy arrays)."""
    out = Values.nulls(len(items), type_)
    valid = np.fromiter((v is not None for v in items), dtype=bool, count=len(items))
    out.valid[:] = valid
    picked = [v for v in items if v is not None]
    if out.data.dtype == object:
        data = np.empty(len(picked), dtype=object)
        data[:] = picked
        out.data[valid] = data
    elif picked:
        out.data[valid] = np.array(picked, dtype=out.data.dtype)
    return out


class UserAccumulator(Accumulator):
    """Folds a :class:`UserAggCall`, key by key and row by row (the user's code is Python)."""

    needs_order = True
    needs_grouping = True
    acc_fields = (ACC_FIELD,)

    def __init__(self, call: AggCall) -> None:
        assert isinstance(call, UserAggCall)
        super().__init__(call)
        self.user_call = call
        self.runner = _Runner(call.function_def)
        user = call.function_def
        self.mergeable = user.kind == "aggregate" and user.func_type == "general" and \
            implements(user.instance, "merge")

    def field_types(self) -> dict[str, DataType]:
        return {ACC_FIELD: DataType("BYTES", False)}

    def _loaded(self, state: StateView) -> tuple[list[Any], np.ndarray]:
        stored = state.values(self.column(ACC_FIELD), DataType("BYTES"))
        return stored.data.tolist(), stored.valid

    def fold(self, fold: Fold, arg: Values | None, sign: np.ndarray, state: StateView) -> Folded:
        assert arg is not None  # the kernel reads the arguments of a user call (argument_rows)
        runner = self.runner
        blobs, stored = self._loaded(state)
        before = [runner.value(runner.loads(blobs[k])) if stored[k] else None for k in range(fold.keys.size)]
        record = not fold.mini_batch
        running: list[Any] = [None] * fold.size if record else []
        finals: dict[int, Any] = {}
        g = fold.grouping()
        life = g.lifetimes
        rows, signs = arg.data, sign.tolist()
        for seg in range(life.count):
            key = int(g.life_key[seg])
            acc = runner.loads(blobs[key]) if g.life_from_state[seg] and stored[key] else runner.create()
            start, stop = int(life.starts[seg]), int(life.starts[seg] + life.lengths[seg])
            for i in range(start, stop):
                if signs[i]:
                    runner.apply(acc, rows[i], signs[i])
                if record:
                    running[i] = runner.value(acc)
            finals[key] = acc  # later lifetimes of the key replace earlier ones
        return self._folded(fold, before, finals, running if record else None)

    def merge(self, fold: Fold, partials: dict[str, Values], state: StateView) -> Folded:
        runner = self.runner
        blobs, stored = self._loaded(state)
        before = [runner.value(runner.loads(blobs[k])) if stored[k] else None for k in range(fold.keys.size)]
        parts = partials[ACC_FIELD].data
        finals: dict[int, Any] = {}
        g = fold.grouping()
        life = g.lifetimes
        signs = fold.sign.tolist()
        for seg in range(life.count):
            key = int(g.life_key[seg])
            acc = runner.loads(blobs[key]) if g.life_from_state[seg] and stored[key] else runner.create()
            start, stop = int(life.starts[seg]), int(life.starts[seg] + life.lengths[seg])
            others = [runner.loads(parts[i]) for i in range(start, stop) if signs[i]]
            if others:
                runner.merge(acc, others)
            finals[key] = acc
        return self._folded(fold, before, finals, None)

    def _folded(self, fold: Fold, before: list[Any], finals: dict[int, Any], running: list[Any] | None) -> Folded:
        runner = self.runner
        n = fold.keys.size
        after = [runner.value(finals[k]) if k in finals else None for k in range(n)]
        blobs = np.empty(n, dtype=object)
        for k, acc in finals.items():
            blobs[k] = runner.dumps(acc)
        type_ = self.result_type
        return Folded(before=result_values(before, type_), after=result_values(after, type_),
                      running=None if running is None else result_values(running, type_),
                      acc={self.column(ACC_FIELD): blobs})
