"""Window Top-N, window deduplication and window join kernels in the harness, without Spark.

Rows arrive already assigned to their windows (the window TVF runs before the
kernels), as ``(ws, we, k, v, t)``. A window's rows are emitted once, insert-only,
when the watermark reaches its end - 1 ms; a row whose window has fired is late:
dropped and counted. The properties check that, for random out-of-order input and
random watermarks, the output equals a batch computation over the rows that were
not late.
"""

from __future__ import annotations

import datetime as dt
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.kernels.join.window_join import TABLES, WindowJoin
from changeflow.kernels.window.window_rank import TABLE, WindowRank, window_deduplicate
from changeflow.plan.event_time import WindowSpec
from changeflow.testing import KernelHarness, insert_record

EPOCH = dt.datetime(1970, 1, 1)
COLUMNS = ["ws", "we", "k", "v", "t"]
TUMBLE = WindowSpec("TUMBLE", 10_000)


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def ms(value: dt.datetime) -> int:
    return int((value - EPOCH) / dt.timedelta(milliseconds=1))


def rows_in(window: WindowSpec, ts: int, k, v: int, side=None):
    """The rows the window TVF makes of one event (one per window it falls in); ``side`` tags a join input."""
    rows = [(at(s), at(e), k, v, at(ts)) for s, e in window.windows(ts)]
    if side is None:
        return [insert_record(*r) for r in rows]
    pad = (None,) * len(COLUMNS)
    return [insert_record(side, *(r + pad if side == 0 else pad + r)) for r in rows]


def top2() -> WindowRank:
    return WindowRank(COLUMNS, [], "ws", "we", [("v", False, False)], 1, 2, "rn")


# --- window Top-N ------------------------------------------------------------------------------------
def test_a_window_top_n_fires_when_the_watermark_reaches_its_end_minus_one():
    h = KernelHarness(top2(), COLUMNS)
    h.process(rows_in(TUMBLE, 3_000, "a", 1) + rows_in(TUMBLE, 1_000, "b", 5) + rows_in(TUMBLE, 12_000, "c", 9))
    h.process(rows_in(TUMBLE, 2_000, "c", 3))   # out of order, its window still open
    assert h.watermark(9_998) == []
    fired = h.watermark(9_999)
    assert [(r[2], r[3], r[5]) for r in fired] == [("b", 5, 1), ("c", 3, 2)]
    assert [(r[2], r[5]) for r in h.end_of_input()] == [("c", 1)]


def test_a_late_row_is_dropped_and_counted_and_its_window_is_not_emitted_again():
    h = KernelHarness(top2(), COLUMNS)
    h.process(rows_in(TUMBLE, 3_000, "a", 1))
    h.watermark(10_000)
    h.process(rows_in(TUMBLE, 4_000, "b", 100) + rows_in(TUMBLE, 14_000, "b", 2))
    assert h.kernel.late_records(h.state) == 1
    assert [(r[2], r[3]) for r in h.end_of_input()] == [("b", 2)]


def test_equal_sort_keys_rank_in_arrival_order_and_state_keeps_only_the_top():
    h = KernelHarness(top2(), COLUMNS)
    for k in "abcd":
        h.process(rows_in(TUMBLE, 1_000, k, 7))
    assert h.state.row_count(TABLE) == 2   # a row pushed out of the top 2 can never come back
    assert [(r[2], r[5]) for r in h.watermark(10_000)] == [("a", 1), ("b", 2)]
    assert h.state.row_count(TABLE) == 0   # state dropped when the window fired


def test_rank_start_skips_the_first_rows_and_partitions_rank_apart():
    kernel = WindowRank(COLUMNS, ["k"], "ws", "we", [("v", True, False)], 2, 3, None)
    h = KernelHarness(kernel, COLUMNS)
    h.process([r for v in (5, 1, 3, 2) for r in rows_in(TUMBLE, 1_000 + v, "a", v)] + rows_in(TUMBLE, 500, "b", 1))
    assert sorted((r[2], r[3]) for r in h.end_of_input()) == [("a", 2), ("a", 3)]


def test_window_deduplication_keeps_the_first_or_the_last_row_by_time():
    first = KernelHarness(window_deduplicate(COLUMNS, ["k"], "ws", "we", "t", keep_last=False), COLUMNS)
    last = KernelHarness(window_deduplicate(COLUMNS, ["k"], "ws", "we", "t", keep_last=True), COLUMNS)
    events = [(5_000, "a", 1), (2_000, "a", 2), (2_000, "a", 3), (8_000, "a", 4), (8_000, "a", 5), (3_000, "b", 6)]
    for h in (first, last):
        for ts, k, v in events:
            h.process(rows_in(TUMBLE, ts, k, v))
    # Equal times: FirstRow keeps the one that came first, LastRow the one that came last (Flink's combiners).
    assert sorted((r[2], r[3]) for r in first.end_of_input()) == [("a", 2), ("b", 6)]
    assert sorted((r[2], r[3]) for r in last.end_of_input()) == [("a", 5), ("b", 6)]


def test_the_one_pass_with_watermarks_equals_segment_by_segment():
    events = [(3_000, "a", 1), (12_000, "b", 2), (4_000, "c", 3), (21_000, "a", 4), (9_000, "b", 9),
              (25_000, "c", 5), (19_000, "a", 6)]
    records = [r for ts, k, v in events for r in rows_in(TUMBLE, ts, k, v)]
    watermarks = [(2, 10_500), (4, 19_000), (6, 23_000)]
    one = KernelHarness(top2(), COLUMNS)
    got = one.process_with_watermarks(records, watermarks)
    step = KernelHarness(top2(), COLUMNS)
    expected, done = [], 0
    for after, wm in watermarks:
        expected += step.process(records[done:after]) + step.watermark(wm)
        done = after
    expected += step.process(records[done:])
    assert [tuple(r) for r in got] == [tuple(r) for r in expected]
    # Late: c at 4 s, b at 9 s, a at 19 s.
    assert one.kernel.late_records(one.state) == step.kernel.late_records(step.state) == 3
    assert [tuple(r) for r in one.end_of_input()] == [tuple(r) for r in step.end_of_input()]


# --- window join -------------------------------------------------------------------------------------
RIGHT = ["ws0", "we0", "k0", "v0", "t0"]


def join(kind: str, condition=None) -> WindowJoin:
    return WindowJoin(kind, COLUMNS, RIGHT, ["k"], ["k0"], "we", "we0", condition)


def join_harness(kind: str, condition=None) -> KernelHarness:
    return KernelHarness(join(kind, condition), ["_side"] + COLUMNS + RIGHT)


def test_a_window_join_pairs_each_window_when_the_watermark_passes_its_end():
    h = join_harness("INNER")
    h.process(rows_in(TUMBLE, 1_000, "a", 1, side=0) + rows_in(TUMBLE, 11_000, "a", 2, side=0))
    h.process(rows_in(TUMBLE, 5_000, "a", 10, side=1) + rows_in(TUMBLE, 6_000, "a", 11, side=1)
              + rows_in(TUMBLE, 7_000, "b", 12, side=1))
    assert h.watermark(9_998) == []
    assert [(r[3], r[8]) for r in h.watermark(9_999)] == [(1, 10), (1, 11)]
    assert [(r[3], r[8]) for r in h.end_of_input()] == []   # [10,20) has no right row
    assert h.state.row_count(TABLES[0]) == h.state.row_count(TABLES[1]) == 0


def test_outer_window_joins_pad_the_rows_that_match_nothing_and_null_keys_never_match():
    from changeflow.table.expressions import col

    events = [(0, 1_000, "a", 1), (0, 2_000, "b", 2), (0, 3_000, None, 3), (1, 4_000, "a", 5),
              (1, 4_500, "a", 0), (1, 5_000, "c", 6), (1, 6_000, None, 7)]
    got = {}
    for kind in ("INNER", "LEFT", "RIGHT", "FULL"):
        h = join_harness(kind, col("v") < col("v0"))
        for side, ts, k, v in events:
            h.process(rows_in(TUMBLE, ts, k, v, side=side))
        got[kind] = sorted(((r[3], r[8]) for r in h.end_of_input()), key=str)
    assert got["INNER"] == [(1, 5)]
    assert got["LEFT"] == [(1, 5), (2, None), (3, None)]
    assert got["RIGHT"] == sorted([(1, 5), (None, 0), (None, 6), (None, 7)], key=str)
    assert got["FULL"] == sorted([(1, 5), (2, None), (3, None), (None, 0), (None, 6), (None, 7)], key=str)


def test_a_late_row_of_either_side_is_dropped_and_counted():
    h = join_harness("FULL")
    h.process(rows_in(TUMBLE, 1_000, "a", 1, side=0))
    h.watermark(12_000)
    h.process(rows_in(TUMBLE, 2_000, "a", 2, side=1) + rows_in(TUMBLE, 3_000, "a", 3, side=0))
    assert h.kernel.late_records(h.state) == 2
    assert h.end_of_input() == []


# --- the invariant: output equals a batch computation over the rows that were not late --------------
WINDOWS = [WindowSpec("TUMBLE", 10_000), WindowSpec("HOP", 10_000, slide_ms=5_000),
           WindowSpec("CUMULATE", 15_000, step_ms=5_000)]
events = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 50_000), st.sampled_from("ab"), st.integers(0, 4)),
                  max_size=30)


def _feed(h: KernelHarness, window, evs, cuts, delay, side: bool):
    """Feed the events in batches (cut at ``cuts``), the watermark after each the max time minus ``delay``;
    return the (side, window start, window end, key, value, time) rows that were not late."""
    bounds = sorted({0, len(evs), *[min(c, len(evs)) for c in cuts]})
    watermark, seen, kept = None, None, []
    for a, b in itertools.pairwise(bounds):
        batch = evs[a:b]
        records = []
        for s, ts, k, v in batch:
            records += rows_in(window, ts, k, v, side=s if side else None)
            kept += [(s, ws, we, k, v, ts) for ws, we in window.windows(ts)
                     if watermark is None or we - 1 > watermark]
        h.process(records)
        if batch:
            seen = max([ts for _, ts, _, _ in batch] + ([seen] if seen is not None else []))
            watermark = seen - delay if watermark is None else max(watermark, seen - delay)
            h.watermark(watermark)
    return kept


@settings(max_examples=50, deadline=None)
@given(evs=events, cuts=st.lists(st.integers(0, 30), max_size=4), delay=st.sampled_from([0, 3_000, 60_000]),
       window=st.sampled_from(WINDOWS), n=st.integers(1, 3))
def test_window_top_n_equals_a_batch_top_n_over_the_rows_that_were_not_late(evs, cuts, delay, window, n):
    kernel = WindowRank(COLUMNS, ["k"], "ws", "we", [("v", False, False), ("t", True, False)], 1, n, "rn")
    h = KernelHarness(kernel, COLUMNS, restart_every_batch=True)
    kept = _feed(h, window, evs, cuts, delay, side=False)
    h.end_of_input()
    got = sorted((ms(r[0]), ms(r[1]), r[2], r[3], ms(r[4]), r[5]) for r in h.changes)
    expected = []
    for (ws, we, k), group in itertools.groupby(sorted(kept, key=lambda r: r[1:4]), key=lambda r: r[1:4]):
        # Ties (equal v and t) rank in arrival order: kept is in arrival order and sorted() is stable.
        ranked = sorted(group, key=lambda r: (-r[4], r[5]))[:n]
        expected += [(ws, we, k, r[4], r[5], i + 1) for i, r in enumerate(ranked)]
    assert got == sorted(expected)


@settings(max_examples=50, deadline=None)
@given(evs=events, cuts=st.lists(st.integers(0, 30), max_size=4), delay=st.sampled_from([0, 3_000, 60_000]),
       window=st.sampled_from(WINDOWS), kind=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]))
def test_window_join_equals_a_batch_join_over_the_rows_that_were_not_late(evs, cuts, delay, window, kind):
    h = join_harness(kind)
    h.restart_every_batch = True
    kept = _feed(h, window, evs, cuts, delay, side=True)
    h.end_of_input()
    got = sorted((((r[2], r[3], ms(r[4])) if r[2] is not None else None,
                   (r[7], r[8], ms(r[9])) if r[7] is not None else None) for r in h.changes), key=repr)
    left = [r for r in kept if r[0] == 0]
    right = [r for r in kept if r[0] == 1]
    expected = []
    for a in left:
        matches = [b for b in right if b[1:4] == a[1:4]]
        expected += [((a[3], a[4], a[5]), (b[3], b[4], b[5])) for b in matches]
        if not matches and kind in ("LEFT", "FULL"):
            expected.append(((a[3], a[4], a[5]), None))
    if kind in ("RIGHT", "FULL"):
        expected += [(None, (b[3], b[4], b[5])) for b in right if not any(a[1:4] == b[1:4] for a in left)]
    assert got == sorted(expected, key=repr)
