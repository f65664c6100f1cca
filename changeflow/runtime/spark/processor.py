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

The processor hosts any kernel through the kernel contract
(:mod:`changeflow.kernels.contract`) and calls nothing else on it: ``process``
for the bucket's rows, ``flush`` on an upstream flush signal, ``end_of_input``
once all upstream sources ended, ``on_timer`` from a processing-time timer kept
at the kernel's ``next_timer`` (``has_timers``: a ``KeyedProcessFunction``),
``sweep`` (below). It binds the kernel's clock: the micro-batch's processing
time (Spark's batch timestamp, kept in the offset log) for a kernel with a TTL
sweep, the wall clock otherwise (a ``KeyedProcessFunction`` reads processing
time as Flink's does, so a timer it sets for "now" fires in a later
micro-batch: Spark fires the timers its batch timestamp has reached after the
batch's input), or the micro-batch's time for a kernel with ``batch_clock``
(a processing-time window).

A kernel with a state TTL (``sweep_interval_ms`` not None: under
``table.exec.state.ttl`` or a ``STATE_TTL`` hint, the group aggregation,
deduplication, Top-N, sink upsert materializer and join) gets a sweep timer per bucket instead
(:class:`TtlSweep`): the first micro-batch with input for a bucket that has no
timer registers one a TTL ahead (when the oldest state it can have written
expires); the timer calls ``kernel.sweep(state, now)``, which removes the
bucket's expired state (keys, rows, history heads) and says when its oldest
survivor expires, and the next timer goes there, but at least
``sweep_interval_ms`` later (a sweep reads the bucket's every page). A bucket
left with no state registers none until its next input. The kernel's clock is
the micro-batch's processing time, so write times, expiry and timers share one
clock and a re-run micro-batch expires the same state. Timers fire only in micro-batches that
run: an idle query sweeps only in no-data micro-batches, which the job runner
turns on for an unbounded query that wants them (see :mod:`.flush`, whose idle
flushes need the same, and :meth:`~.streaming.StreamingTranslator.ttl_sweep`).
"""

from __future__ import annotations

import pickle
from typing import Any, Iterator

import pandas as pd
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from changeflow.kernels.contract import (MAX_WATERMARK, MIN_WATERMARK, HostClock, Kernel, concat_outputs,
                                        end_of_input_output)
from changeflow.kernels.rowtime_mini_batch import passes
from changeflow.kernels.watermark_batch import stamp_fired
from changeflow.runtime.spark.control_rows import Control, control_rows, split_payloads
from changeflow.runtime.spark.deferred_processor import declare_state
from changeflow.plan.flush_policy import FlushPolicy, flushes_from_timers
from changeflow.runtime.spark.flush import BucketBuffer, BucketFlusher, MemoryFlusher
from changeflow.state.paged import PagedKeyedState

PAGE_KEY = StructType([StructField("page", LongType(), False)])
PAGE_VALUE = StructType([StructField("blob", BinaryType(), False)])
_BLOB = StructType([StructField("blob", BinaryType(), False)])


class TtlSweep:
    """The processing-time-timer sweep of a kernel with a state TTL, for one bucket (see the module docstring).

    Inactive (and costing nothing) when the kernel declares no ``sweep_interval_ms``
    or its host turned the sweep off (``active=False``: a query that cannot fire
    timers). ``clock`` is the host's clock, bound to the kernel here and set to
    the micro-batch's processing time by :meth:`start_batch` and :meth:`run`.
    """

    def __init__(self, kernel: Kernel, clock: HostClock | None = None, active: bool = True) -> None:
        self.kernel = kernel
        self.interval_ms = kernel.sweep_interval_ms if active else None
        self.clock = clock if clock is not None else HostClock()
        kernel.bind_clock(self.clock)

    @property
    def active(self) -> bool:
        return self.interval_ms is not None

    def start_batch(self, timerValues: Any) -> int | None:
        """Set the kernel's clock to the micro-batch's processing time; return it (None when inactive)."""
        if not self.active:
            return None
        now = timerValues.getCurrentProcessingTimeInMs()
        self.clock.set(now)
        return now

    def arm(self, handle: StatefulProcessorHandle, now: int | None) -> None:
        """After a batch with input: register the bucket's sweep a TTL ahead unless one is due by then.

        A timer further ahead does not do: a join whose sides have different TTLs
        may have scheduled its sweep by the longer one's survivors before this
        batch wrote rows that expire by the shorter one.
        """
        if self.interval_ms is None or now is None:   # not self.active (now is None only then)
            return
        due_by = now + self.interval_ms
        if not any(t <= due_by for t in handle.listTimers()):
            handle.registerTimer(due_by)

    def run(self, handle: StatefulProcessorHandle, state: PagedKeyedState, now: int) -> None:
        """The timer fired: remove the bucket's expired state (silently) and register the next sweep, if due."""
        self.clock.set(now)
        due = self.kernel.sweep(state, now)
        state.commit()
        if due is not None:
            assert self.interval_ms is not None, "an inactive sweep registers no timer"
            handle.registerTimer(max(due, now + self.interval_ms))


def operator_name(kernel: Kernel) -> str:
    """The name state metrics give an operator: its kernel's (inside a wrapper, the wrapped one's)."""
    return kernel.operator_name


class KernelProcessor(StatefulProcessor):
    """Feeds each bucket's rows of a micro-batch to the kernel, through the kernel contract only.

    ``output_columns`` are the kernel's output columns without bookkeeping
    (needed to write control rows and flushed changes); ``flush`` buffers the
    output (:mod:`.flush`); ``sources`` are the ids of the sources upstream of
    the operator, whose end of input ends the operator's input; ``changelog``
    says whether the buffered output is a changelog or append-only records;
    ``control`` says whether control rows flow through the query (only then is
    the set of ended sources kept in state); ``rows_per_page`` makes the state's
    page count grow with its rows (:class:`PagedKeyedState`); ``sweep`` False
    runs a kernel with a state TTL without its sweep (the query cannot fire
    timers, see ``StreamingTranslator.ttl_sweep``); ``emit_columns`` are the
    columns of what goes out, when the bucket's own key columns stay behind (a
    DataStream operator's records: its pickled ``_key`` is not sent on).
    """

    def __init__(self, kernel: Kernel, key_columns: list[str], pages: int, output_columns: list[str] | None = None,
                 flush: FlushPolicy | None = None, sources: frozenset = frozenset(), changelog: bool = True,
                 control: bool = False, rows_per_page: int | None = None, sweep: bool = True,
                 watermarks: frozenset = frozenset(), mini_batch_intervals: dict[int, int] | None = None,
                 emit_columns: list[str] | None = None) -> None:
        self.kernel = kernel
        self.emit_columns = list(emit_columns) if emit_columns is not None else None
        self.key_columns = list(key_columns)
        self.pages = pages
        self.output_columns = list(output_columns or [])
        self.flush = flush
        self.sources = frozenset(sources)
        self.changelog = changelog
        self.control = control
        self.rows_per_page = rows_per_page
        # The watermark assigners upstream of an event-time kernel (their numbers, .event_time.assigner_numbers).
        self.watermarks = frozenset(watermarks) if kernel.event_time else frozenset()
        # Assigners under a row-time MiniBatchAssigner (number -> allow-latency ms; the query's, only those
        # in ``watermarks`` are read): only the watermarks that end a mini-batch interval pass
        # (.kernels.rowtime_mini_batch); the rest never reach the kernel.
        self.mini_batch_intervals = dict(mini_batch_intervals or {})
        self.clock = HostClock()
        self.sweep = TtlSweep(kernel, self.clock, active=sweep)
        self.timers = kernel.has_timers
        if self.sweep.active and flush is not None:
            raise ValueError("an operator with a state TTL sweep cannot buffer its output for a flush interval")
        if self.sweep.active and self.timers:
            raise NotImplementedError(f"{kernel.operator_name}: a kernel with both processing-time timers and a "
                                      "state TTL sweep is not supported (the bucket keeps one kind of timer)")

    @property
    def time_mode(self) -> str:
        """The ``timeMode`` Spark must run this processor with."""
        timers = flushes_from_timers(self.flush) or self.sweep.active or self.timers
        return "ProcessingTime" if timers else "None"

    def state_variables(self) -> list[tuple[str, str, tuple]]:
        """The state variables the processor declares, in order: (``"map"`` or ``"value"``, name, schemas).

        Operators of queries without control rows keep the state layout they had before."""
        variables: list[tuple[str, str, tuple]] = [("map", "pages", (PAGE_KEY, PAGE_VALUE))]
        if self.control:
            variables.append(("value", "ended", (_BLOB,)))
        if self.watermarks:
            variables.append(("value", "watermarks", (_BLOB,)))
        if self.flush is not None and flushes_from_timers(self.flush):
            variables.append(("value", "flush", (_BLOB,)))
        return variables

    def init(self, handle: StatefulProcessorHandle) -> None:
        # State variables can only be declared here (Spark's rule).
        self.bind(handle, declare_state(handle, self.state_variables()))

    def bind(self, handle: StatefulProcessorHandle, states: dict[str, Any]) -> None:
        """Take the handle and the state variables of :meth:`state_variables`, declared on ``handle``."""
        self.handle = handle
        self.page_store = states["pages"]
        self.ended_state = states.get("ended")
        self.watermark_state = states.get("watermarks")
        self.flusher: BucketFlusher | MemoryFlusher | None = None
        if self.flush is not None and flushes_from_timers(self.flush):
            self.flusher = BucketFlusher(self.flush, self.key_columns, self.output_columns, self.changelog)
            self.buffer_state = states["flush"]
        elif self.flush is not None:
            self.flusher = MemoryFlusher(self.flush, self.key_columns, self.output_columns, self.changelog)
        self.kernel.bind_clock(self.clock)

    def emit(self, frame: pd.DataFrame) -> pd.DataFrame:
        """What goes out to Spark for a frame of output or control rows: its ``emit_columns``, or all."""
        return frame if self.emit_columns is None else frame.loc[:, self.emit_columns]

    def _state(self) -> PagedKeyedState:
        return PagedKeyedState(self.page_store, self.key_columns, self.pages, self.rows_per_page,
                               self.kernel.operator_name)

    def _tick(self, timerValues: Any) -> int | None:
        """Set the kernel's clock to the micro-batch's processing time (TTL sweep or ``batch_clock`` only, see the
        module); return it for the sweep (None without one)."""
        if self.kernel.batch_clock:
            self.clock.set(timerValues.getCurrentProcessingTimeInMs())
        return self.sweep.start_batch(timerValues)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
        # Each input row is (_bucket, _payload); Spark renames columns whose names
        # start with "_", so the payload is taken by position.
        payloads: list[pd.Series] = [f.iloc[:, -1] for f in rows if len(f)]
        if not payloads:
            return
        frames, control = split_payloads(pd.concat(payloads, ignore_index=True) if len(payloads) > 1 else payloads[0])
        state = self._state()
        now = self._tick(timerValues)
        out = self._process(frames, self._watermarks(control), state)
        out = concat_outputs(out, self._signals(control, state))
        state.commit()
        if frames:
            self.sweep.arm(self.handle, now)
        control = control or Control()
        if isinstance(self.flusher, BucketFlusher):
            bucket = BucketBuffer.load(_blob(self.buffer_state))
            now = timerValues.getCurrentProcessingTimeInMs()
            flushed = self.flusher.on_input(bucket, out, now, had_input=True, force=control.signals)
            self._arm_timer(self.flusher, bucket, now)
            self.buffer_state.update((bucket.dump(),))
            out = flushed
            control = control | Control(flush=flushed is not None)
        elif isinstance(self.flusher, MemoryFlusher) and out is not None and len(out):
            out = self.flusher.run(out)
        if self.timers:
            self._schedule()
        if out is not None and len(out):
            yield self.emit(out)
        if control.signals:
            yield self.emit(control_rows(self.output_columns, self._held_back(control)))

    def _held_back(self, control: Control) -> Control:
        """``control`` with its watermarks held back by the kernel's ``watermark_delay_ms`` (an interval join's)."""
        delay = self.kernel.watermark_delay_ms
        if not delay or not control.watermarks:
            return control
        held = tuple((number, position, value if value >= MAX_WATERMARK else value - delay)
                     for number, position, value in control.watermarks)
        return Control(control.ended, control.flush, held)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[pd.DataFrame]:
        now = timerValues.getCurrentProcessingTimeInMs()
        if self.sweep.active:
            self.sweep.run(self.handle, self._state(), now)
            return
        out = None
        if self.timers:
            self._tick(timerValues)
            state = self._state()
            out = concat_outputs(self.kernel.on_timer(now, state))
            state.commit()
        flushed_signal = False
        if isinstance(self.flusher, BucketFlusher):
            bucket = BucketBuffer.load(_blob(self.buffer_state))
            if self.timers:
                # The kernel's timers emitted (or a new interval began): buffer it as any output.
                flushed = self.flusher.on_input(bucket, out, now, had_input=False, force=False)
                if bucket.timer_ms is not None and bucket.timer_ms <= now:  # the buffer's own timer is due
                    flushed = concat_outputs(flushed, self.flusher.on_timer(bucket, now))
            else:  # the timer fired is the buffer's own
                flushed = self.flusher.on_timer(bucket, now)
            self._arm_timer(self.flusher, bucket, now)
            self.buffer_state.update((bucket.dump(),))
            out, flushed_signal = flushed, flushed is not None
        elif isinstance(self.flusher, MemoryFlusher) and out is not None:
            out = self.flusher.run(out)
        if self.timers:
            self._schedule()
        if out is not None and len(out):
            yield self.emit(out)
        if flushed_signal:
            yield self.emit(control_rows(self.output_columns, Control(flush=True)))

    def _arm_timer(self, flusher: BucketFlusher, bucket: BucketBuffer, now: int) -> None:
        # Fire in the next micro-batch (its timestamp is later): it checks for a
        # new interval and for idle input.
        if flusher.needs_timer(bucket):
            bucket.timer_ms = now + 1
            self.handle.registerTimer(now + 1)

    def _schedule(self) -> None:
        """A kernel with timers: keep the bucket's Spark timers at the kernel's next timer and the buffer's.

        The kernel keeps its bucket's timers in its own state; one Spark timer
        at the earliest is enough, and on expiry the kernel fires every due one.
        Spark fires a timer in the first micro-batch whose processing time has
        reached it.
        """
        wanted = set()
        kernel_timer = self.kernel.next_timer(self._state())
        if kernel_timer is not None:
            wanted.add(kernel_timer)
        if isinstance(self.flusher, BucketFlusher):
            buffer_timer = BucketBuffer.load(_blob(self.buffer_state)).timer_ms
            if buffer_timer is not None:
                wanted.add(buffer_timer)
        registered = set(self.handle.listTimers())
        for t in registered - wanted:
            self.handle.deleteTimer(t)
        for t in wanted - registered:
            self.handle.registerTimer(t)

    def _watermarks(self, control: Control | None) -> list[tuple[int, int]]:
        """Set the kernel's ``current_watermark`` from state; return how the batch's watermarks move it.

        The operator's watermark is the least, over the assigners upstream, of the
        largest watermark each has made (none while one has made none). Returns
        ``(position, watermark)`` for each watermark row of the batch, in position
        order, that moves it on; the new largest per assigner is stored (under a row-time
        MiniBatchAssigner, the largest that passed its filter: the others are dropped).
        """
        if self.watermark_state is None:
            return []
        blob = _blob(self.watermark_state)
        seen = dict(pickle.loads(blob)) if blob is not None else {}
        current = _combined(seen, self.watermarks)
        self.kernel.current_watermark = current
        if control is None or not control.watermarks:
            return []
        (only,) = self.watermarks if len(self.watermarks) == 1 else (None,)
        if only is not None and only not in self.mini_batch_intervals:
            advances = _one_assigner_advances(control.watermarks, only, seen)
            self.watermark_state.update((pickle.dumps(seen, protocol=5),))
            return advances
        advances = []
        for number, position, value in control.watermarks:
            if number not in self.watermarks or value <= seen.get(number, MIN_WATERMARK):
                continue
            interval = self.mini_batch_intervals.get(number)
            if interval is not None and not passes(seen.get(number), value, interval):
                continue   # seen keeps the last watermark passed, on which the filter depends
            seen[number] = value
            combined = _combined(seen, self.watermarks)
            if combined > current:
                advances.append((position, combined))
                current = combined
        self.watermark_state.update((pickle.dumps(seen, protocol=5),))
        return advances

    def _process(self, frames: list[pd.DataFrame], advances: list[tuple[int, int]],
                 state: PagedKeyedState) -> pd.DataFrame | None:
        """The batch's rows and watermarks in position order: the rows up to a watermark's position, then it.

        One call of the kernel contract's ``process_with_watermarks``: what a
        watermark fires is stamped with its position (after the rows there), so
        the next operator sees it before the watermark too.
        """
        if advances:
            return self.kernel.process_with_watermarks(frames, advances, state)
        return self.kernel.process_frames(frames, state) if frames else None

    def _signals(self, control: Control | None, state: PagedKeyedState) -> pd.DataFrame | None:
        """The kernel's output for the batch's signals: ``flush`` on an upstream flush, ``end_of_input`` once.

        The sources that ended are kept in state (only when control rows flow
        through the query); ``end_of_input`` is called in the micro-batch in
        which the last source upstream ends.
        """
        if control is None or self.ended_state is None:
            return None
        out = self.kernel.flush(state) if control.flush else None
        if not control.ended:
            return out
        blob = _blob(self.ended_state)   # None while the state does not exist
        before = pickle.loads(blob) if blob is not None else frozenset()
        after = before | control.ended
        if after != before:
            self.ended_state.update((pickle.dumps(after, protocol=5),))
        if self.sources <= after and not self.sources <= before:
            ended = end_of_input_output(self.kernel, state)
            out = concat_outputs(out, stamp_fired(ended, END_POSITION) if self.kernel.event_time else ended)
        return out

    def close(self) -> None:
        pass


# Where what fires at the end of input goes: after every position a source can stamp.
END_POSITION = 1 << 62


def _one_assigner_advances(watermarks: tuple, assigner: int, seen: dict[int, int]) -> list[tuple[int, int]]:
    """:meth:`KernelProcessor._watermarks`' loop for an operator after one assigner and no mini-batch filter.

    The operator's watermark is then that assigner's largest, so each of its watermarks above
    the largest before it moves the operator on (the general loop's ``_combined`` over one
    assigner, without its per-row cost: a micro-batch carries one watermark per 200 ms of event
    time, to every bucket). ``seen`` takes the new largest.
    """
    largest = seen.get(assigner, MIN_WATERMARK)
    advances = []
    for number, position, value in watermarks:
        if number == assigner and value > largest:
            advances.append((position, value))
            largest = value
    if largest > MIN_WATERMARK:
        seen[assigner] = largest
    return advances


def _combined(seen: dict[int, int], assigners: frozenset) -> int:
    """An operator's watermark: the least of its assigners' (none yet while one has made none)."""
    if not assigners or any(a not in seen for a in assigners):
        return MIN_WATERMARK
    return min(seen[a] for a in assigners)


def _blob(value_state: Any) -> bytes | None:
    """The bytes a ``ValueState`` of one binary column holds, or None."""
    value = value_state.get()
    return None if value is None else value[0]
