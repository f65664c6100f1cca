"""A window aggregation over a windowed input (Flink's WindowAttachedWindowingStrategy), on the kernel.

The second level of ``SELECT ws, we, MAX(c) FROM (SELECT ws, we, k, COUNT(*) AS c FROM
TABLE(HOP(...)) GROUP BY ws, we, k) GROUP BY ws, we`` (Nexmark q5's ``MaxBids``) runs
the same :class:`~changeflow.kernels.aggregate.window_agg.WindowAggregate` kernel as the
first: its rows carry their window already. The first level emits a window's rows when
a watermark passes its end, before that watermark reaches the second level, so the
second level never finds them late and fires them at the same watermark.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.window_agg import WindowAggregate
from changeflow.kernels.contract import MIN_WATERMARK
from changeflow.plan.event_time import WindowSpec
from changeflow.testing import KernelHarness, insert_record

EPOCH = dt.datetime(1970, 1, 1)
FIRST_CALLS = [AggCall("count_star", None, T.BIGINT(False), "c")]
SECOND_CALLS = [AggCall("max", "c", T.BIGINT(), "maxc"), AggCall("sum", "c", T.BIGINT(), "total"),
                AggCall("count_star", None, T.BIGINT(False), "keys")]
WINDOWS = [WindowSpec("TUMBLE", 10_000), WindowSpec("HOP", 10_000, slide_ms=2_000),
           WindowSpec("CUMULATE", 15_000, step_ms=5_000)]


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def ms(t: dt.datetime) -> int:
    return int((t - EPOCH) / dt.timedelta(milliseconds=1))


def levels() -> tuple[KernelHarness, KernelHarness]:
    first = KernelHarness(WindowAggregate(["ws", "we", "k"], FIRST_CALLS, "we"), ["ws", "we", "k"],
                          restart_every_batch=True)
    second = KernelHarness(WindowAggregate(["ws", "we"], SECOND_CALLS, "we"), ["ws", "we", "c"],
                           restart_every_batch=True)
    return first, second


def forward(rows) -> list:
    """The first level's output rows as the second level's input (``ws, we, c``)."""
    return [insert_record(r[0], r[1], r[3]) for r in rows]


def test_the_second_level_fires_a_window_at_the_watermark_that_fires_its_first_level():
    first, second = levels()
    hop = WINDOWS[1]
    first.process([insert_record(at(s), at(e), k) for ts, k in [(1_000, "a"), (1_500, "b"), (3_000, "a")]
                   for s, e in hop.windows(ts)])
    fired = first.watermark(1_999)   # closes [-8 s, 2 s): a and b once each
    assert [(ms(r[0]), ms(r[1]), r[2], r[3]) for r in fired] == [(-8_000, 2_000, "a", 1), (-8_000, 2_000, "b", 1)]
    assert second.process(forward(fired)) == []
    assert [(ms(r[0]), ms(r[1]), *r[2:]) for r in second.watermark(1_999)] == [(-8_000, 2_000, 1, 2, 2)]
    assert second.kernel.late_records(second.state) == 0


def test_a_micro_batch_with_the_first_levels_rows_before_each_watermark_is_the_same():
    """The Spark host's form: one batch, the rows each watermark fired placed before it."""
    first, _ = levels()
    _, second = levels()
    rows = [insert_record(at(s), at(e), k) for ts, k in [(1_000, "a"), (12_000, "b"), (13_000, "b"), (25_000, "a")]
            for s, e in WINDOWS[0].windows(ts)]
    first.process(rows)
    batch, marks = [], []
    for watermark in (9_999, 19_999, 29_999):
        batch += forward(first.watermark(watermark))
        marks.append((len(batch), watermark))
    out = second.process_with_watermarks(batch, marks)
    assert [(ms(r[1]), *r[2:]) for r in out] == [(10_000, 1, 1, 1), (20_000, 2, 2, 1), (30_000, 1, 1, 1)]
    assert second.kernel.late_records(second.state) == 0


def reference(window: WindowSpec, batches: list[list[tuple]], delay: int) -> pd.DataFrame:
    """Per window: max, sum and number of the per-key counts of the rows that were not late at the first level."""
    watermark, seen, kept = MIN_WATERMARK, None, []
    for batch in batches:
        for ts, k in batch:
            kept += [(s, e, k) for s, e in window.windows(ts) if not e - 1 <= watermark]
        if batch:
            seen = max([ts for ts, _ in batch] + ([seen] if seen is not None else []))
            watermark = max(watermark, seen - delay)
    counts = pd.DataFrame(kept, columns=["s", "e", "k"]).groupby(["s", "e", "k"]).size().rename("c").reset_index()
    out = counts.groupby(["s", "e"]).c.agg(maxc="max", total="sum", keys="count").reset_index()
    return out.sort_values(["s", "e"]).reset_index(drop=True)


events = st.lists(st.tuples(st.integers(0, 60_000), st.sampled_from("abc")), max_size=40)


@settings(max_examples=20, deadline=None)
@given(events=events, cuts=st.lists(st.integers(0, 40), max_size=4), delay=st.sampled_from([0, 2_000, 30_000]),
       window=st.sampled_from(WINDOWS))
def test_the_cascade_materialized_equals_a_batch_computation_over_the_rows_that_were_not_late(
        events, cuts, delay, window):
    bounds = sorted({0, len(events), *[min(c, len(events)) for c in cuts]})
    batches = [events[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    first, second = levels()
    seen = None
    for batch in batches:
        first.process([insert_record(at(s), at(e), k) for ts, k in batch for s, e in window.windows(ts)])
        if batch:
            seen = max([ts for ts, _ in batch] + ([seen] if seen is not None else []))
            second.process(forward(first.watermark(seen - delay)))
            second.watermark(seen - delay)
    second.process(forward(first.end_of_input()))
    second.end_of_input()
    assert second.kernel.late_records(second.state) == 0
    assert all(r.get_row_kind().name == "INSERT" for r in second.changes)
    got = sorted((ms(r[0]), ms(r[1]), r[2], r[3], r[4]) for r in second.changes)
    expected = [] if not events else \
        [tuple(int(x) for x in row) for row in reference(window, batches, delay).itertuples(index=False)]
    assert got == expected
