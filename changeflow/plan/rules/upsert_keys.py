"""Upsert keys: the column sets by which a node's changelog updates its rows, as Flink derives them.

An *upsert key* of a changelog is a set of columns such that every change
for one value of the key arrives, in order, on one path (so the changes of
one key never overtake each other) and no two live rows share it. Flink
derives them in ``FlinkRelMdUpsertKeys``; the sink uses them to decide
whether it needs the upsert materializer: it does unless some upsert key of
its input lies within the sink's primary key
(:mod:`changeflow.plan.rules.sink_materialize`).

:func:`upsert_keys` returns a list of keys (each a tuple of column names) or
None when the plan proves none. An empty tuple is a key: a global aggregate
has one row, so ``()`` is its key and lies within any primary key.

* a group aggregation: its grouping columns;
* a projection: every input key whose columns all pass through unchanged
  (a renamed column keeps the key; a computed or cast one loses it);
* a filter: its input's keys;
* deduplication (and Top-1): the partition key, also over a retracting input
  (one keyed operator emits every change of a key and shows one row per key);
* Top-N: the input's keys that contain the partition key, plus partition key
  and row number when the row number is selected;
* a join: each side's keys that contain that side's join columns combined
  with the other side's; one side's keys alone when the other side is unique
  on its join columns and the join does not pad the first side with NULLs;
  and, through the equalities of the join condition, the same keys with a
  column replaced by its equal on the other side (where that side is never
  NULL-padded);
* ``UNION ALL`` and sources: none.

>>> from changeflow.common.types import DataTypes as T
>>> from changeflow.plan.nodes import Aggregate, Source
>>> src = Source("t", (("k", T.INT()), ("v", T.INT())), "elements", [])
>>> upsert_keys(Aggregate(src, ("k",), (), (("k", T.INT()),)))
[('k',)]

The rule (:func:`apply`) annotates every node's ``upsert_keys``, its
``unique_key`` (what EXPLAIN's join input specs print, :func:`unique_key`)
and a join input's ``row_key`` (the unique key the join kernel folds a bundle
by, :func:`changeflow.plan.join_builder.unique_key_of`).
"""

from __future__ import annotations

from itertools import product

from changeflow.expressions import Column
from changeflow.plan.event_time import WatermarkAssigner, WindowAggregate
from changeflow.plan.join_builder import unique_key_of
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project, Rank,
                                   Source, UpsertMaterialize)
from changeflow.plan.rules.changelog_mode import source_mode
from changeflow.plan.physical import annotate_all
from changeflow.plan.time_joins import IntervalJoin, TemporalJoin
from changeflow.plan.window_ops import WindowJoin
from changeflow.plan.rules import Rule

Keys = list[tuple[str, ...]]

# Enriching join keys through equalities can multiply them; Flink stops at 128 as well.
_MAX_KEYS = 128


def upsert_keys(node: PlanNode) -> Keys | None:
    """The upsert keys of ``node``'s changelog (column names in its schema), or None if it has none."""
    if isinstance(node, (Aggregate, WindowAggregate)):
        return [node.keys]
    if isinstance(node, (Filter, WatermarkAssigner)):
        return upsert_keys(node.input)
    if isinstance(node, Project):
        return _project_keys(node)
    if isinstance(node, (Deduplicate, ChangelogNormalize)):
        return [node.keys]
    if isinstance(node, Source) and node.primary_key and not source_mode(node).insert_only:
        # A changelog source's changes are keyed by its primary key (Flink's upsert keys of a scan;
        # a sink is planned before the ChangelogNormalize after such a source is inserted).
        return [tuple(node.primary_key)]
    if isinstance(node, Rank):
        return _rank_keys(node)
    if isinstance(node, (IntervalJoin, TemporalJoin, WindowJoin)):
        return None  # an interval or window join is insert-only; a temporal join's keys are not derived (none claimed)
    if isinstance(node, Join):
        return _join_keys(node)
    if isinstance(node, UpsertMaterialize):
        return [node.primary_key]
    return None


def apply(plan: PlanNode, settings=None) -> PlanNode:
    """The rule: annotate every node's ``upsert_keys``, ``unique_key`` and ``row_key``."""
    return annotate_all(plan, lambda node: {"upsert_keys": upsert_keys(node), "unique_key": unique_key(node),
                                            "row_key": unique_key_of(node)})


def unique_key(node: PlanNode) -> tuple[str, ...] | None:
    """A set of columns no two live rows of ``node``'s result share, if the plan proves one.

    A group aggregation is unique on its keys (a global one on no column: one
    row); deduplication on its key; a Top-N with its row number on partition
    key and row number (on the partition key alone when only the first row is
    kept). Projections and filters keep a key whose columns they pass through.
    """
    if isinstance(node, (Aggregate, WindowAggregate, Deduplicate, ChangelogNormalize)):
        return node.keys
    if isinstance(node, Rank):
        if node.rank_end == 1:
            return node.partition_keys
        if node.rank_column is not None:
            return node.partition_keys + (node.rank_column,)
        return None
    if isinstance(node, (Filter, WatermarkAssigner)):
        return unique_key(node.input)
    if isinstance(node, Project):
        keys = unique_key(node.input)
        if keys is None:
            return None
        passed = {e.name: n for n, e in node.exprs if isinstance(e, Column)}
        if all(k in passed for k in keys):
            return tuple(passed[k] for k in keys)
        return None
    return None


def contains_key(keys: Keys | None, columns: tuple[str, ...]) -> bool:
    """Whether some key lies within ``columns`` (Flink: the columns *contain* an upsert key)."""
    return keys is not None and any(set(k) <= set(columns) for k in keys)


def _dedup(keys: Keys) -> Keys:
    out: Keys = []
    seen: set[frozenset] = set()
    for k in keys:
        if frozenset(k) not in seen:
            seen.add(frozenset(k))
            out.append(k)
    return out


def _project_keys(node: Project) -> Keys | None:
    keys = upsert_keys(node.input)
    if keys is None:
        return None
    outputs: dict[str, list[str]] = {}
    for out_name, expr in node.exprs:
        if isinstance(expr, Column):
            outputs.setdefault(expr.name, []).append(out_name)
    mapped: Keys = []
    for key in keys:
        if all(c in outputs for c in key):
            # A column projected twice yields a key through either copy.
            for choice in product(*(outputs[c] for c in key)):
                mapped.append(tuple(choice))
    return _dedup(mapped)[:_MAX_KEYS] if mapped else None


def _rank_keys(node: Rank) -> Keys | None:
    if node.rank_start == 1 and node.rank_end == 1:
        return [node.partition_keys]  # Top-1 is a deduplication: one row per partition
    inputs = [k for k in (upsert_keys(node.input) or []) if set(node.partition_keys) <= set(k)]
    if node.rank_column is None:
        return inputs or None
    return _dedup([node.partition_keys + (node.rank_column,)] + inputs)


def _join_keys(node: Join) -> Keys | None:
    names = node.field_names
    left_width = len(node.left.schema)
    left_out = dict(zip(node.left.field_names, names[:left_width], strict=True))
    right_out = dict(zip(node.right.field_names, names[left_width:], strict=True))
    left_all = upsert_keys(node.left)
    right_all = upsert_keys(node.right)
    # Keys must contain the join columns: the join's input exchange hashes by them.
    left = [tuple(left_out[c] for c in k) for k in left_all or [] if set(node.left_keys) <= set(k)]
    right = [tuple(right_out[c] for c in k) for k in right_all or [] if set(node.right_keys) <= set(k)]
    left_unique = contains_key(left_all, node.left_keys)
    right_unique = contains_key(right_all, node.right_keys)
    nulls_on_left = node.join_type in ("RIGHT", "FULL")
    nulls_on_right = node.join_type in ("LEFT", "FULL")
    keys: Keys = []
    if left_all is not None and right_all is not None:
        keys += [tuple(dict.fromkeys(lk + rk)) for lk, rk in product(left, right)]
    if right_unique and left_all is not None and not nulls_on_left:
        keys += left
    if left_unique and right_all is not None and not nulls_on_right:
        keys += right
    pairs = [(left_out[lk], right_out[rk]) for lk, rk in zip(node.left_keys, node.right_keys, strict=True)]
    return _enrich(_dedup(keys), pairs, not nulls_on_left, not nulls_on_right) or None


def _enrich(keys: Keys, pairs: list[tuple[str, str]], right_to_left: bool, left_to_right: bool) -> Keys:
    """Add the keys obtained by swapping a column for its equal across the join condition.

    A right column may be replaced by its left equal only when the left side is
    never NULL-padded (else the padded rows would collide), and vice versa.
    """
    seen = list(keys)
    queue = list(keys)
    while queue and len(seen) < _MAX_KEYS:
        key = queue.pop(0)
        for left, right in pairs:
            swaps = []
            if right_to_left and right in key:
                swaps.append((right, left))
            if left_to_right and left in key:
                swaps.append((left, right))
            for old, new in swaps:
                candidate = tuple(dict.fromkeys(new if c == old else c for c in key))
                if all(set(candidate) != set(k) for k in seen) and len(seen) < _MAX_KEYS:
                    seen.append(candidate)
                    queue.append(candidate)
    return seen



RULE = Rule("upsert_keys", 40, apply, ("upsert_keys", "unique_key", "row_key"))

__all__ = ["Keys", "apply", "contains_key", "unique_key", "upsert_keys"]
