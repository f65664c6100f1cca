"""Values in and out of a general (row-at-a-time) scalar function, by Flink type, straight from and to Arrow.

Spark hands a general function's arguments to its Python worker as Arrow arrays,
and :func:`arrow_arguments` turns them into the Python values PyFlink passes:
``to_pylist()`` already gives most (``int``, ``float``, ``str``, ``bool``,
``Decimal``, ``date``, a naive ``datetime`` for a TIMESTAMP, ``bytes``, ``list``
for an ARRAY, ``None`` for NULL, NaN as NaN); only a ROW (Arrow gives a ``dict``,
PyFlink a :class:`~changeflow.common.Row`), a MAP (a list of pairs, PyFlink a
``dict``) and a TIMESTAMP_LTZ (an aware ``datetime``; changeflow passes it
naive, in UTC, as a TIMESTAMP) are turned further. No pandas in between: it cost
a conversion each way, and pandas cannot tell a DOUBLE's NULL from NaN.

:func:`arrow_result` checks each result against the declared result type
(PyFlink's coders fail on a value that does not fit it; so does changeflow,
naming the value) and builds the array of Spark's Arrow type for it, in one
vectorised step when the results plainly fit. A NaN result stays NaN.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from changeflow.common.row import Row
from changeflow.common.types import DataType

_INT_RANGE = {"TINYINT": 2**7, "SMALLINT": 2**15, "INT": 2**31, "BIGINT": 2**63}


class ResultTypeError(TypeError):
    """A function result that does not fit the declared result type (the caller names the function and row)."""


# --- arguments -----------------------------------------------------------------------------------


_AS_IS = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "CHAR", "VARCHAR",
                    "STRING", "DECIMAL", "DATE", "TIMESTAMP", "BYTES", "BINARY", "VARBINARY"})


def _plain(t: DataType) -> bool:
    """Whether ``to_pylist()`` gives PyFlink's values for type ``t`` (nested types: when their parts do)."""
    if t.root in ("ARRAY", "MULTISET"):
        return _plain(t.element_type)
    return t.root in _AS_IS


def _naive_utc(v: datetime.datetime) -> datetime.datetime:
    return v.astimezone(datetime.timezone.utc).replace(tzinfo=None) if v.tzinfo is not None else v


def _converter(t: DataType) -> Callable[[Any], Any]:
    """A converter of one ``to_pylist()`` value of Flink type ``t`` (not NULL) to the value PyFlink passes."""
    root = t.root
    if _plain(t):
        return lambda v: v
    if root == "TIMESTAMP_LTZ":
        return _naive_utc
    if root in ("ARRAY", "MULTISET"):
        element = _nullable(t.element_type)
        return lambda v: [element(x) for x in v]
    if root == "MAP":
        key, value = (_nullable(p) for p in t.params)
        return lambda v: {key(k): value(x) for k, x in (v.items() if isinstance(v, dict) else v)}
    if root == "ROW":
        fields = [(n, _nullable(ft)) for n, ft in t.params]
        return lambda v: Row(**{n: f(v[n]) for n, f in fields})
    return lambda v: v


def _nullable(t: DataType) -> Callable[[Any], Any]:
    convert = _converter(t)
    return lambda v: None if v is None else convert(v)


def arrow_arguments(array: pa.Array | pa.ChunkedArray, t: DataType) -> list:
    """The Python values a general function gets for a batch's argument column ``array`` of Flink type ``t``.

    >>> from changeflow.common.types import DataTypes
    >>> arrow_arguments(pa.array([1.5, None, float("nan")]), DataTypes.DOUBLE())
    [1.5, None, nan]
    >>> arrow_arguments(pa.array([{"x": 1}]), DataTypes.ROW([DataTypes.FIELD("x", DataTypes.INT())]))
    [Row(x=1)]
    """
    values = array.to_pylist()
    if _plain(t):
        return values
    convert = _nullable(t)
    return [convert(v) for v in values]


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


_FLOATS = frozenset({float, int, type(None)})
_INTS = frozenset({int, type(None)})
_STRINGS = frozenset({str, type(None)})


def _fits_plainly(values: list, t: DataType) -> bool:
    """Whether every result plainly fits ``t``, so Arrow can take the list as it is."""
    kinds = set(map(type, values))
    if t.root in ("FLOAT", "DOUBLE"):
        return kinds <= _FLOATS
    if t.root in _INT_RANGE:
        present = [v for v in values if v is not None]
        return kinds <= _INTS and (not present or (-_INT_RANGE[t.root] <= min(present)
                                                   and max(present) < _INT_RANGE[t.root]))
    if t.root in ("CHAR", "VARCHAR", "STRING"):
        return kinds <= _STRINGS
    return False


def arrow_result(values: list, t: DataType, arrow_type: pa.DataType, checked: Callable[[list], list]) -> pa.Array:
    """The array of ``arrow_type`` (Spark's Arrow type for ``t``) holding a batch's results ``values``.

    Results that do not all plainly fit go through ``checked`` (the evaluator's: each through
    :func:`result_converter`, raising on the first that does not fit ``t``, named with its row).

    >>> from changeflow.common.types import DataTypes
    >>> arrow_result([1.0, None, float("nan")], DataTypes.DOUBLE(), pa.float64(), list).to_pylist()
    [1.0, None, nan]
    """
    return pa.array(values if _fits_plainly(values, t) else checked(values), type=arrow_type)
