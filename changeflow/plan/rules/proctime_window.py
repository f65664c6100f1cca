"""What Flink 2.3 refuses over a processing-time window TVF, refused here with its messages.

A window TVF over a ``PROCTIME()`` attribute windows rows by the wall clock when
they arrive (:class:`~changeflow.plan.event_time.ProcessingTimeAssigner`). Flink
aggregates such windows in streaming mode only, and plans no window Top-N,
deduplication or join over them (nor a legacy group window over processing time in batch
mode, refused with its own message); this rule runs after the rules that form those
operators and refuses each with the message Flink raises, naming the attribute.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.event_time import ProcessingTimeAssigner, WindowTableFunction
from changeflow.plan.nodes import PlanNode
from changeflow.plan.physical import walk
from changeflow.plan.rules import Rule
from changeflow.plan.type_inference import PlanError
from changeflow.plan.window_ops import WindowDeduplicate, WindowJoin, WindowRank

_OPERATORS = ((WindowRank, "Window TopN"), (WindowDeduplicate, "Window Deduplication"), (WindowJoin, "Window Join"))


def _proctime_window(node: PlanNode) -> str | None:
    """The processing-time attribute of a window TVF at or below ``node`` (None if it has none)."""
    for below in walk(node):
        if isinstance(below, WindowTableFunction) and isinstance(below.input, ProcessingTimeAssigner):
            return below.time_column
    return None


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: a check; the plan is returned unchanged when nothing is refused."""
    for node in walk(plan) if not settings.streaming else ():
        if (isinstance(node, WindowTableFunction) and isinstance(node.input, ProcessingTimeAssigner)
                and not node.window.fires_at_end):   # a legacy group window's (only those do not fire at end)
            raise PlanError(f"Window can not be defined over a proctime attribute column for batch mode (the "
                            f"group window {node.window.kind} over the PROCTIME() attribute '{node.time_column}')")
    for node in walk(plan):
        if not settings.streaming and isinstance(node, ProcessingTimeAssigner):
            raise PlanError(f"Processing time Window TableFunction is not supported yet (the window over "
                            f"the PROCTIME() attribute '{node.rowtime}' in batch mode; run it in streaming mode)")
        for kind, name in _OPERATORS:
            attribute = _proctime_window(node) if isinstance(node, kind) else None
            if attribute is not None:
                raise PlanError(f"Processing time {name} is not supported yet (over the window of the "
                                f"PROCTIME() attribute '{attribute}')")
    return plan


RULE = Rule("proctime_window", 18, apply, ())  # a check: after window_join (14) and window_rank (16)
