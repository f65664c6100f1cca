"""Changelog-mode inference: which kinds of change each operator can emit.

A source is insert-only. Projections and filters keep their input's mode. A
group aggregation emits updates (``-U``/``+U``) and, when its input retracts, deletes
(a group can empty). The kernels use the mode of their input to pick cheaper
accumulators: MAX over insert-only input needs only the current maximum.
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.plan.nodes import (Aggregate, Deduplicate, Filter, Join, PlanNode, Project, Rank, Sink, Source,
                                   Union, UpsertMaterialize)


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


def infer(node: PlanNode, modes: dict[int, ChangelogMode] | None = None) -> dict[int, ChangelogMode]:
    """Map ``id(node)`` to its output changelog mode for every node of the plan."""
    modes = {} if modes is None else modes
    for child in node.inputs:
        infer(child, modes)
    if isinstance(node, Source):
        modes[id(node)] = INSERT_ONLY
    elif isinstance(node, (Project, Filter)):
        modes[id(node)] = modes[id(node.inputs[0])]
    elif isinstance(node, Aggregate):
        modes[id(node)] = UPDATES if modes[id(node.input)].insert_only else RETRACT
    elif isinstance(node, UpsertMaterialize):
        # An upsert stream by primary key: +I for a key's first row, +U for a new
        # latest row, -D when a retraction empties the key (only if the input retracts).
        retracts = modes[id(node.input)].update_before or modes[id(node.input)].delete
        modes[id(node)] = ChangelogMode(True, False, True, retracts)
    elif isinstance(node, (Join, Deduplicate, Rank, Union, Sink)):
        modes[id(node)] = _rule(node, [modes[id(c)] for c in node.inputs])
    else:
        raise TypeError(f"no changelog-mode rule for {type(node).__name__}")
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
        if all_insert_only and not node.keep_last:
            return INSERT_ONLY
        return UPDATES if all_insert_only else RETRACT
    return RETRACT  # Rank: rows enter and leave the top N


def mode_of(node: PlanNode) -> ChangelogMode:
    return infer(node)[id(node)]
