"""EXPLAIN names the operators that buffer their output and why."""

from __future__ import annotations

from changeflow.plan.explain import ExplainSettings, explain
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col


def plan():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    src = t_env.from_elements([("a", 1)], ["k", "v"])
    per_key = src.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    return per_key.select(col("s").max.alias("top"))._plan  # noqa: SLF001


def test_explain_lists_each_buffering_operator_with_its_reason():
    text = explain(plan(), ExplainSettings(flush_interval_ms=5000))
    section = text.split("== Output Flush ==\n")[1].splitlines()
    # Buffering lets the per-key aggregation fold micro-batches, so it runs in two phases.
    assert "LocalGroupAggregate(groupBy=[k]" in text
    assert section == [
        "GlobalGroupAggregate(groupBy=[k], select=[k, SUM(v) AS $agg0]): buffers the latest output per key, "
        "flushed every 5000ms, on idle input and at end of input; output idempotent (group aggregation), keyed by [k]",
        "GroupAggregate(select=[MAX(s) AS $agg0]): buffers the latest output per key, flushed every 5000ms, "
        "on idle input and at end of input; output idempotent (group aggregation), parallelism 1 (no grouping key)",
        "micro-batches of unbounded input: every 5000ms (every row reaching the sink is buffered)",
    ]


def test_explain_says_micro_batches_keep_the_sources_pace_when_rows_reach_the_sink_unbuffered():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view("t", t_env.from_elements([("a", 1)], ["k", "v"]))
    both = t_env.sql_query("SELECT k, SUM(v) AS v FROM t GROUP BY k UNION ALL SELECT k, v FROM t")
    text = explain(both._plan, ExplainSettings(flush_interval_ms=5000))  # noqa: SLF001
    assert text.endswith("micro-batches of unbounded input: at the sources' pace (some rows reach the sink "
                         "unbuffered)\n")


def test_explain_of_memory_only_buffering_and_without_an_interval():
    text = explain(plan(), ExplainSettings(flush_interval_ms=5000, flush_memory_only=True))
    assert "flushed at the end of every micro-batch (memory-buffer-only)" in text
    assert "micro-batches of unbounded input" not in text
    assert "Output Flush" not in explain(plan(), ExplainSettings())
    assert "Output Flush" not in explain(plan(), ExplainSettings(streaming=False, flush_interval_ms=5000))
