"""The event-time interval join kernel without Spark: pairs, padding when the watermark passes, late rows, state."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from hypothesis import given, settings, strategies as st

from changeflow.kernels.join.interval import TABLES, IntervalJoin
from changeflow.table.expressions import col
from changeflow.testing.harness import KernelHarness, format_changes, insert_record, materialize

BASE = dt.datetime(2024, 1, 1)
BASE_MS = int(BASE.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
COLUMNS = ["_side", "k", "t", "v", "k0", "t0", "w"]


def at(ms: int) -> dt.datetime:
    return BASE + dt.timedelta(milliseconds=ms)


def left(k, ms, v):
    return insert_record(0, k, at(ms), v, None, None, None)


def right(k, ms, w):
    return insert_record(1, None, None, None, k, at(ms), w)


def harness(join_type="INNER", lower=-2000, upper=3000, condition=None, restart=True):
    """``left.t - right.t`` in ``[lower, upper]`` ms, on ``k = k0``."""
    kernel = IntervalJoin(join_type, ["k", "t", "v"], ["k0", "t0", "w"], ["k"], ["k0"], "t", "t0", lower, upper,
                          condition)
    return KernelHarness(kernel, COLUMNS, restart_every_batch=restart)


def stored(h) -> tuple[int, int]:
    return tuple(h.state.row_count(t) if t in h.state.tables() else 0 for t in TABLES)


def pairs(rows) -> list[tuple]:
    return sorted((r[2], r[5]) for r in rows)


def test_inner_pairs_out_of_order_across_batches():
    h = harness()
    assert h.process([left("a", 5000, "l1"), left("a", 1000, "l2"), right("b", 4000, "r0")]) == []
    # right 3000 matches left 1000 (-2000) and 5000 (+2000); right 9000 matches nothing
    assert pairs(h.process([right("a", 3000, "r1"), right("a", 9000, "r2")])) == [("l1", "r1"), ("l2", "r1")]
    # a left row arriving after its match: joined on arrival (7000 - 9000 = -2000)
    assert pairs(h.process([left("a", 7000, "l3")])) == [("l3", "r2")]
    assert stored(h) == (3, 3)


def test_state_dropped_as_the_watermark_passes():
    h = harness(lower=-2000, upper=3000)  # a left row waits 2 s past its time, a right row 3 s
    h.process([left("a", 1000, "l1"), left("a", 6000, "l2"), right("a", 2000, "r1"), right("a", 8000, "r2")])
    assert stored(h) == (2, 2)
    h.watermark(BASE_MS + 3000)  # left 1000 + 2000 = 3000 is not before 3000: kept
    assert stored(h) == (2, 2)
    h.watermark(BASE_MS + 3001)
    assert stored(h) == (1, 2)
    h.watermark(BASE_MS + 5001)  # right 2000 + 3000 < 5001
    assert stored(h) == (1, 1)
    h.watermark(BASE_MS + 11_001)
    assert stored(h) == (0, 0)


def test_left_outer_pads_when_the_row_can_no_longer_match():
    h = harness("LEFT")
    assert h.process([left("a", 1000, "l1"), left("b", 1000, "l2")]) == []
    assert pairs(h.process([right("a", 2500, "r1")])) == [("l1", "r1")]
    assert h.watermark(BASE_MS + 3000) == []  # l2 could still meet a right row at 3000
    assert format_changes(h.watermark(BASE_MS + 3001)) == ["+I[b, 2024-01-01 00:00:01, l2, null, null, null]"]
    assert h.end_of_input() == []  # l1 matched: no padding; r1 is not an outer side
    assert stored(h) == (0, 0)


def test_right_and_full_outer_padding():
    for join_type, padded in (("RIGHT", {"r2"}), ("FULL", {"r2", "l2"})):
        h = harness(join_type)
        h.process([left("a", 1000, "l1"), left("c", 1000, "l2"), right("a", 2000, "r1"), right("b", 2000, "r2")])
        out = h.end_of_input()
        assert {r[2] or r[5] for r in out} == padded
        assert all(r[2] is None or r[5] is None for r in out)
        assert stored(h) == (0, 0)


def test_late_row_joins_what_is_stored_and_is_not_kept():
    h = harness("LEFT", lower=-2000, upper=3000)
    h.process([right("a", 10_000, "r1")])
    h.watermark(BASE_MS + 9000)
    # left 8500: 8500 + 2000 > 9000: kept; left 6000: 6000 + 2000 <= 9000: late
    assert pairs(h.process([left("a", 8500, "l1")])) == [("l1", "r1")]
    out = h.process([left("a", 6000, "l2"), left("b", 1000, "l3")])
    assert sorted(r[2] for r in out) == ["l2", "l3"]  # l2 (too early for r1) and l3 padded at once
    assert all(r[5] is None for r in out)
    assert stored(h) == (1, 1)


def test_late_row_still_matches_a_stored_row():
    h = harness("LEFT", lower=-2000, upper=3000)
    h.process([right("a", 10_000, "r1")])
    h.watermark(BASE_MS + 10_000)
    # left 8000 is late (8000 + 2000 <= 10000) but r1 (10000 + 3000 >= 10000) is still stored
    assert pairs(h.process([left("a", 8000, "l1")])) == [("l1", "r1")]
    assert stored(h) == (0, 1)


def test_strict_bounds_and_remaining_condition():
    h = harness(lower=-1000, upper=-1, condition=col("v") != col("w"))  # r - 1000 <= l < r
    out = h.process([right("a", 5000, "x"), left("a", 4000, "y"), left("a", 5000, "y"), left("a", 4500, "x"),
                     left("a", 4999, "z")])
    assert pairs(out) == [("y", "x"), ("z", "x")]


def test_null_key_matches_nothing_and_is_not_stored():
    h = harness("FULL")
    out = h.process([left(None, 1000, "l1"), right(None, 1000, "r1")])
    assert Counter((r[2], r[5]) for r in out) == Counter([(None, "r1"), ("l1", None)])
    assert stored(h) == (0, 0)


# --- property: the streaming result, materialized, against a model of the exact semantics ------------------

ROW = st.tuples(st.integers(0, 1), st.sampled_from(["a", "b", None]), st.integers(0, 20_000))


def _run(rows, batches, delay, lower, upper, join_type):
    """Feed ``rows`` (side, key, ms) in ``batches``; the watermark after each batch: the largest time - delay."""
    h = harness(join_type, lower, upper, restart=False)
    w = -(2**63)
    arrivals = []  # (side, key, ms, id, operator time when it arrived)
    high = None
    for batch in batches:
        records = []
        for i in batch:
            side, key, ms = rows[i]
            records.append(left(key, ms, f"l{i}") if side == 0 else right(key, ms, f"r{i}"))
            arrivals.append((side, key, ms, i, max(w, 0)))
            high = ms if high is None else max(high, ms)
        h.process(records)
        if high is not None and BASE_MS + high - delay > w:
            w = BASE_MS + high - delay
            h.watermark(w)
    h.end_of_input()
    return h, arrivals


def _model(arrivals, lower, upper, join_type):
    """Flink's rule: the later row of a pair finds the earlier one if that was stored and has not expired."""
    reach = (-lower, upper)
    out = Counter()
    matched = set()
    for n, (side, key, ms, i, w) in enumerate(arrivals):
        for other in arrivals[:n]:
            oside, okey, oms, oi, ow = other
            if oside == side or key is None or okey != key:
                continue
            lt, rt = (ms, oms) if side == 0 else (oms, ms)
            if not lower <= lt - rt <= upper:
                continue
            reach_at = BASE_MS + oms + reach[oside]
            stored = reach_at > ow and reach_at >= w  # stored on arrival, not expired since
            if stored:
                li, ri = (i, oi) if side == 0 else (oi, i)
                out[(f"l{li}", f"r{ri}")] += 1
                matched.update({(0, li), (1, ri)})
    outer = (join_type in ("LEFT", "FULL"), join_type in ("RIGHT", "FULL"))
    for side, _key, _ms, i, _w in arrivals:
        if outer[side] and (side, i) not in matched:
            out[(f"l{i}", None) if side == 0 else (None, f"r{i}")] += 1
    return out


def _result(h):
    return Counter((r[2], r[5]) for r in materialize(h.changes))


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(ROW, max_size=14), cuts=st.lists(st.integers(0, 14), max_size=4),
       delay=st.integers(0, 6000), lower=st.integers(-4000, 1000), width=st.integers(0, 5000),
       join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]), data=st.data())
def test_property_matches_the_model(rows, cuts, delay, lower, width, join_type, data):
    """Any arrival order and batching: the materialized result is the arrival-aware model's, and only inserts."""
    order = data.draw(st.permutations(range(len(rows))))
    bounds = sorted({min(c, len(rows)) for c in cuts} | {0, len(rows)})
    batches = [order[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    h, arrivals = _run(rows, batches, delay, lower, lower + width, join_type)
    assert {r.get_row_kind().value for r in h.changes} <= {0}
    assert _result(h) == _model(arrivals, lower, lower + width, join_type)
    assert stored(h) == (0, 0)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(ROW, max_size=14), jitter=st.lists(st.integers(0, 3000), min_size=14, max_size=14),
       cuts=st.lists(st.integers(0, 14), max_size=4), lower=st.integers(-4000, 0), upper=st.integers(0, 4000),
       join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]))
def test_property_no_late_rows_equals_the_batch_join(rows, jitter, cuts, lower, upper, join_type):
    """Out of order by less than the watermark delay (nothing late): the result is the plain batch join."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i][2] + jitter[i], i))
    bounds = sorted({min(c, len(rows)) for c in cuts} | {0, len(rows)})
    batches = [order[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    h, _ = _run(rows, batches, 3001, lower, upper, join_type)
    expected = Counter()
    matched = set()
    for i, (s, k, t) in enumerate(rows):
        for j, (s2, k2, t2) in enumerate(rows):
            if s == 0 and s2 == 1 and k is not None and k == k2 and lower <= t - t2 <= upper:
                expected[(f"l{i}", f"r{j}")] += 1
                matched.update({i, j})
    for i, (s, _k, _t) in enumerate(rows):
        if i not in matched and (join_type in ("LEFT", "FULL") if s == 0 else join_type in ("RIGHT", "FULL")):
            expected[(f"l{i}", None) if s == 0 else (None, f"r{i}")] += 1
    assert _result(h) == expected


def test_output_watermark_held_back_by_the_larger_bound():
    """Flink holds an interval join's output watermark back by max(-lower, upper): its pairs are not late."""
    from changeflow.runtime.spark.control_rows import Control
    from changeflow.runtime.spark.processor import KernelProcessor
    from changeflow.kernels.contract import MAX_WATERMARK

    kernel = harness(lower=-2000, upper=3000).kernel
    assert kernel.watermark_delay_ms == 3000
    processor = KernelProcessor(kernel, ["_jk0"], pages=2, output_columns=kernel.output_columns[:-3])
    held = processor._held_back(Control(frozenset({1}), False, ((7, 4, 10_000), (8, 5, MAX_WATERMARK))))
    assert held == Control(frozenset({1}), False, ((7, 4, 7000), (8, 5, MAX_WATERMARK)))
