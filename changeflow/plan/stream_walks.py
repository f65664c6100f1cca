"""Walks over the DataStream job graph (:mod:`changeflow.plan.stream_nodes`): sources, every node, fused chains.

No Spark and no API import: the planner's DataStream rules and the runtime read the graph through these.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import every_node
from changeflow.plan.stream_nodes import Node, Op, SideOutputNode, SourceNode, Stateless, TimestampsNode

_N = TypeVar("_N", bound=Node)


def graph_inputs(node: Node) -> list[Node]:
    """``node``'s inputs in the graph: none for a Table converted to a stream, a source whose input is a Table plan."""
    return [] if node.boundary else node.inputs


def timestamp_assigners(node: Node) -> list[TimestampsNode]:
    """The nearest ``assign_timestamps_and_watermarks`` below ``node`` on each path (each once)."""
    return _nearest(node.inputs, TimestampsNode)


def unassigned_paths(node: Node) -> bool:
    """Whether some path from ``node`` down to a source meets no ``assign_timestamps_and_watermarks``."""
    if isinstance(node, TimestampsNode):
        return False
    if isinstance(node, SourceNode):
        return True
    return any(unassigned_paths(i) for i in node.inputs)


def sources(node: Node) -> list[SourceNode]:
    """Every source under ``node``, each once, in first-visit order (a Table converted to a stream is one)."""
    return _nearest([node], SourceNode)


def _nearest(roots: list[Node], kind: type[_N]) -> list[_N]:
    """The nearest node of ``kind`` at or below each of ``roots`` on every path, each once, in first-visit order."""
    seen: dict[int, _N] = {}

    def visit(n: Node) -> None:
        if isinstance(n, kind):
            seen.setdefault(n.id, n)
            return
        for i in graph_inputs(n):
            visit(i)

    for root in roots:
        visit(root)
    return list(seen.values())


def all_nodes(roots: list[Node]) -> list[Node]:
    """Every node under ``roots``, each once (down to the sources: not into a Table plan read as a stream)."""
    seen: dict[int, Node] = {}
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.id not in seen:
            seen[n.id] = n
            stack.extend(graph_inputs(n))
    return list(seen.values())


def chain_under(node: Node) -> tuple[Node, list[Op]]:
    """The first non-stateless node under ``node`` and the stateless ops above it, bottom up (one fused chain).

    >>> src = SourceNode("src", None)
    >>> a = Stateless("a", None, input=src, op=Op("map", str, "a"))
    >>> top = Stateless("b", None, input=a, op=Op("map", str, "b"))
    >>> base, ops = chain_under(top)
    >>> base is src, [op.name for op in ops]
    (True, ['a', 'b'])
    """
    ops: list[Op] = []
    while isinstance(node, Stateless):
        ops.append(node.op)
        node = node.input
    return node, ops[::-1]


def key_op(key_selector: Any, operator: str, context: Any = None) -> Op:
    """The op running ``key_selector`` at the end of a chain feeding the keyed operator named ``operator``;
    ``context`` builds the context a KeySelector's ``open()`` gets."""
    return Op("key", key_selector, f"KeySelector of {operator}", context=context)


def side_output_ops(ops: list[Op], tag: Any) -> list[Op]:
    """The chain ``ops`` (ending with the ProcessFunction) rewritten to yield ``tag``'s values, typed by the tag."""
    last = ops[-1]
    side = [replace(last, side_tag=tag.tag_id, output_type=tag.type_info, name=f"{last.name} side output {tag.tag_id}")]
    return ops[:-1] + side


def keyed_side_outputs(nodes: list[Node]) -> dict[int, dict[str, Any]]:
    """The side outputs read from keyed operators among ``nodes`` (a ``KeyedProcessFunction``'s or a
    ``KeyedCoProcessFunction``'s): by operator node id, each tag id -> the tag's ``TypeInformation``.

    A keyed operator emits its side outputs' records in its one output, marked, and the
    main output and every side output are filters of it (``runtime/spark/stream_graph.py``).
    """
    tags: dict[int, dict[str, Any]] = {}
    for n in nodes:
        if isinstance(n, SideOutputNode) and n.input is not None and n.input.keyed:
            tags.setdefault(n.input.id, {})[n.tag.tag_id] = n.tag.type_info
    return tags


def graph_nodes(plan: PlanNode) -> list[Node]:
    """Every DataStream node under ``plan`` (a job or a Table plan), each once, on both sides of a boundary."""
    return [n for n in every_node(plan) if isinstance(n, Node)]
