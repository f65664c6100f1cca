"""The vectorised join's rows: one input's batch and state as arrays, and the frames built from them.

:mod:`.vector_join` works on integer arrays only (positions, entry ids, counts); this
module turns a side's batch and loaded state into those arrays and turns index
arrays back into frames. Values go through the same conversions as the per-record
path (:func:`~.join_rows.python_values`, :func:`~.join_rows.array`), so both paths
give frames with equal values and dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import DELETE, KIND, SEQ, SUB, UPDATE_BEFORE
from changeflow.kernels.frames import column, select
from changeflow.kernels.join.join_rows import array, checked_side
from changeflow.kernels.join.join_state import ASSOC, COUNT, TABLES, TS

if TYPE_CHECKING:
    from changeflow.kernels.join.streaming_join import StreamingJoin


def object_values(values: pd.Series) -> np.ndarray:
    """A column as an object array of plain Python values, every kind of null as None
    (:func:`~.join_rows.python_values` as an array)."""
    out = values.to_numpy(dtype=object, na_value=None)
    if values.dtype.kind == "f":  # numpy floats use NaN for null
        out = out.copy()
        out[pd.isna(values).to_numpy()] = None
    return out


@dataclass
class SideBatch:
    """One input's records of a batch, in input (``_seq``, ``_sub``) order."""

    frame: pd.DataFrame
    kinds: np.ndarray  # int64
    seqs: np.ndarray  # int64
    null_key: np.ndarray  # bool: a NULL in a join key column, never matches
    keys: pd.DataFrame  # the join key columns (_jk0, ...) in the key dtypes

    def __len__(self) -> int:
        return len(self.kinds)

    @property
    def retracts(self) -> np.ndarray:
        return (self.kinds == UPDATE_BEFORE) | (self.kinds == DELETE)


def side_batch(join: "StreamingJoin", side: int, frame: pd.DataFrame | None) -> SideBatch:
    """The records of one input, checked as the per-record path checks them."""
    names = join.key_columns
    if frame is None or not len(frame):
        empty = np.zeros(0, dtype=np.int64)
        keys = pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
        return SideBatch(pd.DataFrame({c: [] for c in join.columns[side]}), empty, empty,
                         np.zeros(0, dtype=bool), keys)
    frame, kinds = checked_side(frame, join.columns[side], TABLES[side])
    nulls = np.zeros(len(frame), dtype=bool)
    keys = {}
    for i, k in enumerate(join.keys[side]):
        values = column(frame, k)
        nulls |= values.isna().to_numpy()
        if join.key_dtypes is not None and str(values.dtype) != str(join.key_dtypes[i]):
            values = values.astype(join.key_dtypes[i])
        keys[names[i]] = values.reset_index(drop=True)
    key_frame = pd.DataFrame(keys, index=pd.RangeIndex(len(frame)))
    return SideBatch(frame, kinds, frame[SEQ].to_numpy(dtype=np.int64), nulls, key_frame)


def stored_rows(join: "StreamingJoin", side: int, loaded: pd.DataFrame) -> pd.DataFrame:
    """The loaded state rows of a side that have not expired (the per-record path skips the others)."""
    if not len(loaded) or COUNT not in loaded.columns:
        return pd.DataFrame({c: [] for c in join.key_columns + join.columns[side] + [COUNT, ASSOC, TS]})
    ttl = join.ttl_ms[side]
    if ttl > 0 and TS in loaded.columns:
        loaded = select(loaded, loaded[TS].to_numpy(dtype=np.int64) > join._now - ttl)
    return loaded.reset_index(drop=True)


# Target dtypes a column is converted into without Python values, and the source dtype kinds allowed.
_TYPED = {"Int64": "iu", "Int32": "iu", "Int16": "iu", "Int8": "iu", "boolean": "b", "float64": "iuf",
          "datetime64[ns]": "M"}


class Source:
    """A side's rows that output and state rows are gathered from: its stored rows, then its batch rows.

    Index ``i`` below the stored count is a stored row, above it batch row ``i - stored``;
    -1 gathers a NULL (a null-padded side).
    """

    def __init__(self, stored: pd.DataFrame, batch: SideBatch, columns: list[str], key_columns: list[str]) -> None:
        self.stored, self.batch, self.columns, self.key_columns = stored, batch, columns, key_columns
        self._values: dict[str, np.ndarray] = {}

    def values(self, name: str) -> np.ndarray:
        """Column ``name`` over the source rows, as Python values, with a trailing None for index -1."""
        if name not in self._values:
            part = self.batch.keys if name in self.key_columns else self.batch.frame
            parts = [object_values(column(self.stored, name)) if len(self.stored) else np.empty(0, object),
                     object_values(column(part, name)) if len(part) else np.empty(0, object),
                     np.array([None], dtype=object)]
            self._values[name] = np.concatenate(parts)
        return self._values[name]

    def gather(self, name: str, index: np.ndarray, dtype: Any) -> Any:
        """Column ``name`` at ``index`` as the per-record path builds it (``array(values, dtype)``)."""
        typed = self._typed(name, dtype)
        if typed is not None:
            return typed.take(index)
        taken = self.values(name)[index]
        if dtype is object or str(dtype) == "object":
            return taken  # what array() builds, element by element
        return array(taken.tolist(), dtype)

    def _typed(self, name: str, dtype: Any) -> Any:
        """Column ``name`` over the source rows (and a trailing NULL) in ``dtype`` without Python values, when
        that gives the values ``array()`` gives: integers or booleans into pandas' nullable types, numbers
        into float64, ``datetime64[ns]`` as it is. None otherwise."""
        target = str(dtype)
        if target not in _TYPED:
            return None
        part = self.batch.keys if name in self.key_columns else self.batch.frame
        parts = [column(f, name) for f in (self.stored, part) if len(f)]
        if not all(p.dtype.kind in _TYPED[target] for p in parts):
            return None
        if target.startswith("datetime64") and not all(str(p.dtype) == target for p in parts):
            return None   # another unit or a time zone: through Python values, as array() converts them
        if target.startswith("float"):
            return np.concatenate([p.to_numpy(dtype=target, na_value=np.nan) for p in parts]
                                  + [np.array([np.nan], dtype=target)])
        return pd.concat([p.astype(target) for p in parts] + [pd.Series([None], dtype=target)],
                         ignore_index=True).array

    def tuples(self) -> list[tuple]:
        """Every source row as a tuple of the side's columns (for a pair condition)."""
        if not self.columns:
            return [()] * (len(self.stored) + len(self.batch) + 1)
        return list(zip(*[self.values(c).tolist() for c in self.columns], strict=True))


def output_frame(join: "StreamingJoin", sources: tuple[Source, Source], rows: tuple[np.ndarray, np.ndarray],
                 kinds: np.ndarray, seqs: np.ndarray) -> pd.DataFrame:
    """The emitted changes: each side's columns gathered at ``rows`` (-1: NULL), then the bookkeeping."""
    data: dict[str, Any] = {}
    for side in (0, 1):
        for name in join.columns[side]:
            data[name] = sources[side].gather(name, rows[side], join.dtypes.get(name))
    data[KIND] = kinds.astype(np.int8)
    data[SEQ] = seqs.astype(np.int64)
    data[SUB] = np.arange(len(kinds), dtype=np.int64)
    return pd.DataFrame(data, copy=False)


def state_frame(join: "StreamingJoin", side: int, source: Source, rows: np.ndarray, counts: np.ndarray,
                assocs: np.ndarray, stamps: np.ndarray) -> pd.DataFrame:
    """A side's state rows (the per-record path's layout) for the entries gathered at ``rows``."""
    data: dict[str, Any] = {}
    for i, name in enumerate(join.key_columns):
        data[name] = source.gather(name, rows, join.key_dtypes[i] if join.key_dtypes is not None else None)
    for name in join.columns[side]:
        data[name] = source.gather(name, rows, join.dtypes.get(name))
    data[COUNT] = counts.astype(np.int64)
    data[ASSOC] = assocs.astype(np.int64)
    if join.ttl_ms[side] > 0:  # without a TTL the state keeps the layout it always had
        data[TS] = stamps.astype(np.int64)
    return pd.DataFrame(data)


def group_ids(frame: pd.DataFrame) -> np.ndarray:
    """Per row, the id of its distinct value of all of ``frame``'s columns (NULLs equal), in order of first
    appearance. Raises TypeError for values pandas cannot hash (the caller then joins per record)."""
    if not len(frame.columns):
        return np.zeros(len(frame), dtype=np.int64)
    return frame.groupby(list(frame.columns), sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)
