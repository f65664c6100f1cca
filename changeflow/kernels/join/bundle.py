"""Mini-batch folding of one join input's bundle, as Flink 2.3's join buffer bundles (FLIP-415).

With ``table.exec.mini-batch.enabled`` Flink's MiniBatchStreamingJoinOperator buffers
each input's records of a bundle per join key and folds them before joining:

* input without a unique key (``InputSideHasNoUniqueKeyBundle``): per join key and
  row value, an accumulating record (+I/+U) and a retracting one (-U/-D) of the same
  row cancel (a new record cancels the most recent opposite one), so a row added and
  removed within the bundle produces nothing;
* input with a unique key (``InputSideHasUniqueKeyBundle`` and
  ``JoinKeyContainsUniqueKeyBundle``): per unique key the bundle keeps at most a
  retraction followed by an accumulation. An accumulation replaces an earlier
  accumulation, a retraction after an accumulation removes both, a retraction
  after a retraction replaces it. A surviving ``retract, accumulate`` pair is joined
  with *suppression*: the other outer side's null-padded row is neither retracted
  nor re-inserted in between.

The result is a list of :class:`Folded` records per join key, in the order the join
processes them (Flink iterates hash maps; changeflow uses first appearance, which is
one of the orders Flink can produce).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from changeflow.kernels.changelog import DELETE, UPDATE_BEFORE


@dataclass
class Record:
    """One input change of a join side: kind, join key tuple, row tuple, ``_seq``."""

    kind: int
    key: tuple
    row: tuple
    seq: int

    @property
    def retracts(self) -> bool:
        return self.kind in (UPDATE_BEFORE, DELETE)


@dataclass
class Folded:
    record: Record
    suppress: bool


def fold_bundle(records: Iterable[Record], unique_key: list[int] | None) -> list[Folded]:
    """The records of one side's bundle that survive folding, in processing order.

    ``unique_key`` holds the positions (in the row tuple) of the side's unique key,
    or is None when the side has none.
    """
    if unique_key is None:
        return _fold_without_unique_key(records)
    return _fold_with_unique_key(records, unique_key)


def _fold_without_unique_key(records: Iterable[Record]) -> list[Folded]:
    groups: dict[tuple, dict[tuple, list[Record]]] = {}
    for record in records:
        pending = groups.setdefault(record.key, {}).setdefault(record.row, [])
        for i in range(len(pending) - 1, -1, -1):
            if pending[i].retracts != record.retracts:
                del pending[i]  # the pair cancels
                break
        else:
            pending.append(record)
    return [Folded(r, False) for rows in groups.values() for pending in rows.values() for r in pending]


def _fold_with_unique_key(records: Iterable[Record], unique_key: list[int]) -> list[Folded]:
    groups: dict[tuple, dict[tuple, list[Record]]] = {}
    for record in records:
        by_unique = groups.setdefault(record.key, {})
        ukey = tuple(record.row[i] for i in unique_key)
        pending = by_unique.setdefault(ukey, [])
        if pending and not pending[-1].retracts:
            pending.pop()
            if record.retracts:  # accumulate then retract: both go
                if not pending:
                    del by_unique[ukey]
                continue
        elif pending and record.retracts:
            pending.pop()  # retract then retract: keep the last
        pending.append(record)
    out: list[Folded] = []
    for by_unique in groups.values():
        for pending in by_unique.values():
            pair = len(pending) == 2 and pending[0].retracts and not pending[1].retracts
            out.extend(Folded(r, pair) for r in pending)
    return out
