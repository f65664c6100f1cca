"""The planner's frame: rules found by module and run in order, annotations on the nodes, EXPLAIN of the result."""

from __future__ import annotations

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import Join, Source
from changeflow.plan.optimizer import RULES, PlannerSettings, optimize, planned
from changeflow.plan.physical import Traits, annotate
from changeflow.sql import plan_query

SOURCE = Source("t", (("id", T.BIGINT()), ("name", T.STRING())), "elements", [])


def test_rules_run_in_their_declared_order():
    names = [r.name for r in RULES]
    # The rules that rewrite the plan (a streaming Sort as a Rank, interval joins, materializer insertion,
    # the distinct split, ChangelogNormalize after changelog sources) run before those that annotate it;
    # interval joins before the materializer, which reads the query's changelog mode; what a
    # ChangelogNormalize's consumer needs once the sinks are planned. The session time zone first: the window
    # rules rewrite the window table functions whose time attribute it checks.
    assert names[:16] == ["session_time_zone", "sort_limit", "changelog_normalize", "interval_join", "temporal_join",
                          "sink_materialize", "normalize_consumers", "window_aggregate", "over_aggregate",
                          "window_join", "split_distinct", "window_rank", "rowtime_deduplicate", "proctime_window",
                          "runtime_mode", "changelog_mode"]
    assert names.index("agg_phase") > names.index("changelog_mode")  # two phases read the input's mode
    assert [r.order for r in RULES] == sorted(r.order for r in RULES)


def test_an_annotation_without_a_field_is_kept_in_extra():
    node = annotate(annotate(SOURCE, watermark="ts - 5 s"), changelog_mode="[I]")
    assert node.traits.get("watermark") == "ts - 5 s" and node.traits.get("changelog_mode") == "[I]"
    assert "watermark=ts - 5 s" in node.traits.describe()
    assert Traits().get("watermark", "none") == "none"


def test_a_node_reached_twice_stays_one_node():
    join = Join(SOURCE, SOURCE, "INNER", ("id",), ("id",), None, SOURCE.schema + (("id0", T.BIGINT()),
                                                                                 ("name0", T.STRING())))
    physical = optimize(join, PlannerSettings())
    assert physical.left is physical.right and physical.left is not SOURCE
    assert SOURCE.traits is None  # the logical plan is not changed


def test_a_physical_plan_is_not_planned_again_and_prints_as_its_logical_plan():
    logical = plan_query("SELECT name, COUNT(*) AS c FROM t GROUP BY name", lambda name: SOURCE)
    settings = ExplainSettings(mini_batch=True, mini_batch_latency_ms=1000, mini_batch_size=10)
    physical = optimize(logical, settings.planner())
    assert planned(physical, PlannerSettings(streaming=False)) is physical
    assert explain(physical) == explain(logical, settings)
    assert "MiniBatchAssigner(interval=[1000ms]" in explain(physical)


def test_an_unknown_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="no planner rule 'watermarks'; rules: session_time_zone, sort_limit, "
                                         "changelog_normalize, interval_join, temporal_join, sink_materialize, "
                                         "normalize_consumers, "
                                         "window_aggregate, over_aggregate, window_join, split_distinct, window_rank, "
                                         "rowtime_deduplicate, proctime_window, runtime_mode"):
        optimize(SOURCE, PlannerSettings(), until="watermarks")
