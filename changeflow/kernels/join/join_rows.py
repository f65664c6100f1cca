"""The join's rows: a side's state entries, the output under construction, and value conversion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import DELETE, INSERT, KIND, SEQ, SUB
from changeflow.kernels.frames import column

if TYPE_CHECKING:
    from changeflow.kernels.join.streaming_join import StreamingJoin

LEFT, RIGHT = 0, 1  # the two sides, as the _side column tells them apart


def add_copy(store: dict[tuple, list[int]], row: tuple, assoc: int, now: int) -> None:
    # An entry is [copies, associations, last write time].
    entry = store.get(row)
    if entry is None:
        store[row] = [1, assoc, now]
    else:
        entry[0] += 1
        entry[1] = assoc
        entry[2] = now


def retract_copy(store: dict[tuple, list[int]], row: tuple, now: int) -> None:
    # A retraction of a row the state does not hold still emits its pairs (as
    # Flink does); there is just nothing to remove.
    entry = store.get(row)
    if entry is None:
        return
    entry[0] -= 1
    entry[2] = now
    if entry[0] <= 0:
        del store[row]


class JoinOutput:
    """Collects emitted changes with their stamps."""

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.lefts: list[tuple | None] = []
        self.rights: list[tuple | None] = []
        self.seqs: list[int] = []
        self._seq = -(1 << 62)

    def advance(self, seq: int) -> None:
        self._seq = max(self._seq, seq)

    def pair(self, kind: int, side: int, row: tuple, other_row: tuple) -> None:
        self._emit(kind, row, other_row) if side == LEFT else self._emit(kind, other_row, row)

    def padded(self, kind: int, side: int, row: tuple) -> None:
        self._emit(kind, row, None) if side == LEFT else self._emit(kind, None, row)

    def _emit(self, kind: int, left: tuple | None, right: tuple | None) -> None:
        self.kinds.append(kind)
        self.lefts.append(left)
        self.rights.append(right)
        self.seqs.append(self._seq)

    def frame(self, join: "StreamingJoin") -> pd.DataFrame:
        data: dict[str, Any] = {}
        for side, rows in ((LEFT, self.lefts), (RIGHT, self.rights)):
            for j, name in enumerate(join.columns[side]):
                data[name] = array([None if r is None else r[j] for r in rows], join.dtypes.get(name))
        data[KIND] = np.array(self.kinds, dtype=np.int8)
        data[SEQ] = np.array(self.seqs, dtype=np.int64)
        data[SUB] = np.arange(len(self.kinds), dtype=np.int64)
        return pd.DataFrame(data, copy=False)


def python_values(column: pd.Series) -> list[Any]:
    """A column's values as plain Python objects, every kind of null as None."""
    out = column.to_numpy(dtype=object, na_value=None).tolist()
    if column.dtype.kind == "f":  # numpy floats use NaN for null
        out = [None if v is None or v != v else v for v in out]
    return out


def tuples(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    if not columns:
        return [()] * len(frame)
    return list(zip(*[python_values(column(frame, c)) for c in columns], strict=True))


def array(values: list[Any], dtype: Any) -> Any:
    if dtype is None:
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            dtype = "boolean"
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            dtype = "Int64"
        elif present and all(isinstance(v, float) for v in present):
            dtype = "float64"
        else:
            dtype = object
    if dtype is object or str(dtype) == "object":  # the type itself, numpy's object dtype, or its name
        out = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):  # one by one: list values must not be unpacked
            out[i] = v
        return out
    if str(dtype) in ("float64", "float32"):
        return np.array([np.nan if v is None else v for v in values], dtype=dtype)
    return pd.array(values, dtype=dtype)


def checked_side(frame: pd.DataFrame, columns: list[str], name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """A join side's batch in arrival order and its kinds, after checking its columns and kinds
    (``name``: the side's state table, named in the errors)."""
    missing = [c for c in columns + [KIND, SEQ, SUB] if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} join input lacks columns {missing}; it has {list(frame.columns)}")
    frame = frame.sort_values([SEQ, SUB], kind="stable", ignore_index=True)
    kinds = frame[KIND].to_numpy(dtype=np.int64)
    bad = (kinds < INSERT) | (kinds > DELETE)
    if bad.any():
        raise ValueError(f"{name} join input has a record with unknown _kind {kinds[bad][0]}: "
                         f"{frame[bad].iloc[0].to_dict()}")
    return frame, kinds
