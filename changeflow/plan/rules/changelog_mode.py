"""Changelog-mode inference: which kinds of change each operator can emit.

A source is insert-only unless it declares otherwise (:func:`source_mode`: a
DataStream read with ``from_changelog_stream`` is ``[I,UB,UA,D]``, or
``[I,UA,D]`` in upsert mode; a connector whose ``changelog_mode`` is ``"upsert"``
or ``"all"``, or whose ``changelog`` is true: a changelog format such as
``debezium-json``, ``postgres-cdc``, a Delta table's change data feed).
A ChangelogNormalize turns a source's changes into ``[I,UB,UA,D]``.
Projections and filters keep their input's mode. A group aggregation emits
updates (``-U``/``+U``) and, when its input retracts, deletes (a group can empty).
The kernels use the mode of their input to pick cheaper accumulators: MAX over
insert-only input needs only the current maximum.

The rule (:func:`apply`) annotates every node's ``changelog_mode``.
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.plan.correlate import Correlate
from changeflow.plan.event_time import WatermarkAssigner, WindowAggregate, WindowTableFunction
from changeflow.plan.over import OverAggregate
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project, Rank,
                                   Replicate, Sink, Sort, Source, TableAggregate, Union, UpsertMaterialize, side_inputs)
from changeflow.plan.physical import annotate_all
from changeflow.plan.time_joins import IntervalJoin, TemporalJoin
from changeflow.plan.window_ops import WINDOW_OPERATORS
from changeflow.plan.rules import Rule


@dataclass(frozen=True)
class ChangelogMode:
    """The set of change kinds, written as Flink's EXPLAIN writes it: ``[I,UB,UA,D]``."""

    insert: bool = True
    update_before: bool = False
    update_after: bool = False
    delete: bool = False

    @property
    def insert_only(self) -> bool:
        return not (self.update_before or self.update_after or self.delete)

    def __str__(self) -> str:
        flags = [("I", self.insert), ("UB", self.update_before), ("UA", self.update_after),
                 ("D", self.delete)]
        return "[" + ",".join(name for name, on in flags if on) + "]"


INSERT_ONLY = ChangelogMode()
UPDATES = ChangelogMode(True, True, True, False)
RETRACT = ChangelogMode(True, True, True, True)
UPSERT = ChangelogMode(True, False, True, True)


def source_mode(node: Source) -> ChangelogMode:
    """The changes a source emits: what its DataStream conversion or its connector declares.

    A connector declares a changelog by a ``changelog_mode`` attribute: ``"upsert"``
    (``[I,UA,D]``, keyed by the table's primary key: upsert-kafka) or ``"all"``
    (``[I,UB,UA,D]``: a CDC format); without one it is insert-only.
    """
    payload = node.payload
    if node.kind == "datastream":
        if getattr(payload, "upsert", False):
            return UPSERT
        return RETRACT if payload.changelog else INSERT_ONLY
    if node.kind != "connector":
        return INSERT_ONLY
    declared = str(getattr(payload, "changelog_mode", ""))
    if not declared and getattr(payload, "changelog", False):  # a changelog format, a CDC source, a change feed
        declared = "all"
    return {"upsert": UPSERT, "all": RETRACT}.get(declared, INSERT_ONLY)


def node_mode(node: PlanNode, inputs: list[ChangelogMode]) -> ChangelogMode:
    """The changelog mode ``node`` emits over inputs of ``inputs`` modes (in ``node.inputs`` order)."""
    if isinstance(node, Source):
        return source_mode(node)
    if isinstance(node, ChangelogNormalize):
        # -U with every +U of a key's earlier row (unless its consumer takes upserts); -D with the full row.
        return RETRACT if node.update_before else UPSERT
    if isinstance(node, (Project, Filter, Correlate, Replicate, WatermarkAssigner, WindowTableFunction)):
        return inputs[0]  # a correlate's rows keep the kind of the input change they come from
    if isinstance(node, TemporalJoin):
        return inputs[0]  # each probe row once, with its own kind, when the watermark passes its time
    if isinstance(node, (WindowAggregate, OverAggregate, IntervalJoin, *WINDOW_OPERATORS)):
        # A window's row is emitted once, when the watermark passes its end; an OVER
        # aggregation emits each input row once, with its aggregates; an interval
        # join its pairs once, and an outer row's padding once it can no longer match; a
        # window Top-N, deduplication or join a window's rows once, when the watermark passes its end.
        return INSERT_ONLY
    if isinstance(node, Sort):  # batch (a streaming Sort becomes a Rank: rules/sort_limit.py)
        return inputs[0] if node.fetch is None else RETRACT
    if isinstance(node, Aggregate):
        return UPDATES if inputs[0].insert_only else RETRACT
    if isinstance(node, TableAggregate):
        # A key's earlier rows are retracted with -D and its new rows inserted (GroupTableAggFunction).
        return ChangelogMode(True, False, False, True)
    if isinstance(node, UpsertMaterialize):
        # An upsert stream by primary key: +I for a key's first row, +U for a new
        # latest row, -D when a retraction empties the key (only if the input retracts).
        return ChangelogMode(True, False, True, inputs[0].update_before or inputs[0].delete)
    if isinstance(node, (Join, Deduplicate, Rank, Union, Sink)):
        return _rule(node, inputs)
    raise TypeError(f"no changelog-mode rule for {type(node).__name__}")


def apply(plan: PlanNode, settings=None) -> PlanNode:
    """The rule: annotate every node with its ``changelog_mode``."""
    return annotate_all(plan, lambda node: {
        "changelog_mode": node_mode(node, [c.traits.changelog_mode for c in node.inputs])})


def infer(node: PlanNode, modes: dict[int, ChangelogMode] | None = None) -> dict[int, ChangelogMode]:
    """Map ``id(n)`` to the changelog mode of every node ``n`` of a logical plan (for tests and tools)."""
    modes = {} if modes is None else modes
    for child in side_inputs(node):  # a DataStream read as a table is a source: the Table side ends there
        infer(child, modes)
    modes[id(node)] = node_mode(node, [modes[id(c)] for c in side_inputs(node)])
    return modes


def _rule(node: PlanNode, inputs: list[ChangelogMode]) -> ChangelogMode:
    """Modes of the SQL front end's operators (the join, rank and sink modules may refine them)."""
    all_insert_only = all(m.insert_only for m in inputs)
    if isinstance(node, Union):
        return ChangelogMode(True, any(m.update_before for m in inputs), any(m.update_after for m in inputs),
                             any(m.delete for m in inputs))
    if isinstance(node, Sink):
        return inputs[0]
    if isinstance(node, Join):
        # An inner join forwards its inputs' kinds (a -U/+U of an input becomes -U/+U
        # pairs), so it emits the union of its inputs' modes, as Flink's planner
        # infers; an outer join retracts its null-padded rows with -D when a match
        # arrives and may emit every kind.
        if node.join_type == "INNER":
            return ChangelogMode(True, any(m.update_before for m in inputs), any(m.update_after for m in inputs),
                                 any(m.delete for m in inputs))
        return RETRACT
    if isinstance(node, Deduplicate):
        # Over a retracting input a key's shown row can also be deleted (its rows all retracted).
        if all_insert_only and not node.keep_last and (node.order == "proctime" or node.emit_on_watermark):
            return INSERT_ONLY
        return UPDATES if all_insert_only else RETRACT
    return RETRACT  # Rank: rows enter and leave the top N


def mode_of(node: PlanNode) -> ChangelogMode:
    """The changelog mode of a logical plan's root (materializer insertion runs before annotation)."""
    return infer(node)[id(node)]


RULE = Rule("changelog_mode", 30, apply, ("changelog_mode",))
