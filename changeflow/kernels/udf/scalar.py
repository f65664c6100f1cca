"""A scalar Python function evaluated over Arrow or pandas batches: PyFlink's semantics, no Spark.

:class:`ScalarEvaluator` is what a Spark Python worker runs for one call of a
user function in one task: :meth:`~ScalarEvaluator.open` once with a
:class:`~changeflow.functions.FunctionContext`, then per batch
:meth:`~ScalarEvaluator.eval_arrow` (a general function: its ``eval`` once per
row with Python values taken straight from the Arrow arrays, :mod:`.values`)
or :meth:`~ScalarEvaluator.eval_batch` (a pandas function: once per batch with
one Series per argument; it must return a Series or DataFrame of the batch's
length, as PyFlink requires), :meth:`~ScalarEvaluator.close` at the end.
Results are checked against the declared result type.

Every failure is a :class:`~changeflow.kernels.keyed.records.UserFunctionError`
naming the function and, for a row's failure, the row's argument values; a
failure in ``open()`` says so.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.functions import ScalarFunction, UserFunction
>>> class Inc(ScalarFunction):
...     def eval(self, i):
...         return None if i is None else i + 1
>>> ev = ScalarEvaluator(UserFunction("inc", "scalar", Inc(), DataTypes.BIGINT()), (DataTypes.BIGINT(),))
>>> ev.open(); ev.eval_arrow([pa.array([1, None, 2])], 3, pa.int64()).to_pylist()
[2, None, 3]
>>> ev.eval_arrow([pa.array([2**63 - 1])], 1, pa.int64())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
changeflow.kernels.keyed.records.UserFunctionError: user function inc failed on row (...): ... out of the range ...
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import pyarrow as pa

from changeflow.common.types import DataType
from changeflow.functions import FunctionContext, UserFunction
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.kernels.udf.values import ResultTypeError, arrow_arguments, arrow_result, result_converter


class ScalarEvaluator:
    """One scalar function's evaluation in one task: open, batches, close."""

    def __init__(self, function: UserFunction, arg_types: Sequence[DataType],
                 context: FunctionContext | None = None) -> None:
        if function.kind != "scalar":
            raise ValueError(f"{function.name} is a {function.kind} function, not a scalar function")
        if function.result_type is None:
            raise ValueError(f"scalar function {function.name} has no result type")
        self.function = function
        self.arg_types = tuple(arg_types)
        self.context = context or FunctionContext()
        self.result_type = function.result_type
        self._convert = result_converter(self.result_type)
        self._eval = function.instance.eval  # type: ignore[attr-defined]  # a ScalarFunction (checked above)
        self._opened = False

    @property
    def name(self) -> str:
        return self.function.name

    def open(self) -> None:
        try:
            self.function.instance.open(self.context)
        except Exception as e:
            raise UserFunctionError(f"user function {self.name} failed in open(): {type(e).__name__}: {e}") from e
        self._opened = True

    def close(self) -> None:
        if not self._opened:
            return
        self._opened = False
        try:
            self.function.instance.close()
        except Exception as e:
            raise UserFunctionError(f"user function {self.name} failed in close(): {type(e).__name__}: {e}") from e

    def eval_batch(self, columns: Sequence[pd.Series | pd.DataFrame],
                   length: int | None = None) -> pd.Series | pd.DataFrame:
        """A pandas function's results for one batch: ``columns`` hold the arguments as Series (a ROW as a
        DataFrame), ``length`` the rows when there are none."""
        if self.function.func_type != "pandas":
            raise ValueError(f"{self.name} is a general function: eval_arrow takes its batches")
        self._check_arity(len(columns))
        return self._pandas(columns, len(columns[0]) if columns else (length or 0))

    def eval_arrow(self, arrays: Sequence[pa.Array], length: int, arrow_type: pa.DataType) -> pa.Array:
        """A general function's results for one batch, Arrow in and out (:mod:`.values`): ``arrays``
        hold the arguments (``length`` rows when there are none), the result is an array of ``arrow_type``
        (Spark's Arrow type of the declared result type)."""
        if self.function.func_type != "general":
            raise ValueError(f"{self.name} is a pandas function: eval_batch takes its batches")
        self._check_arity(len(arrays))
        args = [arrow_arguments(a, t) for a, t in zip(arrays, self.arg_types, strict=True)]
        f = self._eval
        try:
            # map() over the argument lists calls f once per row with no per-row Python frame of ours.
            out = list(map(f, *args)) if args else [f() for _ in range(length)]
        except Exception as e:
            raise self._row_failure(args, e) from e
        return arrow_result(out, self.result_type, arrow_type, lambda values: self._checked(values, args))

    def _check_arity(self, given: int) -> None:
        if given != len(self.arg_types):
            raise ValueError(f"{self.name}: {given} argument columns for {len(self.arg_types)} arguments")

    def _checked(self, out: list, args: list[list]) -> list:
        """The results ``out`` checked against the result type; the error names the row of the first that does
        not fit."""
        convert = self._convert
        checked: list[Any] = []
        try:
            for value in out:
                checked.append(convert(value))
        except ResultTypeError as e:
            row = tuple(a[len(checked)] for a in args)
            raise UserFunctionError(f"user function {self.name} failed on row {row!r}: {e}") from e
        return checked

    def _row_failure(self, args: list[list], error: Exception) -> UserFunctionError:
        """The error naming the row ``error`` came from: the batch is evaluated again row by row up to
        the failing row (only on this failure path, so the fast path keeps no row index)."""
        f = self._eval
        for row in zip(*args, strict=True):
            try:
                f(*row)
            except Exception as e:
                return UserFunctionError(f"user function {self.name} failed on row {row!r}: "
                                         f"{type(e).__name__}: {e}")
        return UserFunctionError(f"user function {self.name} failed on a batch of {len(args[0]) if args else 0} "
                                 f"rows: {type(error).__name__}: {error}")

    def _pandas(self, columns: Sequence[pd.Series | pd.DataFrame], n: int) -> pd.Series | pd.DataFrame:
        args = [c.reset_index(drop=True) for c in columns]
        try:
            result = self._eval(*args)
        except Exception as e:
            first = tuple(_first(c) for c in args)
            raise UserFunctionError(f"pandas user function {self.name} failed on a batch of {n} rows (first row "
                                    f"{first!r}): {type(e).__name__}: {e}") from e
        if not isinstance(result, (pd.Series, pd.DataFrame)):
            raise UserFunctionError(f"The result type of Pandas UDF '{self.name}' must be pandas.Series or "
                                    f"pandas.DataFrame, got {type(result).__name__}")
        if len(result) != n:
            raise UserFunctionError(f"The result length '{len(result)}' of Pandas UDF '{self.name}' is not equal "
                                    f"to the input length '{n}'")
        return result.reset_index(drop=True)


def _first(column: pd.Series | pd.DataFrame) -> Any:
    """The first value of a column as a Python value (for an error message)."""
    if len(column) == 0:
        return None
    if isinstance(column, pd.DataFrame):
        return tuple(column.iloc[0].tolist())
    return column.iloc[:1].tolist()[0]
