"""Table <-> DataStream on Spark: the one place the two encodings meet.

- :func:`table_records`: a graph :class:`~changeflow.plan.stream_nodes.TableNode`
  (``to_data_stream``, ``to_changelog_stream``, ``to_retract_stream``,
  ``to_append_stream``) is its input, the Table plan planned with the job
  (:mod:`changeflow.plan.stream_bridge`), translated by the Table runtime
  (:class:`~.streaming.StreamingTranslator` in streaming mode,
  :class:`~.batch.BatchTranslator` in batch mode) inside the DataStream job's
  query, its change rows converted to records in one ``mapInArrow``.
- :func:`stream_changes` / :func:`batch_changes`: a plan ``StreamSource``
  (``from_data_stream``, ``from_changelog_stream``, ``create_temporary_view`` of
  a stream) is its input, the stream graph planned with the query, translated by a
  :class:`~.stream_graph.GraphTranslation` inside the Table job's query, its records
  converted to typed change rows in one ``mapInArrow``.

So a program mixing both APIs runs as one Structured Streaming query (streaming)
or one Spark batch job; a conversion nests inside another as deep as the program
does. The row conversions and the mapping of a change's ``_seq``/``_sub`` to and
from a record's (order is kept; ``_kind`` is the Row's RowKind) are
:mod:`changeflow.kernels.bridge`. ``mapInArrow`` rather than ``mapInPandas``:
the typed columns cross exactly as Arrow types them (pandas would turn a
nullable INT column into floats).
"""

from __future__ import annotations

import functools
import os

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from changeflow.kernels.bridge import ChangesToRecords, RecordsToChanges
from changeflow.kernels.changelog import CONTROL, KIND, SEQ, SUB
from changeflow.kernels.keyed.records import RECORD_COLUMNS
from changeflow.plan.nodes import Source
from changeflow.plan.stream_bridge import StreamSource
from changeflow.plan.stream_nodes import TableNode
from changeflow.plan.stream_walks import sources
from changeflow.runtime.spark.batch import BatchTranslator
from changeflow.runtime.spark.control_rows import END_OF_INPUT, source_id
from changeflow.runtime.spark.record_sources import RECORDS
from changeflow.runtime.spark.spark_types import to_spark
from changeflow.runtime.spark.stream_graph import GraphTranslation
from changeflow.runtime.spark.streaming import StreamingTranslator

_BATCH_ONLY_INSERTS = ("Querying a table in batch mode is currently only possible for INSERT-only table sources. "
                       "But the source for table '{name}' produces other changelog messages than just INSERT.")


# --- a Table's changes as DataStream records ------------------------------------------------
def table_records(job: GraphTranslation, node: TableNode) -> DataFrame:
    """The records (``_value``, ``_kind``, ``_seq``, ``_sub``) of ``node``'s Table plan (its input, planned
    with the job), translated inside ``job``'s query."""
    spec = node.payload
    number = job.source_numbers[node.id]
    if job.control:
        raise NotImplementedError(f"{node.name}: a Table converted to a DataStream ({spec.conversion}) in a job "
                                  "whose operators buffer their output (execution.max-flush-interval)")
    if isinstance(job.host, StreamingTranslator):
        if job.table_settings is None:
            raise RuntimeError(f"{node.name}: the job was started without the Table runtime's settings")
        # A translator of its own: the plan's sources and control rows are the Table query's, in its directory.
        translator = StreamingTranslator(job.spark, job.table_settings(), os.path.join(job.workdir, f"table-{number}"))
        changes = translator.translate(node.below)
        job.flush_signal_dirs.extend(translator.flush_signal_dirs)
    else:
        changes = job.host.translate(node.below)
    names = [n for n in node.below.field_names]
    convert = ChangesToRecords(names, number, spec.form, spec.insert_only, f"{spec.conversion} ({node.name})")
    return changes.mapInArrow(convert, RECORDS)


# --- a DataStream's records as a Table's changes --------------------------------------------
def stream_changes(translator: "StreamingTranslator", node: Source, directory: str) -> DataFrame:
    """The ``+I``/``-U``/``+U``/``-D`` change rows of the DataStream under ``node``, in ``translator``'s query."""
    if translator.root is not None and translator.root.traits.flush is not None:
        raise NotImplementedError(f"{node.name}: a DataStream converted to a Table in a query whose operators "
                                  "buffer their output (execution.max-flush-interval)")
    spec = node.payload
    # A translator of its own for the graph: its control rows (watermarks, flushes) are not the Table query's.
    host = StreamingTranslator(translator.spark, translator.settings, directory)
    graph = GraphTranslation(host, spec.runtime_context, spec.caches, lambda: translator.settings)
    # A query with control rows (event time) must see the graph's input end: its end-of-input rows come
    # through, each graph source's renamed to an id of this table's (datastream_source_ids).
    graph.end_of_input_out = translator.control
    records = graph.frame([node.below]).select(*RECORD_COLUMNS)  # pyright: ignore[reportAttributeAccessIssue]
    if translator.control:
        ends = (F.col(KIND) == CONTROL) & (F.col(SEQ) == END_OF_INPUT)
        ids = sorted(graph.source_numbers.values())
        renamed = functools.reduce(lambda c, n: c.when(F.col(SUB) == n, F.lit(_graph_source_id(node.name, n))),
                                   ids[1:], F.when(F.col(SUB) == ids[0], F.lit(_graph_source_id(node.name, ids[0]))))
        records = records.withColumn(SUB, F.when(ends, renamed).otherwise(F.col(SUB)))
    translator.flush_signal_dirs.extend(host.flush_signal_dirs)
    return records.mapInArrow(_to_changes(node, with_kind=True), _change_struct(node, True))


def datastream_source_ids(node: Source) -> frozenset:
    """The end-of-input ids (``_sub``) a DataStream read as a table gives: one per source of its graph, numbered
    as its translation numbers them (in the order ``sources`` finds them, each once)."""
    assert isinstance(node, StreamSource), f"{node.name} is not a DataStream read as a table"
    count = len(sources(node.below))  # pyright: ignore[reportArgumentType] - a StreamSource's below is a graph node
    return frozenset(_graph_source_id(node.name, n) for n in range(count))


def _graph_source_id(name: str, number: int) -> int:
    return source_id(f"{name}#{number}")


def batch_changes(spark, node: Source) -> DataFrame:
    """The rows (and ``_seq``) of the DataStream under ``node``, run as Spark batch for a batch Table job."""
    spec = node.payload
    if spec.changelog:  # Flink's planner refuses it in batch mode, whatever the records' kinds
        raise ValueError(_BATCH_ONLY_INSERTS.format(name=node.name))
    translation = GraphTranslation(BatchTranslator(spark), spec.runtime_context, spec.caches)
    records = translation.frame([node.below]).select(*RECORD_COLUMNS)  # pyright: ignore[reportAttributeAccessIssue]
    return records.mapInArrow(_to_changes(node, with_kind=False), _change_struct(node, False))


def _change_struct(node: Source, with_kind: bool) -> T.StructType:
    # Every column nullable: the records are checked against the declared types, not Spark's constraints.
    fields = [T.StructField(n, to_spark(t), True) for n, t in node.schema]
    if with_kind:
        fields.append(T.StructField(KIND, T.ByteType(), False))
    fields.append(T.StructField(SEQ, T.LongType(), False))
    if with_kind:
        fields.append(T.StructField(SUB, T.LongType(), False))
    return T.StructType(fields)


def _to_changes(node: Source, with_kind: bool) -> RecordsToChanges:
    schema = to_arrow_schema(_change_struct(node, with_kind), timezone="UTC")
    return RecordsToChanges(node.payload.shape, schema, node.payload.changelog, node.name, with_kind)

