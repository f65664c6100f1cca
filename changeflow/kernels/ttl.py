"""State TTL for a kernel whose state is one set of tables keyed by the operator's key.

``table.exec.state.ttl`` (and the ``STATE_TTL`` hint) give every stateful
operator Flink's ``StateTtlConfig``: update type ``OnCreateAndWrite``,
visibility ``NeverReturnExpired``, processing time. A key's state expires
``ttl`` after its last *write*; reading it does not extend it; expired state is
never seen again, so the key is treated as new.

:class:`KeyStateTtl` gives that to the group aggregation, the insert-only
deduplication and the Top-N kernels without touching their logic: it keeps one
row per key in its own table ``_ttl`` (the key columns and ``_written``, the
processing time of the key's last write) and, per batch,

1. loads the stamps of the batch's keys; the state of a key stamped at or
   before ``now - ttl`` is deleted from every table of the kernel before the
   kernel runs, so the kernel finds no state for it (expiry on access: the
   group aggregation then starts a new accumulator for an accumulate message and
   ignores a retraction, as Flink's GroupAggFunction: "Don't create a new
   accumulator for a retraction message");
2. runs the kernel on a view of the state that records which keys the kernel
   wrote (stored at least one row for) and which it removed from its primary
   table (its state is gone, e.g. a group whose record count fell to 0);
3. stamps written keys with ``now``, drops the stamps of removed keys, keeps the
   others (a key the kernel only read, e.g. a keep-first deduplication's later
   rows, keeps its old stamp, as OnCreateAndWrite).

:meth:`KeyStateTtl.sweep` reclaims the keys that never come back: it scans the
stamps, deletes the state of every expired key and says when the oldest
survivor expires (the runtime calls it from a processing-time timer, see
:mod:`changeflow.runtime.spark.processor`). A sweep changes only what is
stored, never the output: the next record of an expired key finds no state
either way.

Where changeflow differs from Flink: Flink's TTL is per state object (and per
entry of a MapState: a DISTINCT value, a MIN/MAX retraction map entry, an
append-only Top-N sort key), so parts of one key's state can expire while
others live; changeflow expires a key's state as a whole, at the last write of
any part of it. Expiry is silent in both (no retraction is emitted).

Time comes from the clock the host binds (:meth:`~changeflow.kernels.contract.Kernel.bind_clock`,
processing time in ms): the Spark runtime's gives the micro-batch's timestamp,
the testing harness's the time a test sets. The wrapper passes the clock on to
the wrapped kernel, and every other part of the kernel contract (timers, flush,
end of input) too.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.kernels.aggregate import AggCall, GroupAggregate
>>> from changeflow.testing.harness import KernelHarness, format_changes, insert_record
>>> now = [0]
>>> agg = GroupAggregate(["k"], [AggCall("count_star", None, DataTypes.BIGINT(), "n")],
...                      mini_batch=False, input_insert_only=False)
>>> h = KernelHarness(KeyStateTtl(agg, ["k"], ttl_ms=1000), ["k"], now=0)
>>> format_changes(h.process([insert_record("a")]))
['+I[a, 1]']
>>> h.set_time(1000)   # the key was last written at 0: expired at 1000
>>> format_changes(h.process([insert_record("a")]))
['+I[a, 1]']
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.contract import Clock, WrappingKernel, wall_clock
from changeflow.kernels.state import KeyedState
from changeflow.kernels.frames import select

TTL_TABLE = "_ttl"
WRITTEN = "_written"


__all__ = ["KeyStateTtl", "TTL_TABLE", "WRITTEN", "wall_clock"]


class KeyStateTtl(WrappingKernel):
    """Per-key state TTL around ``kernel`` (see the module docstring).

    ``key_columns`` are the kernel's key (every state table's rows start with
    them, and the kernel stores with keys frames of exactly these columns);
    ``tables`` are the kernel's state tables (``kernel.state_tables`` when not
    given), the first one its primary table: a key without a row there has no
    state. Attributes not defined here (``output_columns``, ...) are the kernel's.
    """

    def __init__(self, kernel: Any, key_columns: list[str], ttl_ms: int, *, tables: list[str] | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        if ttl_ms <= 0:
            raise ValueError(f"a state TTL must be positive, got {ttl_ms} ms")
        self.kernel = kernel
        self.key_columns = list(key_columns)
        self.tables = list(tables if tables is not None else kernel.state_tables)
        if TTL_TABLE in self.tables:
            raise ValueError(f"state table name {TTL_TABLE!r} is reserved for the state TTL")
        self.ttl_ms = int(ttl_ms)
        self.clock = clock or wall_clock
        # How often (at most) the runtime should sweep a bucket: once per TTL (a sweep reads
        # the bucket's every page), so an idle key is reclaimed within two TTLs of its last write.
        self.sweep_interval_ms: int | None = self.ttl_ms

    # --- the rest of the kernel contract is the wrapped kernel's (WrappingKernel) -------------
    def bind_clock(self, clock: Clock) -> None:
        self.clock = clock
        self.kernel.bind_clock(clock)

    def __getattr__(self, name: str) -> Any:
        # Only called for names not found on the wrapper; guard the attributes that
        # unpickling looks up before __dict__ is filled.
        if name.startswith("__") or name == "kernel":
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Expire the batch's stale keys, run the kernel, stamp the keys it wrote."""
        if len(batch) == 0:
            return self.kernel.process(batch, state)
        now = int(self.clock())
        keys = KeyIndex(batch, self.key_columns)
        written_at = self._stamps(state, keys)
        expired = (written_at >= 0) & (written_at <= now - self.ttl_ms)
        if expired.any():
            self._delete(state, select(keys.frame, expired).reset_index(drop=True))
            written_at[expired] = -1
        view = _RecordingState(state, keys, self.tables[0])
        out = self.kernel.process(batch, view)
        stamp = np.where(view.written, now, np.where(view.removed, -1, written_at))
        live = stamp >= 0
        rows = select(keys.frame, live).reset_index(drop=True)
        rows[WRITTEN] = stamp[live].astype(np.int64)
        state.store(TTL_TABLE, keys.frame, rows)
        return out

    def sweep(self, state: KeyedState, now: int | None = None) -> int | None:
        """Delete the state of every key last written at or before ``now - ttl``.

        Returns when the oldest surviving key expires (its last write plus the
        TTL), or None when no key is left.
        """
        now = int(self.clock()) if now is None else int(now)
        stamps = state.scan(TTL_TABLE)
        if not len(stamps):
            return None
        written = stamps[WRITTEN].to_numpy(dtype=np.int64)
        expired = written <= now - self.ttl_ms
        if expired.any():
            gone = stamps.loc[expired, self.key_columns].reset_index(drop=True)
            self._delete(state, gone)
            state.store(TTL_TABLE, gone, gone.iloc[:0])
        left = written[~expired]
        return int(left.min()) + self.ttl_ms if len(left) else None

    def live_keys(self, state: KeyedState) -> int:
        """How many keys hold state (have a stamp): for tests and measurements."""
        return len(state.scan(TTL_TABLE))

    def _stamps(self, state: KeyedState, keys: KeyIndex) -> np.ndarray:
        """Each batch key's last write time, -1 where it has none."""
        out = np.full(keys.size, -1, dtype=np.int64)
        got = state.load(TTL_TABLE, keys.frame)
        if len(got) and WRITTEN in got.columns:
            out[keys.lookup(got)] = got[WRITTEN].to_numpy(dtype=np.int64)
        return out

    def _delete(self, state: KeyedState, keys: pd.DataFrame) -> None:
        for table in self.tables:
            state.store(table, keys, keys.iloc[:0])


class _RecordingState:
    """The kernel's view of the state: passes every call through, noting which keys were written.

    ``written[code]``: the kernel stored at least one row for the key (any table);
    ``removed[code]``: it stored the key without rows in the primary table.
    """

    def __init__(self, state: KeyedState, keys: KeyIndex, primary: str) -> None:
        self.state = state
        self.keys = keys
        self.primary = primary
        self.written = np.zeros(keys.size, dtype=bool)
        self.removed = np.zeros(keys.size, dtype=bool)

    def load(self, table: str, keys: pd.DataFrame) -> pd.DataFrame:
        return self.state.load(table, keys)

    def store(self, table: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
        self.state.store(table, keys, rows)
        with_rows = self.keys.lookup(rows) if len(rows) else np.empty(0, dtype=np.intp)
        self.written[with_rows] = True
        if table == self.primary and len(keys):
            stored = np.zeros(self.keys.size, dtype=bool)
            stored[self.keys.lookup(keys)] = True
            stored[with_rows] = False
            self.removed |= stored

    def scan(self, table: str) -> pd.DataFrame:
        return self.state.scan(table)
