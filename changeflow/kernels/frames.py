"""Typed pandas look-ups for the kernels.

pandas types ``frame[key]`` as a Series or a DataFrame whatever the key, so a type checker cannot
tell a column from a sub-frame. These say which one the caller gets, and check it: a frame with
two columns of one name would give a DataFrame for that name, which no kernel handles.

>>> import pandas as pd
>>> f = pd.DataFrame({"k": [1, 2], "v": ["a", "b"]})
>>> column(f, "v").tolist(), select(f, ["k"]).columns.tolist(), len(select(f, f["k"] > 1))
(['a', 'b'], ['k'], 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def column(frame: pd.DataFrame, name: str) -> pd.Series:
    """The column ``name`` of ``frame``."""
    out = frame[name]
    if not isinstance(out, pd.Series):
        raise ValueError(f"column {name!r} appears more than once in the frame: {list(frame.columns)}")
    return out


def select(frame: pd.DataFrame, key: Any) -> pd.DataFrame:
    """``frame[key]`` for a list of column names or a boolean mask: a DataFrame."""
    out = frame[key]
    if not isinstance(out, pd.DataFrame):
        raise TypeError(f"selecting {key!r} from a frame gave a {type(out).__name__}, not a DataFrame")
    return out


def array_of(series: pd.Series) -> Any:
    """``series``' values as pandas hashes and factorizes them: its numpy array for a numpy dtype,
    else its extension array (``Int64``, ...), whose missing values stay missing."""
    return series.to_numpy() if isinstance(series.dtype, np.dtype) else series.array


def same_dtype_values(left: pd.Series, right: pd.Series) -> Any:
    """``left``'s values then ``right``'s as one array when both have the same dtype (numpy's or an
    extension's, such as ``Int64``), else None."""
    if left.dtype != right.dtype:
        return None
    if isinstance(left.dtype, np.dtype):
        return np.concatenate([array_of(left), array_of(right)])
    return type(left.array)._concat_same_type([array_of(left), array_of(right)])
