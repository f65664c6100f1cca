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


def test_a_self_join_over_a_watermarked_file_needs_no_signals_and_gives_the_batch_result(spark, tmp_path):
    """Its two scans share the staged files (one table, same columns) and run without signals."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "part.csv").write_text("".join(f"2024-01-01 00:00:{i % 60:02d},k{i % 7},{i}\n"
                                                     for i in range(200)))
    rows = {}
    for mode in ("streaming", "batch"):
        settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" \
            else EnvironmentSettings.in_batch_mode()
        t_env = TableEnvironment.create(settings, spark_session=spark)
        t_env.execute_sql(f"CREATE TABLE t (ts TIMESTAMP(3), k STRING, v INT, "
                          f"WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                          f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/t', 'format' = 'csv')")
        table = t_env.sql_query("SELECT a.k, COUNT(*) AS n, SUM(b.v) AS s FROM t a JOIN t b ON a.k = b.k "
                                "WHERE a.v < 50 GROUP BY a.k")
        if mode == "streaming":
            assert not signals_needed(planned(table._plan, PlannerSettings(streaming=True)))
        with table.execute().collect() as result:
            changes = [(r.get_row_kind().name, tuple(r)) for r in result]
        final: dict = {}
        for kind, row in changes:  # materialized by the grouping key
            if kind in ("INSERT", "UPDATE_AFTER"):
                final[row[0]] = row
            elif kind == "DELETE":
                final.pop(row[0], None)
        rows[mode] = final
    expected = {}
    for k in range(7):
        left = [i for i in range(200) if i % 7 == k and i < 50]
        right = [i for i in range(200) if i % 7 == k]
        expected[f"k{k}"] = (f"k{k}", len(left) * len(right), len(left) * sum(right))
    assert rows["streaming"] == rows["batch"] == expected


def test_the_answer_is_the_kernels_own(t_env, monkeypatch):
    """A group aggregation keeps the signals once its kernel declares that it acts on them."""
    from changeflow.kernels.aggregate.group_agg import GroupAggregate

    sql = "SELECT k, MAX(v) FROM bids GROUP BY k"
    assert not needed(t_env, sql)
    monkeypatch.setattr(GroupAggregate, "emits_at_end_of_input", True)
    assert needed(t_env, sql)
