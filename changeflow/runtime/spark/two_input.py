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

Broadcast (``first.connect(second.broadcast(descriptor))``): the same stage,
hosting :class:`~changeflow.kernels.keyed.broadcast.BroadcastProcess`; its local
step (:class:`~changeflow.kernels.keyed.broadcast.BroadcastChains`) copies each
broadcast record to every bucket, under a routing key whose hash lands there
(:func:`routes`), so each bucket keeps the broadcast state in its state store.
In batch mode the records are placed by a shuffle of their own: ``first``'s by the
hash of their key, each broadcast record copied to every partition (:func:`_broadcast_batch`).

Not keyed: each input runs the function's calls for it at the end of its own
chain (:class:`~changeflow.kernels.keyed.co_process.CoSide`), and the two outputs
are unioned; a side output (``get_side_output``) is the two chains keeping that
tag's values; a keyed operator's side outputs travel in its records, marked
(:func:`~changeflow.plan.stream_walks.keyed_side_outputs`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.keyed.broadcast import (QUIET, BroadcastCalls, BroadcastChains, BroadcastProcess, SpreadKey,
                                                routing_key)
from changeflow.kernels.keyed.co_process import FIRST, SECOND, CoCalls, CoSide, KeyedCoProcess, MarkedChains
from changeflow.kernels.keyed.records import KEY, VALUE
from changeflow.plan.stream_nodes import CoProcessNode, Op
from changeflow.plan.stream_walks import chain_under, key_op, side_output_ops
from changeflow.runtime.spark.buckets import bucket_ids
from changeflow.runtime.spark.errors import worker_note
from changeflow.runtime.spark.packing import bucket_index
from changeflow.runtime.spark.record_sources import KEYED, RECORDS

if TYPE_CHECKING:
    from changeflow.runtime.spark.stream_graph import GraphTranslation


def translate(job: "GraphTranslation", node: CoProcessNode, side_tag: Any = None) -> DataFrame:
    """The ``(_value, _kind, _seq, _sub)`` records of ``node`` (with ``side_tag``, an ``OutputTag``: that side
    output's records of a node without keys). A keyed node's records hold its side outputs' too, marked
    (:mod:`.stream_graph` splits them)."""
    if not node.keyed:
        return _unkeyed(job, node, side_tag)
    assert side_tag is None, "a keyed operator's side outputs are filters of its records"
    broadcast = node.kind == "broadcast"
    # A stream without keys connected to a broadcast stream is spread over the buckets by a hash of its records;
    # the broadcast records' keys are replaced by the routing keys (BroadcastChains).
    keys = (node.first_key if node.first_key is not None else SpreadKey(), SpreadKey()) if broadcast else \
        (node.first_key, node.second_key)
    marked, chains = [], []
    for side, (input_node, key) in enumerate(zip((node.first, node.second), keys, strict=True)):
        base, ops = chain_under(input_node)
        chains.append(ChainRunner(ops + [key_op(key, node.name, job.runtime_context)], worker_note))
        mark = F.lit(bytearray(FIRST if side == 0 else SECOND))
        marked.append(job.translate(base).withColumn(VALUE, F.concat(mark, F.col(VALUE))))
    both = marked[0].unionAll(marked[1])
    side_tags = job.side_tags.get(node.id)
    if not broadcast:
        kernel = KeyedCoProcess(CoCalls(node.function, node.kind, node.output_type, node.name), node.name,
                                with_keys=job.control, runtime_context=job.runtime_context, side_tags=side_tags)
        # Both inputs' chains run in the stage's one Python call per partition (its local step), by mark.
        return job.keyed_stage(node, both, kernel, MarkedChains(*chains))
    calls = BroadcastCalls(node.function, node.output_type, node.name, node.state_handles,
                           keyed=node.first_key is not None)
    broadcasting = BroadcastProcess(calls, node.name, with_keys=job.control, runtime_context=job.runtime_context,
                                    side_tags=side_tags)
    if job.settings is None:
        return _broadcast_batch(job, both, broadcasting, BroadcastChains(*chains, routes=None))
    return job.keyed_stage(node, both, broadcasting, BroadcastChains(*chains, routes=routes(job.settings.buckets)))


@lru_cache(maxsize=None)
def routes(buckets: int) -> list[bytes]:
    """For each bucket ``0..buckets-1`` of a stateful stage, a routing key the packing sends there.

    >>> keys = routes(4)
    >>> [int(b) for b in bucket_index(pd.DataFrame({KEY: np.asarray(keys, dtype=object)}), [KEY], 4)]
    [0, 1, 2, 3]
    """
    found: dict[int, bytes] = {}
    start = 0
    while len(found) < buckets:  # each candidate hits a given bucket with probability 1/buckets
        candidates = [routing_key(i) for i in range(start, start + 8 * buckets)]
        frame = pd.DataFrame({KEY: np.asarray(candidates, dtype=object)})
        for key, bucket in zip(candidates, bucket_index(frame, [KEY], buckets), strict=True):
            found.setdefault(int(bucket), key)
        start += 8 * buckets
    return [found[b] for b in range(buckets)]


def _broadcast_batch(job: "GraphTranslation", both: DataFrame, kernel: BroadcastProcess,
                     local: BroadcastChains) -> DataFrame:
    """Batch mode: the other input's records partitioned by the hash of their key, each broadcast record copied to
    every partition (the copy in the first emitting), then the kernel's batch algorithm per partition."""
    from changeflow.runtime.spark.stream_graph import BatchKeyed  # it imports this module

    partitions = int(job.spark.conf.get("spark.sql.shuffle.partitions") or "200")
    # Partition p holds the rows whose _part is ids[p] (Spark's hash of ids[p] is p modulo the partitions).
    ids = [int(i) for i in bucket_ids(partitions)]
    id_array = F.array(*[F.lit(i).cast("long") for i in ids])
    keyed = both.mapInPandas(local, KEYED)
    rule = F.col(VALUE).substr(F.lit(1), F.lit(1)) == F.lit(bytearray(SECOND))
    main = keyed.where(~rule).withColumn("_part", F.element_at(id_array, F.pmod(F.hash(F.col(KEY)), F.lit(partitions))
                                                               + F.lit(1)))
    copies = keyed.where(rule).withColumn("_part", F.explode(id_array))
    quiet = F.concat(F.lit(bytearray(QUIET)), F.col(VALUE).substr(F.lit(2), F.lit(2**31 - 1)))
    copies = copies.withColumn(VALUE, F.when(F.col("_part") == F.lit(ids[0]), F.col(VALUE)).otherwise(quiet))
    placed = main.unionByName(copies).repartition(partitions, F.col("_part")).drop("_part")
    return placed.mapInPandas(BatchKeyed(kernel), RECORDS)


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
