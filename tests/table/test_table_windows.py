"""The Table API's group windows and over windows (changeflow/table/window.py, window_tables.py) without
Spark: the plans they make (the SQL group window's and OVER's nodes) and what they refuse, by name.
Their results against Flink: tests/conformance/test_table_api_conformance.py (conformance/table_window_cases.py)."""

from __future__ import annotations

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import (CURRENT_RANGE, CURRENT_ROW, UNBOUNDED_RANGE, UNBOUNDED_ROW, col, lit,
                                          row_interval)
from changeflow.table.window import Over, Session, Slide, Tumble

_COLUMNS = "ts TIMESTAMP(3), k STRING, v INT"


def _env(batch: bool = False) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.execute_sql(f"CREATE TABLE bids ({_COLUMNS}, pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '2' "
                      "SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '10')")
    t_env.execute_sql(f"CREATE TABLE plain ({_COLUMNS}) WITH ('connector' = 'datagen', 'number-of-rows' = '10')")
    return t_env


@pytest.fixture
def bids():
    return _env().from_path("bids")


# --- group windows ---------------------------------------------------------------------------

def test_tumble_is_planned_as_the_sql_group_window(bids):
    t_env = _env()
    table = (t_env.from_path("bids").window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
             .group_by(col("w"), col("k")).select(col("k"), col("w").start, col("w").end, col("w").rowtime,
                                                   col("v").sum))
    sql = t_env.sql_query("SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND), TUMBLE_END(ts, INTERVAL '10' SECOND), "
                          "TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND), SUM(v) FROM bids "
                          "GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), k")
    plan = table.explain()
    assert "WindowAggregate(groupBy=[window_time, k], window=[TUMBLE(size=[10 s])]" in plan
    assert "emit=[once, when the watermark passes window_end]" in plan
    # One plan for both front ends (the operators, their keys and windows), but for the names and the
    # nullability of the properties (Flink's Table API names unnamed items EXPR$0.. among themselves and types
    # start/end nullable).
    def operators(text):
        return [line.split("select=")[0] for line in text.splitlines()[1:]]
    assert operators(plan) == operators(sql.explain())
    schema = table.get_schema()
    assert schema.get_field_names() == ["k", "EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"]
    assert [str(t) for t in schema.get_field_data_types()] == [
        "STRING", "TIMESTAMP(3)", "TIMESTAMP(3)", "TIMESTAMP(3) *ROWTIME*", "INT"]


def test_slide_and_session_windows(bids):
    slide = (bids.window(Slide.over(lit(1).minutes).every(lit(30).seconds).on(col("ts")).alias("w"))
             .group_by(col("k"), col("w")).select(col("k"), col("v").count.alias("c")))
    assert "window=[HOP(slide=[30 s], size=[1 min])]" in slide.explain()
    session = (bids.window(Session.with_gap(lit(500).millis).on(col("ts")).alias("w"))
               .group_by(col("w"), col("k")).select(col("k"), col("w").end.alias("we")))
    assert "window=[SESSION(gap=[500 ms], partition keys=[k])]" in session.explain()


def test_a_global_window_types_its_aggregates_as_a_global_aggregation(bids):
    table = bids.window(Tumble.over(lit(1).hours).on(col("ts")).alias("w")).group_by(col("w")).select(
        col("v").sum.alias("s"), col("v").count.alias("c"))
    assert [str(t) for t in table.get_schema().get_field_data_types()] == ["INT", "BIGINT NOT NULL"]


def test_batch_mode_groups_by_the_window_columns():
    table = (_env(batch=True).from_path("bids").window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
             .group_by(col("w"), col("k")).select(col("k"), col("w").start.alias("ws"), col("v").sum.alias("s")))
    plan = table.explain()
    assert "WindowAggregate" not in plan and "window_start" in plan


@pytest.mark.parametrize("build, message", [
    (lambda t: t.window(Tumble.over(row_interval(10)).on(col("ts")).alias("w")),
     "row-count group windows are not supported"),
    (lambda t: t.window(Slide.over(row_interval(10)).every(row_interval(5)).on(col("ts")).alias("w")),
     "row-count group windows are not supported"),
    (lambda t: t.window(Tumble.over(lit(0).seconds).on(col("ts")).alias("w")), "must be positive"),
    (lambda t: t.window(Tumble.over(col("v")).on(col("ts")).alias("w")), "must be an interval literal"),
    (lambda t: t.window(Slide.over(lit(10).seconds).on(col("ts")).alias("w")), "needs every"),
    (lambda t: t.window(Session.with_gap(lit(5).seconds).on(col("ts")).alias("w")).group_by(col("w"), col("k") + "x"),
     "Session window grouped by an expression"),
])
def test_group_window_refusals_name_the_construct(bids, build, message):
    with pytest.raises((PlanError, NotImplementedError), match=message):
        windowed = build(bids)
        grouped = windowed if hasattr(windowed, "select") else windowed.group_by(col("w"), col("k"))
        grouped.select(col("k"), col("v").sum)


def test_a_processing_time_group_window_is_the_processing_time_window_tvf_that_does_not_fire_at_end(bids):
    table = (bids.window(Tumble.over(lit(10).seconds).on(col("pt")).alias("w")).group_by(col("w"), col("k"))
             .select(col("k"), col("w").start, col("w").end, col("w").proctime, col("v").count))
    plan = table.explain()
    assert "WindowAggregate(groupBy=[window_time, k], window=[TUMBLE(size=[10 s])]" in plan
    assert "WindowTableFunction(window=[TUMBLE(time_col=[pt], size=[10 s])]" in plan
    # Flink 2.3's types: the properties nullable, but proctime (a processing-time attribute).
    assert [str(t) for t in table.get_schema().get_field_data_types()] == [
        "STRING", "TIMESTAMP(3)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*", "BIGINT NOT NULL"]
    aggregate = _window_aggregate(table.plan)
    assert aggregate.window.fires_at_end is False   # Flink's legacy operator: open windows die with the input
    rowtime = (bids.window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w")).group_by(col("w"), col("k"))
               .select(col("k"), col("v").count))
    assert _window_aggregate(rowtime.plan).window.fires_at_end is True


def _window_aggregate(plan):
    from changeflow.plan.event_time import WindowAggregate
    from changeflow.plan.optimizer import PlannerSettings, optimize
    from changeflow.plan.physical import walk
    optimized = optimize(plan, PlannerSettings(streaming=True))
    return next(n for n in walk(optimized) if isinstance(n, WindowAggregate))


@pytest.mark.parametrize("batch, build, error, message", [
    (False, lambda w: w.select(col("k"), col("w").rowtime), PlanError,
     r"^Invalid function call:\nrowtime\(TIMESTAMP_LTZ\(3\) NOT NULL \*PROCTIME\*\)"),
    (True, lambda w: w.select(col("k"), col("v").count), PlanError,
     "^Window can not be defined over a proctime attribute column for batch mode"),
])
def test_processing_time_group_window_refusals(batch, build, error, message):
    windowed = (_env(batch=batch).from_path("bids").window(Tumble.over(lit(10).seconds).on(col("pt")).alias("w"))
                .group_by(col("w"), col("k")))
    with pytest.raises(error, match=message):
        build(windowed).explain()


def test_proctime_of_a_rowtime_group_window_is_the_processing_time_when_the_window_is_emitted(bids):
    # Flink 2.3: PROCTIME_MATERIALIZE(proctime('w')) over the GroupWindowAggregate, a processing-time attribute.
    table = bids.window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w")).group_by(col("w"), col("k")).select(
        col("k"), col("w").rowtime, col("w").proctime.alias("pt"), col("v").sum)
    assert [str(t) for t in table.get_schema().get_field_data_types()] == [
        "STRING", "TIMESTAMP(3) *ROWTIME*", "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*", "INT"]
    plan = table.explain()
    assert "PROCTIME() AS pt" in plan.split("\n")[1]   # computed over the window aggregate's output rows
    assert _window_aggregate(table.plan).window.fires_at_end is True   # still a row-time window
    # pt is a processing-time attribute: a processing-time window can follow.
    again = table.window(Tumble.over(lit(1).minutes).on(col("pt")).alias("p")).group_by(col("p")).select(
        col("k").count)
    assert "WindowTableFunction(window=[TUMBLE(time_col=[pt], size=[1 min])]" in again.explain()


def test_group_window_usage_errors(bids):
    windowed = bids.window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
    with pytest.raises(PlanError, match=r"alias reference in group_by: group_by\(col\('w'\)"):
        windowed.group_by(col("k"))
    with pytest.raises(PlanError, match="window property of an unknown window"):
        windowed.group_by(col("w")).select(col("x").start)
    with pytest.raises(PlanError, match="select a window property"):
        windowed.group_by(col("w")).select(col("w"))
    with pytest.raises(PlanError, match="time attribute"):
        (_env().from_path("plain").window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
         .group_by(col("w")).select(col("v").sum))
    with pytest.raises(TypeError, match="alias"):
        bids.window(Tumble.over(lit(10).seconds).on(col("ts")))
    with pytest.raises(NotImplementedError, match="WindowGroupedTable.aggregate"):
        windowed.group_by(col("w")).aggregate(col("v").sum)


def test_window_expressions_outside_a_window_are_refused_by_name(bids):
    with pytest.raises(PlanError, match="window property .* supported only in the select of window"):
        bids.select(col("w").start)
    with pytest.raises(PlanError, match="an interval .* supported only as a window's size"):
        bids.select(lit(10).seconds)
    with pytest.raises(PlanError, match="OVER window is supported only in the select of over_window"):
        bids.select(col("v").sum.over(col("w")))
    with pytest.raises(PlanError, match="bound an OVER window only"):
        bids.select(UNBOUNDED_ROW)


# --- over windows ----------------------------------------------------------------------------

@pytest.mark.parametrize("preceding, following, frame", [
    (None, None, "RANG BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"),
    (UNBOUNDED_RANGE, CURRENT_RANGE, "RANG BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"),
    (UNBOUNDED_ROW, CURRENT_ROW, "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"),
    (row_interval(2), None, "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"),
    (lit(1).hours, None, "RANG BETWEEN 3600000 PRECEDING AND CURRENT ROW"),
    (CURRENT_ROW, None, "ROWS BETWEEN 0 PRECEDING AND CURRENT ROW"),
])
def test_over_frames(bids, preceding, following, frame):
    window = Over.partition_by(col("k")).order_by(col("ts"))
    if preceding is not None:
        window = window.preceding(preceding)
    if following is not None:
        window = window.following(following)
    table = bids.over_window(window.alias("w")).select(col("k"), col("v").sum.over(col("w")),
                                                       (col("v") + 1).max.over(col("w")).alias("m"))
    plan = table.explain()
    assert frame in plan and "OverAggregate(partitionBy=[k], orderBy=[ts ASC]" in plan
    assert table.get_schema().get_field_names() == ["k", "_c1", "m"]  # Flink's names: _c<position>


def test_over_is_planned_as_sql_over(bids):
    t_env = _env()
    table = t_env.from_path("bids").over_window(
        Over.partition_by(col("k")).order_by(col("ts")).preceding(row_interval(2)).alias("w")).select(
        col("k"), col("v").sum.over(col("w")).alias("s"))
    sql = t_env.sql_query("SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND "
                          "CURRENT ROW) AS s FROM bids")
    assert table.explain() == sql.explain()


@pytest.mark.parametrize("build, message", [
    (lambda t: t.over_window(Over.order_by(col("ts")).preceding(row_interval(2)).following(row_interval(1))
                             .alias("w")).select(col("v").sum.over(col("w"))), "FOLLOWING windows are not supported"),
    (lambda t: t.over_window(Over.order_by(col("ts")).preceding(row_interval(2)).following(CURRENT_RANGE)
                             .alias("w")).select(col("v").sum.over(col("w"))), "same interval type"),
    (lambda t: t.over_window(Over.order_by(col("ts")).alias("w"), Over.order_by(col("ts")).alias("w2")),
     "supports a single over window"),
    (lambda t: t.over_window(Over.order_by(col("ts")).alias("w")).select(col("v").sum),
     r"needs \.over\(col\('w'\)\)"),
    (lambda t: t.over_window(Over.order_by(col("ts")).alias("w")).select(col("v").sum.distinct.over(col("w"))),
     "no DISTINCT"),
    (lambda t: t.over_window(Over.order_by(col("ts")).alias("w")).select(col("v").collect.over(col("w"))),
     "computes COUNT, SUM, AVG, MIN and MAX"),
    (lambda t: t.over_window(Over.order_by(col("ts")).alias("w")).select(col("v").sum.over(col("x"))),
     "unknown window"),
    (lambda t: t.over_window(Over.partition_by(col("k") + "x").order_by(col("ts")).alias("w")).select(
        col("v").sum.over(col("w"))), "partitioned by an expression"),
    (lambda t: t.over_window(Over.order_by(col("ts")).alias("w")).select(col("k")), "no aggregate over it"),
])
def test_over_refusals_name_the_construct(bids, build, message):
    with pytest.raises((PlanError, NotImplementedError), match=message):
        build(bids)


def test_over_needs_a_time_attribute_in_streaming():
    table = _env().from_path("plain").over_window(Over.order_by(col("ts")).alias("w")).select(
        col("v").sum.over(col("w")))
    with pytest.raises(PlanError, match="must be defined on a time attribute"):
        table.explain()
