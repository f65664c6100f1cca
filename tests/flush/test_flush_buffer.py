"""The flush buffer kernel: one consistent change per updated key and flush, as FLIP-365 asks."""

from __future__ import annotations

import pytest

from changeflow.common.types import DataTypes
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.flush import BufferOutput, LatestPerKey, Watermark
from changeflow.testing.harness import (
    KernelHarness, delete_record, format_changes, insert_record, materialize, rows_of, update_after_record,
    update_before_record,
)

CHANGES = ["k", "v"]


def changelog(*records):
    """A changelog frame of ``records`` (columns k, v), stamped in order."""
    return KernelHarness(None, CHANGES).frame(records)


def flushed(buffer: BufferOutput) -> list[str]:
    out = []
    for element in buffer.flush():
        out.extend([str(element)] if isinstance(element, Watermark) else format_changes(rows_of(element, CHANGES)))
    return out


def buffer_of(changelog_output=True, **kwargs) -> BufferOutput:
    return BufferOutput(LatestPerKey(["k"], ["v"], changelog=changelog_output), **kwargs)


def test_new_key_updated_many_times_emits_one_insert_of_the_latest_value():
    out = buffer_of()
    out.collect(changelog(insert_record("a", 1), update_before_record("a", 1), update_after_record("a", 2),
                          update_before_record("a", 2), update_after_record("a", 3)))
    assert flushed(out) == ["+I[a, 3]"]
    assert flushed(out) == []


def test_known_key_emits_one_retraction_of_the_emitted_value_and_one_update_to_the_latest():
    out = buffer_of()
    out.collect(changelog(insert_record("a", 1)))
    assert flushed(out) == ["+I[a, 1]"]
    out.collect(changelog(update_before_record("a", 1), update_after_record("a", 2)))
    out.collect(changelog(update_before_record("a", 2), update_after_record("a", 5)))
    assert flushed(out) == ["-U[a, 1]", "+U[a, 5]"]


def test_value_back_to_the_emitted_one_emits_nothing():
    out = buffer_of()
    out.collect(changelog(insert_record("a", 1)))
    flushed(out)
    out.collect(changelog(update_before_record("a", 1), update_after_record("a", 2),
                          update_before_record("a", 2), update_after_record("a", 1)))
    assert flushed(out) == []


def test_key_that_appears_and_vanishes_within_the_interval_emits_nothing():
    out = buffer_of()
    out.collect(changelog(insert_record("a", 1), update_before_record("a", 1), update_after_record("a", 2),
                          delete_record("a", 2), insert_record("b", 4)))
    assert flushed(out) == ["+I[b, 4]"]


def test_emitted_key_that_is_gone_emits_a_delete_of_the_emitted_value():
    out = buffer_of()
    out.collect(changelog(insert_record("a", 1)))
    flushed(out)
    out.collect(changelog(update_before_record("a", 1), update_after_record("a", 2)))
    out.collect(changelog(delete_record("a", 2)))
    assert flushed(out) == ["-D[a, 1]"]


def test_emitted_key_deleted_and_inserted_again_emits_an_update():
    out = buffer_of()
    out.collect(changelog(insert_record("a", 1)))
    flushed(out)
    out.collect(changelog(delete_record("a", 1), insert_record("a", 7)))
    assert flushed(out) == ["-U[a, 1]", "+U[a, 7]"]


def test_null_values_and_null_keys_compare_as_values():
    out = buffer_of()
    out.collect(changelog(insert_record(None, None), insert_record("b", 1)))
    flushed(out)
    out.collect(changelog(update_before_record(None, None), update_after_record(None, 3),
                          update_before_record(None, 3), update_after_record(None, None),
                          update_before_record("b", 1), update_after_record("b", None)))
    assert flushed(out) == ["-U[b, 1]", "+U[b, null]"]


def test_update_after_without_a_retraction_first_is_a_clear_error():
    out = buffer_of()
    with pytest.raises(ValueError, match=r"\+U without a -U.*'k': 'a'"):
        out.collect(changelog(update_after_record("a", 2)))


def test_append_output_keeps_the_latest_record_per_key():
    out = buffer_of(changelog_output=False)
    out.collect(changelog(insert_record("a", 1), insert_record("b", 1), insert_record("a", 3)))
    assert flushed(out) == ["+I[b, 1]", "+I[a, 3]"]
    with pytest.raises(ValueError, match="not \\+I"):
        out.collect(changelog(delete_record("a", 3)))


def test_flushed_group_aggregation_materializes_to_the_unbuffered_result():
    # Every flush point of a random-ish update sequence: the buffered changelog
    # applied to an empty table always equals the unbuffered one.
    agg = GroupAggregate(["k"], [AggCall("sum", "v", DataTypes.BIGINT(), "s"),
                                 AggCall("count_star", None, None, "n")], mini_batch=False, input_insert_only=False)
    harness = KernelHarness(agg, CHANGES)
    out = BufferOutput(LatestPerKey(["k"], ["s", "n"]))
    batches = [[insert_record("a", 1), insert_record("b", 2), insert_record("a", 4)],
               [delete_record("b", 2), insert_record("c", 5)],
               [insert_record("b", 3), delete_record("a", 1), delete_record("a", 4)],
               [insert_record("a", 9), insert_record("c", -5)]]
    buffered_changes = []
    for batch in batches:
        out.collect(harness.process_frame(harness.frame(batch)))
        for element in out.flush():
            buffered_changes.extend(rows_of(element, ["k", "s", "n"]))
        unbuffered = KernelHarness(GroupAggregate(["k"], agg.calls, mini_batch=False, input_insert_only=False),
                                   CHANGES)
        for earlier in batches[:batches.index(batch) + 1]:
            unbuffered.process(earlier)
        assert sorted(map(repr, materialize(buffered_changes))) == sorted(map(repr, materialize(unbuffered.changes)))
    assert len(buffered_changes) < sum(1 for _ in unbuffered.changes)


def test_watermark_passes_at_once_while_the_buffer_is_empty():
    out = buffer_of(timestamp_column="v")
    assert out.emit_watermark(Watermark(10)) == [Watermark(10)]


def test_flush_orders_records_around_the_latest_buffered_watermark():
    out = buffer_of(changelog_output=False, timestamp_column="v")
    out.collect(changelog(insert_record("a", 3), insert_record("b", 12), insert_record("c", 7)))
    assert out.emit_watermark(Watermark(5)) == []
    assert out.emit_watermark(Watermark(8)) == []  # only the latest watermark is kept
    assert flushed(out) == ["+I[a, 3]", "+I[c, 7]", "Watermark(timestamp=8)", "+I[b, 12]"]


def test_flush_of_a_buffered_watermark_without_later_records():
    out = buffer_of(changelog_output=False, timestamp_column="v")
    out.collect(changelog(insert_record("a", 3)))
    out.emit_watermark(Watermark(5))
    assert flushed(out) == ["+I[a, 3]", "Watermark(timestamp=5)"]
    assert out.emit_watermark(Watermark(6)) == [Watermark(6)]


def test_idle_input_flushes_only_after_records_arrived():
    out = buffer_of()
    assert out.notify_nothing_available() == []
    out.collect(changelog(insert_record("a", 1)))
    assert format_changes(rows_of(out.notify_nothing_available()[0], CHANGES)) == ["+I[a, 1]"]
    assert out.notify_nothing_available() == []


def test_memory_buffer_only_flushes_when_it_holds_more_than_max_entries():
    out = buffer_of(max_entries=2)
    forced = out.collect(changelog(insert_record("a", 1), insert_record("b", 1), insert_record("a", 2),
                                   insert_record("c", 1), insert_record("d", 1)))
    # Checked every two rows: {a, b} fits, {a, b} again fits, {a, b, c} does not.
    records = [c for e in forced for c in format_changes(rows_of(e, CHANGES))]
    assert records == ["+I[b, 1]", "+I[a, 2]", "+I[c, 1]"]
    assert len(out) == 1
    assert flushed(out) == ["+I[d, 1]"]


def test_memory_buffer_only_rejects_a_bound_below_one():
    with pytest.raises(ValueError, match="at least 1"):
        buffer_of(max_entries=0)


def test_an_update_pair_stays_in_order_when_stamps_restart_between_micro_batches():
    # A monitored directory numbers each file's rows from 0: the emitted row's stamp (from
    # an earlier file) can be larger than the stamps of the next file's changes. The pair
    # must still come out -U first (a replay by key would otherwise delete the key).
    out = buffer_of()
    first = changelog(insert_record("x", 0), insert_record("a", 1))
    first["_seq"] = [40, 45]
    out.collect(first)
    assert flushed(out) == ["+I[x, 0]", "+I[a, 1]"]
    for seq, (before, after) in ((40, (1, 2)), (3, (2, 3))):  # two micro-batches (files) in one interval
        batch = changelog(update_before_record("a", before), update_after_record("a", after))
        batch["_seq"] = [seq, seq]
        out.collect(batch)
    assert flushed(out) == ["-U[a, 1]", "+U[a, 3]"]
