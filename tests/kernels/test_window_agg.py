"""The event-time window aggregation kernel (kernels/aggregate/window_agg.py) in the harness, without Spark.

Rows arrive already assigned to their windows (the window TVF runs before the
kernel), as ``(window_start, window_end, key, value)``. A window fires, once and
insert-only, when the watermark reaches its end - 1 ms; a row whose window has
fired is late: dropped and counted.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.window_agg import WindowAggregate
from changeflow.kernels.contract import MIN_WATERMARK
from changeflow.plan.event_time import WindowSpec
from changeflow.testing import KernelHarness, insert_record, update_after_record

EPOCH = dt.datetime(1970, 1, 1)
CALLS = [AggCall("count_star", None, T.BIGINT(False), "cnt"), AggCall("sum", "v", T.BIGINT(), "s"),
         AggCall("max", "v", T.BIGINT(), "mx")]
COLUMNS = ["ws", "we", "k", "v"]


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def kernel() -> WindowAggregate:
    return WindowAggregate(["ws", "we", "k"], CALLS, "we")


def rows_in(window: WindowSpec, ts: int, k: str, v: int):
    """The rows the window TVF makes of one event: one per window it falls in."""
    return [insert_record(at(s), at(e), k, v) for s, e in window.windows(ts)]


def values(rows) -> list[tuple]:
    return [tuple(r) for r in rows]


TUMBLE = WindowSpec("TUMBLE", 10_000)


def test_a_window_fires_once_when_the_watermark_reaches_its_end_minus_one():
    h = KernelHarness(kernel(), COLUMNS)
    assert h.process(rows_in(TUMBLE, 1_000, "a", 1) + rows_in(TUMBLE, 12_000, "a", 5)
                     + rows_in(TUMBLE, 4_000, "a", 2)) == []
    assert h.watermark(9_998) == []
    fired = h.watermark(9_999)
    assert values(fired) == [(at(0), at(10_000), "a", 2, 3, 2)]
    assert all(r.get_row_kind().name == "INSERT" for r in fired)
    assert h.watermark(15_000) == []
    assert values(h.end_of_input()) == [(at(10_000), at(20_000), "a", 1, 5, 5)]


def test_without_fire_at_end_the_windows_still_open_at_end_of_input_do_not_fire():
    # Flink's legacy processing-time group window: a window closed before the end fires, the open ones never.
    h = KernelHarness(WindowAggregate(["ws", "we", "k"], CALLS, "we", fire_at_end=False), COLUMNS)
    h.process(rows_in(TUMBLE, 1_000, "a", 1) + rows_in(TUMBLE, 12_000, "a", 5) + rows_in(TUMBLE, 13_000, "b", 2))
    assert values(h.watermark(12_999)) == [(at(0), at(10_000), "a", 1, 1, 1)]
    assert h.end_of_input() == []


def test_windows_fire_in_the_order_of_their_ends():
    h = KernelHarness(kernel(), COLUMNS)
    h.process(rows_in(TUMBLE, 25_000, "b", 1) + rows_in(TUMBLE, 3_000, "a", 1) + rows_in(TUMBLE, 14_000, "c", 1))
    assert [r[1] for r in h.end_of_input()] == [at(10_000), at(20_000), at(30_000)]


def test_a_late_row_is_dropped_and_counted_and_its_window_is_not_emitted_again():
    h = KernelHarness(kernel(), COLUMNS, restart_every_batch=True)
    h.process(rows_in(TUMBLE, 1_000, "a", 1))
    assert values(h.watermark(10_000)) == [(at(0), at(10_000), "a", 1, 1, 1)]
    assert h.process(rows_in(TUMBLE, 9_000, "a", 100) + rows_in(TUMBLE, 11_000, "a", 7)) == []
    assert values(h.end_of_input()) == [(at(10_000), at(20_000), "a", 1, 7, 7)]
    assert h.kernel.late_records(h.state) == 1


def test_a_hop_row_late_for_one_window_still_counts_in_the_windows_still_open():
    # Flink's WindowAggOperator: a row whose first window fired is merged into its unfired windows.
    hop = WindowSpec("HOP", 10_000, slide_ms=5_000)
    h = KernelHarness(kernel(), COLUMNS)
    h.process(rows_in(hop, 2_000, "a", 1))    # windows [-5 s, 5 s) and [0, 10 s)
    assert values(h.watermark(9_999)) == [(at(-5_000), at(5_000), "a", 1, 1, 1), (at(0), at(10_000), "a", 1, 1, 1)]
    h.process(rows_in(hop, 8_000, "a", 10))   # windows [5 s, 15 s) and [0, 10 s) (fired: late)
    assert values(h.end_of_input()) == [(at(5_000), at(15_000), "a", 1, 10, 10)]
    assert h.kernel.late_records(h.state) == 1


def test_state_holds_only_the_windows_still_open():
    h = KernelHarness(kernel(), COLUMNS)
    h.process([r for ts in range(0, 100_000, 1_000) for r in rows_in(TUMBLE, ts, f"k{ts % 3}", 1)])
    assert h.state.row_count("pending") == 30
    h.watermark(49_999)
    assert h.state.row_count("pending") == 15
    assert h.state.row_count("acc") == 15
    h.end_of_input()
    assert h.state.row_count("pending") == 0 and h.state.row_count("acc") == 0


def test_a_watermark_that_does_not_advance_emits_nothing():
    h = KernelHarness(kernel(), COLUMNS)
    h.process(rows_in(TUMBLE, 1_000, "a", 1))
    assert len(h.watermark(20_000)) == 1
    assert h.watermark(15_000) == [] and h.current_watermark == 20_000


def test_an_updating_input_is_refused():
    h = KernelHarness(kernel(), COLUMNS)
    with pytest.raises(ValueError, match="insert-only"):
        h.process([update_after_record(at(0), at(10_000), "a", 1)])


def test_the_watermark_starts_at_the_minimum():
    assert kernel().current_watermark == MIN_WATERMARK


# --- the invariant: the windows' results equal a batch computation over the rows that were not late ----------
WINDOWS = [WindowSpec("TUMBLE", 10_000), WindowSpec("HOP", 10_000, slide_ms=5_000),
           WindowSpec("CUMULATE", 15_000, step_ms=5_000)]

events = st.lists(st.tuples(st.integers(0, 60_000), st.sampled_from("abc"), st.integers(-5, 5)), max_size=40)


def reference(window: WindowSpec, batches: list[list[tuple]], delay: int) -> pd.DataFrame:
    """Per (window, key): count, sum, max of the rows whose window had not fired when their batch arrived.

    The watermark after a batch is the largest timestamp seen so far minus ``delay``, as the Spark
    runtime advances it after each micro-batch.
    """
    watermark, seen, kept = MIN_WATERMARK, None, []
    for batch in batches:
        for ts, k, v in batch:
            kept += [(s, e, k, v) for s, e in window.windows(ts) if not e - 1 <= watermark]
        if batch:
            seen = max([ts for ts, _, _ in batch] + ([seen] if seen is not None else []))
            watermark = max(watermark, seen - delay)
    frame = pd.DataFrame(kept, columns=["s", "e", "k", "v"])
    if not len(frame):
        return pd.DataFrame(columns=["s", "e", "k", "cnt", "sum", "mx"])
    out = frame.groupby(["s", "e", "k"]).v.agg(cnt="count", sum="sum", mx="max").reset_index()
    return out.sort_values(["s", "e", "k"]).reset_index(drop=True)


@settings(max_examples=60, deadline=None)
@given(events=events, cuts=st.lists(st.integers(0, 40), max_size=4), delay=st.sampled_from([0, 2_000, 30_000]),
       window=st.sampled_from(WINDOWS))
def test_window_results_equal_a_batch_computation_over_the_rows_that_were_not_late(events, cuts, delay, window):
    bounds = sorted({0, len(events), *[min(c, len(events)) for c in cuts]})
    batches = [events[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    h = KernelHarness(kernel(), COLUMNS, restart_every_batch=True)
    seen = None
    for batch in batches:
        h.process([r for ts, k, v in batch for r in rows_in(window, ts, k, v)])
        if batch:
            seen = max([ts for ts, _, _ in batch] + ([seen] if seen is not None else []))
            h.watermark(seen - delay)
    h.end_of_input()
    got = pd.DataFrame([(int((r[0] - EPOCH) / dt.timedelta(milliseconds=1)),
                         int((r[1] - EPOCH) / dt.timedelta(milliseconds=1)), r[2], r[3], r[4], r[5])
                        for r in h.changes], columns=["s", "e", "k", "cnt", "sum", "mx"])
    got = got.sort_values(["s", "e", "k"]).reset_index(drop=True)
    expected = reference(window, batches, delay)
    assert len(got) == len(expected)
    assert got.astype(str).values.tolist() == expected.astype(str).values.tolist()


@settings(max_examples=30, deadline=None)
@given(events=events, window=st.sampled_from(WINDOWS))
def test_with_disorder_within_the_delay_nothing_is_late_and_the_result_is_the_batch_result(events, window):
    # Rows arrive one batch each, less than 5 s behind the latest: a 5 s watermark delay drops none.
    ordered = sorted(events)
    shuffled = [(max(0, ts - (i * 7_919) % 4_999), k, v) for i, (ts, k, v) in enumerate(ordered)]
    h = KernelHarness(kernel(), COLUMNS)
    seen = None
    for ts, k, v in shuffled:
        h.process(rows_in(window, ts, k, v))
        seen = ts if seen is None else max(seen, ts)
        h.watermark(seen - 5_000)
    h.end_of_input()
    assert h.kernel.late_records(h.state) == 0
    expected = reference(window, [shuffled], 5_000)
    assert sum(r[3] for r in h.changes) == int(expected["cnt"].sum())
    assert len(h.changes) == len(expected)
