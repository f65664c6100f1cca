"""The streaming SESSION window TVF kernel (kernels/window/session_tvf.py) in the harness, without Spark."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.kernels.changelog import SEQ, SUB
from changeflow.kernels.contract import KernelBase, end_of_input_output
from changeflow.kernels.state import InMemoryKeyedState, late_record_total
from changeflow.kernels.window.session_tvf import SessionWindowTableFunction
from changeflow.state.paged import DictPageStore, PagedKeyedState
from changeflow.testing import KernelHarness, insert_record

EPOCH = dt.datetime(1970, 1, 1)


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def harness() -> KernelHarness:
    return KernelHarness(SessionWindowTableFunction(["ts", "k", "v"], "ts", 5_000, ["k"]), ["ts", "k", "v"],
                         restart_every_batch=True)


def windows(rows) -> list[tuple]:
    """(key, value, window start s, window end s) of released rows."""
    return [(r[1], r[2], int((r[3] - EPOCH).total_seconds()), int((r[4] - EPOCH).total_seconds())) for r in rows]


def test_a_session_is_released_when_the_watermark_reaches_its_end_minus_one():
    h = harness()
    h.process([insert_record(at(1_000), "a", 1), insert_record(at(4_000), "a", 2), insert_record(at(2_000), "b", 3)])
    assert h.watermark(6_998) == []            # b's session [2 s, 7 s) is due at 6.999 s
    assert windows(h.watermark(6_999)) == [("b", 3, 2, 7)]
    assert windows(h.watermark(8_999)) == [("a", 1, 1, 9), ("a", 2, 1, 9)]
    assert h.state.row_count("rows") == 0


def test_windows_that_touch_merge_and_windows_apart_do_not():
    h = harness()
    h.process([insert_record(at(t), "c", i) for i, t in enumerate((0, 5_000, 11_000))])
    assert windows(h.end_of_input()) == [("c", 0, 0, 10), ("c", 1, 0, 10), ("c", 2, 11, 16)]


def test_a_row_whose_own_window_has_passed_is_late_and_counted():
    h = harness()
    h.process([insert_record(at(10_000), "a", 1)])
    h.watermark(9_000)
    h.process([insert_record(at(3_000), "a", 9), insert_record(at(5_000), "a", 2)])  # [3, 8) late, [5, 10) not
    assert windows(h.end_of_input()) == [("a", 1, 5, 15), ("a", 2, 5, 15)]   # in arrival order
    assert h.state.row_count("late_records") == 1


def test_a_session_without_partition_keys_spans_every_key():
    h = KernelHarness(SessionWindowTableFunction(["ts", "k", "v"], "ts", 5_000, []), ["ts", "k", "v"])
    h.process([insert_record(at(1_000), "a", 1), insert_record(at(3_000), "b", 2)])
    assert windows(h.end_of_input()) == [("a", 1, 1, 8), ("b", 2, 1, 8)]


events = st.lists(st.tuples(st.integers(0, 30_000), st.sampled_from("abc"), st.integers(0, 9)), max_size=40)


@settings(max_examples=100, deadline=None)
@given(events=events, cuts=st.lists(st.integers(0, 60), max_size=3), marks=st.lists(st.integers(0, 1000), max_size=10),
       delay=st.sampled_from([0, 3_000, 20_000]), keyed=st.booleans(), paged=st.booleans())
def test_a_batch_with_its_watermarks_in_one_call_equals_segment_by_segment(events, cuts, marks, delay, keyed, paged):
    """process_with_watermarks (the state read and written once) emits what process and on_watermark in
    turn emit: the same rows, fired at the same watermark in the same order, the same late rows, the same
    rows left buffered."""
    keys = ["k"] if keyed else []

    def new_state():
        return PagedKeyedState(DictPageStore(), keys, pages=3) if paged else InMemoryKeyedState()

    fast, slow = (SessionWindowTableFunction(["ts", "k", "v"], "ts", 5_000, keys) for _ in range(2))
    fast_state, slow_state = new_state(), new_state()
    frames = KernelHarness(SessionWindowTableFunction(["ts", "k", "v"], "ts", 5_000, keys), ["ts", "k", "v"])
    rows = [insert_record(at(ts), k, v) for ts, k, v in events]
    bounds = sorted({0, len(rows), *[c % (len(rows) + 1) for c in cuts]})
    current, seen = fast.current_watermark, 0
    for a, b in zip(bounds, bounds[1:], strict=False):
        frame = frames.frame(rows[a:b])
        first = int(frame[SEQ].iloc[0])
        advances = []
        for after in sorted({(m * (b - a)) // 1000 for m in marks}):
            watermark = max(ts for ts, _, _ in events[:seen + after] or [(0, "", 0)]) - delay
            if watermark > current:
                advances.append((first + after - 1, watermark))
                current = watermark
        fast_out = fast.process_with_watermarks([frame], advances, fast_state)
        slow_out = KernelBase.process_with_watermarks(slow, [frame], advances, slow_state)
        assert _rows(fast_out) == _rows(slow_out)
        assert fast.current_watermark == slow.current_watermark
        seen = b
    assert sorted(map(tuple, fast_state.scan("rows").values.tolist())) == \
        sorted(map(tuple, slow_state.scan("rows").values.tolist()))
    assert _rows(end_of_input_output(fast, fast_state)) == _rows(end_of_input_output(slow, slow_state))
    assert late_record_total(fast_state) == late_record_total(slow_state)


def test_rows_after_a_fired_session_start_a_new_one_within_one_call():
    h = harness()
    frame = h.frame([insert_record(at(0), "a", 1), insert_record(at(4_000), "a", 2),
                     insert_record(at(2_000), "a", 3), insert_record(at(12_000), "a", 4)])
    # 4_999 fires [0 s, 5 s); the row at 4 s arrives after it, so it opens a session of its own
    # ([4, 9): its window would have merged with [0, 5)), which 8_999 fires; the row at 2 s meets
    # 8_999 and is late; the row at 12 s stays buffered
    out = h.kernel.process_with_watermarks([frame], [(0, 4_999), (1, 8_999)], h.state)
    assert windows(out.drop(columns=["window_time", "_kind", SEQ, SUB]).values.tolist()) == \
        [("a", 1, 0, 5), ("a", 2, 4, 9)]
    assert out[SEQ].tolist() == [0, 1]
    assert late_record_total(h.state) == 1 and h.state.row_count("rows") == 1


def _rows(frame) -> list[tuple]:
    return [] if frame is None else [tuple(r) for r in frame.values.tolist()]
