"""Two-phase window aggregation (kernels/aggregate/local_window.py) against the one-phase kernel, without Spark.

A micro-batch's rows are cut into partitions of consecutive positions (as the
Spark runtime's staged sources give them); each partition's watermark assigner
emits its own watermarks among its rows (the largest ``ts - delay`` so far, once
it is more than the interval ahead of the last one emitted, and the rest at the
partition's end). The one-phase kernel gets every row and every watermark; the
two-phase one gets each partition's partial rows (folded against that
partition's watermarks only) and the same watermarks. Both must fire the same
rows with the same stamps and count the same late rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.local_window import LocalWindowAggregate
from changeflow.kernels.aggregate.window_agg import WindowAggregate
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.plan.event_time import WindowSpec

CALLS = [AggCall("count_star", None, T.BIGINT(False), "cnt"), AggCall("sum", "v", T.BIGINT(), "s"),
         AggCall("max", "v", T.BIGINT(), "mx"), AggCall("count", "v", T.BIGINT(False), "nv")]
KEYS = ["ws", "we", "k"]
WINDOWS = [WindowSpec("TUMBLE", 1_000), WindowSpec("HOP", 2_000, slide_ms=1_000)]


def emitted(ts: list[int], positions: list[int], delay: int, interval: int, last: int | None) -> list[tuple]:
    """One partition's watermarks ``(position, value)``, as the runtime's assigner emits them."""
    marks, pending, current = [], None, last
    for t, p in zip(ts, positions, strict=True):
        value = t - delay
        if current is not None and value <= current:
            continue
        current = value
        if last is None or current - last > interval:
            marks.append((p, current))
            last, pending = current, None
        else:
            pending = (p, current)
    return marks + ([pending] if pending is not None else [])


def frame(window: WindowSpec, rows: list[tuple[int, int, int, int | None]]) -> pd.DataFrame:
    """The window TVF's rows of events ``(position, ts, k, v)``: one per window, ``_sub`` the window's place."""
    out = [(s, e, k, v, p, i) for p, ts, k, v in rows for i, (s, e) in enumerate(window.windows(ts))]
    data = pd.DataFrame(out, columns=["s", "e", "k", "v", "_seq", "_sub"])
    return pd.DataFrame({"ws": pd.to_datetime(data["s"].astype(np.int64), unit="ms"),
                         "we": pd.to_datetime(data["e"].astype(np.int64), unit="ms"),
                         "k": pd.array(data["k"].tolist(), dtype="Int64"),
                         "v": pd.array(data["v"].tolist(), dtype="Int64"),
                         "_kind": np.zeros(len(data), dtype=np.int8),
                         "_seq": data["_seq"].to_numpy(dtype=np.int64), "_sub": data["_sub"].to_numpy(dtype=np.int64)})


def advances(marks: list[tuple[int, int]], current: int) -> list[tuple[int, int]]:
    """The watermarks that move the kernel's on, in position order (as the Spark processor gives them)."""
    out = []
    for position, value in sorted(marks):
        if value > current:
            out.append((position, value))
            current = value
    return out


events = st.lists(st.tuples(st.integers(0, 12_000), st.integers(0, 2), st.one_of(st.none(), st.integers(-9, 9))),
                  min_size=1, max_size=60)


@settings(max_examples=80, deadline=None)
@given(events=events, batch_cuts=st.lists(st.integers(0, 60), max_size=3),
       part_cuts=st.lists(st.integers(0, 60), max_size=4), delay=st.sampled_from([0, 300, 2_000]),
       interval=st.sampled_from([0, 200]), window=st.sampled_from(WINDOWS))
def test_two_phases_fire_what_one_phase_fires_and_drop_the_same_rows(events, batch_cuts, part_cuts, delay,
                                                                       interval, window):
    n = len(events)
    rows = [(p, ts, k, v) for p, (ts, k, v) in enumerate(events)]
    bounds = sorted({0, n, *[min(c, n) for c in batch_cuts]})
    one, two = WindowAggregate(KEYS, CALLS, "we"), WindowAggregate(KEYS, CALLS, "we", partial_input=True)
    local = LocalWindowAggregate(KEYS, CALLS, "we")
    one_state, two_state = InMemoryKeyedState(), InMemoryKeyedState()
    last: dict[int, int | None] = {}   # each partition's assigner keeps its last watermark across batches
    for a, b in zip(bounds, bounds[1:], strict=False):
        batch = rows[a:b]
        cuts = sorted({0, len(batch), *[min(c, len(batch)) for c in part_cuts]})
        partitions = [batch[x:y] for x, y in zip(cuts, cuts[1:], strict=False)]
        all_marks, partials = [], []
        for i, part in enumerate(partitions):
            marks = emitted([ts for _, ts, _, _ in part], [p for p, _, _, _ in part], delay, interval, last.get(i))
            if marks:
                last[i] = max(w for _, w in marks)
            all_marks += marks
            partials.append(local.process(frame(window, part), marks))
        moves = advances(all_marks, one.current_watermark)
        expected = one.process_with_watermarks([frame(window, batch)], moves, one_state)
        got = two.process_with_watermarks(partials, moves, two_state)
        if expected is None or got is None:
            assert expected is None and got is None
        else:
            assert got.astype(str).values.tolist() == expected.astype(str).values.tolist()
        assert two.current_watermark == one.current_watermark
        assert two.late_records(two_state) == one.late_records(one_state)
    assert two_state.row_count("pending") == one_state.row_count("pending")


def test_a_partition_s_partials_are_fewer_than_its_rows_and_count_them_all():
    rows = [(p, 5 * p, p % 3, p) for p in range(300)]   # 1.5 s of events over 3 keys
    marks = emitted([ts for _, ts, _, _ in rows], list(range(300)), 0, 200, None)
    partials = LocalWindowAggregate(KEYS, CALLS, "we").process(frame(WindowSpec("TUMBLE", 1_000), rows), marks)
    assert len(partials) < 20
    assert int(partials["_count"].sum()) == 300
    assert int(partials["s.sum"].sum()) == sum(range(300))


def test_a_float_sum_is_not_split():
    assert not LocalWindowAggregate.applies_to([AggCall("sum", "v", T.DOUBLE(), "s")])
    assert LocalWindowAggregate.applies_to(CALLS)
