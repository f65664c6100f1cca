"""Windows over a TIMESTAMP_LTZ in a session zone (kernels/window/zone_time.py), without Spark.

The window kernels take a window's end as the zone's wall clock and fire it when the watermark (an
instant) reaches the instant Flink's TimeWindowUtil gives its end - 1 ms; the figures below are those
PyFlink 2.3 gave (conformance/sql_ltz_window_cases.py, the goldens ltz_window_*).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.local_window import LocalWindowAggregate
from changeflow.kernels.aggregate.window_agg import WindowAggregate
from changeflow.kernels.window.session_tvf import SessionWindowTableFunction
from changeflow.kernels.window.zone_time import WindowClock
from changeflow.testing import KernelHarness, insert_record

EPOCH = dt.datetime(1970, 1, 1)
HOUR = 3_600_000
LA, SHANGHAI = "America/Los_Angeles", "Asia/Shanghai"


def utc_ms(text: str) -> int:
    """Epoch ms of a UTC time written ``YYYY-MM-DD HH:MM[:SS.fff]``."""
    return int((dt.datetime.fromisoformat(text) - EPOCH).total_seconds() * 1000)


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def fire(zone: str | None, wall_end: str) -> int:
    return int(WindowClock(zone).fire_at(np.array([utc_ms(wall_end)]))[0])


def test_without_a_zone_a_window_fires_at_its_end_minus_one_and_times_are_instants():
    clock = WindowClock(None)
    ends = np.array([10_000, 20_000])
    assert clock.utc and clock.fire_at(ends).tolist() == [9_999, 19_999]
    assert clock.window_time(ends).tolist() == [9_999, 19_999]
    assert clock.local(ends) is ends   # no conversion on the UTC path


def test_a_zone_without_daylight_saving_shifts_by_its_offset():
    clock = WindowClock(SHANGHAI)
    assert clock.local(np.array([utc_ms("2024-01-01 16:00")])).tolist() == [utc_ms("2024-01-02 00:00")]
    # Shanghai's 2 January ends at 16:00 UTC on 2 January.
    assert fire(SHANGHAI, "2024-01-03 00:00") == utc_ms("2024-01-02 15:59:59.999")
    assert clock.window_time(np.array([utc_ms("2024-01-03 00:00")])).tolist() == [utc_ms("2024-01-02 15:59:59.999")]


def test_a_window_ending_in_the_spring_gap_fires_at_the_gap_and_its_window_time_moves_forward():
    # 2026-03-08 02:00 PST becomes 03:00 PDT at 10:00 UTC: [01:30, 02:30) ends inside the gap.
    assert fire(LA, "2026-03-08 02:30") == utc_ms("2026-03-08 10:00")
    time = WindowClock(LA).window_time(np.array([utc_ms("2026-03-08 02:30")]))
    assert time.tolist() == [utc_ms("2026-03-08 10:29:59.999")]   # 03:29:59.999 PDT, as PyFlink shows it
    assert fire(LA, "2026-03-08 02:00") == utc_ms("2026-03-08 09:59:59.999")   # [01:00, 02:00): its end is there
    assert fire(LA, "2026-03-09 00:00") == utc_ms("2026-03-09 06:59:59.999")   # the 23-hour day


def test_the_repeated_autumn_hour_is_one_window_fired_after_its_second_occurrence():
    # 2026-11-01 02:00 PDT becomes 01:00 PST at 09:00 UTC: 01:00-02:00 happens twice (08:00-10:00 UTC).
    assert fire(LA, "2026-11-01 02:00") == utc_ms("2026-11-01 09:59:59.999")
    time = WindowClock(LA).window_time(np.array([utc_ms("2026-11-01 02:00")]))
    assert time.tolist() == [utc_ms("2026-11-01 08:59:59.999")]   # the earlier offset, as PyFlink's window_time
    assert fire(LA, "2026-11-02 00:00") == utc_ms("2026-11-02 07:59:59.999")   # the 25-hour day
    local = WindowClock(LA).local(np.array([utc_ms("2026-11-01 08:30"), utc_ms("2026-11-01 09:30")]))
    assert local.tolist() == [utc_ms("2026-11-01 01:30")] * 2   # both 01:30s in the one hour window


CALLS = [AggCall("count_star", None, T.BIGINT(False), "cnt"), AggCall("sum", "v", T.BIGINT(), "s")]


@pytest.mark.parametrize("zone, late", [(None, False), (SHANGHAI, True)])
def test_a_day_window_closes_at_the_zones_midnight(zone, late):
    """A row at 15:48 UTC arriving after the watermark 17:00 UTC: late in Shanghai's day (it ended at
    16:00 UTC), on time in UTC's."""
    clock = WindowClock(zone)
    h = KernelHarness(WindowAggregate(["ws", "we", "k"], CALLS, "we", zone=zone), ["ws", "we", "k", "v"])

    def row(utc: str, v: int):
        wall = int(clock.local(np.array([utc_ms(utc)]))[0])
        start = wall - wall % (24 * HOUR)
        return insert_record(at(start), at(start + 24 * HOUR), "a", v)

    h.process([row("2024-01-01 10:00", 1)])
    fired = h.watermark(utc_ms("2024-01-01 17:00"))
    h.process([row("2024-01-01 15:48", 100)])
    fired += h.end_of_input()
    sums = [tuple(r)[-1] for r in fired]
    assert sums == ([1] if late else [101])


def test_the_local_phase_judges_lateness_at_the_zones_fire_time():
    local = LocalWindowAggregate(["we", "k"], CALLS, "we", zone=SHANGHAI)
    end = utc_ms("2024-01-02 00:00")   # Shanghai's 1 January: fires at 15:59:59.999 UTC
    rows = pd.DataFrame({"we": pd.to_datetime([end, end], unit="ms"), "k": ["a", "a"],
                         "v": pd.array([1, 2], dtype="Int64"), "_kind": pd.array([0, 0], dtype="int8"),
                         "_seq": [1, 3], "_sub": [0, 0]})
    out = local.process(rows, [(2, utc_ms("2024-01-01 16:00"))])   # after position 2 the window has fired
    assert sorted(out["_count"].tolist()) == [1, 1]   # the two rows on different sides: not folded together
    utc = LocalWindowAggregate(["we", "k"], CALLS, "we").process(rows, [(2, utc_ms("2024-01-01 16:00"))])
    assert utc["_count"].tolist() == [2]   # in UTC the day is still open: one partial


def test_a_session_in_a_zone_has_wall_clock_bounds_and_an_instant_window_time():
    kernel = SessionWindowTableFunction(["ts", "k"], "ts", 2 * HOUR, ["k"], zone=SHANGHAI)
    h = KernelHarness(kernel, ["ts", "k"])
    h.process([insert_record(at(utc_ms("2024-01-01 10:00")), "a")])
    assert h.watermark(utc_ms("2024-01-01 11:59:59.998")) == []
    (released,) = h.watermark(utc_ms("2024-01-01 11:59:59.999"))
    _, _, start, end, window_time = tuple(released)
    assert (start, end) == (at(utc_ms("2024-01-01 18:00")), at(utc_ms("2024-01-01 20:00")))   # Shanghai's clock
    assert window_time == at(utc_ms("2024-01-01 11:59:59.999"))   # the instant


def test_window_top_n_deduplication_and_join_fire_a_zones_day_at_its_instant():
    """The kernels buffering a window's rows (WindowBuffered) fire Shanghai's 1 January at 15:59:59.999 UTC."""
    from changeflow.kernels.join.window_join import WindowJoin
    from changeflow.kernels.window.window_rank import WindowRank, window_deduplicate

    start, end = at(utc_ms("2024-01-01 00:00")), at(utc_ms("2024-01-02 00:00"))   # Shanghai wall clocks
    fires = utc_ms("2024-01-01 15:59:59.999")
    rank = WindowRank(["k", "v", "ws", "we"], [], "ws", "we", [("v", False, False)], 1, 1, "rn", zone=SHANGHAI)
    dedup = window_deduplicate(["k", "v", "ws", "we"], ["k"], "ws", "we", "v", False, zone=SHANGHAI)
    for kernel in (rank, dedup):
        h = KernelHarness(kernel, ["k", "v", "ws", "we"])
        h.process([insert_record("a", 1, start, end)])
        assert h.watermark(fires - 1) == []
        assert [tuple(r)[:2] for r in h.watermark(fires)] == [("a", 1)]
        h.process([insert_record("a", 2, start, end)])   # late: the day has fired
        assert h.end_of_input() == []
    join = WindowJoin("INNER", ["k", "we"], ["k0", "we0"], ["k"], ["k0"], "we", "we0", zone=SHANGHAI)
    h = KernelHarness(join, ["_side", "k", "we", "k0", "we0"])
    h.process([insert_record(0, "a", end, None, None), insert_record(1, None, None, "a", end)])
    assert h.watermark(fires - 1) == []
    assert [tuple(r) for r in h.watermark(fires)] == [("a", end, "a", end)]
