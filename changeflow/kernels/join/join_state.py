"""The join's per-side state: its layout, its loading and storing, and the state TTL sweep.

State tables (rows start with the join key columns ``_jk0, _jk1, ...``): ``left`` and
``right``, one row per distinct row value: the side's columns, ``_count`` (copies)
and ``_assoc`` (associations; 0 on an inner side), and with a state TTL ``_ts``
(see :mod:`.streaming_join` for what expiry means).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.frames import column, select
from changeflow.kernels.join.join_rows import LEFT, RIGHT, array, python_values, tuples
from changeflow.kernels.state import KeyedState

SIDE = "_side"
COUNT = "_count"
ASSOC = "_assoc"
TS = "_ts"
TABLES = ("left", "right")


def key_column(i: int) -> str:
    """Name of the ``i``-th join key column in state and in the packed input."""
    return f"_jk{i}"


class SideStates:
    """The state side of :class:`~.streaming_join.StreamingJoin` (a mixin: it reads the join's configuration).

    Uses the join's ``key_columns``, ``key_dtypes``, ``columns``, ``dtypes``,
    ``ttl_ms``, ``clock`` and ``_now`` (the batch's processing time).
    """

    key_columns: list[str]
    key_dtypes: list[Any] | None
    columns: tuple[list[str], list[str]]
    dtypes: dict[str, Any]
    ttl_ms: tuple[int, int]
    clock: Any
    _now: int

    def _key_frame(self, keys: list[tuple]) -> pd.DataFrame:
        if not self.key_columns:
            return pd.DataFrame(index=range(1 if keys else 0))
        data = {}
        for i, name in enumerate(self.key_columns):
            values = [k[i] for k in keys]
            dtype = self.key_dtypes[i] if self.key_dtypes is not None else None
            data[name] = array(values, dtype)
        return pd.DataFrame(data)

    def _load(self, state: KeyedState, side: int, key_frame: pd.DataFrame) -> dict[tuple, dict[tuple, list[int]]]:
        stores: dict[tuple, dict[tuple, list[int]]] = {}
        if not len(key_frame):
            return stores
        frame = state.load(TABLES[side], key_frame)
        if not len(frame) or COUNT not in frame.columns:
            return stores
        key_values = [python_values(column(frame, c)) for c in self.key_columns]
        keys = list(zip(*key_values, strict=True)) if key_values else [()] * len(frame)
        rows = tuples(frame, self.columns[side])
        counts = frame[COUNT].to_numpy(dtype=np.int64).tolist()
        assocs = frame[ASSOC].to_numpy(dtype=np.int64).tolist()
        ttl = self.ttl_ms[side]
        stamps = frame[TS].to_numpy(dtype=np.int64).tolist() if TS in frame.columns else [0] * len(frame)
        cutoff = self._now - ttl
        for key, row, count, assoc, ts in zip(keys, rows, counts, assocs, stamps, strict=True):
            if ttl > 0 and ts <= cutoff:
                continue  # expired: never returned (the store after the batch drops it)
            stores.setdefault(key, {})[row] = [count, assoc, ts]
        return stores

    def _state_rows(self, side: int, store: dict[tuple, dict[tuple, list[int]]], keys: list[tuple]) -> pd.DataFrame:
        entries = [(key, row, e[0], e[1], e[2]) for key in keys for row, e in store.get(key, {}).items()]
        data: dict[str, Any] = {}
        for i, name in enumerate(self.key_columns):
            dtype = self.key_dtypes[i] if self.key_dtypes is not None else None
            data[name] = array([e[0][i] for e in entries], dtype)
        for j, name in enumerate(self.columns[side]):
            data[name] = array([e[1][j] for e in entries], self.dtypes.get(name))
        data[COUNT] = np.array([e[2] for e in entries], dtype=np.int64)
        data[ASSOC] = np.array([e[3] for e in entries], dtype=np.int64)
        if self.ttl_ms[side] > 0:  # without a TTL the state keeps the layout it always had
            data[TS] = np.array([e[4] for e in entries], dtype=np.int64)
        return pd.DataFrame(data)

    # --- state TTL ---------------------------------------------------------------------
    def sweep(self, state: KeyedState, now: int | None = None) -> int | None:
        """Remove every stored row of either side last written at or before ``now`` minus its side's TTL.

        Emits nothing. Returns when the oldest surviving row expires, or None when
        no row with a TTL is left.
        """
        now = int(self.clock()) if now is None else int(now)
        due: list[int] = []
        for side in (LEFT, RIGHT):
            ttl = self.ttl_ms[side]
            if ttl <= 0:
                continue
            rows = state.scan(TABLES[side])
            if not len(rows) or TS not in rows.columns:
                continue
            stamps = rows[TS].to_numpy(dtype=np.int64)
            expired = stamps <= now - ttl
            if expired.any():
                key_values = [python_values(column(rows, c)) for c in self.key_columns]
                row_keys = list(zip(*key_values, strict=True)) if key_values else [()] * len(rows)
                gone = {k for k, e in zip(row_keys, expired.tolist(), strict=True) if e}
                touched = np.array([k in gone for k in row_keys], dtype=bool)
                keep = touched & ~expired
                if self.key_columns:
                    keys = rows.loc[touched, self.key_columns].drop_duplicates().reset_index(drop=True)
                else:
                    keys = pd.DataFrame(index=range(1))
                state.store(TABLES[side], keys, select(rows, keep).reset_index(drop=True))
            if (~expired).any():
                due.append(int(stamps[~expired].min()) + ttl)
        return min(due) if due else None
