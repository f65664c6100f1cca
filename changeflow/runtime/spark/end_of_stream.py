"""Operators that output only after end of input (FLIP-331) run with Spark's batch operators, in any job.

An operator whose attributes say ``is_output_only_after_end_of_stream`` (a
window over ``GlobalWindows.create_with_end_of_stream_trigger()``, a windowed
``co_group``/``join``, a keyed function declaring it) needs its whole input
before it emits anything, so, as FLIP-331 prescribes, its input edge is
*blocking* and the operator runs in batch mode even inside a streaming job:

1. **Input, consumed completely.** The operator's input is bounded (checked at
   planning: :mod:`changeflow.plan.rules.end_of_stream_inputs`).
   When everything upstream behaves the same in batch and streaming mode
   (sources, stateless chains, unions, other end-of-input operators), the input
   is simply translated as a Spark batch DataFrame. When upstream has streaming
   state (a keyed reduce emitting running values, a process function), that
   part runs first as its own Structured Streaming query to completion
   (``availableNow``) into Parquet files, which are then read as a batch.
2. **Batch algorithm.** The fused stateless chain and key selector run in one
   ``mapInPandas`` (the per-partition steps are in :mod:`changeflow.kernels.window.partitions`);
   ``reduce``/``aggregate`` fold each partition into one partial per key there
   (a map-side combine, as ``reduceByKey``); then Spark
   shuffles by key and sorts each partition by key and stamp
   (``sortWithinPartitions``), and one ``mapInPandas`` per partition evaluates
   each key group once (:mod:`changeflow.kernels.window`): no per-record window
   assignment or trigger call, no state store. A co-group shuffles both inputs
   tagged by side and sorts by key, side and stamp.
3. **Output, continuing downstream.** In batch mode the result is just the
   next DataFrame. In a streaming job it is written as Parquet files and read
   back as a bounded file stream (a micro-batch per ``rows_per_batch`` records,
   then an end-of-input control row for each source upstream when control
   rows flow), so later operators (keyed reduce, process, sinks) run in the
   job's single streaming query as they would over any bounded source.

A window whose trigger never fires (``GlobalWindows.create()``) still consumes
its input (upstream functions run, and fail loudly) but emits nothing, in
either mode, also over unbounded input.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS
from changeflow.kernels.order import STAMP
from changeflow.kernels.window.co_group import CoGroupKernel
from changeflow.kernels.window.evaluate import LAST, SIDE, WindowKernel, WindowSpec
from changeflow.kernels.window.partitions import Combine, Discard, FireGroups, Prepare, ProcessGroups
from changeflow.plan import stream_nodes as graph
from changeflow.plan.stream_nodes import CoGroupNode, WindowNode
from changeflow.plan.stream_walks import chain_under, key_op, sources
from changeflow.runtime.spark.batch import BatchTranslator
from changeflow.runtime.spark.control_rows import end_of_input_records
from changeflow.runtime.spark.query_start import start_query
from changeflow.runtime.spark.record_sources import KEYED, RECORDS
from changeflow.runtime.spark.source_files import file_stream, write_end_marker, write_frame_files
from changeflow.runtime.spark.streaming import StreamingTranslator

if TYPE_CHECKING:
    from changeflow.runtime.spark.stream_graph import GraphTranslation

_PARTIALS = T.StructType(KEYED.fields + [T.StructField(name, T.LongType(), False) for name in LAST])


def translate(job: "GraphTranslation", node: graph.Node) -> DataFrame:
    """The ``(_value, _seq, _sub)`` records of ``node`` in ``job`` (see the module docstring)."""
    if node.traits.get("never_fires", False):
        return _discard(job, node)
    if isinstance(node, CoGroupNode):
        output = _co_group(job, node)
    else:
        assert isinstance(node, graph.KeyedNode), node  # at_end_of_stream: a window or a keyed operator
        output = _keyed(job, node)
    if not job.streaming:
        return output
    return _as_bounded_stream(job, node, output)


# --- step 1: the whole input as a batch DataFrame ------------------------------------------------


def _bounded(job: "GraphTranslation", node: graph.Node, key_selector: Any, name: str) -> tuple[DataFrame, "Prepare"]:
    """``node``'s whole output as a batch DataFrame, and the :class:`Prepare` that turns it into keyed values.

    A bounded Spark DataFrame source is read as its own rows: they become
    records (``Row`` values) inside the operator's first ``mapInPandas``, so
    they are never pickled and unpickled in between. Other inputs are record
    frames (``_value``, ``_seq``, ``_sub``).
    """
    base, ops = chain_under(node)
    ops = ops + [key_op(key_selector, name)]
    if isinstance(base, graph.SourceNode) and base.kind == "dataframe":
        df = base.payload
        positioned = df.withColumn("__position", F.monotonically_increasing_id())
        return positioned, Prepare(ops, df.columns, job.source_numbers[base.id])
    if not job.streaming:
        return job.translate(base), Prepare(ops)
    if base.traits.get("streaming_state", False):  # the planner's (plan/rules/end_of_stream.py)
        return _run_to_completion(job, base), Prepare(ops)
    # The same stamps as the streaming job's (a Table plan under it was planned with the program: .jobs).
    return job.part(BatchTranslator(job.spark)).translate(base), Prepare(ops)


def _run_to_completion(job: "GraphTranslation", node: graph.Node) -> DataFrame:
    """Runs the streaming part under ``node`` as its own query to the end of its input; its records as a batch."""
    workdir = os.path.join(job.workdir, f"blocking-{node.id}")
    assert job.settings is not None, "only a streaming job runs a part to completion"
    frame = job.part(StreamingTranslator(job.spark, job.settings, workdir)).frame([node]).select(*RECORD_COLUMNS)
    output = os.path.join(workdir, "output")
    query = start_query(frame.writeStream.format("parquet").option("path", output)
                        .option("checkpointLocation", os.path.join(workdir, "checkpoint"))
                        .trigger(availableNow=True))
    query.awaitTermination()  # raises the query's error (a user function's, named) if it failed
    return job.spark.read.schema(RECORDS).parquet(output)


# --- step 2: batch algorithms ----------------------------------------------------------------------


def _keyed(job: "GraphTranslation", node: graph.KeyedNode) -> DataFrame:
    frame, prepare = _bounded(job, node.input, node.key_selector, node.name)
    if isinstance(node, graph.KeyedProcessNode):
        return _sorted_groups(frame.mapInPandas(prepare.keyed_records, KEYED), [KEY] + STAMP).mapInPandas(
            ProcessGroups(KeyedProcess(node.function, node.name, runtime_context=job.runtime_context,
                                       side_tags=job.side_tags.get(node.id))),
            RECORDS)
    if isinstance(node, WindowNode):
        spec = node.spec
    else:  # a keyed reduce declaring output only after end of input: Flink's batch reduce, one value per key
        spec = WindowSpec("reduce", node.function)
    kernel = WindowKernel(spec, node.name, runtime_context=job.runtime_context)
    if spec.combinable:
        grouped = _sorted_groups(frame.mapInPandas(Combine(prepare, kernel), _PARTIALS), [KEY] + STAMP)
    else:
        grouped = _sorted_groups(frame.mapInPandas(prepare.keyed_records, KEYED), [KEY] + STAMP)
    return grouped.mapInPandas(FireGroups(kernel, grouped.columns), RECORDS)


def _co_group(job: "GraphTranslation", node: CoGroupNode) -> DataFrame:
    sides = []
    for side, (input_node, key) in enumerate(((node.first, node.first_key), (node.second, node.second_key))):
        frame, prepare = _bounded(job, input_node, key, f"{node.name} (input {side + 1})")
        sides.append(frame.mapInPandas(prepare.keyed_records, KEYED).withColumn(SIDE, F.lit(side).cast("byte")))
    grouped = _sorted_groups(sides[0].unionByName(sides[1]), [KEY, SIDE] + STAMP)
    kernel = CoGroupKernel(node.kind, node.function, node.name, node.output_type,
                           runtime_context=job.runtime_context)
    return grouped.mapInPandas(FireGroups(kernel, grouped.columns), RECORDS)


def _sorted_groups(frame: DataFrame, order: list[str]) -> DataFrame:
    """Spark's batch shuffle by key and sort within each partition: every key's group contiguous, in order."""
    return frame.repartition(F.col(KEY)).sortWithinPartitions(*order)


def _discard(job: "GraphTranslation", node: graph.Node) -> DataFrame:
    if isinstance(node, CoGroupNode):
        inputs = [(node.first, node.first_key), (node.second, node.second_key)]
    else:
        assert isinstance(node, WindowNode), node  # never_fires
        inputs = [(node.input, node.key_selector)]
    frames = []
    for input_node, key in inputs:
        base, ops = chain_under(input_node)
        runner = ChainRunner(ops + [key_op(key, node.name, job.runtime_context)])
        frames.append(job.translate(base).mapInPandas(Discard([runner]), RECORDS))
    return frames[0] if len(frames) == 1 else frames[0].unionAll(frames[1])


# --- step 3: back into the streaming job ---------------------------------------------------------


def _as_bounded_stream(job: "GraphTranslation", node: graph.Node, output: DataFrame) -> DataFrame:
    """The operator's batch output as a bounded file stream of the job's streaming query."""
    directory = os.path.join(job.workdir, f"end-of-stream-{node.id}")
    write_frame_files(output, directory, job.rows_per_batch)
    if job.control:
        # The operator's input ended: so did every source upstream of it, as far as downstream can tell.
        ended = sorted(job.source_numbers[s.id] for s in sources(node))
        write_end_marker(directory, end_of_input_records(ended))
    return file_stream(job.spark, directory, RECORDS)
