"""Watermark declarations: the plan's assigner, rowtime types, refusals, and where watermarks are emitted."""

from __future__ import annotations

import numpy as np
import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment


@pytest.fixture
def t_env(tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(f"CREATE TABLE bids (ts TIMESTAMP(3), k STRING, v INT, "
                      f"WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    return t_env


def test_a_declared_watermark_makes_a_rowtime_attribute_and_an_assigner(t_env):
    table = t_env.sql_query("SELECT ts, k FROM bids WHERE v > 0")
    assert [str(t) for t in table.get_schema().get_field_data_types()] == ["TIMESTAMP(3) *ROWTIME*", "STRING"]
    plan = table.explain()
    assert "WatermarkAssigner(rowtime=[ts], watermark=[`ts` - INTERVAL '2' SECOND]" in plan


def test_a_timestamp_ltz_column_is_a_rowtime_attribute_as_in_flink(tmp_path):
    """The usual Flink DDL: epoch milliseconds made a TIMESTAMP_LTZ(3) and watermarked (it was refused)."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(f"CREATE TABLE ev (ms BIGINT, k STRING, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
                      f"WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    assert [str(t) for t in t_env.from_path("ev").get_schema().get_field_data_types()] == [
        "BIGINT", "STRING", "TIMESTAMP_LTZ(3) *ROWTIME*"]
    windowed = t_env.sql_query("SELECT window_start, window_time, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, "
                               "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time")
    assert [str(t) for t in windowed.get_schema().get_field_data_types()] == [
        "TIMESTAMP(3) NOT NULL", "TIMESTAMP_LTZ(3) NOT NULL *ROWTIME*", "BIGINT NOT NULL"]


def test_source_watermark_is_refused_by_name(t_env, tmp_path):
    t_env.execute_sql(f"CREATE TABLE s (ts TIMESTAMP(3), WATERMARK FOR ts AS SOURCE_WATERMARK()) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    with pytest.raises(Exception, match=r"SOURCE_WATERMARK\(\) \(table s\) is not supported"):
        t_env.sql_query("SELECT * FROM s").explain()


def test_a_window_over_an_aggregate_of_the_rowtime_is_refused_as_flink_does(t_env):
    t_env.create_temporary_view("latest", t_env.sql_query("SELECT k, MAX(ts) AS ts FROM bids GROUP BY k"))
    assert str(t_env.sql_query("SELECT * FROM latest").get_schema().get_field_data_types()[1]) == \
        "TIMESTAMP(3) *ROWTIME*"   # as Flink prints it, though it is no time attribute any more
    with pytest.raises(Exception, match="requires the timecol is a time attribute type"):
        t_env.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE latest, DESCRIPTOR(ts), INTERVAL '1' MINUTE))")


def test_the_watermark_interval_is_a_known_key(t_env):
    t_env.get_config().set("pipeline.auto-watermark-interval", "1 s")
    with pytest.raises(ValueError, match="Did you mean 'pipeline.auto-watermark-interval'"):
        t_env.get_config().set("pipeline.auto-watermark-intervall", "1 s")


def test_watermarks_are_emitted_after_the_rows_that_move_them_past_the_interval():
    from changeflow.kernels.watermark_emissions import emitted_watermarks

    values = np.array([1_000, 1_100, 900, 1_500, 1_600, np.nan, 2_000])
    marks, last, pending = emitted_watermarks(values, np.arange(7), None, None, 200)
    assert marks == [(0, 1_000), (3, 1_500), (6, 2_000)] and last == 2_000 and pending is None
    # The rest carries over to the partition's next Arrow batch, then to the end of the micro-batch.
    marks, last, pending = emitted_watermarks(np.array([2_100.0]), np.array([7]), last, pending, 200)
    assert marks == [] and pending == (7, 2_100)
    # An interval of 0 emits every advance.
    assert emitted_watermarks(np.array([1.0, 2.0, 2.0]), np.arange(3), None, None, 0)[0] == [(0, 1), (1, 2)]


def test_each_scan_of_a_watermarked_table_is_a_watermark_of_its_own(t_env):
    """Two scans of one table (Nexmark q5 reads its windowed counts twice) are two Spark streams with
    positions of their own: each scan's assigner gets its own number, and an operator over both waits
    for the least of the two (one shared number made the second scan's rows late at a window join)."""
    from changeflow.plan.event_time import WatermarkAssigner
    from changeflow.runtime.spark.event_time import WatermarkScans

    t_env.execute_sql("CREATE TABLE b (ts TIMESTAMP(3), k STRING, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
                      "WITH ('connector' = 'datagen')")
    plan = t_env.sql_query("SELECT * FROM b")._plan
    while not isinstance(plan, WatermarkAssigner):
        plan = plan.inputs[0]
    scans = WatermarkScans()
    scans.enter()                       # a join: its left input
    left = scans.number(plan)
    scans.leave()
    assert scans.below() == {left}
    scans.enter()                       # its right input, a second scan of the same table
    right = scans.number(plan)
    assert scans.below() == {right}
    scans.leave()
    assert left != right and scans.below() == {left, right} and scans.count == 2


def _emitted_row_by_row(values, positions, last, pending, interval_ms):
    """Flink's rule row by row (what emitted_watermarks computes vectorised): the reference."""
    marks = []
    current = pending[1] if pending is not None else last
    for i in np.flatnonzero(~np.isnan(values)):
        value = int(values[i])
        if current is not None and value <= current:
            continue
        current = value
        if last is None or current - last > interval_ms:
            marks.append((int(positions[i]), current))
            last, pending = current, None
        else:
            pending = (int(positions[i]), current)
    return marks, last, pending


@pytest.mark.parametrize("seed", range(40))
def test_vectorised_watermarks_are_the_row_by_row_rule_over_any_batches(seed):
    from changeflow.kernels.watermark_emissions import emitted_watermarks

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    values = (np.arange(n) * rng.integers(0, 5) - rng.integers(0, 600, n)).astype(float)
    values[rng.random(n) < 0.1] = np.nan   # control rows
    interval = int(rng.choice([0, 1, 50, 200]))
    cuts = sorted(set(rng.integers(0, n, int(rng.integers(0, 4))).tolist()) | {0, n})
    got = expected = (None, None)
    for a, b in zip(cuts, cuts[1:], strict=False):
        chunk, at = values[a:b], np.arange(a, b) + 1_000
        marks, *state = emitted_watermarks(chunk, at, *got, interval)
        want, *state_want = _emitted_row_by_row(chunk, at, *expected, interval)
        assert (marks, state) == (want, state_want), (seed, a, b)
        got, expected = tuple(state), tuple(state_want)
