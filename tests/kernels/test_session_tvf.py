"""The streaming SESSION window TVF kernel (kernels/window/session_tvf.py) in the harness, without Spark."""

from __future__ import annotations

import datetime as dt

from changeflow.kernels.window.session_tvf import SessionWindowTableFunction
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
