"""What the DataStream job graph says about how each node runs: one place for the front end and the runtime.

- :func:`buffer_reason`: whether a node buffers its output under
  ``execution.max-flush-interval`` (FLIP-365: keyed, output idempotent, not
  output-only-after-end-of-input);
- :func:`is_end_of_stream` / :func:`never_fires` / :func:`runs_at_end_of_stream`:
  which nodes run with batch algorithms behind a blocking input edge (FLIP-331);
- :func:`check_end_of_stream_inputs`: such a node must not wait on an unbounded source;
- :func:`runs_as_batch`: a streaming job that may run as one batch job with the same output;
- :func:`describe_execution`: how a node runs, for the execution plan.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.streams.nodes import (CoGroupNode, KeyedNode, KeyedProcessNode, Node, SourceNode, WindowNode,
                                           all_nodes, sources)


def buffering(node: Node, policy: Any) -> Any:
    """The flush policy ``node`` runs with: ``policy`` (a :class:`~changeflow.plan.flush_policy.FlushPolicy`)
    if the operator buffers (:func:`buffer_reason`), else None."""
    return policy if policy is not None and buffer_reason(node) is not None else None


def buffer_reason(node: Node) -> str | None:
    """Why ``node`` buffers under a flush interval (FLIP-365's conditions), or None when it does not."""
    attributes = node.attributes()
    # An operator that outputs only after end of input runs in batch (FLIP-331): nothing to buffer.
    if not node.keyed or not attributes.is_output_idempotent() or attributes.is_output_only_after_end_of_stream():
        return None
    return "output idempotent, keyed"


def is_end_of_stream(node: Node) -> bool:
    """Whether ``node`` outputs only after end of input, so it runs with batch algorithms."""
    return node.attributes().is_output_only_after_end_of_stream()


def never_fires(node: Node) -> bool:
    """Whether ``node`` is a window whose trigger never fires (``GlobalWindows.create()``)."""
    return isinstance(node, (WindowNode, CoGroupNode)) and not node.fires


def runs_at_end_of_stream(node: Node) -> bool:
    """Whether ``node`` runs with batch algorithms in any job: an end-of-input operator or a window that never fires."""
    return is_end_of_stream(node) or never_fires(node)


def is_bounded(source: SourceNode) -> bool:
    """Whether a source ends: collections and text files do, a streaming Spark DataFrame does not."""
    if source.kind == "table":  # a Table converted to a stream ends when its plan's sources do
        from changeflow.plan.boundedness import unbounded_sources
        return not unbounded_sources(source.payload.plan)
    if source.kind == "kafka":  # KafkaSource: bounded with set_bounded
        return source.payload.bounded
    return not (source.kind == "dataframe" and source.payload.isStreaming)


def unbounded_inputs(node: Node) -> list[SourceNode]:
    """The unbounded sources upstream of ``node``."""
    return [s for s in sources(node) if not is_bounded(s)]


def check_end_of_stream_inputs(roots: list[Node]) -> None:
    """Fails, naming the operator and the source, if an end-of-stream operator under ``roots`` has unbounded input.

    Such an operator would wait for an end of input that never comes.
    """
    for node in all_nodes(roots):
        if is_end_of_stream(node):
            unbounded = unbounded_inputs(node)
            if unbounded:
                names = ", ".join(repr(s.name) for s in unbounded)
                raise ValueError(
                    f"operator {node.name!r} outputs only after end of input (is_output_only_after_end_of_stream), "
                    f"but its input comes from the unbounded source {names}, which never ends: use bounded input "
                    "or a window that does not wait for the end of input")


def runs_as_batch(roots: list[Node]) -> bool:
    """Whether a streaming job over ``roots`` may run as one batch job, with the same output.

    So it may when it has an end-of-input operator, every source is bounded,
    and every other operator behaves the same in batch and streaming mode
    (stateless chains, unions, windows): its output then comes after end of
    input anyway and no operator emits running values.
    """
    nodes = all_nodes(roots)
    return (any(is_end_of_stream(n) for n in nodes) and all(is_bounded(s) for r in roots for s in sources(r))
            and not any(isinstance(n, KeyedNode) and not runs_at_end_of_stream(n) for n in nodes))


def has_streaming_state(node: Node) -> bool:
    """Whether the subgraph under ``node`` has operators whose streaming output differs from their batch output.

    Keyed operators emit running values in streaming mode; end-of-input operators (and what is under them) do not.
    """
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n.id in seen or runs_at_end_of_stream(n):
            continue
        seen.add(n.id)
        if isinstance(n, KeyedNode):
            return True
        stack.extend(n.inputs)
    return False


def describe_execution(node: Node) -> str | None:
    """How ``node`` runs, for the execution plan; None for an ordinary operator."""
    if never_fires(node):
        return "never fires (GlobalWindows.create()): consumes its input, emits nothing"
    if not is_end_of_stream(node):
        return None
    if isinstance(node, CoGroupNode) or (isinstance(node, WindowNode) and not node.spec.combinable):
        how = "shuffle by key, sort by key and input order, evaluate each key group once"
    elif isinstance(node, KeyedProcessNode):
        how = "shuffle by key, sort by key and input order, each key's input then its timers"
    else:
        how = "combine per partition, shuffle by key, sort, merge each key's partials once"
    return f"batch algorithm after end of input ({how}); blocking input edge"
