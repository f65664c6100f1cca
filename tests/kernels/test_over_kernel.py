"""The OVER aggregation kernel (kernels/over) through the harness: event-time frames, late rows,
ties, restarts, processing time; and a hypothesis property against a plain-Python reference."""

from __future__ import annotations

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.over import OverAggregate
from changeflow.testing import KernelHarness, insert_record

EPOCH = datetime.datetime(1970, 1, 1)
COLUMNS = ["k", "ts", "v"]


def at(ms: int) -> datetime.datetime:
    return EPOCH + datetime.timedelta(milliseconds=ms)


def calls() -> list[AggCall]:
    return [AggCall("sum", "v", DataTypes.INT(), "s"), AggCall("count_star", None, None, "c"),
            AggCall("min", "v", DataTypes.INT(), "lo"), AggCall("avg", "v", DataTypes.INT(), "a")]


def kernel(rows: bool, preceding: int | None, **kw) -> OverAggregate:
    return OverAggregate(["k"], COLUMNS, "ts", calls(), rows=rows, preceding=preceding, **kw)


def harness(k: OverAggregate, restart: bool = False) -> KernelHarness:
    return KernelHarness(k, COLUMNS, dtypes={"k": object, "ts": object, "v": "Int64"}, restart_every_batch=restart)


def rec(k, ms, v):
    return insert_record(k, at(ms), v)


def values(rows) -> list[tuple]:
    return [(r[0], int((r[1] - EPOCH).total_seconds() * 1000), r[2], *r[3:]) for r in rows]


def test_rows_wait_for_the_watermark_and_come_in_timestamp_order():
    h = harness(kernel(rows=True, preceding=2))
    assert h.process([rec("a", 3000, 3), rec("a", 1000, 1), rec("a", 2000, 2)]) == []
    assert values(h.watermark(1999)) == [("a", 1000, 1, 1, 1, 1, 1)]
    assert values(h.watermark(3000)) == [("a", 2000, 2, 3, 2, 1, 1), ("a", 3000, 3, 6, 3, 1, 2)]
    # The next row's frame reaches back into rows emitted at earlier watermarks.
    h.process([rec("a", 4000, None)])
    assert values(h.end_of_input()) == [("a", 4000, None, 5, 3, 2, 2)]


def test_late_rows_are_dropped_and_counted():
    k = kernel(rows=True, preceding=None)
    h = harness(k)
    h.process([rec("a", 1000, 1), rec("b", 1500, 5)])
    h.watermark(2000)
    # At the watermark (ts == 2000) and before it: late; after it: kept.
    assert h.process([rec("a", 2000, 10), rec("a", 500, 20), rec("a", 2001, 2)]) == []
    assert values(h.end_of_input()) == [("a", 2001, 2, 3, 2, 1, 1)]
    assert k.late_records(h.state) == 2


def test_range_frames_share_tied_timestamps():
    h = harness(kernel(rows=False, preceding=None))
    h.process([rec("a", 1000, 1), rec("a", 2000, 2), rec("a", 2000, 3), rec("a", 3000, 4)])
    assert values(h.end_of_input()) == [("a", 1000, 1, 1, 1, 1, 1), ("a", 2000, 2, 6, 3, 1, 2),
                                        ("a", 2000, 3, 6, 3, 1, 2), ("a", 3000, 4, 10, 4, 1, 2)]


def test_rows_frames_count_tied_rows_in_arrival_order():
    h = harness(kernel(rows=True, preceding=None))
    h.process([rec("a", 2000, 3), rec("a", 1000, 1), rec("a", 2000, 2)])
    assert [r[3] for r in h.end_of_input()] == [1, 4, 6]


def test_range_bounded_offset_is_inclusive_and_ties_share():
    # Timestamps after the epoch: a bounded frame drops a row at 0 (Flink's lastTriggeringTs starts at 0).
    h = harness(kernel(rows=False, preceding=5000))
    h.process([rec("a", 1000, 1), rec("a", 6000, 2), rec("a", 6001, 4), rec("a", 6001, 8)])
    h.watermark(6000)
    h.process([rec("a", 11001, 16)])
    h.end_of_input()
    out = values(h.changes)
    assert [(ts, s, c) for _, ts, _, s, c, _, _ in out] == [(1000, 1, 1), (6000, 3, 2), (6001, 14, 3),
                                                          (6001, 14, 3), (11001, 28, 3)]


def test_bounded_frames_drop_by_the_keys_last_fired_timestamp_not_the_watermark():
    """Flink's RowTime{Rows,Range}BoundedPrecedingFunction: a row is late when at or before the last
    timestamp its key fired, though it may be behind the watermark (it comes out at the next one);
    the unbounded frames drop what is at or behind the watermark."""
    for rows, preceding in ((True, 2), (False, 3000)):
        k = kernel(rows=rows, preceding=preceding)
        h = harness(k, restart=True)
        h.process([rec("a", 0, 7), rec("a", 1000, 1), rec("b", 9000, 5)])
        h.watermark(8000)  # a fired at 1000, b not yet
        assert h.process([rec("a", 1000, 50), rec("a", 3000, 2), rec("b", 7000, 3)]) == []
        assert values(h.watermark(8500)) == [("a", 3000, 2, 3, 2, 1, 1), ("b", 7000, 3, 3, 1, 3, 3)]
        h.end_of_input()
        assert k.late_records(h.state) == 2  # a at 0 (not after Flink's initial 0) and a at 1000
    k = kernel(rows=True, preceding=None)
    h = harness(k)
    h.process([rec("a", 1000, 1)])
    h.watermark(8000)
    assert h.process([rec("a", 3000, 2)]) == []
    assert values(h.end_of_input()) == [] and k.late_records(h.state) == 1


def test_partitions_are_independent_and_restarts_lose_nothing():
    for restart in (False, True):
        h = harness(kernel(rows=True, preceding=1), restart=restart)
        h.process([rec("a", 1000, 1), rec("b", 1000, 10)])
        h.watermark(1000)
        h.process([rec("b", 2000, 20), rec("a", 2000, 2)])
        h.watermark(5000)
        h.process([rec("a", 6000, 3)])
        h.end_of_input()
        out = sorted(values(h.changes))
        assert [(k, ts, s) for k, ts, _, s, *_ in out] == [("a", 1000, 1), ("a", 2000, 3), ("a", 6000, 5),
                                                          ("b", 1000, 10), ("b", 2000, 30)]


def test_integral_avg_truncates_and_sum_wraps_like_java():
    k = OverAggregate(["k"], COLUMNS, "ts", [AggCall("avg", "v", DataTypes.INT(), "a"),
                                            AggCall("sum", "v", DataTypes.INT(), "s")], rows=True, preceding=None)
    h = harness(k)
    h.process([rec("a", 1, -3), rec("a", 2, -4), rec("a", 3, 2**31 - 1)])
    assert [(r[3], r[4]) for r in h.end_of_input()] == [(-3, -3), (-3, -7), (715827880, 2**31 - 8)]


def test_processing_time_emits_each_row_as_it_arrives():
    h = harness(kernel(rows=True, preceding=1, proctime=True))
    h.set_time(100)
    out = h.process([rec("a", 0, 1), rec("b", 0, 5), rec("a", 0, 2)])
    assert [(r[0], r[3], r[4]) for r in out] == [("a", 1, 1), ("b", 5, 1), ("a", 3, 2)]
    h.set_time(200)
    assert [(r[0], r[3]) for r in h.process([rec("a", 0, 4)])] == [("a", 6)]


def test_processing_time_range_shares_a_batch_instant():
    h = harness(kernel(rows=False, preceding=50, proctime=True))
    h.set_time(100)
    assert [r[3] for r in h.process([rec("a", 0, 1), rec("a", 0, 2)])] == [3, 3]
    h.set_time(149)
    assert [r[3] for r in h.process([rec("a", 0, 4)])] == [7]
    h.set_time(151)
    assert [r[3] for r in h.process([rec("a", 0, 8)])] == [12]


def test_no_partition_key():
    k = OverAggregate([], COLUMNS, "ts", calls(), rows=True, preceding=1)
    h = harness(k, restart=True)
    h.process([rec("a", 2, 2), rec("b", 1, 1)])
    h.watermark(1)
    h.process([rec("c", 3, 3)])
    h.end_of_input()
    assert [r[3] for r in h.changes] == [1, 3, 5]


# --- property: streaming equals a plain-Python reference over the non-late rows ---------------

def reference(rows: list[tuple], frame_rows: bool, preceding: int | None) -> list[tuple]:
    """(k, ts, v, SUM, COUNT(*), MIN, AVG) of every row: its frame read straight off the definition."""
    out = []
    ordered = sorted(enumerate(rows), key=lambda p: (p[1][1], p[0]))
    for i, (k, ts, v) in ordered:
        part = [(j, r) for j, r in ordered if r[0] == k]
        me = [j for j, _ in part].index(i)
        if frame_rows:
            first = 0 if preceding is None else max(0, me - preceding)
            frame = [r for _, r in part[first:me + 1]]
        else:
            low = -(2**62) if preceding is None else ts - preceding
            frame = [r for _, r in part if low <= r[1] <= ts]
        vs = [r[2] for r in frame if r[2] is not None]
        avg = None if not vs else int(sum(vs) / len(vs))
        out.append((k, ts, v, sum(vs) if vs else None, len(frame), min(vs) if vs else None, avg))
    return sorted(out, key=repr)


events = st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 30), st.one_of(st.none(), st.integers(-9, 9))),
                  max_size=25)


@settings(max_examples=150, deadline=None)
@given(events, st.booleans(), st.sampled_from([None, 0, 1, 3, 7]), st.integers(0, 10), st.lists(st.integers(1, 6)))
def test_streaming_equals_reference_over_non_late_rows(rows, frame_rows, preceding, delay, cuts):
    """Random out-of-order rows, fed in batches with a watermark of (newest - delay) after each batch:
    the rows not late at arrival come out once each, with the values the reference gives them."""
    h = harness(kernel(rows=frame_rows, preceding=preceding), restart=True)
    kept, newest, start, watermark = [], None, 0, None
    # Late as Flink: an unbounded frame drops a row at or behind the watermark; a bounded one a row at or
    # before the last timestamp its key fired (0 before the first: Flink's lastTriggeringTs default).
    fired: dict[str, int] = {}
    pending: list[tuple] = []
    for size in cuts + [len(rows)]:
        batch = rows[start:start + size]
        start += size
        if batch:
            accepted = [r for r in batch if (r[1] > fired.get(r[0], 0) if preceding is not None
                                             else watermark is None or r[1] > watermark)]
            kept += accepted
            pending += accepted
            h.process([rec(k, ts, v) for k, ts, v in batch])
            newest = max([newest or 0] + [ts for _, ts, _ in batch])
            if watermark is None or newest - delay > watermark:
                watermark = newest - delay
                for key, ts, _ in [r for r in pending if r[1] <= watermark]:
                    fired[key] = max(fired.get(key, 0), ts)
                pending = [r for r in pending if r[1] > watermark]
            h.watermark(newest - delay)
        if start >= len(rows):
            break
    h.end_of_input()
    out = values(h.changes)
    assert sorted(out, key=repr) == reference(kept, frame_rows, preceding)
    # Batch: the same kernel over all the rows at once (runtime/spark/over.py), nothing late.
    k = kernel(rows=frame_rows, preceding=preceding)
    batch = harness(k).frame([rec(key, ts, v) for key, ts, v in rows])
    bounded = k.process_bounded(batch)
    assert sorted(values(harness(k).rows_of_frame(bounded)), key=repr) == reference(rows, frame_rows, preceding)
