"""Runs a Python table function (or a ROW-valued scalar function) over a changelog batch.

The correlate of a lateral join, ``flat_map`` and ``map``
(:mod:`changeflow.plan.correlate`): for each input row, ``eval`` is called with
the row's argument values and every row it yields is joined to the input row.
It keeps no state: each output row keeps the kind of the input change it comes
from (``_kind``), as Flink's correlate does over an updating input, and gets a
``_sub`` stamp below its input row's, so the order of the rows a function emits
is kept through later shuffles (:mod:`changeflow.kernels.changelog`).

A frame without ``_sub`` (a batch job's rows and ``_seq``) passes ``_seq`` through.

>>> import pandas as pd
>>> from changeflow.common.types import DataTypes
>>> from changeflow.functions import TableFunction, UserFunction
>>> class Split(TableFunction):
...     def eval(self, s):
...         yield from s.split()
>>> f = UserFunction("split", "table", Split(), DataTypes.ROW([DataTypes.FIELD("f0", DataTypes.STRING())]))
>>> runner = TableFunctionRunner(f, ["_arg0"], [DataTypes.STRING()], ["word"], outer=True)
>>> batch = pd.DataFrame({"line": ["a b", ""], "_arg0": ["a b", ""], "_kind": [0, 3], "_seq": [0, 1], "_sub": [0, 0]})
>>> runner.open()
>>> runner.process(batch).to_dict("list")
{'line': ['a b', 'a b', ''], '_kind': [0, 0, 3], '_seq': [0, 0, 1], '_sub': [0, 1, 0], 'word': ['a', 'b', None]}
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataType
from changeflow.functions import FunctionContext, UserFunction
from changeflow.kernels.changelog import BOOKKEEPING, SUB
from changeflow.kernels.frames import column
from changeflow.kernels.keyed.records import UserFunctionError

# The ``_sub`` of the i-th row a function emits for an input row stamped ``sub`` is
# ``sub * ROWS_PER_INPUT + i`` (the changelog's FANOUT of 4 is too few: a function
# may emit any number of rows). More rows for one input row are refused by name.
ROWS_PER_INPUT = 1 << 20


def python_values(series: pd.Series, data_type: DataType) -> list[Any]:
    """The column's values as the Python objects a PyFlink function gets (None for NULL).

    An integral column with NULLs arrives from Arrow as float64; it is given back as ints.

    >>> python_values(pd.Series([1.0, float("nan")]), DataType("BIGINT")), python_values(pd.Series(["x", None]),
    ...     DataType("STRING"))
    ([1, None], ['x', None])
    """
    if data_type.is_integral:
        values = series.astype("Int64").astype(object)
    elif data_type.root == "ARRAY":
        values = series.map(lambda v: None if v is None else list(v))
    else:
        values = series.astype(object)
    return [None if _missing(v) else v for v in values.tolist()]


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and value != value


class TableFunctionRunner:
    """Calls ``function`` per input row; joins its rows to the row (pure pandas, no Spark).

    ``arg_columns`` are the batch's columns holding the call's arguments (typed
    ``arg_types``); with ``row_names`` the function takes the whole row, as one
    ``Row`` whose fields are ``row_names`` (PyFlink's ``flat_map(f)``). ``names``
    are the output names of the function's columns. ``outer`` keeps an input row
    the function emits nothing for, with NULLs (a LEFT lateral join).
    ``keep_input`` False outputs the function's columns and the bookkeeping only.
    """

    def __init__(self, function: UserFunction, arg_columns: list[str], arg_types: list[DataType], names: list[str],
                 outer: bool = False, keep_input: bool = True, row_names: list[str] | None = None) -> None:
        self.function = function
        self.arg_columns = list(arg_columns)
        self.arg_types = list(arg_types)
        self.names = list(names)
        self.outer = outer
        self.keep_input = keep_input
        self.row_names = row_names
        self.scalar = function.kind == "scalar"
        self.opened = False

    # --- lifecycle: open() once before the first row, close() after the last --------------------
    def open(self, context: FunctionContext | None = None) -> None:
        try:
            self.function.instance.open(context or FunctionContext())
        except Exception as e:
            raise UserFunctionError(f"user function {self.function.name} failed in open(): "
                                    f"{type(e).__name__}: {e}") from e
        self.opened = True

    def close(self) -> None:
        if not self.opened:
            return
        self.opened = False
        try:
            self.function.instance.close()
        except Exception as e:
            raise UserFunctionError(f"user function {self.function.name} failed in close(): "
                                    f"{type(e).__name__}: {e}") from e

    # --- one batch ---------------------------------------------------------------------------------
    def process(self, batch: pd.DataFrame) -> pd.DataFrame:
        """The joined rows: the input's columns (but the argument columns), then the function's."""
        columns = [python_values(column(batch, c), t) for c, t in zip(self.arg_columns, self.arg_types, strict=True)]
        parents: list[int] = []
        index_in_parent: list[int] = []
        values: list[list[Any]] = [[] for _ in self.names]
        for i in range(len(batch)):
            args = [c[i] for c in columns]
            if self.row_names is not None:
                args = [Row.of(RowKind.INSERT, args, self.row_names)]
            rows = self._rows(args)
            if not rows and self.outer:
                rows = [(None,) * len(self.names)]
            for j, row in enumerate(rows):
                parents.append(i)
                index_in_parent.append(j)
                for target, value in zip(values, row, strict=True):
                    target.append(value)
        kept = [c for c in batch.columns if c not in self.arg_columns]
        if not self.keep_input:
            kept = [c for c in kept if c in BOOKKEEPING]
        out = batch[kept].iloc[np.asarray(parents, dtype=np.int64)].reset_index(drop=True)
        if SUB in out.columns:
            index = np.asarray(index_in_parent, dtype=np.int64)
            if len(index) and index.max() >= ROWS_PER_INPUT:
                raise UserFunctionError(f"user function {self.function.name} emitted more than {ROWS_PER_INPUT} "
                                        f"rows for one input row, changeflow's limit per row")
            out[SUB] = out[SUB].to_numpy(dtype=np.int64) * ROWS_PER_INPUT + index
        for name, emitted in zip(self.names, values, strict=True):
            out[name] = pd.Series(emitted, dtype=object)
        return out

    def _rows(self, args: list[Any]) -> list[tuple]:
        """The rows ``eval(*args)`` gives, each a tuple of the function's width; errors name the call."""
        try:
            if self.scalar:
                return [self._as_row(self.function.instance.eval(*args))]  # type: ignore[attr-defined]
            result = self.function.instance.eval(*args)  # type: ignore[attr-defined]
            return [] if result is None else [self._as_row(r) for r in _iterate(result)]
        except UserFunctionError:
            raise
        except Exception as e:
            shown = args[0] if self.row_names is not None else tuple(args)
            raise UserFunctionError(f"user function {self.function.name} failed on input {shown!r}: "
                                    f"{type(e).__name__}: {e}") from e

    def _as_row(self, value: Any) -> tuple:
        width = len(self.names)
        if value is None and self.scalar:
            return (None,) * width     # a NULL row: every field NULL
        if width == 1:
            # One column: the value itself, or a Row/tuple of one value (PyFlink takes both).
            if isinstance(value, (Row, tuple)) and len(value) == 1:
                return (value[0],)
            return (value,)
        if not isinstance(value, (tuple, list)) or len(value) != width:
            raise ValueError(f"expected a row of {width} values ({', '.join(self.names)}), got {value!r}")
        return tuple(value)


def _iterate(result: Any) -> Iterable[Any]:
    """What ``eval`` returned, as rows: a generator or any iterable; a lone value is one row."""
    if isinstance(result, (str, bytes, Row)) or not hasattr(result, "__iter__"):
        return [result]
    return result


__all__ = ["ROWS_PER_INPUT", "TableFunctionRunner", "python_values"]
