"""The event-time temporal join kernel without Spark: versions, emission as the watermark passes, state."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from hypothesis import given, settings, strategies as st

from changeflow.kernels.join.temporal import TABLES, TemporalJoin
from changeflow.table.expressions import col
from changeflow.testing.harness import KernelHarness, delete_record, insert_record, materialize, update_after_record

BASE = dt.datetime(2024, 1, 1)
BASE_MS = int(BASE.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
COLUMNS = ["_side", "k", "t", "id", "k0", "t0", "rate"]


def at(ms: int) -> dt.datetime:
    return BASE + dt.timedelta(milliseconds=ms)


def probe(k, ms, i):
    return insert_record(0, k, at(ms), i, None, None, None)


def version(k, ms, rate, record=insert_record):
    return record(1, None, None, None, k, at(ms), rate)


def harness(join_type="LEFT", condition=None, restart=True):
    kernel = TemporalJoin(join_type, ["k", "t", "id"], ["k0", "t0", "rate"], ["k"], ["k0"], "t", "t0", condition)
    return KernelHarness(kernel, COLUMNS, restart_every_batch=restart)


def results(rows) -> list[tuple]:
    return sorted(((r[2], r[5]) for r in rows), key=str)


def stored(h) -> tuple[int, int]:
    return tuple(h.state.row_count(t) if t in h.state.tables() else 0 for t in TABLES)


def test_probe_rows_wait_for_the_watermark_and_take_the_version_valid_at_their_time():
    h = harness()
    assert h.process([version("eur", 0, 10), version("eur", 5000, 11), probe("eur", 3000, 1), probe("eur", 7000, 2),
                      probe("eur", 5000, 3)]) == []
    assert results(h.watermark(BASE_MS + 4999)) == [(1, 10)]
    assert results(h.watermark(BASE_MS + 7000)) == [(2, 11), (3, 11)]  # at 5000 exactly: the version of 5000
    assert stored(h) == (0, 1)  # only the latest version at or before the watermark is kept


def test_left_pads_before_the_first_version_and_for_unknown_keys_inner_drops_them():
    for join_type, expected in (("LEFT", [(1, None), (2, None), (3, 10)]), ("INNER", [(3, 10)])):
        h = harness(join_type)
        h.process([version("eur", 2000, 10), probe("eur", 1000, 1), probe("usd", 3000, 2), probe("eur", 2000, 3)])
        assert results(h.end_of_input()) == expected
        assert stored(h) == (0, 1)


def test_versions_out_of_order_and_a_replaced_version_of_one_time():
    h = harness()
    h.process([version("eur", 5000, 11), probe("eur", 6000, 1)])
    h.process([version("eur", 0, 10), version("eur", 5000, 12), probe("eur", 4000, 2)])
    assert results(h.watermark(BASE_MS + 6000)) == [(1, 12), (2, 10)]


def test_a_deleted_version_means_no_version_and_the_update_after_is_one():
    h = harness()
    h.process([version("eur", 0, 10), version("eur", 3000, 10, delete_record), version("eur", 6000, 12,
                                                                                         update_after_record),
               probe("eur", 1000, 1), probe("eur", 4000, 2), probe("eur", 7000, 3)])
    assert results(h.end_of_input()) == [(1, 10), (2, None), (3, 12)]


def test_remaining_condition_pads_in_a_left_join():
    h = harness("LEFT", condition=col("rate") > 10)
    h.process([version("eur", 0, 10), version("eur", 5000, 11), probe("eur", 1000, 1), probe("eur", 6000, 2)])
    assert results(h.end_of_input()) == [(1, None), (2, 11)]


def test_late_probe_row_is_emitted_at_the_next_watermark_with_the_versions_kept():
    h = harness()
    h.process([version("eur", 0, 10), version("eur", 5000, 11), version("eur", 9000, 12)])
    h.watermark(BASE_MS + 8000)
    assert stored(h) == (0, 2)  # the version of 0 is dropped: the one of 5000 holds at 8000
    assert h.process([probe("eur", 7000, 1), probe("eur", 2000, 2)]) == []  # late: wait for a watermark
    assert results(h.watermark(BASE_MS + 8001)) == [(1, 11), (2, None)]  # the version of 0 is gone


def test_state_of_probe_rows_falls_as_the_watermark_passes():
    h = harness()
    h.process([probe("a", t, t) for t in (1000, 2000, 3000, 4000)])
    assert stored(h) == (4, 0)
    h.watermark(BASE_MS + 2500)
    assert stored(h) == (2, 0)
    h.watermark(BASE_MS + 4000)
    assert stored(h) == (0, 0)


def test_null_key_is_padded_in_a_left_join():
    h = harness()
    h.process([version(None, 0, 10), probe(None, 1000, 1)])
    assert results(h.end_of_input()) == [(1, None)]


# --- property: streaming, materialized, equals the batch as-of join over the rows that are not late -----------

EVENT = st.tuples(st.integers(0, 1), st.sampled_from(["a", "b", None]), st.integers(0, 20_000))


@settings(max_examples=150, deadline=None)
@given(events=st.lists(EVENT, max_size=16), cuts=st.lists(st.integers(0, 16), max_size=4),
       delay=st.integers(0, 8000), join_type=st.sampled_from(["INNER", "LEFT"]), data=st.data())
def test_property_equals_the_batch_as_of_join(events, cuts, delay, join_type, data):
    """Any order and batching: each probe row that was not late when it arrived gets the version a batch
    as-of join gives it, over the versions that arrived before the watermark passed the probe row."""
    order = data.draw(st.permutations(range(len(events))))
    bounds = sorted({min(c, len(events)) for c in cuts} | {0, len(events)})
    h = harness(join_type, restart=False)
    w = -(2**63)
    high = None
    arrivals = []  # (event index, watermark when it arrived)
    for a, b in zip(bounds, bounds[1:], strict=False):
        batch = order[a:b]
        h.process([probe(events[i][1], events[i][2], i) if events[i][0] == 0 else
                   version(events[i][1], events[i][2], i) for i in batch])
        arrivals += [(i, w) for i in batch]
        for i in batch:
            high = events[i][2] if high is None else max(high, events[i][2])
        if high is not None and BASE_MS + high - delay > w:
            w = BASE_MS + high - delay
            h.watermark(w)
    h.end_of_input()

    expected = Counter()
    for i, wi in arrivals:
        side, key, t = events[i]
        if side != 0 or BASE_MS + t <= wi:
            continue  # a version, or a late probe row
        candidates = [(events[j][2], m, j) for m, (j, wj) in enumerate(arrivals)
                      if events[j][0] == 1 and key is not None and events[j][1] == key and events[j][2] <= t
                      and BASE_MS + t > wj]  # the version arrived before the probe row was emitted
        if candidates:
            expected[(i, max(candidates)[2])] += 1  # the latest time; of one time, the last to arrive
        elif join_type == "LEFT":
            expected[(i, None)] += 1
    late = {i for i, wi in arrivals if events[i][0] == 0 and BASE_MS + events[i][2] <= wi}
    got = Counter((r[2], r[5]) for r in materialize(h.changes) if r[2] not in late)
    assert got == expected
    assert {r.get_row_kind().value for r in h.changes} <= {0}
    assert stored(h)[0] == 0
