"""When a bucket flushes: aligned interval boundaries, idle input, end of input (no Spark)."""

from __future__ import annotations

import pandas as pd
import pytest

from changeflow.runtime.spark.control_rows import CONTROL, Control, control_of, control_rows
from changeflow.plan.flush_policy import FlushPolicy
from changeflow.runtime.spark.flush import BucketBuffer, BucketFlusher, MemoryFlusher
from changeflow.testing.harness import KernelHarness, format_changes, insert_record, rows_of, update_after_record, \
    update_before_record

COLUMNS = ["k", "v"]
SECOND = 1000


def changes(*records):
    return KernelHarness(None, COLUMNS).frame(records)


def emitted(frame) -> list[str]:
    return [] if frame is None else format_changes(rows_of(frame, COLUMNS))


def flusher(interval_ms=5 * SECOND) -> BucketFlusher:
    return BucketFlusher(FlushPolicy(interval_ms), ["k"], COLUMNS)


def test_bucket_flushes_in_the_first_micro_batch_of_a_later_interval():
    f, bucket = flusher(), BucketBuffer()
    # The clock starts with the first input: nothing flushes within that interval.
    assert f.on_input(bucket, changes(insert_record("a", 1)), 10_500, had_input=True, force=False) is None
    assert f.on_input(bucket, changes(update_before_record("a", 1), update_after_record("a", 2)), 12_000,
                      had_input=True, force=False) is None
    assert f.needs_timer(bucket)
    # A micro-batch at 15.0 s is in the next interval [15, 20): flush, on input or on the timer.
    assert emitted(f.on_timer(bucket, 15_000)) == ["+I[a, 2]"]
    assert not bucket.holds_records()
    assert f.on_input(bucket, changes(update_before_record("a", 2), update_after_record("a", 3)), 16_000,
                      had_input=True, force=False) is None
    assert emitted(f.on_input(bucket, changes(update_before_record("a", 3), update_after_record("a", 4)), 20_000,
                              had_input=True, force=False)) == ["-U[a, 2]", "+U[a, 4]"]


def test_all_buckets_share_the_interval_boundaries_whatever_their_first_input():
    # Two buckets that started at different times flush in the same micro-batch.
    first, second = BucketBuffer(), BucketBuffer()
    f = flusher()
    f.on_input(first, changes(insert_record("a", 1)), 5_100, had_input=True, force=False)
    f.on_input(second, changes(insert_record("b", 1)), 9_900, had_input=True, force=False)
    assert emitted(f.on_timer(first, 10_000)) == ["+I[a, 1]"]
    assert emitted(f.on_timer(second, 10_000)) == ["+I[b, 1]"]


def test_timer_in_a_micro_batch_without_operator_input_flushes_as_idle():
    f, bucket = flusher(), BucketBuffer()
    f.on_input(bucket, changes(insert_record("a", 1)), 10_000, had_input=True, force=False)
    # The next micro-batch brought this operator input (a tick): not idle, keep buffering.
    f.on_input(bucket, None, 10_200, had_input=True, force=False)
    assert f.on_timer(bucket, 10_200) is None
    assert f.needs_timer(bucket)
    # The one after brought none: idle, flush.
    assert emitted(f.on_timer(bucket, 10_400)) == ["+I[a, 1]"]
    assert not f.needs_timer(bucket)


def test_end_of_input_or_an_upstream_flush_forces_a_flush():
    f, bucket = flusher(), BucketBuffer()
    f.on_input(bucket, changes(insert_record("a", 1)), 10_000, had_input=True, force=False)
    assert emitted(f.on_input(bucket, changes(insert_record("b", 2)), 10_100, had_input=True, force=True)) == [
        "+I[a, 1]", "+I[b, 2]"]


def test_bucket_buffer_survives_a_round_trip_through_state():
    f, bucket = flusher(), BucketBuffer()
    f.on_input(bucket, changes(insert_record("a", 1)), 10_000, had_input=True, force=False)
    restored = BucketBuffer.load(bucket.dump())
    assert emitted(f.on_timer(restored, 99_000)) == ["+I[a, 1]"]


def test_memory_only_folds_one_micro_batch_and_flushes_when_full():
    f = MemoryFlusher(FlushPolicy(5 * SECOND, memory_only=True, max_entries=1), ["k"], COLUMNS)
    out = f.run(changes(insert_record("a", 1), update_before_record("a", 1), update_after_record("a", 2),
                        insert_record("b", 1)))
    assert emitted(out) == ["+I[a, 2]", "+I[b, 1]"]


def test_policy_rejects_bad_settings():
    with pytest.raises(ValueError, match="max-flush-interval must be positive"):
        FlushPolicy(0)
    with pytest.raises(ValueError, match="memory-buffer-max-entries"):
        FlushPolicy(1000, memory_only=True, max_entries=0)


def test_control_rows_round_trip():
    rows = control_rows(COLUMNS, Control(frozenset({3, 9}), flush=True))
    assert rows["_kind"].tolist() == [CONTROL] * 3
    mask, control = control_of(rows["_kind"].to_numpy(), rows["_seq"].to_numpy(), rows["_sub"].to_numpy())
    assert mask.all() and control == Control(frozenset({3, 9}), flush=True)
    data = pd.DataFrame({"_kind": [0], "_seq": [4], "_sub": [0]})
    assert control_of(data["_kind"].to_numpy(), data["_seq"].to_numpy(), data["_sub"].to_numpy())[1] == Control()
