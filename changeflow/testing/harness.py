"""Drive a kernel through every call of the kernel contract and assert the exact changelog it emits.

Mirrors Flink's operator test harness: build input with :func:`insert_record`,
:func:`update_before_record`, :func:`update_after_record`,
:func:`delete_record` (:mod:`.changelog`); feed a list of them as one batch
with :meth:`KernelHarness.process`; compare the emitted rows, kinds included,
with :func:`assert_changelog`. :func:`materialize` applies a changelog to an
empty table, which is how the streaming result is compared with a batch result.

Beyond batches, the harness plays the host of :mod:`changeflow.kernels.contract`
as the Spark runtime does:

- **processing time**: :meth:`~KernelHarness.set_processing_time` /
  :meth:`~KernelHarness.advance` move the clock the kernel reads and fire what
  is due then: the kernel's timers (``on_timer``) and, for a kernel with a state
  TTL, its sweep (every ``sweep_interval_ms`` at most, armed by input, as the
  runtime's sweep timer); :meth:`~KernelHarness.set_time` only moves the clock
  and :meth:`~KernelHarness.sweep` sweeps now;
- **signals**: :meth:`~KernelHarness.flush` (an upstream flush) and
  :meth:`~KernelHarness.end_of_input` (for an event-time kernel the final
  watermark first, as every host does); :meth:`~KernelHarness.watermark`
  advances event time (``on_watermark``; refused by a kernel without
  ``event_time``), and :meth:`~KernelHarness.process_with_watermarks` feeds a
  batch with watermarks among its rows in one call, as the Spark host does;
- **restarts**: :meth:`~KernelHarness.snapshot` serializes the state and
  :meth:`~KernelHarness.restore` continues from it with a fresh kernel object,
  as Spark re-creates the processor (and unpickles the kernel) every
  micro-batch; ``restart_every_batch=True`` does that before every call, so a
  test checks the kernel keeps nothing between calls.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.kernels.aggregate import AggCall, GroupAggregate
>>> agg = GroupAggregate(["k"], [AggCall("count_star", None, None, "n")],
...                      mini_batch=False, input_insert_only=False)
>>> h = KernelHarness(agg, ["k"], restart_every_batch=True)
>>> format_changes(h.process([insert_record("a"), insert_record("a"), delete_record("a")]))
['+I[a, 1]', '-U[a, 1]', '+U[a, 2]', '-U[a, 2]', '+U[a, 1]']
>>> materialize(h.changes)
[<Row('a', 1)>]
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.contract import MIN_WATERMARK, HostClock, Kernel, concat_outputs, end_of_input_output
from changeflow.kernels.keyed.records import VALUE
from changeflow.kernels.order import stamps_of
from changeflow.kernels.state import InMemoryKeyedState, KeyedState
from changeflow.testing.changelog import (assert_changelog, delete_record, format_change, format_changes,
                                          infer_dtype, insert_record, materialize, materialize_table, object_array,
                                          row_of_kind, rows_of, update_after_record, update_before_record)

__all__ = ["KernelHarness", "Snapshot", "assert_changelog", "delete_record", "format_change", "format_changes",
           "insert_record", "materialize", "materialize_table", "row_of_kind", "rows_of", "update_after_record",
           "update_before_record"]


@dataclass(frozen=True)
class Snapshot:
    """What survives a restart: the serialized state and the harness's clock and stamps."""

    state: bytes
    now: int
    next_seq: int
    sweep_due: int | None
    watermark: int = MIN_WATERMARK


class KernelHarness:
    """Feeds batches of records to a kernel, plays its host, and collects the changes it emits.

    ``columns`` names the input fields in record order. ``dtypes`` optionally
    fixes a column's pandas dtype; otherwise it is inferred from the values
    (int -> ``Int64``, float -> ``Float64``, bool -> ``boolean``, else object).
    Records get increasing ``_seq`` stamps across batches. The harness keeps
    one :class:`InMemoryKeyedState` (or the ``state`` given) until a restore.

    The kernel reads the harness's clock from the first time the test sets
    it (:meth:`set_time`, :meth:`set_processing_time`, :meth:`advance`), or
    from the start with ``now``; until then it keeps its own clock.
    ``restart_every_batch`` restores a fresh kernel from a snapshot before every
    call, as Spark does every micro-batch.
    """

    def __init__(
        self,
        kernel: Kernel,
        columns: Sequence[str],
        *,
        dtypes: dict[str, Any] | None = None,
        state: KeyedState | None = None,
        now: int | None = None,
        restart_every_batch: bool = False,
    ) -> None:
        self.kernel = kernel
        self.columns = list(columns)
        self.dtypes = dict(dtypes or {})
        self.state = state if state is not None else InMemoryKeyedState()
        self.changes: list[Row] = []  # everything emitted so far
        self._next_seq = 0
        self.now = 0  # the processing time (ms) the kernel reads once the harness's clock is bound
        self._clock: HostClock | None = None
        self._sweep_due: int | None = None  # the bucket's sweep timer (a kernel with sweep_interval_ms)
        self.current_watermark = MIN_WATERMARK  # the last watermark given (watermark()), as the host keeps it
        self.restart_every_batch = restart_every_batch
        # Spark pickles the kernel on the driver and unpickles that same blob every micro-batch.
        try:
            self._blob: bytes | None = pickle.dumps(kernel)
        except (pickle.PicklingError, AttributeError, TypeError):
            self._blob = None  # e.g. a lambda inside (Spark ships those with cloudpickle): deep copies instead
            self._original = copy.deepcopy(kernel)
        if now is not None:
            self.set_time(now)

    # --- processing time --------------------------------------------------------------
    def set_time(self, now_ms: int) -> None:
        """Set the processing time (ms) the kernel reads, firing nothing (the host's clock, bound now)."""
        self.now = int(now_ms)
        if self._clock is None:
            self._clock = HostClock()
            self.kernel.bind_clock(self._clock)
        self._clock.set(self.now)

    def set_processing_time(self, now_ms: int) -> list[Row]:
        """Move processing time to ``now_ms`` and fire what is due, as the runtime's timers do.

        The kernel's due timers fire (``on_timer``, earliest first), then a due
        sweep runs. Returns the changes the timers emitted.
        """
        self._before_call()
        self.set_time(now_ms)
        out = None
        due = self.kernel.next_timer(self.state) if self.kernel.has_timers else None
        if due is not None and due <= self.now:
            out = self.kernel.on_timer(self.now, self.state)
        if self._sweep_due is not None and self._sweep_due <= self.now:
            next_due = self.kernel.sweep(self.state, self.now)
            interval = self.kernel.sweep_interval_ms or 0
            self._sweep_due = None if next_due is None else max(next_due, self.now + interval)
        return self._collect(out)

    def advance(self, ms: int) -> list[Row]:
        """Move processing time ``ms`` forward (:meth:`set_processing_time`)."""
        return self.set_processing_time(self.now + int(ms))

    def next_timer(self) -> int | None:
        """When the kernel's earliest processing-time timer is due, or None."""
        return self.kernel.next_timer(self.state)

    def sweep(self) -> int | None:
        """Run the kernel's state TTL sweep now (at :attr:`now`); return when the next one is due, or None."""
        return self.kernel.sweep(self.state, self.now)

    # --- input and signals ------------------------------------------------------------
    def process(self, records: Iterable[Row]) -> list[Row]:
        """Feed ``records`` as one batch; return the changes it emitted."""
        return self._collect(self.process_frame(self.frame(records)))

    def process_each(self, records: Iterable[Row]) -> list[Row]:
        """Feed ``records`` one batch per record; return all changes emitted."""
        out: list[Row] = []
        for record in records:
            out.extend(self.process([record]))
        return out

    def process_frame(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Feed a ready changelog frame (with bookkeeping columns) as one batch.

        Returns the kernel's output frame as is; it is not added to :attr:`changes`.
        """
        self._before_call()
        out = self.kernel.process(batch, self.state)
        interval = self.kernel.sweep_interval_ms
        if interval is not None and len(batch) and (self._sweep_due is None or self._sweep_due > self.now + interval):
            self._sweep_due = self.now + interval  # armed by input, a TTL ahead (as the runtime's TtlSweep)
        return out

    def process_with_watermarks(self, records: Iterable[Row], watermarks: Iterable[tuple[int, int]]) -> list[Row]:
        """Feed ``records`` as one batch with watermarks among them, as the Spark host hands a micro-batch over.

        ``watermarks`` are ``(after, watermark)`` pairs: the watermark follows the
        first ``after`` records of the batch. As a host does, only the watermarks
        that move the current one on are passed; one call of the kernel's
        ``process_with_watermarks``. Returns the changes emitted (what a watermark
        fires after the rows before it), which must be those of :meth:`process` and
        :meth:`watermark` called in turn.
        """
        self._before_call()
        batch = self.frame(records)
        first = int(batch[SEQ].iloc[0]) if len(batch) else self._next_seq
        advances, current = [], self.current_watermark
        for after, watermark in sorted(watermarks, key=lambda w: w[0]):
            if not 0 <= after <= len(batch):
                raise ValueError(f"a watermark after {after} records of a batch of {len(batch)}")
            if int(watermark) > current:
                current = int(watermark)
                advances.append((first + int(after) - 1, current))
        out = self.kernel.process_with_watermarks([batch] if len(batch) else [], advances, self.state)
        self.current_watermark = current
        self.kernel.current_watermark = current
        interval = self.kernel.sweep_interval_ms
        if interval is not None and len(batch) and (self._sweep_due is None or self._sweep_due > self.now + interval):
            self._sweep_due = self.now + interval
        return self._collect(out)

    def flush(self) -> list[Row]:
        """An upstream operator flushed: the kernel's ``flush``; return what it emitted."""
        self._before_call()
        return self._collect(self.kernel.flush(self.state))

    def end_of_input(self) -> list[Row]:
        """Every source ended: ``on_watermark(MAX_WATERMARK)`` for an event-time kernel, then its
        ``end_of_input``; return what they emitted."""
        self._before_call()
        return self._collect(end_of_input_output(self.kernel, self.state))

    def watermark(self, watermark: int) -> list[Row]:
        """Event time reached ``watermark`` (ms): the kernel's ``on_watermark``; return what it emitted.

        As a host does, only a watermark later than the current one is passed on
        (an earlier or equal one emits nothing); rows processed after it meet it
        as ``current_watermark``.
        """
        self._before_call()
        if int(watermark) <= self.current_watermark:
            return []
        out = self.kernel.on_watermark(int(watermark), self.state)
        self.current_watermark = int(watermark)
        self.kernel.current_watermark = self.current_watermark
        return self._collect(out)

    # --- restarts ---------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The state serialized (and the harness's clock and stamps), to :meth:`restore` later."""
        if not isinstance(self.state, InMemoryKeyedState):
            raise TypeError(f"snapshot() needs the harness's InMemoryKeyedState, not {type(self.state).__name__}")
        return Snapshot(pickle.dumps(self.state), self.now, self._next_seq, self._sweep_due, self.current_watermark)

    def restore(self, snapshot: Snapshot) -> None:
        """Continue from ``snapshot`` with its state and a fresh kernel object, as after a Spark restart."""
        self.state = pickle.loads(snapshot.state)
        self.now, self._next_seq, self._sweep_due = snapshot.now, snapshot.next_seq, snapshot.sweep_due
        self.current_watermark = snapshot.watermark
        self.kernel = pickle.loads(self._blob) if self._blob is not None else copy.deepcopy(self._original)
        if self._clock is not None:
            self._clock = None
            self.set_time(self.now)

    def restart(self) -> None:
        """:meth:`restore` from a :meth:`snapshot` taken now: a fresh kernel over the same state."""
        self.restore(self.snapshot())

    # --- frames -----------------------------------------------------------------------
    def frame(self, records: Iterable[Row]) -> pd.DataFrame:
        """The changelog frame of ``records``, stamped with the next ``_seq`` values."""
        records = list(records)
        for r in records:
            if len(r) != len(self.columns):
                raise ValueError(f"record {r!r} has {len(r)} fields, expected {len(self.columns)}: {self.columns}")
        data = {}
        for i, name in enumerate(self.columns):
            values = [r[i] for r in records]
            dtype = self.dtypes.get(name) or infer_dtype(values)
            is_object = dtype is object or (isinstance(dtype, np.dtype) and dtype.kind == "O")
            data[name] = object_array(values) if is_object else pd.array(values, dtype=dtype)
        data[KIND] = np.array([r.get_row_kind().value for r in records], dtype=np.int8)
        data[SEQ] = np.arange(self._next_seq, self._next_seq + len(records), dtype=np.int64)
        data[SUB] = np.zeros(len(records), dtype=np.int64)
        self._next_seq += len(records)
        return pd.DataFrame(data)

    def rows_of_frame(self, frame: pd.DataFrame | None) -> list[Row]:
        """The rows of an output frame (:meth:`process_frame`'s), kinds included, bookkeeping dropped.

        A DataStream kernel's records keep their order stamp as their last field, the tuple
        ``(_seq, _sub)``: a record's position in the output is part of what it emits.
        """
        out = concat_outputs(frame)
        if out is None:
            return []
        columns = [c for c in out.columns if c not in (KIND, SEQ, SUB)]
        if VALUE in out.columns and SEQ in out.columns:
            out = out.assign(_stamp=pd.Series(stamps_of(out), index=out.index, dtype=object))
            columns.append("_stamp")
        return rows_of(out, columns)

    def _before_call(self) -> None:
        if self.restart_every_batch:
            self.restart()
        self.kernel.current_watermark = self.current_watermark

    def _collect(self, out: pd.DataFrame | None) -> list[Row]:
        rows = self.rows_of_frame(out)
        self.changes.extend(rows)
        return rows
