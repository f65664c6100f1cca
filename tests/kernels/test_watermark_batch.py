"""A batch with many watermarks among its rows, in one call, gives what they give one at a time (no Spark).

On Spark a micro-batch carries a watermark every ``pipeline.auto-watermark-interval``
of event time among its rows (thousands over a fast source), and the host hands
the kernel the batch with them in one call, ``process_with_watermarks``
(kernels/contract.py). The window aggregation does it in one vectorised pass; the
default (every other event-time kernel) cuts the batch at the watermarks. Both
must emit exactly what ``process`` and ``on_watermark`` in turn emit: the same
rows, fired at the same watermark (stamped at its position), in the order of
window ends within a watermark, the same late rows dropped, the same state.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.window_agg import WindowAggregate
from changeflow.kernels.changelog import SEQ, SUB
from changeflow.kernels.contract import KernelBase, end_of_input_output
from changeflow.kernels.state import OPEN_ENDS, InMemoryKeyedState
from changeflow.kernels.watermark_batch import FIRED_SUB, segments
from changeflow.plan.event_time import WindowSpec
from changeflow.state.paged import DictPageStore, PagedKeyedState
from changeflow.testing import KernelHarness, delete_record, insert_record

EPOCH = dt.datetime(1970, 1, 1)
CALLS = [AggCall("count_star", None, T.BIGINT(False), "cnt"), AggCall("sum", "v", T.BIGINT(), "s"),
         AggCall("max", "v", T.BIGINT(), "mx")]
COLUMNS = ["ws", "we", "k", "v"]
KEYS = ["ws", "we", "k"]
WINDOWS = [WindowSpec("TUMBLE", 10_000), WindowSpec("HOP", 10_000, slide_ms=5_000)]


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def kernel(insert_only: bool) -> WindowAggregate:
    return WindowAggregate(KEYS, CALLS, "we", input_insert_only=insert_only)


def rows_of(window: WindowSpec, events: list[tuple[int, str, int, bool]]) -> list:
    """The window TVF's rows of ``events`` (``(ts, key, value, retract)``): a retraction takes back the
    earliest insert of its key not yet taken back (so the changelog stays well formed)."""
    rows, alive = [], []
    for ts, k, v, retract in events:
        earlier = [e for e in alive if e[1] == k]
        if retract and earlier:
            alive.remove(earlier[0])
            ts, k, v = earlier[0]
            rows += [delete_record(at(s), at(e), k, v) for s, e in window.windows(ts)]
        else:
            alive.append((ts, k, v))
            rows += [insert_record(at(s), at(e), k, v) for s, e in window.windows(ts)]
    return rows


def batches_with_watermarks(rows: list, events_ts: list[int], cuts: list[int], marks: list[int], delay: int):
    """``rows`` cut into batches at ``cuts``; in each batch watermarks after the rows at ``marks`` (as
    fractions of the batch, in per mille), each the largest event time so far minus ``delay`` (every
    other one moved down to 1 ms before a window bound: the watermark that exactly fires a window)."""
    bounds = sorted({0, len(rows), *[c % (len(rows) + 1) for c in cuts]})
    out, seen = [], 0
    for a, b in zip(bounds, bounds[1:], strict=False):
        marks_here = sorted({((m * (b - a)) // 1000, m % 2) for m in marks})
        watermarks = []
        for after, snap in marks_here:
            watermark = max(events_ts[:seen + after] or [0]) - delay
            watermarks.append((after, watermark // 5_000 * 5_000 - 1 if snap else watermark))
        out.append((rows[a:b], watermarks))
        seen += b - a
    return out


def normalized(frame: pd.DataFrame | None) -> list[tuple]:
    """Output rows, ``_sub`` aside, in a canonical order (which rows one watermark fires in which order
    among equal window ends is the state's scan order: not part of the semantics)."""
    if frame is None or not len(frame):
        return []
    ordered = frame.sort_values([SEQ, SUB], kind="stable")
    for _, group in ordered.groupby(SEQ, sort=False):
        ends = group["we"].tolist()
        assert ends == sorted(ends), "the windows one watermark fires come in the order of their ends"
    return sorted(tuple(r) for r in frame.drop(columns=[SUB]).itertuples(index=False))


events = st.lists(st.tuples(st.integers(0, 60_000), st.sampled_from("abc"), st.integers(-5, 5), st.booleans()),
                  max_size=50)


@settings(max_examples=30, deadline=None)
@given(events=events, window=st.sampled_from(WINDOWS), insert_only=st.booleans(),
       cuts=st.lists(st.integers(0, 200), max_size=4), marks=st.lists(st.integers(0, 1000), max_size=12),
       delay=st.sampled_from([0, 1_500, 30_000]), paged=st.booleans())
def test_the_window_aggregation_in_one_pass_equals_segment_by_segment(events, window, insert_only, cuts, marks,
                                                                       delay, paged):
    events = [(ts, k, v, r and not insert_only) for ts, k, v, r in events]
    rows = rows_of(window, events)
    ts_per_row = [ts for ts, _, _, _ in events for _ in window.windows(ts)]   # approximately: per event
    fast, slow = kernel(insert_only), kernel(insert_only)

    def new_state():
        return PagedKeyedState(DictPageStore(), KEYS, pages=3) if paged else InMemoryKeyedState()

    fast_state, slow_state = new_state(), new_state()
    frames = KernelHarness(kernel(insert_only), COLUMNS)   # only to build stamped frames
    current = fast.current_watermark
    for batch, watermarks in batches_with_watermarks(rows, ts_per_row, cuts, marks, delay):
        frame = frames.frame(batch)
        first = int(frame[SEQ].iloc[0]) if len(frame) else 0
        advances = []
        for after, watermark in watermarks:
            if watermark > current:
                advances.append((first + after - 1, watermark))
                current = watermark
        fast_out = fast.process_with_watermarks([frame], advances, fast_state)
        slow_out = KernelBase.process_with_watermarks(slow, [frame], advances, slow_state)
        assert normalized(fast_out) == normalized(slow_out)
        assert fast.current_watermark == slow.current_watermark == current
        if fast_out is not None:
            assert (fast_out[SUB] >= FIRED_SUB).all()
    assert normalized(end_of_input_output(fast, fast_state)) == normalized(end_of_input_output(slow, slow_state))
    assert fast.late_records(fast_state) == slow.late_records(slow_state)
    for table in ["pending", "acc"]:
        assert len(fast_state.scan(table)) == len(slow_state.scan(table))


@settings(max_examples=20, deadline=None)
@given(events=events, window=st.sampled_from(WINDOWS), cuts=st.lists(st.integers(0, 200), max_size=3),
       marks=st.lists(st.integers(0, 1000), max_size=8), delay=st.sampled_from([0, 2_000]))
def test_the_harness_gives_the_same_changelog_in_one_call_as_one_watermark_at_a_time(events, window, cuts, marks,
                                                                                       delay):
    rows = rows_of(window, [(ts, k, v, False) for ts, k, v, _ in events])
    ts_per_row = [ts for ts, _, _, _ in events for _ in window.windows(ts)]
    together = KernelHarness(kernel(True), COLUMNS, restart_every_batch=True)
    one_by_one = KernelHarness(kernel(True), COLUMNS)
    for batch, watermarks in batches_with_watermarks(rows, ts_per_row, cuts, marks, delay):
        fired_together = together.process_with_watermarks(batch, watermarks)
        fired_apart: list = []
        done = 0
        for after, watermark in watermarks:
            fired_apart += one_by_one.process(batch[done:after]) if after > done else []
            fired_apart += one_by_one.watermark(watermark)
            done = after
        fired_apart += one_by_one.process(batch[done:])
        assert sorted(map(tuple, fired_together)) == sorted(map(tuple, fired_apart))
    assert sorted(map(tuple, together.end_of_input())) == sorted(map(tuple, one_by_one.end_of_input()))
    assert together.kernel.late_records(together.state) == one_by_one.kernel.late_records(one_by_one.state)


def test_each_window_fires_at_the_first_watermark_that_reaches_its_end_and_rows_meet_the_one_in_force():
    rows = [insert_record(at(0), at(10_000), "a", 1), insert_record(at(10_000), at(20_000), "a", 2),
            insert_record(at(0), at(10_000), "a", 4),      # after 9_999: late
            insert_record(at(10_000), at(20_000), "b", 8), insert_record(at(20_000), at(30_000), "a", 16)]
    h = KernelHarness(kernel(True), COLUMNS)
    frame = h.frame(rows)
    out = h.kernel.process_with_watermarks([frame], [(1, 9_999), (3, 12_000), (4, 19_999)], h.state)
    assert out[["we", "k", "cnt", "s", SEQ, SUB]].values.tolist() == [
        [at(10_000), "a", 1, 1, 1, FIRED_SUB], [at(20_000), "a", 1, 2, 4, FIRED_SUB],
        [at(20_000), "b", 1, 8, 4, FIRED_SUB + 1]]
    assert h.kernel.current_watermark == 19_999 and h.kernel.late_records(h.state) == 1
    assert end_of_input_output(h.kernel, h.state)[["we", "k", "s"]].values.tolist() == [[at(30_000), "a", 16]]


def test_a_watermark_that_closes_no_window_reads_no_pending_page():
    class Counting(InMemoryKeyedState):
        scans = 0

        def scan(self, table):
            self.scans += table == "pending"
            return super().scan(table)

    h = KernelHarness(kernel(True), COLUMNS, state=Counting())
    h.process([insert_record(at(0), at(10_000), "a", 1), insert_record(at(10_000), at(20_000), "a", 2)])
    h.watermark(5_000)       # the open windows end at 10 s and 20 s: watermarks before 9_999 scan nothing
    scans = h.state.scans
    for w in range(5_001, 9_999, 100):
        assert h.watermark(w) == []
    assert h.state.scans == scans and sorted(h.state.scan(OPEN_ENDS)["end"]) == [10_000, 20_000]
    assert [r[1] for r in h.watermark(9_999)] == [at(10_000)]
    assert sorted(h.state.scan(OPEN_ENDS)["end"]) == [20_000]


def test_segments_cut_each_frame_at_the_watermark_positions_keeping_row_order():
    frame = pd.DataFrame({"x": list("abcdef"), SEQ: [5, 1, 3, 9, 3, 7]})
    records = pd.DataFrame({"_value": [b"r"]})   # no _seq: a micro-batch's records precede its watermarks
    parts = segments([frame, records], np.array([3, 6]))
    assert [[f["x"].tolist() if "x" in f else "records" for f in part] for part in parts] == \
        [[["b", "c", "e"], "records"], [["a"]], [["d", "f"]]]
