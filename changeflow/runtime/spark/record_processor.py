"""The DataStream runtime's stateful processors: a kernel's output goes out as records.

Hosts a keyed DataStream kernel (:class:`~changeflow.kernels.keyed.reduce.KeyedReduce`,
:class:`~changeflow.kernels.keyed.process.KeyedProcess`) in the engine's
:class:`~.processor.KernelProcessor` (streaming) or folds a batch partition
(:class:`_BatchKeyed`); output rows, control rows included, become records
(:func:`~.control_rows.to_records`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from changeflow.kernels.keyed.records import KEY, ORD, VALUE
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.runtime.spark.control_rows import to_records
from changeflow.runtime.spark.flush import BucketBuffer, BucketFlusher, MemoryFlusher
from changeflow.runtime.spark.processor import KernelProcessor, operator_name

__all__ = ["RecordKernelProcessor", "TimerKernelProcessor"]


class RecordKernelProcessor(KernelProcessor):
    """A :class:`KernelProcessor` whose output goes out as records (flushed records, control records)."""

    def handleInputRows(self, key, rows, timerValues):
        for frame in super().handleInputRows(key, rows, timerValues):
            yield to_records(frame)

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        for frame in super().handleExpiredTimer(key, timerValues, expiredTimerInfo):
            yield to_records(frame)


class TimerKernelProcessor(RecordKernelProcessor):
    """A processor whose kernel has processing-time timers (:class:`KeyedProcess`).

    The kernel keeps its bucket's timers in its own state; this processor keeps
    one Spark timer per bucket at the earliest of them, and on expiry lets the
    kernel fire every due timer. Spark fires a timer in the first micro-batch
    whose processing time has reached it (micro-batches run only when input
    arrives, ``spark.sql.streaming.noDataMicroBatches.enabled`` being off).

    With a flush buffer (an idempotent function under a flush interval) the
    bucket also keeps the buffer's timer (:mod:`.flush`); what ``on_timer``
    emits is buffered like the function's other output.
    """

    def handleInputRows(self, key, rows, timerValues):
        yield from super().handleInputRows(key, rows, timerValues)
        self._schedule()

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        from changeflow.runtime.spark.control_rows import Control, control_rows
        from changeflow.state.paged import PagedKeyedState

        now = timerValues.getCurrentProcessingTimeInMs()
        state = PagedKeyedState(self.page_store, self.key_columns, self.pages,
                                operator=operator_name(self.kernel))
        out = self.kernel.fire(now, state)
        state.commit()
        out = out if len(out) else None
        flushed_signal = False
        if isinstance(self.flusher, BucketFlusher):
            bucket = BucketBuffer.load(_blob(self.buffer_state))
            flushed = self.flusher.on_input(bucket, out, now, had_input=False, force=False)
            if bucket.timer_ms is not None and bucket.timer_ms <= now:  # the buffer's own timer is due
                later = self.flusher.on_timer(bucket, now)
                flushed = later if flushed is None else flushed if later is None else pd.concat([flushed, later])
            self._arm_timer(bucket, now)
            self.buffer_state.update((bucket.dump(),))
            out, flushed_signal = flushed, flushed is not None
        elif isinstance(self.flusher, MemoryFlusher) and out is not None:
            out = self.flusher.run(out)
        self._schedule()
        if out is not None and len(out):
            yield to_records(out)
        if flushed_signal:
            yield to_records(control_rows(self.output_columns, Control(flush=True)))

    def _schedule(self) -> None:
        from changeflow.state.paged import PagedKeyedState

        wanted = set()
        kernel_timer = self.kernel.next_timer(PagedKeyedState(self.page_store, self.key_columns, self.pages))
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


class _BatchKeyed:
    """Batch mode: a partition holds every record of its keys; fold them with fresh in-memory state."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __call__(self, frames):
        parts = [f for f in frames if len(f)]
        if not parts:
            return
        batch = pd.concat(parts, ignore_index=True)
        batch.columns = [KEY, VALUE, ORD]
        if isinstance(self.kernel, KeyedReduce):
            yield self.kernel.final(batch)
        else:
            yield self.kernel.process_bounded(batch)


def _blob(value_state: Any) -> bytes | None:
    """The bytes a ``ValueState`` of one binary column holds, or None."""
    value = value_state.get()
    return None if value is None else value[0]
