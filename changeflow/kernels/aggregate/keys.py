"""Dense integer codes for the grouping keys of a batch.

Every array a kernel computes per key is indexed by the key's code ``0..K-1``.
:class:`KeyIndex` assigns the codes for a batch and maps rows loaded from state
back to them. A null key value is an ordinary key: all nulls of a column share
one code.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.kernels.frames import column, select

# A single integral key whose values span at most this many times the number
# of rows is coded by offset from its minimum, which is several times faster
# than hashing (pd.factorize) and dominates the cost of a large batch.
_DENSE_RANGE_FACTOR = 4


class KeyIndex:
    """The distinct keys of a batch and the code of each row.

    >>> index = KeyIndex(pd.DataFrame({"k": ["b", "a", None, "b"]}), ["k"])
    >>> index.codes.tolist(), index.frame["k"].tolist()
    ([0, 1, 2, 0], ['b', 'a', None])
    >>> index.lookup(pd.DataFrame({"k": [None, "b"]})).tolist()
    [2, 0]
    """

    def __init__(self, batch: pd.DataFrame, keys: list[str]) -> None:
        self.names = list(keys)
        self.codes, count = _codes(batch, self.names)
        self.size = count
        first = np.full(count, len(batch), dtype=np.int64)
        np.minimum.at(first, self.codes, np.arange(len(batch), dtype=np.int64))
        # One row per key, taken from the batch so key dtypes are kept exactly.
        self.frame = select(batch, self.names).take(first).reset_index(drop=True)

    def lookup(self, frame: pd.DataFrame) -> np.ndarray:
        """The code of each row of ``frame`` (whose keys must all be in this index)."""
        if len(frame) == 0:
            return np.empty(0, dtype=np.intp)
        if not self.names:
            return np.zeros(len(frame), dtype=np.intp)
        # Code the batch's keys and the loaded keys together: the first K rows are
        # distinct, so their joint codes are a permutation we can invert.
        both = pd.concat([select(self.frame, self.names), select(frame, self.names)], ignore_index=True)
        joint, _ = _codes(both, self.names, dense=False)
        to_mine = np.full(joint.max() + 1, -1, dtype=np.intp)
        to_mine[joint[: self.size]] = np.arange(self.size)
        codes = to_mine[joint[self.size :]]
        if (codes < 0).any():
            bad = frame[self.names].iloc[int(np.flatnonzero(codes < 0)[0])].tolist()
            raise ValueError(f"state returned a row for key {bad}, which was not requested")
        return codes


def _codes(frame: pd.DataFrame, names: list[str], dense: bool = True) -> tuple[np.ndarray, int]:
    if not names:
        return np.zeros(len(frame), dtype=np.intp), (1 if len(frame) else 0)
    codes, count = _column_codes(column(frame, names[0]), dense)
    for name in names[1:]:
        more, more_count = _column_codes(column(frame, name), dense)
        combined = codes.astype(np.int64) * more_count + more
        codes, uniques = pd.factorize(combined)
        count = len(uniques)
    return codes.astype(np.intp, copy=False), count


def _column_codes(column: pd.Series, dense: bool) -> tuple[np.ndarray, int]:
    if dense and len(column) and pd.api.types.is_signed_integer_dtype(column.dtype):
        coded = _dense_integer_codes(column)
        if coded is not None:
            return coded
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return codes, len(uniques)


def _dense_integer_codes(column: pd.Series) -> tuple[np.ndarray, int] | None:
    array = column.array
    nulls = np.asarray(array.isna()) if hasattr(array, "isna") else np.zeros(len(column), dtype=bool)
    values = column.to_numpy(dtype=np.int64, na_value=0) if nulls.any() else column.to_numpy(dtype=np.int64)
    present = values[~nulls] if nulls.any() else values
    if len(present) == 0:
        return np.zeros(len(column), dtype=np.intp), 1
    lo, hi = int(present.min()), int(present.max())
    if hi - lo >= _DENSE_RANGE_FACTOR * len(column) + 1024:
        return None
    offsets = values - lo
    offsets[nulls] = hi - lo + 1  # nulls get one slot past the largest value
    seen = np.zeros(hi - lo + 2, dtype=bool)
    seen[offsets] = True
    renumber = np.cumsum(seen) - 1
    return renumber[offsets].astype(np.intp), int(seen.sum())
