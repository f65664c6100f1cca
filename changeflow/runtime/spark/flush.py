"""The output flush interval (FLIP-365) on Spark: when a buffering operator's buckets flush.

An operator whose output is idempotent and keyed (the group aggregation; the
DataStream keyed reductions) runs with a
:class:`~changeflow.plan.flush_policy.FlushPolicy` when
``execution.max-flush-interval`` is set. Its kernel's output then goes into a
per-bucket buffer of the latest output per key
(:class:`~changeflow.kernels.flush.LatestPerKey`) instead of downstream, and the
bucket flushes the buffer, one consistent change per updated key, when

(a) **the interval has passed**: processing time is cut into intervals aligned
    to multiples of the interval (epoch milliseconds), and a bucket flushes in
    the first micro-batch of an interval later than its last flush. Every bucket
    of every buffering operator of the query uses the same clock, Spark's batch
    timestamp, so they flush in the same micro-batch;
(b) **its input is idle**: a micro-batch brought the operator no input while the
    bucket holds records (the packing stage sends every bucket a tick when the
    operator had input, see :mod:`.control_rows`);
(c) **the input ended** or **an upstream buffering operator flushed**: control
    rows of :mod:`.control_rows`.

(a) and (b) run from a processing-time timer per bucket, registered for the
next micro-batch whenever the bucket holds records: transformWithState fires
timers after the bucket's input rows, in data and in no-data micro-batches.
An idle query only runs micro-batches if Spark runs no-data batches, which
the session changeflow creates turns off: the translator says the query wants
them (``StreamingTranslator.wants_no_data_batches``) and the job runner
(:mod:`.jobs`) starts an unbounded query with them on, for that query only.
A bounded query runs without them: with no-data batches an ``availableNow``
query never ends (a processing-time transformWithState always asks Spark for
another batch), and its end-of-input marker flushes every bucket anyway.
When every row reaching the sink is buffered, the job runner also runs the
query's micro-batches once per interval (:mod:`changeflow.plan.rules.buffering`).

(c) bounds the latency of a chain: a flush sends a flush control row
downstream and the next buffering operator flushes in the same micro-batch, so
a key's latest value reaches the sink within about one interval plus one
trigger however many buffering operators it passes (the seed's Future Work 1,
a control message travelling in topological order).

The buffer lives in the bucket's state (a ``ValueState`` in RocksDB, committed
with the micro-batch), so a restart from a checkpoint loses no buffered update.
With ``execution.flush.memory-buffer-only`` it never touches state: the
processor (re-created by Spark every micro-batch) buffers one micro-batch's
output in memory, flushes it at the end of the micro-batch, and sooner whenever
it holds more than ``execution.flush.memory-buffer-max-entries`` keys.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import pandas as pd

from changeflow.kernels.changelog import BOOKKEEPING
from changeflow.kernels.flush import BufferOutput, LatestPerKey
from changeflow.kernels.flush.output import concat_records
from changeflow.plan.flush_policy import FlushPolicy


@dataclass
class BucketBuffer:
    """A bucket's buffered output and flush bookkeeping, as kept in state between micro-batches."""

    buffered: pd.DataFrame | None = None
    last_flush_epoch: int | None = None   # None: nothing flushed yet (set at the first input)
    last_input_ms: int = -1               # batch timestamp of the last micro-batch with operator input
    timer_ms: int | None = None           # the registered timer, if any

    def dump(self) -> bytes:
        return pickle.dumps(self, protocol=5)

    @staticmethod
    def load(blob: bytes | None) -> "BucketBuffer":
        return pickle.loads(blob) if blob is not None else BucketBuffer()

    def holds_records(self) -> bool:
        return self.buffered is not None and len(self.buffered) > 0


class BucketFlusher:
    """The flush decisions of one bucket, over a :class:`BucketBuffer` the processor loads and stores."""

    def __init__(self, policy: FlushPolicy, key_columns: list[str], output_columns: list[str],
                 changelog: bool = True) -> None:
        self.policy = policy
        values = [c for c in output_columns if c not in key_columns]
        # The runtime's append outputs are DataStream operators' records: each keeps its kind (its value's RowKind).
        self.latest = LatestPerKey(list(key_columns), values, changelog, keep_kinds=not changelog)
        self.output_columns = list(output_columns)

    def on_input(self, bucket: BucketBuffer, changes: pd.DataFrame | None, now_ms: int, *,
                 had_input: bool, force: bool) -> pd.DataFrame | None:
        """Buffer the kernel's ``changes`` of a micro-batch; return what to emit now (or None).

        ``had_input``: the operator received input this micro-batch (a tick or
        rows); ``force``: end of input or an upstream flush.
        """
        epoch = self.policy.epoch(now_ms)
        if had_input:
            bucket.last_input_ms = now_ms
        if bucket.last_flush_epoch is None:
            bucket.last_flush_epoch = epoch   # the clock starts with the first input
        if changes is not None and len(changes):
            if bucket.buffered is None:
                bucket.buffered = self.latest.empty(changes)
            bucket.buffered = self.latest.merge(bucket.buffered, changes)
        if force or epoch > bucket.last_flush_epoch:
            return self.flush(bucket, epoch)
        return None

    def on_timer(self, bucket: BucketBuffer, now_ms: int) -> pd.DataFrame | None:
        """The bucket's timer fired in a micro-batch at ``now_ms``: flush on a new interval or idle input."""
        bucket.timer_ms = None
        if not bucket.holds_records():
            return None
        epoch = self.policy.epoch(now_ms)
        idle = bucket.last_input_ms < now_ms
        if idle or bucket.last_flush_epoch is None or epoch > bucket.last_flush_epoch:
            return self.flush(bucket, epoch)
        return None

    def flush(self, bucket: BucketBuffer, epoch: int) -> pd.DataFrame | None:
        bucket.last_flush_epoch = epoch
        buffered = bucket.buffered
        if buffered is None or not len(buffered):   # holds_records(), spelt out for the type checker
            return None
        out = self.latest.drain(buffered)
        bucket.buffered = buffered.iloc[:0]
        return out.loc[:, self.output_columns + list(BOOKKEEPING)] if len(out) else None

    def needs_timer(self, bucket: BucketBuffer) -> bool:
        return bucket.holds_records() and bucket.timer_ms is None


class MemoryFlusher:
    """memory-buffer-only: one micro-batch's output folded per key, flushed at its end or when full."""

    def __init__(self, policy: FlushPolicy, key_columns: list[str], output_columns: list[str],
                 changelog: bool = True) -> None:
        values = [c for c in output_columns if c not in key_columns]
        self.latest = LatestPerKey(list(key_columns), values, changelog, keep_kinds=not changelog)  # as above
        self.max_entries = policy.max_entries
        self.output_columns = list(output_columns)

    def run(self, changes: pd.DataFrame) -> pd.DataFrame | None:
        output = BufferOutput(self.latest, max_entries=self.max_entries)
        elements = output.collect(changes) + output.flush()
        out = concat_records(elements)
        return None if out is None else out.loc[:, self.output_columns + list(BOOKKEEPING)]
