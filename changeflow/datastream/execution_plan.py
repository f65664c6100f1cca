"""``StreamExecutionEnvironment.get_execution_plan()``: the job graph as Flink's JSON plan, with output buffers.

The JSON has Flink's shape (``{"nodes": [{"id", "type", "pact", "contents",
"parallelism", "predecessors": [{"id", "ship_strategy", "side"}]}]}``; a keyed
operator's input is shipped ``HASH``, others ``FORWARD``). Beyond Flink, an
operator that buffers its output under ``execution.max-flush-interval``
(FLIP-365) has an ``"output_buffer"`` entry saying so and why: its output is
idempotent and it is keyed. An operator that outputs only after end of input
(FLIP-331) has ``"output_only_after_end_of_stream": true`` and an
``"execution"`` entry saying it runs with a batch algorithm behind a blocking
input edge; a window that never fires says so there too. Each entry is read
off the job's plan, as the planner annotated it (:func:`planned_job`): the runtime
runs that same plan.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from changeflow.datastream import graph
from changeflow.datastream.cache import CacheNode, plan_entry as cache_plan_entry
from changeflow.plan.optimizer import PlannerSettings, optimize
from changeflow.plan.stream_nodes import KeyedProcessNode, StreamJob
from changeflow.plan.stream_walks import graph_inputs


def planned_job(roots: list[graph.Node], settings: PlannerSettings) -> StreamJob:
    """The job over ``roots`` as the planner annotates it, before its checks (an invalid job's plan still prints)."""
    return optimize(StreamJob(tuple(roots)), settings, until="output_buffer")


def execution_plan(sinks: list[tuple[graph.Node, Any]], parallelism: int, settings: PlannerSettings,
                   flushes: str | None, cached: frozenset[int] = frozenset()) -> str:
    """The JSON plan of the jobs whose sinks are ``sinks`` (node, sink), planned with ``settings``.

    ``flushes`` describes how a buffering operator flushes (from the job's flush
    policy), or is None when no operator buffers (no flush interval, batch mode).
    ``cached`` holds the ids of the cache nodes (``DataStream.cache()``) whose
    cache an earlier job created: they are shown as Flink shows them
    (:func:`changeflow.datastream.cache.plan_entry`).

    >>> src = graph.SourceNode("Collection Source", None, kind="collection", payload=[("a", 1)])
    >>> total = graph.KeyedReduceNode("Keyed Reduce", None, input=src, key_selector=None, function=None)
    >>> from changeflow.plan.flush_policy import FlushPolicy
    >>> settings = PlannerSettings(flush=FlushPolicy(interval_ms=120_000))
    >>> plan = json.loads(execution_plan([(total, None)], 2, settings, "latest record per key, flushed every 2 min"))
    >>> [(n["id"], n["pact"], n["contents"]) for n in plan["nodes"]]
    [(1, 'Data Source', 'Source: Collection Source'), (2, 'Operator', 'Keyed Reduce'), (3, 'Data Sink', 'Sink')]
    >>> plan["nodes"][1]["output_buffer"]
    'latest record per key, flushed every 2 min: output idempotent, keyed'
    >>> plan["nodes"][1]["predecessors"]
    [{'id': 1, 'ship_strategy': 'HASH', 'side': 'second'}]
    """
    ids: dict[int, int] = {}
    nodes: list[dict] = []
    numbers = itertools.count(1)

    def visit(node: graph.Node) -> int:
        if node.id in ids:
            return ids[node.id]
        if isinstance(node, CacheNode):
            ids[node.id] = cache_plan_entry(node, node.id in cached, visit, numbers, nodes, parallelism)
            return ids[node.id]
        # A Table read as a stream is a source, as the job graph Flink prints shows it.
        inputs = [visit(i) for i in graph_inputs(node)]
        ids[node.id] = next(numbers)
        source = isinstance(node, graph.SourceNode)
        name = f"Source: {node.name}" if source else node.name
        entry: dict[str, Any] = {"id": ids[node.id], "type": name, "pact": "Data Source" if source else "Operator",
                                 "contents": name, "parallelism": 1 if source else parallelism}
        if inputs:
            ships = ["HASH" if node.keyed else "FORWARD"] * len(inputs)
            if isinstance(node, graph.CoProcessNode) and node.kind == "broadcast":  # as PyFlink 2.3 prints it
                ships = ["HASH" if node.first_key is not None else "FORWARD", "BROADCAST"]
            entry["predecessors"] = [{"id": i, "ship_strategy": ship, "side": "second"}
                                     for i, ship in zip(inputs, ships, strict=True)]
        why = node.traits.get("buffer_reason")
        if flushes is not None and why is not None:
            entry["output_buffer"] = f"{flushes}: {why}"
        entry.update(end_of_stream_entry(node))
        nodes.append(entry)
        return ids[node.id]

    job = planned_job([node for node, _ in sinks], settings)
    for node, (_, sink) in zip(job.outputs, sinks, strict=True):
        upstream = visit(node)
        name = f"Sink: {_SINK_NAMES.get(type(sink).__name__, type(sink).__name__)}" if sink is not None else "Sink"
        nodes.append({"id": next(numbers), "type": name, "pact": "Data Sink", "contents": name,
                      "parallelism": parallelism,
                      "predecessors": [{"id": upstream, "ship_strategy": "FORWARD", "side": "second"}]})
    return json.dumps({"nodes": nodes}, indent=2)


# Flink's names of the sinks PyFlink's DataStream methods add.
_SINK_NAMES = {"PrintSink": "Print to Std. Out"}


def end_of_stream_entry(node: graph.Node) -> dict[str, Any]:
    """FLIP-331's plan entries of the planned ``node``: ``output_only_after_end_of_stream`` and how it
    ``execution`` runs.

    >>> from changeflow.datastream.functions import ReduceFunction
    >>> class Total(ReduceFunction):
    ...     def reduce(self, a, b): return a + b
    ...     def is_output_only_after_end_of_stream(self): return True
    >>> src = graph.SourceNode("Collection Source", None, kind="collection", payload=[1])
    >>> reduce = graph.KeyedReduceNode("Reduce", None, input=src, key_selector=None, function=Total())
    >>> entry = end_of_stream_entry(planned_job([reduce], PlannerSettings()).outputs[0])
    >>> entry["output_only_after_end_of_stream"], entry["execution"].split(" (")[0]
    (True, 'batch algorithm after end of input')
    """
    how = _execution(node)
    if how is None:
        return {}
    return {"output_only_after_end_of_stream": node.traits.get("end_of_stream", False), "execution": how}


def _execution(node: graph.Node) -> str | None:
    """How the planned ``node`` runs (:mod:`changeflow.plan.rules.end_of_stream`); None for an ordinary operator."""
    if node.traits.get("never_fires", False):
        return "never fires (GlobalWindows.create()): consumes its input, emits nothing"
    if not node.traits.get("end_of_stream", False):
        return None
    if isinstance(node, graph.CoGroupNode) or (isinstance(node, graph.WindowNode) and not node.spec.combinable):
        how = "shuffle by key, sort by key and input order, evaluate each key group once"
    elif isinstance(node, KeyedProcessNode):
        how = "shuffle by key, sort by key and input order, each key's input then its timers"
    else:
        how = "combine per partition, shuffle by key, sort, merge each key's partials once"
    return f"batch algorithm after end of input ({how}); blocking input edge"
