"""EXPLAIN of sinks (INSERT INTO plans), as Flink 2.3 prints them: changelogMode=[NONE], upsert attributes."""

from __future__ import annotations

import sys
from pathlib import Path

from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import Sink
from changeflow.plan.rules.sink_materialize import MaterializeSettings, plan_sink
from changeflow.sql import plan_query

sys.path.insert(0, str(Path(__file__).parent))
from test_explain_fixtures import catalog  # noqa: E402


def sink_plan(sql, primary_key=()):
    sink = plan_sink(Sink(plan_query(sql, catalog()), "snk", None, primary_key),
                     MaterializeSettings(require_on_conflict=False))
    return explain(sink, ExplainSettings()).splitlines()


def test_append_sink():
    assert sink_plan("SELECT id, name FROM t")[1:3] == [
        "Sink(table=[default_catalog.default_database.snk], fields=[id, name], changelogMode=[NONE])",
        "+- Calc(select=[id, name], changelogMode=[I])",
    ]


def test_upsert_sink_keyed_like_the_aggregate_needs_no_materializer():
    assert sink_plan("SELECT id, MAX(name) FROM t GROUP BY id", ("id",))[1] == (
        "Sink(table=[default_catalog.default_database.snk], fields=[id, EXPR$1], upsertKeys=[[id]], "
        "changelogMode=[NONE])")


def test_sink_keyed_differently_from_its_input_materializes():
    lines = sink_plan("SELECT t.id, region FROM t LEFT JOIN u ON t.id = u.id", ("id",))
    assert lines[1].endswith("fields=[id, region], upsertMaterialize=[true], changelogMode=[NONE])")
    assert lines[2] == "+- SinkMaterializer(pk=[id], strategy=[LEGACY], conflict=[DEDUPLICATE], changelogMode=[I,UA,D])"
    assert lines[3] == "   +- Exchange(distribution=[hash[id]], changelogMode=[I,UB,UA,D])"


def test_batch_mode_prints_no_changelog_modes():
    plan = explain(plan_query("SELECT * FROM t JOIN u ON t.id = u.id", catalog()), ExplainSettings(streaming=False))
    assert plan.splitlines()[:3] == [
        "== Physical Plan (batch) ==",
        "Join(joinType=[InnerJoin], where=[(id = id0)], select=[id, name, v, d, id0, region, w], "
        "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])",
        ":- Exchange(distribution=[hash[id]])",
    ]
