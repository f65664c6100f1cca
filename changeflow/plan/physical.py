"""The physical plan: plan nodes annotated by the planner's rules.

A physical plan is the logical tree rebuilt by :func:`changeflow.plan.optimizer.optimize`
with every node's :class:`Traits` filled in. EXPLAIN prints these annotations
and the runtimes read them; nothing downstream derives them again.

Each rule (a module of :mod:`changeflow.plan.rules`) is a pure function from
plan to plan; most only annotate, through :func:`annotate_all`, which rebuilds
the tree bottom-up (children first, so a rule can read its children's traits)
and keeps a node reached by two paths (a self-join's scan) one node.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable

from changeflow.plan.nodes import Join, PlanNode, Source, Union


@dataclass(frozen=True)
class Traits:
    """What the planner decided about one node.

    ``streaming``           the plan runs as a streaming query (else a batch one);
    ``changelog_mode``      the kinds of change the node emits (:mod:`.rules.changelog_mode`);
    ``upsert_keys``         its upsert keys, None for none (:mod:`.rules.upsert_keys`);
    ``unique_key``          a column set unique among its live rows (Flink's join input spec);
    ``row_key``             the unique key a regular join's kernel folds by (None: unknown);
    ``mini_batch``          mini-batch is on for this operator (:mod:`.rules.mini_batch`);
    ``mini_batch_assigner`` the MiniBatchAssigner above a source or a watermark assigner under mini-batch:
                            ``(interval ms, size, mode)``, mode ``ProcTime`` or ``RowTime``;
    ``folds_bundles``       a group aggregation folds each micro-batch per key (:mod:`.rules.agg_phase`);
    ``two_phase``           a group aggregation runs as a local and a global phase;
    ``flush``               the query's flush policy (``execution.max-flush-interval``; streaming only);
    ``buffers``             the node buffers its output per key and flushes it by ``flush`` (:mod:`.rules.buffering`);
    ``output_buffered``     every row the node outputs has passed a flush buffer;
    ``state_ttl_ms``        a one-state operator's state TTL, 0 for none (:mod:`.rules.state_ttl`);
    ``side_ttl_ms``         a regular join's ``(left, right)`` state TTLs;
    ``extra``               annotations of rules that have no field here yet (name, value pairs).
    """

    streaming: bool = True
    changelog_mode: Any = None
    upsert_keys: list[tuple[str, ...]] | None = None
    unique_key: tuple[str, ...] | None = None
    row_key: tuple[str, ...] | None = None
    mini_batch: bool = False
    mini_batch_assigner: tuple[int, int, str] | None = None
    folds_bundles: bool = False
    two_phase: bool = False
    flush: Any = None
    buffers: bool = False
    output_buffered: bool = False
    state_ttl_ms: int | None = None
    side_ttl_ms: tuple[int, int] | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default: Any = None) -> Any:
        """An annotation by name: a field, or one kept in ``extra``."""
        if name in _FIELDS:
            return getattr(self, name)
        return dict(self.extra).get(name, default)

    def describe(self, names: tuple[str, ...] | None = None) -> str:
        """``name=value`` of the annotations (among ``names``) that differ from their defaults."""
        default = Traits()
        items = [(f.name, getattr(self, f.name)) for f in fields(self) if f.name != "extra"] + list(self.extra)
        return ", ".join(f"{name}={_text(value)}" for name, value in items
                         if (names is None or name in names) and value != default.get(name))


_FIELDS = {f.name for f in fields(Traits)} - {"extra"}


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(value) + "]"
    return str(value)


def traits(node: PlanNode) -> Traits:
    """``node``'s annotations; fails for a node the planner has not seen."""
    if node.traits is None:
        raise ValueError(f"{type(node).__name__} is not planned: run changeflow.plan.optimizer.optimize first")
    return node.traits


def is_physical(node: PlanNode) -> bool:
    return node.traits is not None


def with_inputs(node: PlanNode, inputs: tuple[PlanNode, ...]) -> PlanNode:
    """``node`` over new ``inputs`` (same count and order as ``node.inputs``)."""
    if all(a is b for a, b in zip(inputs, node.inputs, strict=True)):
        return node
    if isinstance(node, Join):
        return replace(node, left=inputs[0], right=inputs[1])
    if isinstance(node, Union):
        return replace(node, union_inputs=tuple(inputs))
    if isinstance(node, Source) and not node.boundary:
        return node
    # A DataStream node or job (changeflow.plan.stream_nodes) or a boundary (plan.stream_bridge) rebuilds itself.
    over = getattr(node, "over", None)
    if over is not None:
        return over(inputs)
    return replace(node, input=inputs[0])


def rewrite(plan: PlanNode, fn: Callable[[PlanNode], PlanNode]) -> PlanNode:
    """Rebuild ``plan`` bottom-up: ``fn`` gets each node over its already rewritten inputs."""
    done: dict[int, PlanNode] = {}  # a node reached by two paths stays one node

    def visit(node: PlanNode) -> PlanNode:
        if id(node) not in done:
            done[id(node)] = fn(with_inputs(node, tuple(visit(c) for c in node.inputs)))
        return done[id(node)]

    return visit(plan)


def annotate_all(plan: PlanNode, annotations: Callable[[PlanNode], dict[str, Any]], streams: bool = False) -> PlanNode:
    """``plan`` with the traits ``annotations(node)`` gives each node (its inputs annotated already).

    A DataStream operator (``PlanNode.stream``) is annotated only with ``streams``: the Table API's rules
    leave the DataStream nodes of a job to the DataStream rules, which pass it.
    """
    return rewrite(plan, lambda node: annotate(node, **annotations(node)) if streams or not node.stream else node)


def annotate(node: PlanNode, **values: Any) -> PlanNode:
    """A copy of ``node`` whose traits have ``values`` set."""
    if not values:
        return node
    base = node.traits or Traits()
    extra = {k: v for k, v in values.items() if k not in _FIELDS}
    known = {k: v for k, v in values.items() if k in _FIELDS}
    if extra:
        known["extra"] = tuple({**dict(base.extra), **extra}.items())
    return replace(node, traits=replace(base, **known))


def every_node(plan: PlanNode) -> list[PlanNode]:
    """Every node of ``plan``, each once (a program of both APIs: through its boundaries)."""
    seen: dict[int, PlanNode] = {}
    stack = [plan]
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen[id(n)] = n
            stack.extend(n.inputs)
    return list(seen.values())


def walk(plan: PlanNode):
    """Every node of ``plan``, parents before children (a node reached twice, twice)."""
    yield plan
    for child in plan.inputs:
        yield from walk(child)


__all__ = ["Traits", "annotate", "annotate_all", "every_node", "is_physical", "rewrite", "traits", "walk",
           "with_inputs"]
