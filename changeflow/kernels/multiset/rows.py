"""A changelog batch as plain row tuples and back: the form the ordered multiset's kernels work on.

The kernels over :class:`~changeflow.kernels.multiset.OrderedMultiset` (the sink
upsert materializer, deduplication over retracting input) fold a batch record
by record on Python tuples whose values are plain (nulls as None, numpy
scalars as Python scalars), so that equal rows have equal identities
(:func:`~changeflow.kernels.multiset.identity_of`), and build their output
frame from such tuples with the input's dtypes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.multiset.ordered import _python_values


def plain_rows(batch: pd.DataFrame, columns: list[str]) -> list[tuple]:
    """Each row of ``batch`` as a tuple of plain values of ``columns``."""
    cols = [_python_values(batch[c]) for c in columns]
    return list(zip(*cols)) if cols else [()] * len(batch)


def changes_frame(like: pd.DataFrame, columns: list[str], rows: list[tuple], kinds: list[int], seqs: list[int],
                  subs: list[int]) -> pd.DataFrame:
    """The changelog frame of ``rows`` with ``kinds`` and stamps, each column with its dtype in ``like``."""
    data = {}
    for i, c in enumerate(columns):
        vals = [r[i] for r in rows]
        dtype = like[c].dtype
        if dtype == object:
            arr = np.empty(len(vals), dtype=object)
            for j, v in enumerate(vals):
                arr[j] = v
            data[c] = arr
        else:
            data[c] = pd.array(vals, dtype=dtype)
    data[KIND] = np.array(kinds, dtype=np.int8)
    data[SEQ] = np.array(seqs, dtype=np.int64)
    data[SUB] = np.array(subs, dtype=np.int64)
    return pd.DataFrame(data)
