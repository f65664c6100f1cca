"""DataStream operators that run with batch algorithms behind a blocking input edge (FLIP-331), in any job.

An operator whose attributes say ``is_output_only_after_end_of_stream`` (a
window over ``GlobalWindows.create_with_end_of_stream_trigger()``, a windowed
``co_group``/``join``, a keyed function declaring it) needs its whole input
before it emits anything, so it runs with batch algorithms even in a streaming
job; a window whose trigger never fires (``GlobalWindows.create()``) consumes
its input and emits nothing. The rule writes on every DataStream node:

``end_of_stream``     the operator outputs only after end of input;
``never_fires``       a window whose trigger never fires;
``at_end_of_stream``  either: the runtime runs it with batch algorithms
                      (:mod:`changeflow.runtime.spark.end_of_stream`);
``streaming_state``   some operator under it (it included, above the nearest ones
                      running at end of stream) emits running values in streaming
                      mode, so its streaming output differs from its batch output:
                      an end-of-input operator over it runs that part to completion
                      first.

Only ``True`` values are written (read them with ``traits.get(name, False)``).
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule
from changeflow.plan.stream_nodes import CoGroupNode, Node, WindowNode


def is_end_of_stream(node: Node) -> bool:
    """Whether ``node`` outputs only after end of input, so it runs with batch algorithms."""
    return node.attributes().is_output_only_after_end_of_stream()


def never_fires(node: Node) -> bool:
    """Whether ``node`` is a window whose trigger never fires (``GlobalWindows.create()``)."""
    return isinstance(node, (WindowNode, CoGroupNode)) and not node.fires


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: the FLIP-331 annotations of every DataStream node (inputs first, so ``streaming_state``
    reads its inputs')."""
    def annotations(node: PlanNode) -> dict[str, Any]:
        if not isinstance(node, Node):
            return {}
        values = {"end_of_stream": is_end_of_stream(node), "never_fires": never_fires(node)}
        values["at_end_of_stream"] = values["end_of_stream"] or values["never_fires"]
        # A keyed operator (one or two inputs) emits running values; what runs at end of stream (and what is
        # under it) does not.
        values["streaming_state"] = not values["at_end_of_stream"] and (
            node.keyed or any(i.traits.get("streaming_state", False) for i in node.inputs))
        return {name: True for name, value in values.items() if value}

    return annotate_all(plan, annotations, streams=True)


RULE = Rule("end_of_stream", 82, apply, ("end_of_stream", "never_fires", "at_end_of_stream", "streaming_state"))
