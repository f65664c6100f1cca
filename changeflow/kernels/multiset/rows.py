"""A changelog batch as plain row tuples and back: the form the ordered multiset's kernels work on.

The kernels over :class:`~changeflow.kernels.multiset.OrderedMultiset` (the sink
upsert materializer, deduplication over retracting input) fold a batch record
by record on Python tuples whose values are plain (nulls as None, numpy
scalars as Python scalars), so that equal rows have equal identities
(:func:`~changeflow.kernels.multiset.identity_of`), and build their output
frame from such tuples with the input's dtypes. The multiset's state tables hold
the same plain values (:func:`python_values`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.frames import column


def identity_of(values: tuple) -> str:
    """The identity of an element (its field values, nulls unified) as a state key.

    Two elements are the same element when their identities are equal; the
    string form keeps the index's key column a plain value in every state store.

    >>> identity_of((1, None)) == identity_of((1, float("nan")))
    True
    """
    return repr(tuple(_plain(v) for v in values))


def python_values(column: pd.Series) -> list:
    """A state column's values as plain Python values (nulls as None).

    Integer columns without nulls convert in one ``tolist()``; only other
    columns pay a :func:`_plain` call per value (a per-value cost the kernel
    benchmark showed among the multiset's largest).
    """
    dtype = column.dtype
    if dtype.kind in "iub":
        if isinstance(dtype, np.dtype):
            return column.tolist()
        if not column.hasnans:  # a nullable extension column (Int64, boolean) without nulls
            # Int*, UInt*, boolean (and Arrow) dtypes have numpy_dtype; ExtensionDtype does not declare it.
            target = dtype.numpy_dtype  # pyright: ignore[reportAttributeAccessIssue] - undeclared on ExtensionDtype
            return column.to_numpy(dtype=target).tolist()
    return [_plain(v) for v in column.astype(object).tolist()]


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            return item()  # numpy scalar -> Python scalar, so repr is stable
        except (AttributeError, ValueError):
            return value
    return value


def plain_rows(batch: pd.DataFrame, columns: list[str]) -> list[tuple]:
    """Each row of ``batch`` as a tuple of plain values of ``columns``."""
    cols = [python_values(column(batch, c)) for c in columns]
    return list(zip(*cols, strict=True)) if cols else [()] * len(batch)


def changes_frame(like: pd.DataFrame, columns: list[str], rows: list[tuple], kinds: list[int], seqs: list[int],
                  subs: list[int]) -> pd.DataFrame:
    """The changelog frame of ``rows`` with ``kinds`` and stamps, each column with its dtype in ``like``."""
    data = {}
    for i, c in enumerate(columns):
        vals = [r[i] for r in rows]
        dtype = like[c].dtype
        if dtype == np.dtype(object):
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
