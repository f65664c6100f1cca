"""Two-input operators of a stream graph (``DataStream.connect``) on Spark: a
:class:`~changeflow.plan.stream_nodes.CoProcessNode` in a :class:`~.stream_graph.GraphTranslation`.

Keyed (``ConnectedStreams.key_by``): each input's records' ``_value`` gets the
input's mark as first byte (:data:`~changeflow.kernels.keyed.co_process.FIRST`/``SECOND``,
added in Spark's JVM; a control row's null ``_value`` stays null); the two are
unioned and run through one stateful stage (:meth:`~.stream_graph.GraphTranslation.keyed_stage`)
hosting :class:`~changeflow.kernels.keyed.co_process.KeyedCoProcess`, as a keyed
operator over one input does; its local step runs each input's fused chain, ending
with that input's key selector, on the records of that mark
(:class:`~changeflow.kernels.keyed.co_process.MarkedChains`). Its watermark is the minimum of both inputs' (the
stage waits for the watermark assigners on every path below the node), its end of
input the end of both.

Not keyed: each input runs the function's calls for it at the end of its own
chain (:class:`~changeflow.kernels.keyed.co_process.CoSide`), and the two outputs
are unioned; a side output (``get_side_output``) is the two chains keeping that
tag's values; a keyed operator's side outputs travel in its records, marked
(:func:`~changeflow.plan.stream_walks.keyed_side_outputs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.keyed.co_process import FIRST, SECOND, CoCalls, CoSide, KeyedCoProcess, MarkedChains
from changeflow.kernels.keyed.records import VALUE
from changeflow.plan.stream_nodes import CoProcessNode, Op
from changeflow.plan.stream_walks import chain_under, key_op, side_output_ops
from changeflow.runtime.spark.errors import worker_note
from changeflow.runtime.spark.record_sources import RECORDS

if TYPE_CHECKING:
    from changeflow.runtime.spark.stream_graph import GraphTranslation


def translate(job: "GraphTranslation", node: CoProcessNode, side_tag: Any = None) -> DataFrame:
    """The ``(_value, _kind, _seq, _sub)`` records of ``node`` (with ``side_tag``, an ``OutputTag``: that side
    output's records of a node without keys). A keyed node's records hold its side outputs' too, marked
    (:mod:`.stream_graph` splits them)."""
    if not node.keyed:
        return _unkeyed(job, node, side_tag)
    assert side_tag is None, "a keyed operator's side outputs are filters of its records"
    marked, chains = [], []
    for side, (input_node, key) in enumerate(((node.first, node.first_key), (node.second, node.second_key))):
        base, ops = chain_under(input_node)
        chains.append(ChainRunner(ops + [key_op(key, node.name, job.runtime_context)], worker_note))
        mark = F.lit(bytearray(FIRST if side == 0 else SECOND))
        marked.append(job.translate(base).withColumn(VALUE, F.concat(mark, F.col(VALUE))))
    kernel = KeyedCoProcess(CoCalls(node.function, node.kind, node.output_type, node.name), node.name,
                            with_keys=job.control, runtime_context=job.runtime_context,
                            side_tags=job.side_tags.get(node.id))
    # Both inputs' chains run in the stage's one Python call per partition (its local step), by mark.
    return job.keyed_stage(node, marked[0].unionAll(marked[1]), kernel, MarkedChains(*chains))


def _unkeyed(job: "GraphTranslation", node: CoProcessNode, side_tag: Any) -> DataFrame:
    frames = []
    for side, input_node in enumerate(node.inputs):
        base, ops = chain_under(input_node)
        # The chain converts the outputs to the declared type, after picking the main or a side output's.
        calls = CoSide(CoCalls(node.function, node.kind, None, node.name), side)
        ops = ops + [Op("process", calls, f"{node.name} (input {side + 1})", node.output_type,
                        context=job.runtime_context)]
        if side_tag is not None:
            ops = side_output_ops(ops, side_tag)
        frames.append(job.translate(base).mapInPandas(ChainRunner(ops, worker_note), RECORDS))
    return frames[0].unionAll(frames[1])
