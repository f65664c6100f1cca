"""Column values as a pair of numpy arrays: the data and where it is not null.

Kernels compute on plain numpy arrays; pandas' nullable arrays only appear at
the edges (reading the batch and state, writing the output). ``Values.data``
holds int64, float64 or bool for numeric and boolean types and Python objects
(None for null) for everything else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from changeflow.common.types import DataType


@dataclass
class Values:
    data: np.ndarray
    valid: np.ndarray

    def __len__(self) -> int:
        return len(self.data)

    def take(self, index: np.ndarray) -> "Values":
        # Skipping the gather of an all-true mask saves a random access per element.
        valid = np.ones(len(index), dtype=bool) if self.valid.all() else self.valid[index]
        return Values(self.data[index], valid)

    @staticmethod
    def concat(parts: list["Values"]) -> "Values":
        return Values(np.concatenate([p.data for p in parts]), np.concatenate([p.valid for p in parts]))

    @staticmethod
    def nulls(n: int, type_: DataType) -> "Values":
        data = np.zeros(n, dtype=numpy_dtype(type_))
        if data.dtype == object:
            data[:] = None
        return Values(data, np.zeros(n, dtype=bool))


def numpy_dtype(type_: DataType) -> np.dtype:
    """The numpy dtype a column of ``type_`` is computed in."""
    if type_.is_integral:
        return np.dtype(np.int64)
    if type_.root in ("FLOAT", "DOUBLE"):
        return np.dtype(np.float64)
    if type_.root == "BOOLEAN":
        return np.dtype(bool)
    return np.dtype(object)


def pandas_dtype(type_: DataType) -> str | np.dtype:
    """The pandas dtype of an output column of ``type_`` (nullable extension dtypes)."""
    if type_.is_integral:
        return "Int64"
    if type_.root in ("FLOAT", "DOUBLE"):
        return "Float64"
    if type_.root == "BOOLEAN":
        return "boolean"
    return np.dtype(object)


def from_series(series: pd.Series, type_: DataType) -> Values:
    """Read a batch or state column of ``type_`` into numpy arrays."""
    kind = numpy_dtype(type_)
    if kind == np.dtype(object):
        data = series.to_numpy(dtype=object, copy=True)
        valid = ~pd.isna(data)
        data[~valid] = None
        return Values(data, valid)
    if kind == np.float64 and series.dtype == np.float64:
        data = series.to_numpy()
        return Values(data, ~np.isnan(data))
    if kind == np.int64 and series.dtype == np.int64:
        # A plain int64 column has no nulls (e.g. the counts of two-phase partials).
        return Values(series.to_numpy(), np.ones(len(series), dtype=bool))
    target = {np.dtype(np.int64): "Int64", np.dtype(np.float64): "Float64", np.dtype(bool): "boolean"}[kind]
    array = series.array if str(series.dtype) == target else pd.array(series, dtype=target)
    valid = ~np.asarray(array.isna())
    fill = False if kind == np.dtype(bool) else 0
    return Values(array.to_numpy(dtype=kind, na_value=fill), valid)


def to_array(values: Values, type_: DataType):
    """An output column (pandas array or object ndarray) of ``type_``."""
    dtype = pandas_dtype(type_)
    if dtype == "Int64":
        return pd.arrays.IntegerArray(values.data.astype(np.int64, copy=False), ~values.valid)
    if dtype == "Float64":
        return pd.arrays.FloatingArray(values.data.astype(np.float64, copy=False), ~values.valid)
    if dtype == "boolean":
        return pd.arrays.BooleanArray(values.data.astype(bool, copy=False), ~values.valid)
    out = np.empty(len(values), dtype=object)
    out[values.valid] = values.data[values.valid]
    return out


def equal(a: Values, b: Values) -> np.ndarray:
    """Elementwise equality where null equals null (Flink's record equaliser)."""
    both = a.valid & b.valid
    same = np.zeros(len(a), dtype=bool)
    if a.data.dtype == object:
        idx = np.flatnonzero(both)
        # Python == per element: values may be lists or dicts (COLLECT), which
        # numpy's vectorised comparison would try to broadcast.
        same[idx] = [x == y for x, y in zip(a.data[idx], b.data[idx], strict=True)]
    else:
        same = both & (a.data == b.data)
    return same | (~a.valid & ~b.valid)
