"""Values in and out of a scalar user function, by Flink type.

A general (row-at-a-time) function takes Python values as PyFlink passes them:
``int`` for the integral types, ``float``, ``str``, ``bool``, ``decimal.Decimal``,
``datetime.date``/``datetime.datetime``, ``list`` for an ARRAY, ``dict`` for a
MAP, :class:`~changeflow.common.Row` for a ROW, and ``None`` for NULL. A batch's
column arrives from Arrow as a pandas Series in pandas' own representation (an
integral column with NULLs as float64 with NaN, a timestamp as ``Timestamp``, an
array as a numpy array), so :func:`python_values` turns it back. A DOUBLE
column cannot tell NULL from NaN in pandas, so its caller passes a NULL mask.

:func:`result_series` checks each result against the declared result type
(PyFlink's coders fail on a value that does not fit it; so does changeflow, naming
the value) and builds the Series Arrow converts to the declared type.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.common.types import DataType

_INT_RANGE = {"TINYINT": 2**7, "SMALLINT": 2**15, "INT": 2**31, "BIGINT": 2**63}


class ResultTypeError(TypeError):
    """A function result that does not fit the declared result type (the caller names the function and row)."""


def _missing(v: Any) -> bool:
    return v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def _value(t: DataType) -> Callable[[Any], Any]:
    """A converter of one pandas value of Flink type ``t`` to the Python value PyFlink passes."""
    root = t.root
    if root in _INT_RANGE:
        return lambda v: None if _missing(v) else int(v)
    if root in ("FLOAT", "DOUBLE"):
        return lambda v: None if v is None else float(v)
    if root == "BOOLEAN":
        return lambda v: None if _missing(v) else bool(v)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return lambda v: None if _missing(v) else (v.to_pydatetime() if isinstance(v, pd.Timestamp) else v)
    if root == "DATE":
        return lambda v: None if _missing(v) else (v.date() if isinstance(v, datetime.datetime) else v)
    if root in ("ARRAY", "MULTISET"):
        element = _value(t.element_type)
        return lambda v: None if v is None else [element(x) for x in v]
    if root == "MAP":
        key, value = (_value(p) for p in t.params)
        return lambda v: None if v is None else {key(k): value(x) for k, x in (v.items() if isinstance(v, dict)
                                                                             else v)}
    if root == "ROW":
        names = tuple(n for n, _ in t.params)
        fields = [_value(ft) for _, ft in t.params]

        def row(v: Any) -> Any:
            if v is None:
                return None
            values = [v[n] for n in names] if isinstance(v, dict) else list(v)
            return Row(**{n: f(x) for n, f, x in zip(names, fields, values, strict=True)})
        return row
    if root in ("BYTES", "BINARY", "VARBINARY"):
        return lambda v: None if v is None else bytes(v)
    return lambda v: None if v is None or v is pd.NaT else v


def _as_is(column: pd.Series, t: DataType) -> bool:
    """Whether ``tolist()`` already gives PyFlink's values: ints without NULLs, floats, strings."""
    kind = column.dtype.kind
    return (t.root in _INT_RANGE and kind in "iu") or (t.root in ("FLOAT", "DOUBLE") and kind == "f") or \
        (t.root in ("CHAR", "VARCHAR", "STRING") and kind == "O")


def python_values(column: pd.Series | pd.DataFrame, t: DataType, nulls: Sequence[bool] | None = None) -> list:
    """The Python values of a batch's column of Flink type ``t``; ``nulls`` marks NULLs where pandas cannot."""
    if isinstance(column, pd.DataFrame):  # Spark passes a ROW (struct) argument as a DataFrame
        names = tuple(n for n, _ in t.params)
        fields = [_value(ft) for _, ft in t.params]
        values = [Row(**{n: f(x) for n, f, x in zip(names, fields, r, strict=True)})
                  for r in column.itertuples(index=False, name=None)]
    elif _as_is(column, t):
        values = column.tolist()
    else:
        convert = _value(t)
        values = [convert(v) for v in column.tolist()]
    if nulls is not None:
        values = [None if null else v for v, null in zip(values, nulls, strict=True)]
    return values


# --- results ------------------------------------------------------------------------------------


def _check(t: DataType) -> Callable[[Any], Any]:
    """A converter of one result to the value Arrow takes for Flink type ``t``; ResultTypeError if it does not fit."""
    root = t.root

    def wrong(v: Any) -> Any:
        raise ResultTypeError(f"result {v!r} of Python type {type(v).__name__} does not fit the declared "
                              f"result type {t}")

    if root in _INT_RANGE:
        bound = _INT_RANGE[root]

        def integral(v: Any) -> Any:
            if not isinstance(v, (int, np.integer)):
                return wrong(v)
            if not -bound <= v < bound:
                raise ResultTypeError(f"result {v!r} is out of the range of the declared result type {t}")
            return int(v)
        return integral
    if root in ("FLOAT", "DOUBLE"):
        return lambda v: float(v) if isinstance(v, (int, float, np.integer, np.floating)) and \
            not isinstance(v, bool) else wrong(v)
    if root in ("CHAR", "VARCHAR", "STRING"):
        return lambda v: v if isinstance(v, str) else wrong(v)
    if root == "BOOLEAN":
        return lambda v: bool(v) if isinstance(v, (bool, np.bool_)) else wrong(v)
    if root == "DECIMAL":
        quantum = decimal.Decimal(1).scaleb(-t.params[1])

        def dec(v: Any) -> Any:
            if isinstance(v, bool) or not isinstance(v, (decimal.Decimal, int)):
                return wrong(v)
            return decimal.Decimal(v).quantize(quantum, rounding=decimal.ROUND_HALF_UP)
        return dec
    if root == "DATE":
        return lambda v: v if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime) else wrong(v)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return lambda v: v if isinstance(v, datetime.datetime) else wrong(v)
    if root in ("ARRAY", "MULTISET"):
        element = _nullable_check(t.element_type)
        return lambda v: [element(x) for x in v] if isinstance(v, (list, tuple)) else wrong(v)
    if root == "MAP":
        key, value = (_nullable_check(p) for p in t.params)
        return lambda v: {key(k): value(x) for k, x in v.items()} if isinstance(v, dict) else wrong(v)
    if root == "ROW":
        fields = [(n, _nullable_check(ft)) for n, ft in t.params]

        def row(v: Any) -> Any:
            if not isinstance(v, (tuple, list)) or len(v) != len(fields):
                return wrong(v)
            return {n: f(x) for (n, f), x in zip(fields, v, strict=True)}
        return row
    if root in ("BYTES", "BINARY", "VARBINARY"):
        return lambda v: bytes(v) if isinstance(v, (bytes, bytearray)) else wrong(v)
    return lambda v: v


def _nullable_check(t: DataType) -> Callable[[Any], Any]:
    check = _check(t)
    return lambda v: None if v is None else check(v)


def result_converter(t: DataType) -> Callable[[Any], Any]:
    """The per-result check and conversion for declared type ``t`` (None passes as NULL)."""
    return _nullable_check(t)


def result_series(values: list, t: DataType) -> pd.Series:
    """The Series Arrow converts to ``t``: integral results without NULL as int64, others as objects."""
    if t.root in _INT_RANGE and values and None not in values:
        return pd.Series(values, dtype="int64")
    if t.root in ("FLOAT", "DOUBLE"):
        return pd.Series([np.nan if v is None else v for v in values], dtype="float64")
    return pd.Series(values, dtype=object)


_FLOAT_RESULTS = frozenset({float, int, type(None)})
_INT_RESULTS = frozenset({int})


def fast_result_series(values: list, t: DataType) -> pd.Series | None:
    """The results as a Series in one vectorised step when they plainly fit ``t`` (floats or ints for
    FLOAT/DOUBLE, ints in range for the integral types, strings for STRING); None when any result needs
    the per-value check (:func:`result_converter`), which names the one that does not fit."""
    kinds = set(map(type, values))
    if t.root in ("FLOAT", "DOUBLE") and kinds <= _FLOAT_RESULTS:
        return pd.Series(values, dtype="float64")
    if t.root in _INT_RANGE and kinds <= _INT_RESULTS and values:
        bound = _INT_RANGE[t.root]
        if -bound <= min(values) and max(values) < bound:
            return pd.Series(values, dtype="int64")
    if t.root in ("CHAR", "VARCHAR", "STRING") and kinds <= {str, type(None)}:
        return pd.Series(values, dtype=object)
    return None
