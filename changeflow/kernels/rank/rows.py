"""Shared plumbing of the rank kernels: checking input, the rows at hand, stamping output.

A rank kernel works on the frame of *all rows at hand*: the rows loaded from
state followed by the batch's rows, so that a row id (a position in that frame)
names a stored row or an input row alike, and output is built with one ``take``.

Output stamps: the i-th change emitted for an input row with stamps
``(_seq, _sub)`` gets ``(_seq, _sub * fanout + i)``. A Top-N can emit up to
``2 * rank_end + 1`` changes for one input row (every rank below an insert
shifts), more than :data:`~changeflow.kernels.changelog.FANOUT`, so it passes a
larger ``fanout``; ordering by ``(_seq, _sub)`` is kept because the map is
monotone in ``_sub``.
"""

from __future__ import annotations

import math
from typing import Collection

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import BOOKKEEPING, DELETE, INSERT, KIND, SEQ, SUB, is_retraction
from changeflow.kernels.frames import column, select


def check_dedup_columns(columns: list[str], keys: list[str], state_columns: Collection[str] = frozenset()) -> None:
    """A deduplication's keys must be among its columns, which must not take a reserved name."""
    missing = [k for k in keys if k not in columns]
    if missing:
        raise ValueError(f"deduplication keys {missing} are not input columns {columns}")
    bad = sorted(set(columns) & (set(BOOKKEEPING) | set(state_columns)))
    if bad:
        raise ValueError(f"column names {bad} are reserved for changelog bookkeeping"
                         + (" and state" if state_columns else ""))


def check_input(batch: pd.DataFrame, needed: list[str], operator: str, insert_only: bool) -> np.ndarray:
    """The batch's ``_kind`` values, after checking columns, kinds and (optionally) insert-only."""
    missing = [c for c in list(needed) + list(BOOKKEEPING) if c not in batch.columns]
    if missing:
        raise ValueError(f"{operator} input lacks columns {missing}; it has {list(batch.columns)}")
    kinds = batch[KIND].to_numpy(dtype=np.int8)
    unknown = (kinds < INSERT) | (kinds > DELETE)
    if unknown.any():
        bad = int(np.flatnonzero(unknown)[0])
        raise ValueError(f"{operator} got a record with unknown _kind {kinds[bad]}: {batch.iloc[bad].to_dict()}")
    if insert_only and is_retraction(kinds).any():
        bad = int(np.flatnonzero(is_retraction(kinds))[0])
        raise ValueError(f"{operator} takes insert-only input but got the retraction {batch.iloc[bad].to_dict()}")
    return kinds


def row_tuples(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    """Each row's values as a hashable tuple, every null as None (for equality of rows)."""
    if not columns:
        return [()] * len(frame)
    cols = []
    for name in columns:
        series = column(frame, name)
        values = series.astype(object).tolist()
        if series.isna().any():
            nulls = series.isna().tolist()
            values = [None if n else v for v, n in zip(values, nulls, strict=True)]
        cols.append([_plain(v) for v in values] if series.dtype == object else values)
    return list(zip(*cols, strict=True))


def _plain(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return tuple(sorted(value.items(), key=repr))
    return value


def stamped_output(rows: pd.DataFrame, columns: list[str], ids: np.ndarray, kinds: np.ndarray,
                   seqs: np.ndarray, subs: np.ndarray, rank_column: str | None = None,
                   ranks: np.ndarray | None = None) -> pd.DataFrame:
    """The output changelog frame: ``columns`` of ``rows`` taken at ``ids``, in stamp order."""
    taken = rows[columns].take(ids).reset_index(drop=True) if len(ids) else rows[columns].iloc[:0].reset_index(
        drop=True)
    data = {name: taken[name] for name in columns}
    if rank_column is not None:
        data[rank_column] = np.asarray(ranks, dtype=np.int64)
    data[KIND] = np.asarray(kinds, dtype=np.int8)
    data[SEQ] = np.asarray(seqs, dtype=np.int64)
    data[SUB] = np.asarray(subs, dtype=np.int64)
    out = pd.DataFrame(data, copy=False)
    order = np.lexsort((out[SUB].to_numpy(), out[SEQ].to_numpy()))
    return out.take(order).reset_index(drop=True)


def rows_at_hand(stored: pd.DataFrame, batch: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Stored rows then batch rows, ``columns`` only, with the batch's dtypes."""
    part = select(batch, columns).reset_index(drop=True)
    if len(stored) == 0:
        return part
    stored = select(stored, columns).reset_index(drop=True)
    for name in columns:
        if stored[name].dtype != part[name].dtype:
            stored[name] = stored[name].astype(part[name].dtype)
    return pd.concat([stored, part], ignore_index=True)
