"""What a ChangelogNormalize's consumer needs: the node dropped, or its ``-U`` rows, as Flink 2.3's planner decides.

Flink's ``FlinkChangelogModeInferenceProgram`` asks each node for the update kinds its consumer
needs. A ChangelogNormalize provides what is asked: ``[I,UB,UA,D]`` for a consumer that retracts
(an aggregation, a join, a ``print`` sink), ``[I,UA,D]`` for one that takes upserts by the same
key (``ONLY_UPDATE_AFTER``). In the second case ``ChangelogNormalizeRequirementResolver`` removes
the node altogether, the source's upserts going to the consumer as they are, unless

* ``table.exec.source.cdc-events-duplicate`` is set (the node drops duplicated events), or
* a filter was pushed into the node, or a metadata column of the source is read.

A consumer takes upserts by the same key when it is a sink whose changelog mode has no ``-U``
(``upsert-kafka``, ``jdbc`` with a primary key, ``blackhole``: a connector's ``takes_upserts``)
and whose primary key, if it has one, is exactly an upsert key of its input, reached from the
node through projections and filters on that key only (Flink's ``isNonUpsertKeyCondition``: a
filter on other columns cannot pass an upsert stream on). PyFlink 2.3's EXPLAIN of the same
statements is in the fixtures (tests/plan/fixtures/normalize_consumers.sql).

Where changeflow differs (docs/differences.md): Flink pushes a filter on non-key columns into
the node (``ChangelogNormalize(..., condition=[...])``, which then emits ``[I,UA,D]`` and a
``-D`` for a row that stops passing); changeflow keeps the filter above the node, which keeps
its ``-U`` rows. A ``SELECT`` (no sink), a ``from_changelog_stream`` source and a source with
metadata columns keep the node with ``-U`` rows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from changeflow.expressions import Column
from changeflow.plan.nodes import ChangelogNormalize, Filter, PlanNode, Project, Sink, Source
from changeflow.plan.physical import rewrite, with_inputs
from changeflow.plan.rules import Rule
from changeflow.plan.rules.upsert_keys import upsert_keys


def takes_upserts(sink: Sink) -> bool:
    """Whether ``sink`` takes upserts by its key from its input (Flink: it requires ``ONLY_UPDATE_AFTER``)."""
    if not getattr(sink.connector, "takes_upserts", False):
        return False
    keys = upsert_keys(sink.input)
    return not sink.primary_key or (keys is not None and any(set(k) == set(sink.primary_key) for k in keys))


def _relaxed(node: PlanNode, duplicate: bool) -> PlanNode:
    """``node`` (on the way from an upsert-taking sink) with each ChangelogNormalize below it relaxed."""
    if isinstance(node, Project):
        return with_inputs(node, (_relaxed(node.input, duplicate),))
    if isinstance(node, Filter):
        keys = upsert_keys(node.input) or []
        used = {e.name for e in node.predicate.walk() if isinstance(e, Column)}
        if not any(used <= set(k) for k in keys):
            return node  # a non-key filter needs the -U rows (Flink pushes it into the node instead)
        return with_inputs(node, (_relaxed(node.input, duplicate),))
    if not isinstance(node, ChangelogNormalize) or not node.update_before:
        return node
    source = node.input
    removable = (not duplicate and isinstance(source, Source) and source.kind == "connector"
                 and not getattr(source.payload, "metadata", None))
    if removable:
        return source  # the upserts as they are: the sink applies them by its key
    if duplicate:
        return replace(node, update_before=False)
    return node


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: relax the ChangelogNormalize nodes under every sink that takes upserts (streaming plans)."""
    if not settings.streaming:
        return plan
    duplicate = bool(getattr(settings, "cdc_events_duplicate", False))

    def relax(node: PlanNode) -> PlanNode:
        if isinstance(node, Sink) and takes_upserts(node):
            return with_inputs(node, (_relaxed(node.input, duplicate),))
        return node

    return rewrite(plan, relax)


# After the sinks are planned (a materializer before a sink keeps its input as it is), before the
# changelog modes are annotated.
RULE = Rule("normalize_consumers", 11, apply, ())
