"""ChangelogNormalize in plans: EXPLAIN as Flink names it, and the sink planned over an upsert source."""

from __future__ import annotations

from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import Sink, UpsertMaterialize
from changeflow.plan.rules.sink_materialize import MaterializeSettings, plan_sink
from changeflow.plan.rules.upsert_keys import upsert_keys
from changeflow.sql import plan_query
from fixture_files import catalog


def test_explain_names_the_node_and_its_exchange_as_flink():
    text = explain(plan_query("SELECT SUM(v) AS s FROM ups", catalog()))
    assert text.splitlines()[1:] == [
        "GroupAggregate(select=[SUM(v) AS s], changelogMode=[I,UB,UA,D])",
        "+- Exchange(distribution=[single], changelogMode=[I,UB,UA,D])",
        "   +- Calc(select=[v], changelogMode=[I,UB,UA,D])",
        "      +- ChangelogNormalize(key=[k], changelogMode=[I,UB,UA,D])",
        "         +- Exchange(distribution=[hash[k]], changelogMode=[I,UA,D])",
        "            +- TableSourceScan(table=[ups], fields=[k, v], changelogMode=[I,UA,D])"]


def test_duplicated_cdc_events_are_normalized_after_dropping_update_befores():
    plan = plan_query("SELECT k, v FROM cdc", catalog())
    assert "ChangelogNormalize" not in explain(plan)
    assert explain(plan, ExplainSettings(cdc_events_duplicate=True)).splitlines()[1:] == [
        "ChangelogNormalize(key=[k], changelogMode=[I,UB,UA,D])",
        "+- Exchange(distribution=[hash[k]], changelogMode=[I,UA,D])",
        "   +- DropUpdateBefore(changelogMode=[I,UA,D])",
        "      +- TableSourceScan(table=[cdc], fields=[k, v], changelogMode=[I,UB,UA,D])"]


def test_a_sink_keyed_by_the_sources_primary_key_needs_no_materializer():
    # The statement plans its sink before the planner inserts the ChangelogNormalize: the source's
    # primary key is its upsert key already (as Flink's upsert keys of a scan).
    query = plan_query("SELECT k, v FROM ups", catalog())
    assert upsert_keys(query) == [("k",)]
    sink = plan_sink(Sink(query, "snk", None, ("k",)), MaterializeSettings())
    assert not isinstance(sink.input, UpsertMaterialize)
    assert isinstance(plan_sink(Sink(query, "snk", None, ("v",), "DEDUPLICATE"), MaterializeSettings()).input,
                      UpsertMaterialize)
