"""Runs a pure kernel inside Spark's ``transformWithStateInPandas``.

Spark calls the processor once per grouping key per micro-batch. changeflow groups
by a hash *bucket* of the real key (a few buckets per core), so one Python call
folds thousands of keys vectorised, and keeps the kernel's per-key state in
pages (:mod:`changeflow.state.paged`) in a ``MapState`` of the bucket. The
bucket's rows arrive packed (:mod:`.packing`): a few pickled frames, already in
the dtypes the kernel reads, and possibly a control payload (end of input,
upstream flush, tick: :mod:`.control_rows`), which the kernel never sees.

With a flush policy (:mod:`.flush`) the kernel's output goes through the
bucket's flush buffer: kept in a ``ValueState`` and flushed from a
processing-time timer, or, memory-only, folded and flushed within the
micro-batch.

A kernel with a state TTL (``sweep_interval_ms`` not None: under
``table.exec.state.ttl`` or a ``STATE_TTL`` hint, the group aggregation,
deduplication, Top-N and sink upsert materializer; the join through
:class:`~.join.JoinProcessor`) gets a sweep timer per bucket instead
(:class:`TtlSweep`): the first micro-batch with input for a bucket that has no
timer registers one a TTL ahead (when the oldest state it can have written
expires); the timer calls ``kernel.sweep(state, now)``, which removes the
bucket's expired state (keys, rows, history heads) and says when its oldest
survivor expires, and the next timer goes there, but at least
``sweep_interval_ms`` later (a sweep reads the bucket's every page). A bucket
left with no state registers none until its next input. The kernel's clock is
the micro-batch's processing time (Spark's batch timestamp, kept in the offset
log), so write times, expiry and timers share one clock and a re-run
micro-batch expires the same state. Timers fire only in micro-batches that
run: an idle query sweeps only in no-data micro-batches, which the job runner
turns on for an unbounded query that wants them (see :mod:`.flush`, whose idle
flushes need the same, and :meth:`~.streaming.StreamingTranslator.ttl_sweep`).
"""

from __future__ import annotations

from typing import Any, Iterator

import pandas as pd
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from changeflow.runtime.spark.control_rows import Control, control_rows, split_payloads
from changeflow.runtime.spark.flush import BucketBuffer, BucketFlusher, FlushPolicy, MemoryFlusher, flushes_from_timers
from changeflow.state.paged import PagedKeyedState

PAGE_KEY = StructType([StructField("page", LongType(), False)])
PAGE_VALUE = StructType([StructField("blob", BinaryType(), False)])
_BLOB = StructType([StructField("blob", BinaryType(), False)])


class TtlSweep:
    """The processing-time-timer sweep of a kernel with a state TTL, for one bucket (see the module docstring).

    Inactive (and costing nothing) when the kernel has no ``sweep_interval_ms``.
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.interval_ms = getattr(kernel, "sweep_interval_ms", None)

    @property
    def active(self) -> bool:
        return self.interval_ms is not None

    def start_batch(self, timerValues: Any) -> int | None:
        """Set the kernel's clock to the micro-batch's processing time; return it (None when inactive)."""
        if not self.active:
            return None
        now = timerValues.getCurrentProcessingTimeInMs()
        self.kernel.clock = lambda: now
        return now

    def arm(self, handle: StatefulProcessorHandle, now: int | None) -> None:
        """After a batch with input: register the bucket's sweep a TTL ahead unless one is due by then.

        A timer further ahead does not do: a join whose sides have different TTLs
        may have scheduled its sweep by the longer one's survivors before this
        batch wrote rows that expire by the shorter one.
        """
        if not self.active or now is None:
            return
        due_by = now + self.interval_ms
        if not any(t <= due_by for t in handle.listTimers()):
            handle.registerTimer(due_by)

    def run(self, handle: StatefulProcessorHandle, state: PagedKeyedState, now: int) -> None:
        """The timer fired: remove the bucket's expired state (silently) and register the next sweep, if due."""
        self.kernel.clock = lambda: now
        due = self.kernel.sweep(state, now)
        state.commit()
        if due is not None:
            handle.registerTimer(max(due, now + self.interval_ms))


def operator_name(kernel: Any) -> str:
    """The name state metrics give an operator: its kernel's class (inside a TTL wrapper, the wrapped one)."""
    inner = getattr(kernel, "kernel", None)
    return type(inner if inner is not None else kernel).__name__


class KernelProcessor(StatefulProcessor):
    """Feeds each bucket's rows of a micro-batch to ``kernel.process`` as one batch.

    ``output_columns`` are the kernel's output columns without bookkeeping
    (needed to write control rows and flushed changes); ``flush`` buffers the
    output (:mod:`.flush`); ``sources`` are the ids of the sources upstream of
    the operator, whose end of input ends the operator's input; ``changelog``
    says whether the buffered output is a changelog or append-only records;
    ``control`` says whether control rows flow through the query (only then is
    the set of ended sources kept in state); ``rows_per_page`` makes the state's
    page count grow with its rows (:class:`PagedKeyedState`).
    """

    def __init__(self, kernel: Any, key_columns: list[str], pages: int, output_columns: list[str] | None = None,
                 flush: FlushPolicy | None = None, sources: frozenset = frozenset(), changelog: bool = True,
                 control: bool = False, rows_per_page: int | None = None) -> None:
        self.kernel = kernel
        self.key_columns = list(key_columns)
        self.pages = pages
        self.output_columns = list(output_columns or [])
        self.flush = flush
        self.sources = frozenset(sources)
        self.changelog = changelog
        self.control = control
        self.rows_per_page = rows_per_page
        self.sweep = TtlSweep(kernel)
        if self.sweep.active and flush is not None:
            raise ValueError("an operator with a state TTL sweep cannot buffer its output for a flush interval")

    @property
    def time_mode(self) -> str:
        """The ``timeMode`` Spark must run this processor with."""
        timers = flushes_from_timers(self.flush) or self.sweep.active
        return "ProcessingTime" if timers else "None"

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.page_store = handle.getMapState("pages", PAGE_KEY, PAGE_VALUE)
        # State variables can only be declared here; operators of queries without
        # control rows keep the state layout they had before.
        self.ended_state = handle.getValueState("ended", _BLOB) if self.control else None
        self.flusher = None
        if flushes_from_timers(self.flush):
            self.flusher = BucketFlusher(self.flush, self.key_columns, self.output_columns, self.changelog)
            self.buffer_state = handle.getValueState("flush", _BLOB)
        elif self.flush is not None:
            self.flusher = MemoryFlusher(self.flush, self.key_columns, self.output_columns, self.changelog)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
        # Each input row is (_bucket, _payload); Spark renames columns whose names
        # start with "_", so the payload is taken by position.
        payloads = [f.iloc[:, -1] for f in rows if len(f)]
        if not payloads:
            return
        batch, control = split_payloads(pd.concat(payloads, ignore_index=True) if len(payloads) > 1 else payloads[0])
        state = PagedKeyedState(self.page_store, self.key_columns, self.pages, self.rows_per_page,
                                operator_name(self.kernel))
        now = self.sweep.start_batch(timerValues)
        out = self.kernel.process(batch, state) if batch is not None else None
        finished = self._end_of_input(control, state)
        state.commit()
        if batch is not None:
            self.sweep.arm(self.handle, now)
        if finished is not None and len(finished):
            out = finished if out is None or not len(out) else pd.concat([out, finished], ignore_index=True)
        control = control or Control()
        if isinstance(self.flusher, BucketFlusher):
            bucket = BucketBuffer.load(_blob(self.buffer_state))
            now = timerValues.getCurrentProcessingTimeInMs()
            flushed = self.flusher.on_input(bucket, out, now, had_input=True, force=control.signals)
            self._arm_timer(bucket, now)
            self.buffer_state.update((bucket.dump(),))
            out = flushed
            control = control | Control(flush=flushed is not None)
        elif isinstance(self.flusher, MemoryFlusher) and out is not None and len(out):
            out = self.flusher.run(out)
        if out is not None and len(out):
            yield out
        if control.signals:
            yield control_rows(self.output_columns, control)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[pd.DataFrame]:
        if self.sweep.active:
            state = PagedKeyedState(self.page_store, self.key_columns, self.pages, self.rows_per_page,
                                operator_name(self.kernel))
            self.sweep.run(self.handle, state, timerValues.getCurrentProcessingTimeInMs())
            return
        if not isinstance(self.flusher, BucketFlusher):
            return
        bucket = BucketBuffer.load(_blob(self.buffer_state))
        now = timerValues.getCurrentProcessingTimeInMs()
        flushed = self.flusher.on_timer(bucket, now)
        self._arm_timer(bucket, now)
        self.buffer_state.update((bucket.dump(),))
        if flushed is not None:
            yield flushed
            yield control_rows(self.output_columns, Control(flush=True))

    def _arm_timer(self, bucket: BucketBuffer, now: int) -> None:
        # Fire in the next micro-batch (its timestamp is later): it checks for a
        # new interval and for idle input.
        if self.flusher.needs_timer(bucket):
            bucket.timer_ms = now + 1
            self.handle.registerTimer(now + 1)

    def _end_of_input(self, control: Control | None, state: PagedKeyedState) -> pd.DataFrame | None:
        """Record ended sources; once all upstream sources ended, call the kernel's ``end_of_input``."""
        if control is None or not control.ended or self.ended_state is None:
            return None
        import pickle

        before = pickle.loads(_blob(self.ended_state)) if self.ended_state.exists() else frozenset()
        after = before | control.ended
        if after != before:
            self.ended_state.update((pickle.dumps(after, protocol=5),))
        hook = getattr(self.kernel, "end_of_input", None)
        if hook is not None and self.sources <= after and not self.sources <= before:
            return hook(state)
        return None

    def close(self) -> None:
        pass


def _blob(value_state: Any) -> bytes | None:
    value = value_state.get()
    return None if value is None else value[0]
