"""The DataStream operator family: a stream graph's operators over the translators' frames.

A DataStream program's graph (:mod:`changeflow.plan.stream_nodes`), planned by
the optimizer's DataStream rules (:mod:`changeflow.plan.rules`), is translated by
the same :class:`~.streaming.StreamingTranslator` (streaming mode) or
:class:`~.batch.BatchTranslator` (batch mode) as a Table plan:
a :class:`GraphTranslation` over either is one more operator family beside the
Table operators (:mod:`.join`, :mod:`.rank`, ...).
Its frames are records: the pickled ``_value`` and the Table path's bookkeeping
``_kind``, ``_seq``, ``_sub`` (:mod:`changeflow.kernels.keyed.records`); typed
columns would need every user function's output type, which PyFlink does not
require. Every Python call handles a whole partition or hash bucket:

- consecutive stateless operators (and the key selector of a following keyed
  operator) run fused in one ``mapInPandas`` (:class:`~changeflow.kernels.chain.ChainRunner`);
- in streaming mode a keyed operator runs its kernel through the translator's
  stateful path (:meth:`~.streaming.StreamingTranslator.stateful`: the fused
  chain is the packing stage's ``local`` step, control rows fan out to every
  bucket, :class:`~.processor.KernelProcessor` sends on the records' columns);
  one the planner marked ``buffers`` (:mod:`changeflow.plan.rules.output_buffer`) buffers its output for
  ``execution.max-flush-interval`` through
  :class:`~changeflow.kernels.keyed.buffered.ChangelogRecords`, in the same
  flush buffer as the Table API's group aggregation (:mod:`.flush`);
- in batch mode a keyed operator shuffles by key and folds each partition's
  keys in one ``mapInPandas`` (:class:`BatchKeyed`), as Flink's batch execution does.

Sources become records in :mod:`.record_sources`; operators that output only
after end of input (FLIP-331) run in :mod:`.end_of_stream`; a cache node
(``DataStream.cache()``) is its input's persisted records (:mod:`.stream_cache`).
The job runner (:meth:`~.jobs.SparkJobs.run_datastream`) makes every sink one
branch of a single query, told apart by a ``_sink`` column.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.contract import Kernel
from changeflow.kernels.keyed.buffered import OUTPUT_COLUMNS, ChangelogRecords
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS, SIDE, VALUE, side_mark
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.kernels.keyed.timestamps import TimestampAssigning
from changeflow.kernels.window.event_time import LATE
from changeflow.kernels.window.processing_time import window_kernel
from changeflow.plan import stream_nodes as graph
from changeflow.plan.flush_policy import FlushPolicy
from changeflow.plan.stream_caches import CacheRegistry
from changeflow.plan.stream_nodes import CacheNode, EventWindowNode, LateDataNode, SideOutputNode, TimestampsNode
from changeflow.plan.stream_walks import (all_nodes, chain_under, key_op, keyed_side_outputs, side_output_ops,
                                          sources, timestamp_assigners, unassigned_paths)
from changeflow.runtime.spark import end_of_stream, two_input
from changeflow.runtime.spark.batch import BatchTranslator
from changeflow.runtime.spark.control_rows import (CONTROL, END_OF_INPUT, MAX_ASSIGNERS, WATERMARK, is_control,
                                                   without_control)
from changeflow.runtime.spark.errors import worker_note
from changeflow.runtime.spark.record_sources import KEYED, RECORDS, source_records
from changeflow.runtime.spark.stream_cache import JobCaches
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator

SINK = "_sink"
_OBJECT = {KEY: "object", VALUE: "object", KIND: "int8", SEQ: "int64", SUB: "int64"}


class GraphTranslation:
    """Translates the stream graph under a job's sinks into records, over ``host``'s frames.

    ``host`` is the :class:`~.streaming.StreamingTranslator` (streaming mode: its
    settings, working directory and stateful path) or the
    :class:`~.batch.BatchTranslator` (batch mode). ``source_numbers`` numbers the
    job's sources (given when this translates a part of a job: the same stamps).
    """

    def __init__(self, host: StreamingTranslator | BatchTranslator, runtime_context: Any = None,
                 caches: CacheRegistry | None = None,
                 table_settings: Callable[[], StreamingSettings] | None = None,
                 source_numbers: dict[int, int] | None = None) -> None:
        self.host = host
        self.spark = host.spark
        self.streaming = isinstance(host, StreamingTranslator)
        self.settings: StreamingSettings | None = host.settings if isinstance(host, StreamingTranslator) else None
        # execution.max-flush-interval & co, and source records per micro-batch: streaming only.
        self.flush: FlushPolicy | None = self.settings.flush if self.settings is not None else None
        self.rows_per_batch = self.settings.rows_per_batch if self.settings is not None else 0
        self.workdir = host.workdir if isinstance(host, StreamingTranslator) else ""
        # Builds the context user functions' open() gets: the API's RuntimeContext, given by the front end.
        self.runtime_context = runtime_context
        # The Table runtime's settings for Table plans converted inside the job (.bridge).
        self.table_settings = table_settings
        self.caches = JobCaches(caches)  # DataStream.cache(): see .stream_cache
        self.source_numbers: dict[int, int] = source_numbers if source_numbers is not None else {}
        self._frames: dict[int, DataFrame] = {}
        # Keyed operators' outputs: an event-time window's is read twice (main output, late data), a keyed
        # process function's once more per side output read.
        self._keyed_frames: dict[int, DataFrame] = {}
        # The side outputs read from each keyed operator (stream_walks.keyed_side_outputs), set by frame().
        self.side_tags: dict[int, dict[str, Any]] = {}
        self.control = False
        # Set by a Table query with control rows reading this graph as a table (bridge.stream_changes): the
        # graph's end-of-input rows reach its output, so the query's event-time operators see the input end.
        self.end_of_input_out = False
        self.flush_signal_dirs: list[str] = host.flush_signal_dirs if isinstance(host, StreamingTranslator) else []

    def part(self, host: StreamingTranslator | BatchTranslator) -> "GraphTranslation":
        """A translation of a part of this job over ``host`` (another mode or query), with the same stamps."""
        return GraphTranslation(host, self.runtime_context, None, self.table_settings, self.source_numbers)

    def frame(self, nodes: list[graph.Node]) -> DataFrame:
        """The job's records for the sinks over ``nodes``: ``(_value, _kind, _seq, _sub, _sink)``, ``_sink`` the
        node's index.

        ``nodes`` are planned (a :class:`~changeflow.plan.stream_nodes.StreamJob`'s outputs, or the graph under a
        DataStream read as a table, planned with its query); the translation reads what the planner wrote on
        them and plans nothing. Bounded sources read
        as streams are written under the host's working directory; in streaming mode the result is a
        streaming DataFrame the caller may run with any trigger (the job runner uses ``availableNow``).
        """
        unplanned = [n.name for n in nodes if n.traits is None]
        if unplanned:  # the planner decides; the translation only reads (plan/optimizer.py)
            raise ValueError(f"the stream graph under {unplanned} is not planned: optimize its StreamJob first")
        for node in nodes:
            for source in sources(node):
                self.source_numbers.setdefault(source.id, len(self.source_numbers))
        # Control records flow through the query only when some operator buffers its output or
        # event time is used (watermarks, and the end of input that fires every event-time window
        # and every event-time timer of a keyed process function, of one input or two, as in Flink).
        self.control = self.streaming and (self.end_of_input_out or any(
            n.traits.buffers or isinstance(n, (TimestampsNode, EventWindowNode, graph.KeyedProcessNode))
            or (isinstance(n, graph.CoProcessNode) and n.keyed) for n in all_nodes(nodes)))
        if isinstance(self.host, StreamingTranslator):
            self.host.control = self.control  # the stateful path's packing and processor follow it
        # Each assign_timestamps_and_watermarks's number, by its place in the graph (stable on resume), and
        # one more for the paths without one (.control_rows: a watermark record's _kind holds the number).
        assigners = sorted((n for n in all_nodes(nodes) if isinstance(n, TimestampsNode)), key=lambda n: n.id)
        if len(assigners) >= MAX_ASSIGNERS:
            raise NotImplementedError(f"a job with more than {MAX_ASSIGNERS - 1} assign_timestamps_and_watermarks "
                                      f"({len(assigners)}) is not supported")
        self._assigner_ids = {n.id: i for i, n in enumerate(assigners)}
        self.side_tags = keyed_side_outputs(all_nodes(nodes))
        self._no_assigner = len(assigners)
        frames = [self._records(self.translate(node)).select(*RECORD_COLUMNS, F.lit(i).alias(SINK))
                  for i, node in enumerate(nodes)]
        return functools.reduce(DataFrame.unionAll, frames)

    def _records(self, frame: DataFrame) -> DataFrame:
        """``frame`` without control rows (they never reach a sink), but its end-of-input rows when asked."""
        if self.end_of_input_out:
            return frame.where(~is_control(F.col(KIND)) | ((F.col(KIND) == CONTROL) & (F.col(SEQ) == END_OF_INPUT)))
        return without_control(frame) if self.control else frame

    # --- translation --------------------------------------------------------------------
    def translate(self, node: graph.Node) -> DataFrame:
        """A DataFrame of ``(_value, _kind, _seq, _sub)`` records for ``node``."""
        if node.id not in self._frames:
            self._frames[node.id] = self._translate(node)
        return self._frames[node.id]

    def _translate(self, node: graph.Node) -> DataFrame:
        # A keyed operator with side outputs runs once; its main output and each side output filter its records.
        if isinstance(node, SideOutputNode) and node.input.id in self.side_tags:
            return side_records(self._once(node.input), node.tag.tag_id)
        if node.id in self.side_tags:
            return main_records(self._once(node))
        return self._operator(node)

    def _once(self, node: graph.Node) -> DataFrame:
        """``node``'s records as its operator outputs them (a keyed operator's main and side outputs together)."""
        if node.id not in self._keyed_frames:
            self._keyed_frames[node.id] = self._operator(node)
        return self._keyed_frames[node.id]

    def _operator(self, node: graph.Node) -> DataFrame:
        if node.traits.get("at_end_of_stream", False):  # FLIP-331: batch algorithms, also in streaming jobs
            return end_of_stream.translate(self, node)
        if isinstance(node, graph.SourceNode):
            return source_records(self, node)
        if isinstance(node, graph.Stateless):
            base, ops = chain_under(node)
            return self.translate(base).mapInPandas(ChainRunner(ops, worker_note), RECORDS)
        if isinstance(node, graph.UnionNode):
            return functools.reduce(DataFrame.unionAll, [self.translate(s) for s in node.streams])
        if isinstance(node, TimestampsNode):
            base, ops = chain_under(node.input)
            kind = WATERMARK + self._assigner_ids[node.id] if self.control else None  # batch: no control rows
            runner = TimestampAssigning(node.strategy, kind,
                                        ChainRunner(ops, worker_note) if ops else None, node.name,
                                        self.runtime_context)
            return self.translate(base).mapInPandas(runner, RECORDS)
        if isinstance(node, EventWindowNode):  # its main output: the late records go to LateDataNode
            return self._keyed(node).where(is_control(F.col(KIND)) | ~_late())  # a control row's _value is null
        if isinstance(node, LateDataNode):
            assert isinstance(node.input, EventWindowNode)  # side_output_late_data's window (datastream.side_output)
            raw = self._keyed(node.input)
            late = _late()
            restored = F.when(late, F.col(VALUE).substr(F.lit(2), F.lit(2**31 - 1))).otherwise(F.col(VALUE))
            return raw.where(late | is_control(F.col(KIND))).select(restored.alias(VALUE), KIND, SEQ, SUB)
        if isinstance(node, graph.KeyedNode):
            return self._keyed(node)
        if isinstance(node, SideOutputNode) and isinstance(node.input, graph.CoProcessNode):
            return two_input.translate(self, node.input, node.tag)
        if isinstance(node, SideOutputNode):
            base, ops = chain_under(node.input)
            return self.translate(base).mapInPandas(ChainRunner(side_output_ops(ops, node.tag), worker_note), RECORDS)
        if isinstance(node, graph.CoProcessNode):
            return two_input.translate(self, node)
        if isinstance(node, CacheNode):
            if self.streaming:
                raise RuntimeError(f"{node.name}: DataStream.cache() is supported in batch mode only")
            return self.caches.translate(node, lambda: self.translate(node.input))
        raise TypeError(f"no Spark translation for {type(node).__name__}")

    def _keyed(self, node: graph.KeyedNode) -> DataFrame:
        if node.id not in self._keyed_frames:
            self._keyed_frames[node.id] = self._keyed_frame(node)
        return self._keyed_frames[node.id]

    def _keyed_frame(self, node: graph.KeyedNode) -> DataFrame:
        base, ops = chain_under(node.input)
        runner = ChainRunner(ops + [key_op(node.key_selector, node.name, self.runtime_context)], worker_note)
        control = self.control
        context = self.runtime_context
        if isinstance(node, EventWindowNode):
            kernel: Any = window_kernel(node.spec, node.windows, node.name, make_window=node.make_window,
                                        lateness=node.lateness, late_tag=node.late_tag and node.late_tag.tag_id,
                                        trigger=node.trigger, runtime_context=context)
        elif isinstance(node, graph.KeyedReduceNode):
            kernel = KeyedReduce(node.function, node.name, with_keys=control, runtime_context=context)
        else:
            kernel = KeyedProcess(node.function, node.name, with_keys=control, runtime_context=context,
                                  side_tags=self.side_tags.get(node.id))
        return self.keyed_stage(node, self.translate(base), kernel, runner,
                                changelog=not isinstance(node, EventWindowNode))  # a window's records: no buffer

    def keyed_stage(self, node: graph.Node, child: DataFrame, kernel: Any, runner: Any,
                    changelog: bool = True) -> DataFrame:
        """The records of keyed ``node`` running ``kernel`` over ``child``: ``runner`` (a :class:`ChainRunner`, its
        chain and key selector, or one with its ``process`` and call) makes ``child``'s records keyed records.
        ``changelog``: in streaming mode the kernel's records may be buffered (:class:`ChangelogRecords`)."""
        if not isinstance(self.host, StreamingTranslator):
            keyed = child.mapInPandas(runner, KEYED).repartition(F.col(KEY))
            return keyed.mapInPandas(BatchKeyed(kernel), RECORDS)
        control = self.control
        flush = self.flush if control and node.traits.buffers else None
        if control and changelog:
            kernel = ChangelogRecords(kernel)
        upstream = frozenset(self.source_numbers[s.id] for s in sources(node))
        # The translator's stateful path, as every Table operator's; the kernel's records go out without the key.
        return self.host.stateful(child, kernel, [KEY], _OBJECT, [(c, None) for c in OUTPUT_COLUMNS], runner,
                                  idempotent_output="append", flush=flush, sources=upstream,
                                  watermarks=self._watermarks(node), output_struct=RECORDS,
                                  emit_columns=RECORD_COLUMNS)

    def _watermarks(self, node: graph.Node) -> frozenset:
        """The watermark ids a keyed operator waits for: the nearest assigner on every path below it, and,
        when a path has none, one that never comes (its watermark stays Long.MIN_VALUE until the end of input)."""
        ids = {self._assigner_ids[a.id] for a in timestamp_assigners(node)}
        if ids and unassigned_paths(node):
            ids.add(self._no_assigner)
        return frozenset(ids)


def _late() -> Any:
    """Whether a record of an event-time window's output is a late record bound for the side output."""
    return F.hex(F.col(VALUE).substr(F.lit(1), F.lit(1))) == F.lit(LATE.hex().upper())


def main_records(records: DataFrame) -> DataFrame:
    """A keyed operator's main output: its records but those marked for a side output (control rows pass)."""
    return records.where(is_control(F.col(KIND)) | (F.col(VALUE).substr(F.lit(1), F.lit(1)) != F.lit(bytearray(SIDE))))


def side_records(records: DataFrame, tag_id: str) -> DataFrame:
    """A keyed operator's side output ``tag_id``: its records marked so (the mark taken off), and control rows."""
    mark = side_mark(tag_id)
    ours = F.col(VALUE).substr(F.lit(1), F.lit(len(mark))) == F.lit(bytearray(mark))
    restored = F.when(ours, F.col(VALUE).substr(F.lit(len(mark) + 1), F.lit(2**31 - 1))).otherwise(F.col(VALUE))
    return records.where(ours | is_control(F.col(KIND))).select(restored.alias(VALUE), KIND, SEQ, SUB)


class BatchKeyed:
    """Batch mode: a partition holds every record of its keys; the kernel's batch algorithm folds them.

    ``process_bounded`` (the kernel contract): a reduce emits each key's final
    value, a ``KeyedProcessFunction`` its outputs and then every timer of the key.
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def __call__(self, frames: Any):
        parts = [f for f in frames if len(f)]
        if not parts:
            return
        batch = pd.concat(parts, ignore_index=True)
        batch.columns = [KEY] + RECORD_COLUMNS
        yield self.kernel.process_bounded(batch)
