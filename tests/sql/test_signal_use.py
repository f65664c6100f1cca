"""Which streaming plans carry watermark and end-of-input signals (runtime/spark/signal_use.py)."""

from __future__ import annotations

import pytest

from changeflow.plan.optimizer import PlannerSettings, planned
from changeflow.runtime.spark.signal_use import signals_needed
from changeflow.table import EnvironmentSettings, TableEnvironment


@pytest.fixture
def t_env(tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for name in ("bids", "items"):
        t_env.execute_sql(f"CREATE TABLE {name} (ts TIMESTAMP(3), k STRING, v INT, "
                          f"WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                          f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/{name}', 'format' = 'csv')")
    t_env.execute_sql(f"CREATE TABLE plain (k STRING, v INT) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/plain', 'format' = 'csv')")
    return t_env


def needed(t_env, sql: str) -> bool:
    return signals_needed(planned(t_env.sql_query(sql)._plan, PlannerSettings(streaming=True)))


@pytest.mark.parametrize("sql", [
    "SELECT b.k, i.v FROM bids b JOIN items i ON b.k = i.k WHERE i.v > 3",          # Nexmark q3/q20's shape
    "SELECT k, MAX(v) FROM bids GROUP BY k",
    "SELECT v, AVG(m) FROM (SELECT b.k, i.v, MAX(b.v) AS m FROM bids b JOIN items i ON b.k = i.k "
    "GROUP BY b.k, i.v) GROUP BY v",  # q4's
    "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS r FROM bids) WHERE r <= 1",
])
def test_a_plan_whose_operators_ignore_watermarks_needs_no_signals(t_env, sql):
    assert not needed(t_env, sql)


@pytest.mark.parametrize("sql", [
    "SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
    "GROUP BY k, window_start, window_end",
    "SELECT b.k FROM bids b JOIN items i ON b.k = i.k AND b.ts BETWEEN i.ts - INTERVAL '1' SECOND AND i.ts",
    "SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM bids",
    "SELECT k FROM bids WHERE ts > CURRENT_WATERMARK(ts)",
    "SELECT * FROM (SELECT k, v, ts, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS r FROM bids) "
    "WHERE r = 1",  # a deduplication on row time
])
def test_an_operator_that_acts_on_watermarks_keeps_them(t_env, sql):
    assert needed(t_env, sql)


def test_a_plan_without_a_watermark_needs_none(t_env):
    assert not needed(t_env, "SELECT k, COUNT(*) FROM plain GROUP BY k")
