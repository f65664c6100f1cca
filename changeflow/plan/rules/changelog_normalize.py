"""ChangelogNormalize insertion: a keyed source's changes normalized to a retract changelog, as Flink's planner.

Flink's ``StreamPhysicalTableSourceScanRule`` puts a ``ChangelogNormalize`` keyed by
the table's primary key right above a source scan when

* the source is an *upsert* source: its changelog has ``+U`` but no ``-U``
  (``upsert-kafka``, ``from_changelog_stream`` with ``ChangelogMode.upsert()``) and a
  primary key; its ``-D`` may hold only the key. A connector's upsert source must
  declare the key (Flink's error); a DataStream's without one passes its changes as
  they are (Flink 2.3 does: a recorded golden);
* or ``table.exec.source.cdc-events-duplicate`` is true and the source has a primary
  key and emits more than inserts (a CDC format, ``from_changelog_stream``): the node
  drops the duplicated events an at-least-once CDC pipeline delivers.

The node takes only ``+U`` updates: over a source with ``-U`` rows Flink plans a
``DropUpdateBefore`` before it (the node's ``drop_update_before``). It keeps the last row
per key and emits ``+I``, ``-U``/``+U`` and full ``-D``
rows (:mod:`changeflow.kernels.normalize`), so every operator above it sees a
retract changelog whatever the source gave. Streaming plans only: Flink's batch
planner reads no changelog source.

Flink 2.3 then drops the node again, or keeps it without ``-U`` rows, where its consumer
takes upserts by the same key (``ChangelogNormalizeRequirementResolver``): that is
:mod:`changeflow.plan.rules.normalize_consumers`, run once the sinks are planned.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import ChangelogNormalize, PlanNode, Source
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.rules.changelog_mode import source_mode
from changeflow.plan.type_inference import PlanError


def needs_normalize(source: Source, cdc_events_duplicate: bool) -> bool:
    """Whether Flink's planner normalizes ``source``'s changelog (a PlanError for an upsert source without a key)."""
    mode = source_mode(source)
    upsert = mode.update_after and not mode.update_before
    if upsert and not source.primary_key and source.kind == "connector":
        raise PlanError(f"Table '{source.name}' produces a changelog stream that contains UPDATE_AFTER but no "
                        f"UPDATE_BEFORE. This requires defining a primary key constraint on the table.")
    return bool(source.primary_key) and (upsert or (cdc_events_duplicate and not mode.insert_only))


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: a ChangelogNormalize over every source that needs one (streaming plans)."""
    if not settings.streaming:
        return plan
    duplicate = bool(getattr(settings, "cdc_events_duplicate", False))

    def normalize(node: PlanNode) -> PlanNode:
        if isinstance(node, Source) and needs_normalize(node, duplicate):
            return ChangelogNormalize(node, tuple(node.primary_key), source_mode(node).update_before)
        return node

    return rewrite(plan, normalize)


RULE = Rule("changelog_normalize", 7, apply, ())  # inserts nodes: before sink_materialize reads changelog modes
