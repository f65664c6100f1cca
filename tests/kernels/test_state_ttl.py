"""State TTL (table.exec.state.ttl) in the group aggregation, join, deduplication and Top-N kernels.

Flink's StateTtlConfig as its operators use it: OnCreateAndWrite (a write starts the
TTL again, a read does not), NeverReturnExpired, processing time. The harness drives
the kernels' clock (set_time) and the sweep that reclaims idle keys.
"""

import pytest

from changeflow.common.types import DataTypes
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.join import StreamingJoin
from changeflow.kernels.rank import TopN, deduplicate_kernel
from changeflow.kernels.ttl import TTL_TABLE, KeyStateTtl
from changeflow.state.paged import DictPageStore, PagedKeyedState
from changeflow.testing.harness import (KernelHarness, delete_record, format_changes, insert_record,
                                        update_after_record, update_before_record)

TTL = 100


def group_sum(mini_batch=False, distinct=False):
    calls = [AggCall("sum", "v", DataTypes.BIGINT(), "total")]
    if distinct:
        calls.append(AggCall("count", "v", DataTypes.BIGINT(), "nd", distinct=True))
    agg = GroupAggregate(["k"], calls, mini_batch=mini_batch, input_insert_only=False, state_ttl=True)
    return KernelHarness(KeyStateTtl(agg, ["k"], TTL), ["k", "v"])


def at(h, now, *records):
    h.set_time(now)
    return format_changes(h.process(list(records)))


def live_rows(h):
    return {t: h.state.row_count(t) for t in h.state.tables() if h.state.row_count(t)}


# --- group aggregation ------------------------------------------------------------------

@pytest.mark.parametrize("mini_batch", [False, True], ids=["per_record", "mini_batch"])
def test_group_agg_expire_then_reinsert_starts_a_new_accumulator(mini_batch):
    h = group_sum(mini_batch)
    assert at(h, 0, insert_record("a", 1)) == ["+I[a, 1]"]
    assert at(h, 99, insert_record("a", 2)) == ["-U[a, 1]", "+U[a, 3]"]  # written at 99: lives to 199
    assert at(h, 198, insert_record("a", 4)) == ["-U[a, 3]", "+U[a, 7]"]
    # Last written at 198: expired at 298. A new +I starts from nothing and emits +I, as Flink's
    # GroupAggFunction (firstRow) does; the old value is not retracted.
    assert at(h, 298, insert_record("a", 5)) == ["+I[a, 5]"]


@pytest.mark.parametrize("mini_batch", [False, True], ids=["per_record", "mini_batch"])
def test_group_agg_retraction_after_expiry_is_ignored(mini_batch):
    h = group_sum(mini_batch)
    at(h, 0, insert_record("a", 1), insert_record("b", 2))
    assert at(h, 50, insert_record("b", 3)) == ["-U[b, 2]", "+U[b, 5]"]
    # "Don't create a new accumulator for a retraction message": a's state expired at 100.
    assert at(h, 100, delete_record("a", 1)) == []
    assert at(h, 100, update_before_record("b", 3)) == ["-U[b, 5]", "+U[b, 2]"]  # b (written at 50) lives
    assert at(h, 100, update_after_record("a", 9)) == ["+I[a, 9]"]


def test_group_agg_every_write_extends_the_ttl_and_unchanged_updates_are_emitted():
    h = group_sum()
    at(h, 0, insert_record("a", 1))
    # The sum does not change, but the accumulator is written (TTL restarts) and, as Flink's
    # GroupAggFunction with state retention, -U/+U are emitted to keep downstream state alive.
    assert at(h, 60, insert_record("a", 0)) == ["-U[a, 1]", "+U[a, 1]"]
    assert at(h, 159, insert_record("a", 1)) == ["-U[a, 1]", "+U[a, 2]"]


def test_mini_batch_group_agg_with_ttl_still_drops_unchanged_updates():
    h = group_sum(mini_batch=True)
    at(h, 0, insert_record("a", 1))
    assert at(h, 60, insert_record("a", 0)) == []  # MiniBatchGroupAggFunction compares only
    assert at(h, 159, insert_record("a", 1)) == ["-U[a, 1]", "+U[a, 2]"]  # but it was written at 60


def test_group_agg_key_whose_count_falls_to_zero_leaves_no_stamp():
    h = group_sum()
    at(h, 0, insert_record("a", 1))
    assert at(h, 10, delete_record("a", 1)) == ["-D[a, 1]"]
    assert h.state.row_count(TTL_TABLE) == 0 and h.state.row_count("acc") == 0


def test_group_agg_sweep_reclaims_idle_keys_with_all_their_tables():
    h = group_sum(distinct=True)
    at(h, 0, insert_record("a", 1), insert_record("a", 1), insert_record("b", 2))
    at(h, 50, insert_record("c", 3))
    assert live_rows(h) == {"acc": 3, "distinct.v": 3, TTL_TABLE: 3}
    h.set_time(99)
    assert h.sweep() == 100                     # nothing expired yet; a and b expire at 100
    h.set_time(100)
    assert h.sweep() == 150                     # a and b gone with their DISTINCT values; c expires at 150
    assert live_rows(h) == {"acc": 1, "distinct.v": 1, TTL_TABLE: 1}
    assert h.kernel.live_keys(h.state) == 1
    h.set_time(150)
    assert h.sweep() is None
    assert live_rows(h) == {}
    # An expired key comes back as new: +I.
    assert at(h, 151, insert_record("a", 7)) == ["+I[a, 7, 1]"]


def test_group_agg_sweep_on_paged_state_as_the_spark_runtime_keeps_it():
    store = DictPageStore()
    agg = KeyStateTtl(GroupAggregate(["k"], [AggCall("count_star", None, DataTypes.BIGINT(), "n")],
                                     mini_batch=True, input_insert_only=True), ["k"], TTL)
    h = KernelHarness(agg, ["k"], state=PagedKeyedState(store, ["k"], pages=4))
    at(h, 0, *[insert_record(i) for i in range(50)])
    at(h, 60, *[insert_record(i) for i in range(50, 60)])
    h.state.commit()
    state = PagedKeyedState(store, ["k"], pages=4)
    assert agg.live_keys(state) == 60
    assert agg.sweep(state, 100) == 160
    state.commit()
    state = PagedKeyedState(store, ["k"], pages=4)
    assert agg.live_keys(state) == 10 and len(state.scan("acc")) == 10


def test_ttl_must_be_positive_and_the_ttl_table_name_is_reserved():
    agg = GroupAggregate(["k"], [AggCall("count_star", None, DataTypes.BIGINT(), "n")],
                         mini_batch=False, input_insert_only=True)
    with pytest.raises(ValueError, match="positive"):
        KeyStateTtl(agg, ["k"], 0)
    with pytest.raises(ValueError, match="reserved"):
        KeyStateTtl(agg, ["k"], 10, tables=["acc", TTL_TABLE])


# --- join ---------------------------------------------------------------------------------

def join(join_type="INNER", ttl=TTL):
    kernel = StreamingJoin(join_type, ["id", "a"], ["id0", "b"], ["id"], ["id0"], ttl_ms=ttl)
    return KernelHarness(kernel, ["_side", "id", "a", "id0", "b"])


def left(i, a, kind=insert_record):
    return kind(0, i, a, None, None)


def right(i, b, kind=insert_record):
    return kind(1, None, None, i, b)


def test_join_side_expires_independently():
    h = join()
    assert at(h, 0, left(1, "a")) == []
    assert at(h, 60, right(1, "x")) == ["+I[1, a, 1, x]"]
    # The left row was written at 0 (matching does not write an inner row): gone at 100.
    assert at(h, 100, right(1, "y")) == []
    # The right rows (written at 60 and 100) still match a new left row.
    assert at(h, 120, left(1, "c")) == ["+I[1, c, 1, x]", "+I[1, c, 1, y]"]
    assert at(h, 160, left(1, "d")) == ["+I[1, d, 1, y]"]  # x (written at 60) expired at 160


def test_join_per_side_ttl_from_the_hint():
    h = join(ttl=(TTL, 0))  # STATE_TTL('l' = '100 ms') on the left only, no TTL on the right
    at(h, 0, left(1, "a"), right(1, "x"))
    assert at(h, 10_000, left(1, "b")) == ["+I[1, b, 1, x]"]  # the right row never expires
    assert at(h, 10_000, right(1, "y")) == ["+I[1, b, 1, y]"]  # left a expired, left b lives


def test_join_retraction_of_an_expired_row_still_emits_its_pairs_as_flink():
    h = join()
    at(h, 0, left(1, "a"))
    at(h, 50, right(1, "x"))
    # Left a expired at 100; its retraction finds nothing to remove but still meets right x.
    assert at(h, 100, left(1, "a", delete_record)) == ["-D[1, a, 1, x]"]


def test_outer_join_association_update_is_a_write():
    h = join("LEFT")
    assert at(h, 0, left(1, "a")) == ["+I[1, a, null, null]"]
    assert at(h, 80, right(1, "x")) == ["-D[1, a, null, null]", "+I[1, a, 1, x]"]
    # The left row's association count was written at 80: it lives until 180.
    assert at(h, 170, right(1, "y")) == ["+I[1, a, 1, y]"]


def test_join_sweep_removes_expired_rows_of_idle_keys():
    h = join("FULL")
    at(h, 0, left(1, "a"), left(2, "b"))
    at(h, 70, right(3, "x"))
    assert h.state.row_count("left") == 2 and h.state.row_count("right") == 1
    h.set_time(100)
    assert h.sweep() == 170
    assert h.state.row_count("left") == 0 and h.state.row_count("right") == 1
    h.set_time(170)
    assert h.sweep() is None
    assert h.state.row_count("right") == 0


def test_join_without_ttl_keeps_its_state_layout():
    h = join(ttl=0)
    at(h, 0, left(1, "a"))
    assert "_ts" not in h.state.scan("left").columns
    assert h.kernel.sweep_interval_ms is None


# --- deduplication and Top-N ----------------------------------------------------------------

def test_keep_first_dedup_expires_a_ttl_after_the_first_row():
    kernel = deduplicate_kernel(["k", "v"], ["k"], keep_last=False, mini_batch=False, input_insert_only=True,
                                ttl_ms=TTL)
    h = KernelHarness(kernel, ["k", "v"])
    assert at(h, 0, insert_record("a", 1)) == ["+I[a, 1]"]
    assert at(h, 50, insert_record("a", 2)) == []     # dropped: nothing is written, the TTL is not extended
    assert at(h, 100, insert_record("a", 3)) == ["+I[a, 3]"]


def test_keep_last_dedup_expired_key_emits_insert_again():
    kernel = deduplicate_kernel(["k", "v"], ["k"], keep_last=True, mini_batch=False, input_insert_only=True,
                                ttl_ms=TTL)
    h = KernelHarness(kernel, ["k", "v"])
    at(h, 0, insert_record("a", 1))
    assert at(h, 99, insert_record("a", 2)) == ["-U[a, 1]", "+U[a, 2]"]
    assert at(h, 199, insert_record("a", 3)) == ["+I[a, 3]"]
    h.set_time(299)
    assert h.sweep() is None and h.state.row_count("dedup_last") == 0


def test_retracting_dedup_rows_expire_a_ttl_after_insertion():
    kernel = deduplicate_kernel(["k", "v"], ["k"], keep_last=True, mini_batch=False, input_insert_only=False,
                                ttl_ms=TTL)
    h = KernelHarness(kernel, ["k", "v"])
    at(h, 0, insert_record("a", 1))
    assert at(h, 50, insert_record("a", 2)) == ["-U[a, 1]", "+U[a, 2]"]
    # Row 1 expired at 100 (silently); retracting row 2 leaves nothing to show.
    assert at(h, 120, delete_record("a", 2)) == ["-D[a, 2]"]
    at(h, 130, insert_record("b", 1))
    h.set_time(229)
    assert h.sweep() == 230
    h.set_time(230)
    assert h.sweep() is None


@pytest.mark.parametrize("insert_only", [True, False], ids=["append_only", "retractable"])
def test_top_n_partition_expires(insert_only):
    top = TopN(["k", "v"], ["k"], [("v", False, False)], 1, 2, "rn", input_insert_only=insert_only,  # v DESC
               mini_batch=False)
    h = KernelHarness(KeyStateTtl(top, ["k"], TTL), ["k", "v"])
    assert at(h, 0, insert_record("a", 5)) == ["+I[a, 5, 1]"]
    assert at(h, 50, insert_record("a", 3)) == ["+I[a, 3, 2]"]
    # Written at 50: lives to 150; then a new row is rank 1 of an empty partition.
    assert at(h, 149, insert_record("a", 9)) == ["-U[a, 5, 1]", "+U[a, 9, 1]", "-U[a, 3, 2]", "+U[a, 5, 2]"]
    assert at(h, 249, insert_record("a", 2)) == ["+I[a, 2, 1]"]
