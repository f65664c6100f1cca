"""Integer sort codes: a Top-N sort key of any column types as a tuple of ints.

A Top-N kernel compares sort keys many times per row (a binary search per
insert). Comparing Python values of mixed types, with per-column direction and
null placement, is slow and error prone; instead every ``ORDER BY`` column of the
rows at hand (the batch and the loaded state together) is replaced by its dense
rank among those rows, turned around for ``DESC`` and with nulls placed first or
last. Codes are only comparable within one call, which is all a kernel needs:
state stores the rows themselves, never the codes.

>>> import pandas as pd
>>> frame = pd.DataFrame({"s": pd.array([3, None, 1, 3], dtype="Int64"), "t": ["x", "y", "z", "w"]})
>>> sort_codes(frame, [("s", False, False), ("t", True, True)]).tolist()
[1, 3, 2, 0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.frames import column


def sort_codes(frame: pd.DataFrame, order_by) -> np.ndarray:
    """One int64 per row, ordered as ``ORDER BY`` orders the rows (equal keys, equal codes).

    ``order_by`` holds ``(column, ascending, nulls_first)`` triples. Several
    columns are combined into the dense rank of their code tuples, so a kernel
    compares plain ints.
    """
    columns = [column_codes(column(frame, name), ascending, nulls_first) for name, ascending, nulls_first in order_by]
    if len(columns) == 1 or len(frame) == 0:
        return columns[0] if columns else np.zeros(len(frame), dtype=np.int64)
    order = np.lexsort(columns[::-1])
    stacked = np.stack([c[order] for c in columns])
    new_group = np.ones(len(frame), dtype=bool)
    new_group[1:] = (stacked[:, 1:] != stacked[:, :-1]).any(axis=0)
    codes = np.empty(len(frame), dtype=np.int64)
    codes[order] = np.cumsum(new_group) - 1
    return codes


def column_codes(column: pd.Series, ascending: bool, nulls_first: bool) -> np.ndarray:
    """Dense ranks 1..m of the non-null values (reversed for DESC); nulls 0 or m+1."""
    nulls = column.isna().to_numpy()
    present = column[~nulls]
    if len(present):
        try:
            _, inverse = np.unique(present.to_numpy(dtype=object if present.dtype == object else None),
                                   return_inverse=True)
        except TypeError as e:  # mixed, unorderable Python values in an object column
            raise TypeError(f"ORDER BY column {column.name!r} holds values that cannot be ordered: {e}") from e
        ranks = inverse.reshape(-1).astype(np.int64) + 1
        m = int(ranks.max())
    else:
        ranks, m = np.empty(0, dtype=np.int64), 0
    if not ascending:
        ranks = m + 1 - ranks
    codes = np.empty(len(column), dtype=np.int64)
    codes[~nulls] = ranks
    codes[nulls] = 0 if nulls_first else m + 1
    return codes
