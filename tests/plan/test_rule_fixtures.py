"""Each planner rule against its fixture file of ``SQL; expected plan;`` pairs (``fixtures/<rule>.sql``).

An entry is a ``# title:`` line, optional settings lines, the query ending with
``;`` and the expected plan ending with ``;``, as the EXPLAIN fixtures
(tests/sql/fixtures). The query is planned by the rules of
:data:`changeflow.plan.optimizer.RULES` up to and including the file's rule,
and printed as a tree: one node a line, children indented, each node with the
traits that rule sets (those that differ from their defaults). A planning error
prints as ``ERROR: message``.

Settings: ``# mode: batch``, ``# mini-batch: on``, ``# agg-phase: ONE_PHASE``,
``# flush: 5000`` (ms; ``# flush: 5000 memory-only``), ``# state-ttl: 20000``,
``# split-distinct: on`` (``# bucket-num: 16``), ``# cdc-events-duplicate: on``,
``# time-zone: Asia/Shanghai`` (``table.local-time-zone``),
and for :mod:`~changeflow.plan.rules.sink_materialize` a sink over the query:
``# sink-key: k, v`` (its primary key), ``# conflict: DEDUPLICATE``,
``# materialize: FORCE``, ``# materialize-strategy: MAP``, ``# sink-connector: upsert`` (a sink that
takes upserts by its key, as upsert-kafka; ``# sink-key:`` with nothing after it: a sink without a key).

The DataStream rules' files (``# program: datastream``) hold a DataStream program
instead of a query: a Python expression over ``env`` (a
``StreamExecutionEnvironment``) and the names of :data:`STREAM_NAMES`, whose
stream is the one sink of a :class:`~changeflow.plan.stream_nodes.StreamJob`.

The rules of :data:`EXPRESSION_RULES` change expressions, not traits: their files
print each projection's and filter's expressions too.

To regenerate after an intended change, from the repository root::

    PYTHONPATH=$PWD:$PWD/tests python tests/plan/test_rule_fixtures.py

and review the diff before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from types import SimpleNamespace

from changeflow.datastream import DataStream, StreamExecutionEnvironment
from changeflow.plan.event_time import WindowAggregate, WindowTableFunction
from changeflow.plan.flush_policy import FlushPolicy
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project, Rank,
                                   Sink, Source, UpsertMaterialize)
from changeflow.plan.over import OverAggregate
from changeflow.plan.optimizer import RULES, PlannerSettings, optimize
from changeflow.plan.physical import Traits
from changeflow.plan.rules.sink_materialize import MaterializeSettings
from changeflow.plan.stream_nodes import Node as StreamNode, SourceNode, StreamJob
from changeflow.plan.type_inference import PlanError
from changeflow.sql import plan_query
from changeflow.plan.window_ops import WindowDeduplicate, WindowJoin, WindowRank
from fixture_files import Case, catalog, read_cases
import stream_programs

FIXTURES = Path(__file__).parent / "fixtures"
STREAM_NAMES = {name: getattr(stream_programs, name) for name in stream_programs.__all__}

# The traits each rule sets (the sink rule's effect is the tree itself).
RULE_TRAITS = {r.name: r.traits for r in RULES}
EXPRESSION_RULES = ("session_time_zone",)


def planner_settings(s: dict[str, str]) -> PlannerSettings:
    flush = None
    if "flush" in s:
        interval, _, memory = s["flush"].partition(" ")
        flush = FlushPolicy(int(interval), memory_only=memory == "memory-only")
    streaming = s.get("mode", "streaming") == "streaming"
    materialize = MaterializeSettings(streaming=streaming, mode=s.get("materialize", "AUTO"),
                                      strategy=s.get("materialize-strategy", "LEGACY"))
    return PlannerSettings(streaming=streaming, mini_batch=s.get("mini-batch") == "on",
                           mini_batch_latency_ms=1000 if s.get("mini-batch") == "on" else 0,
                           mini_batch_size=1000 if s.get("mini-batch") == "on" else -1,
                           agg_phase_strategy=s.get("agg-phase", "AUTO"), flush=flush,
                           state_ttl_ms=int(s.get("state-ttl", "0")),
                           materialize=materialize if "sink-key" in s else None,
                           distinct_agg_split=s.get("split-distinct") == "on",
                           distinct_agg_split_buckets=int(s.get("bucket-num", "1024")),
                           cdc_events_duplicate=s.get("cdc-events-duplicate") == "on",
                           time_zone=s.get("time-zone"))


def label(node: PlanNode) -> str:
    """The node's kind and what tells it apart in a small plan."""
    name = type(node).__name__
    if isinstance(node, (Source, StreamNode)):
        return f"{name}({node.name})"
    if isinstance(node, (Aggregate, WindowAggregate)):
        attached = ", attached" if getattr(node, "attached", False) else ""
        return f"{name}(groupBy=[{', '.join(node.keys)}]{attached})"
    if isinstance(node, WindowTableFunction):
        return f"{name}({node.window})"
    if isinstance(node, Join):
        keys = f", keys=[{', '.join(node.left_keys)}]" if isinstance(node, WindowJoin) else ""
        return f"{name}({node.join_type}{keys})"
    if isinstance(node, (Deduplicate, ChangelogNormalize)):
        drop = ", dropUpdateBefore" if getattr(node, "drop_update_before", False) else ""
        drop += "" if getattr(node, "update_before", True) else ", noUpdateBefore"
        if isinstance(node, Deduplicate) and node.order != "proctime":  # on row time
            drop = f", order={node.order}, keepLast={node.keep_last}" + (
                ", onWatermark" if node.emit_on_watermark else "")
        return f"{name}(key=[{', '.join(node.keys)}]{drop})"
    if isinstance(node, Rank):
        return f"{name}(partitionBy=[{', '.join(node.partition_keys)}], rankEnd={node.rank_end})"
    if isinstance(node, (WindowRank, WindowDeduplicate)):
        keys = node.partition_keys if isinstance(node, WindowRank) else node.keys
        end = f", rankEnd={node.rank_end}" if isinstance(node, WindowRank) else f", keepLast={node.keep_last}"
        return f"{name}({node.window}, partitionBy=[{', '.join(keys)}]{end})"
    if isinstance(node, Sink):
        return f"{name}({node.table}, pk=[{', '.join(node.primary_key)}])"
    if isinstance(node, UpsertMaterialize):
        upsert = "none" if node.upsert_key is None else ", ".join(node.upsert_key)
        return f"{name}(pk=[{', '.join(node.primary_key)}], upsertKey=[{upsert}], conflict={node.conflict}, " \
               f"strategy={node.strategy})"
    if isinstance(node, Project):
        return f"{name}({', '.join(node.field_names)})"
    if isinstance(node, OverAggregate):
        calls = ", ".join(f"{c.function}({c.arg or ''})" for c in node.calls)
        return (f"{name}(partitionBy=[{', '.join(node.partition_keys)}], orderBy=[{node.order_by}], "
                f"{node.frame}{', proctime' if node.proctime else ''}, calls=[{calls}])")
    return name


def expressions(node: PlanNode) -> str:
    """A projection's or a filter's expressions, as `` [name=expression, ...]`` (else nothing)."""
    if isinstance(node, Project):
        return " [" + ", ".join(f"{name}={expr}" for name, expr in node.exprs) + "]"
    if isinstance(node, Filter):
        return f" [{node.predicate}]"
    return ""


def show(plan: PlanNode, fields: tuple[str, ...], depth: int = 0, exprs: bool = False) -> list[str]:
    text = (plan.traits or Traits()).describe(fields)
    lines = ["  " * depth + label(plan) + (expressions(plan) if exprs else "") + (f" {{{text}}}" if text else "")]
    for child in plan.inputs:
        lines += show(child, fields, depth + 1, exprs)
    return lines


class _UpsertSink:
    """A sink that takes upserts by its key (upsert-kafka, jdbc with a key, blackhole): ``# sink-connector: upsert``."""

    takes_upserts = True


def stream_job(program: str) -> StreamJob:
    """The job whose one sink reads the stream ``program`` builds (see the module docstring)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    untyped = env.from_collection([1]).get_type()  # what PyFlink gives a source of unknown type
    clicks = DataStream(env, SourceNode("clicks", untyped, kind="dataframe", payload=SimpleNamespace(isStreaming=True)))
    stream = eval(program, {**STREAM_NAMES, "env": env, "clicks": clicks})  # the fixture file's own program
    return StreamJob((stream._node,))


def actual(case: Case) -> str:
    if case.settings.get("program") == "datastream":
        try:
            planned = optimize(stream_job(case.sql), planner_settings(case.settings), until=case.file.stem)
        except ValueError as e:
            return f"ERROR: {e}"
        return "\n".join(show(planned, RULE_TRAITS[case.file.stem]))
    try:
        plan = plan_query(case.sql, catalog())
        if "sink-key" in case.settings:
            key = tuple(k.strip() for k in case.settings["sink-key"].split(","))
            connector = _UpsertSink() if case.settings.get("sink-connector") == "upsert" else None
            plan = Sink(plan, "snk", connector, key if key != ("",) else (), case.settings.get("conflict"))
        planned = optimize(plan, planner_settings(case.settings), until=case.file.stem)
    except (PlanError, NotImplementedError) as e:
        return f"ERROR: {e}"
    return "\n".join(show(planned, RULE_TRAITS[case.file.stem], exprs=case.file.stem in EXPRESSION_RULES))


ALL = [c for f in sorted(FIXTURES.glob("*.sql")) for c in read_cases(f)]


def test_every_rule_has_a_fixture_file():
    assert sorted(p.stem for p in FIXTURES.glob("*.sql")) == sorted(r.name for r in RULES)


@pytest.mark.parametrize("case", ALL, ids=[f"{c.file.stem}:{c.title}" for c in ALL])
def test_rule(case):
    assert actual(case) == case.expected


def regenerate() -> None:
    for path in sorted(FIXTURES.glob("*.sql")):
        out = []
        for case in read_cases(path):
            settings = "".join(f"# {k}: {v}\n" for k, v in case.settings.items())
            out.append(f"# title: {case.title}\n{settings}{case.sql};\n{actual(case)};\n")
        path.write_text("\n".join(out))


if __name__ == "__main__":
    regenerate()
