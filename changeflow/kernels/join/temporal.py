"""The event-time temporal join kernel: Flink's ``TemporalRowTimeJoinOperator``.

``probe [LEFT] JOIN versioned FOR SYSTEM_TIME AS OF probe.t ON keys``: the left
(probe) input's rows wait in state until the watermark reaches their time;
then each is joined with the version of its key valid at its time, the right
row with the largest time at or before it, and emitted with the probe row's
kind. No version, a version that is a deletion, or a pair failing the rest of
ON: an inner join emits nothing, a LEFT join the row null-padded.

The right (versioned) input's rows are versions, stored per key by their time
(a later row of the same time replaces the earlier one): ``+I`` and ``+U``
rows are versions, a ``-D`` row says the key has no version from its time
on; ``-U`` rows are ignored (Flink's planner gives this operator only the
``+U`` of an update). On every watermark ``W`` (:meth:`on_watermark`), after
the due probe rows are emitted, the versions before the last one at or before
``W`` are dropped: no probe row that is not late can need them.

A probe row whose time the watermark has passed when it arrives is *late*: it
is emitted at the next watermark, with the versions still stored (as Flink,
which keeps one timer per key and fires it at the next watermark; Flink drops
old versions only when a key's timer fires, this kernel at every watermark, so
a late probe row may find an older version in Flink).

State tables (rows start with the join key columns ``_jk0, ...``):
``temporal_left``: the probe's columns, ``_time``, ``_kind``, ``_row_seq``;
``temporal_right``: the versioned table's columns, ``_time``, ``_kind``. A probe
row with a NULL key has no version (padded by a LEFT join, when due).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.expressions import Expression
from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import DELETE, KIND, SEQ, SUB, UPDATE_BEFORE
from changeflow.kernels.frames import column
from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.kernels.join.join_rows import LEFT, RIGHT, JoinOutput, array, python_values, tuples
from changeflow.kernels.join.join_state import key_column
from changeflow.kernels.join.two_inputs import TwoInputs
from changeflow.kernels.state import KeyedState

TABLES = ("temporal_left", "temporal_right")
TIME, ROW_KIND, ROW_SEQ = "_time", "_row_kind", "_row_seq"
_NULL_KEY = ("__null_key__",)  # probe rows with a NULL key: stored apart, never joined


class TemporalJoin(TwoInputs):
    """``left [LEFT] JOIN right FOR SYSTEM_TIME AS OF left_time ON left_keys = right_keys AND condition``.

    ``left_columns`` / ``right_columns`` are the output names of each side's columns,
    ``left_time`` / ``right_time`` the rowtime columns among them.

    >>> import datetime as dt
    >>> from changeflow.testing.harness import KernelHarness, insert_record, format_changes
    >>> at = lambda s: dt.datetime(2024, 1, 1, 0, 0, s)
    >>> ms = lambda s: int(at(s).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
    >>> join = TemporalJoin("LEFT", ["k", "t"], ["k0", "t0", "rate"], ["k"], ["k0"], "t", "t0")
    >>> h = KernelHarness(join, ["_side", "k", "t", "k0", "t0", "rate"])
    >>> h.process([insert_record(1, None, None, "eur", at(0), 10), insert_record(1, None, None, "eur", at(5), 11),
    ...            insert_record(0, "eur", at(3), None, None, None), insert_record(0, "usd", at(4), None, None, None)])
    []
    >>> [(r[0], r[4]) for r in h.watermark(ms(4))]  # eur at 0:03: the version of 0:00; usd: none
    [('eur', 10), ('usd', None)]
    """

    event_time = True

    def __init__(self, join_type: str, left_columns: list[str], right_columns: list[str],
                 left_keys: list[str], right_keys: list[str], left_time: str, right_time: str,
                 condition: Expression | None = None, *, key_dtypes: list[Any] | None = None,
                 dtypes: dict[str, Any] | None = None) -> None:
        join_type = join_type.upper()
        if join_type not in ("INNER", "LEFT"):
            raise ValueError(f"a temporal join is INNER or LEFT, not {join_type!r}")
        if len(left_keys) != len(right_keys) or not left_keys:
            raise ValueError(f"a temporal join needs paired equality keys: left {list(left_keys)}, "
                             f"right {list(right_keys)}")
        self.join_type = join_type
        self.columns = (list(left_columns), list(right_columns))
        self.keys = (list(left_keys), list(right_keys))
        self.times = (left_time, right_time)
        self.condition = condition
        self.key_columns = [key_column(i) for i in range(len(left_keys))]
        self.key_dtypes = list(key_dtypes) if key_dtypes is not None else None
        self.dtypes = dict(dtypes or {})
        self._compile()

    def _compile(self) -> None:
        self._matches = (compile_pair_condition(self.condition, self.columns[LEFT], self.columns[RIGHT])
                         if self.condition is not None else None)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_matches"}  # a closure: compiled again

    def __setstate__(self, values: dict) -> None:
        self.__dict__.update(values)
        self._compile()

    @property
    def operator_name(self) -> str:
        return "TemporalJoin"

    # --- input: only stored ---------------------------------------------------------------------
    def process_sides(self, left: pd.DataFrame | None, right: pd.DataFrame | None,
                      state: KeyedState) -> pd.DataFrame:
        """Keep the probe rows until the watermark reaches them and the versions; emits nothing."""
        probes = self._records(LEFT, left)
        versions = [r for r in self._records(RIGHT, right) if r[4] != UPDATE_BEFORE and r[1] != _NULL_KEY]
        keys = list(dict.fromkeys([r[1] for r in probes] + [r[1] for r in versions]))
        if keys:
            key_frame = self._key_frame(keys)
            stored = self._load(state, RIGHT, key_frame)
            for seq, key, row, time, kind in versions:  # in input order: the later of one time wins
                stored.setdefault(key, {})[time] = [time, row, kind, seq]
            state.store(TABLES[RIGHT], key_frame, self._state_rows(RIGHT, stored, keys))
            waiting = self._load(state, LEFT, key_frame)
            for seq, key, row, time, kind in probes:
                waiting.setdefault(key, {})[seq] = [time, row, kind, seq]
            state.store(TABLES[LEFT], key_frame, self._state_rows(LEFT, waiting, keys))
        return JoinOutput().frame(self)  # type: ignore[arg-type]  # reads columns and dtypes, as of a join

    # --- the watermark: emit what is due, drop old versions ---------------------------------------
    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        probes = state.scan(TABLES[LEFT])
        if not len(probes) or TIME not in probes.columns:
            due_keys: list[tuple] = []
            due = probes.iloc[:0]
        else:
            due = probes.loc[probes[TIME].to_numpy(dtype=np.int64) <= watermark]
            due_keys = list(dict.fromkeys(self._row_keys(due)))
        versions = state.scan(TABLES[RIGHT])
        version_keys = list(dict.fromkeys(self._row_keys(versions))) if len(versions) and TIME in versions else []
        keys = list(dict.fromkeys(due_keys + version_keys))
        if not keys:
            return None
        key_frame = self._key_frame(keys)
        stored = self._load(state, RIGHT, key_frame)
        waiting = self._load(state, LEFT, key_frame)
        out = JoinOutput()
        ordered = sorted(((key, e) for key in due_keys for e in waiting[key].values() if e[0] <= watermark),
                         key=lambda pair: pair[1][3])  # in arrival order, as Flink emits a key's probe rows
        for key, (time, row, kind, seq) in ordered:
            out._seq = seq
            version = self._version(stored.get(key, {}), time) if key != _NULL_KEY else None
            if version is not None and version[2] != DELETE and self._match(row, version[1]):
                out._emit(kind, row, version[1])
            elif self.join_type == "LEFT":
                out._emit(kind, row, None)
        for key in due_keys:
            waiting[key] = {s: e for s, e in waiting[key].items() if e[0] > watermark}
        for by_time in stored.values():
            times = sorted(by_time)
            keep_from = next((i for i, t in enumerate(times) if t > watermark), len(times)) - 1
            for t in times[:max(keep_from, 0)]:
                del by_time[t]
        state.store(TABLES[LEFT], key_frame, self._state_rows(LEFT, waiting, keys))
        state.store(TABLES[RIGHT], key_frame, self._state_rows(RIGHT, stored, keys))
        return out.frame(self) if out.kinds else None  # type: ignore[arg-type]

    # --- pieces ---------------------------------------------------------------------------------
    @staticmethod
    def _version(by_time: dict[int, list], time: int) -> list | None:
        """The version valid at ``time``: the one with the largest time at or before it."""
        best = None
        for t, entry in by_time.items():
            if t <= time and (best is None or t > best[0]):
                best = entry
        return best

    def _match(self, row: tuple, other: tuple) -> bool:
        return self._matches is None or self._matches(row, other)

    def _records(self, side: int, frame: pd.DataFrame | None) -> list[tuple]:
        """``(seq, key, row, time ms, kind)`` of each row, in input order (a NULL key: ``_NULL_KEY``)."""
        if frame is None or not len(frame):
            return []
        missing = [c for c in self.columns[side] + [KIND, SEQ, SUB] if c not in frame.columns]
        if missing:
            raise ValueError(f"{TABLES[side]} input lacks columns {missing}; it has {list(frame.columns)}")
        frame = frame.sort_values([SEQ, SUB], kind="stable", ignore_index=True)
        times = epoch_ms(column(frame, self.times[side])).tolist()
        nulls = np.zeros(len(frame), dtype=bool)
        key_values = []
        for i, k in enumerate(self.keys[side]):
            values = column(frame, k)
            nulls |= values.isna().to_numpy()
            if self.key_dtypes is not None and str(values.dtype) != str(self.key_dtypes[i]):
                values = values.astype(self.key_dtypes[i])
            key_values.append(python_values(values))
        keys = list(zip(*key_values, strict=True))
        return [(s, _NULL_KEY if n else k, r, t, kind) for s, k, r, t, kind, n in
                zip(frame[SEQ].to_numpy(dtype=np.int64).tolist(), keys, tuples(frame, self.columns[side]), times,
                    frame[KIND].to_numpy(dtype=np.int64).tolist(), nulls.tolist(), strict=True)]

    def _key_frame(self, keys: list[tuple]) -> pd.DataFrame:
        # The NULL-key group is stored under all-null key columns.
        rows = [tuple(None for _ in self.key_columns) if k == _NULL_KEY else k for k in keys]
        return pd.DataFrame({name: array([k[i] for k in rows], self.key_dtypes[i] if self.key_dtypes else None)
                             for i, name in enumerate(self.key_columns)})

    def _row_keys(self, frame: pd.DataFrame) -> list[tuple]:
        values = [python_values(column(frame, c)) for c in self.key_columns]
        return [_NULL_KEY if any(v is None for v in k) else k for k in zip(*values, strict=True)]

    def _load(self, state: KeyedState, side: int, key_frame: pd.DataFrame) -> dict[tuple, dict[int, list]]:
        """Per key: the stored rows by time (versions) or by input position (probe rows)."""
        out: dict[tuple, dict[int, list]] = {}
        frame = state.load(TABLES[side], key_frame)
        if not len(frame) or TIME not in frame.columns:
            return out
        seqs = frame[ROW_SEQ].to_numpy(dtype=np.int64).tolist()
        for key, row, time, kind, seq in zip(self._row_keys(frame), tuples(frame, self.columns[side]),
                                             frame[TIME].to_numpy(dtype=np.int64).tolist(),
                                             frame[ROW_KIND].to_numpy(dtype=np.int64).tolist(), seqs, strict=True):
            out.setdefault(key, {})[time if side == RIGHT else seq] = [time, row, kind, seq]
        return out

    def _state_rows(self, side: int, store: dict[tuple, dict[int, list]], keys: list[tuple]) -> pd.DataFrame:
        entries = [(key, e) for key in keys for e in store.get(key, {}).values()]
        frame = self._key_frame([k for k, _ in entries])
        for j, name in enumerate(self.columns[side]):
            frame[name] = array([e[1][j] for _, e in entries], self.dtypes.get(name))
        frame[TIME] = np.array([e[0] for _, e in entries], dtype=np.int64)
        frame[ROW_KIND] = np.array([e[2] for _, e in entries], dtype=np.int64)
        frame[ROW_SEQ] = np.array([e[3] for _, e in entries], dtype=np.int64)
        return frame


__all__ = ["TABLES", "TemporalJoin"]
