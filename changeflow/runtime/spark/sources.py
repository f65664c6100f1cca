"""Sources as Spark DataFrames: batch frames and file-backed streams.

A bounded source read as a stream is written once to Parquet files of at most
``rows_per_batch`` rows each; Structured Streaming then reads one file per
micro-batch (:mod:`.source_files`, shared with the DataStream runtime). That
fixes micro-batch boundaries (the mini-batch bundles) and stamps every row
with its source position ``_seq`` so operators can restore input order after
Spark's shuffles.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.errors import AnalysisException

from changeflow.common.type_values import arrow_type
from changeflow.common.types import DataType
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import Source
from changeflow.runtime.spark.source_files import staged_stream
from changeflow.runtime.spark.spark_types import struct


def kernel_input_dtype(t: DataType) -> str:
    """The pandas dtype kernels receive for a column of type ``t``."""
    if t.is_integral:
        return "Int64"
    if t.root in ("DOUBLE", "FLOAT"):
        return "float64"
    if t.root == "BOOLEAN":
        return "boolean"
    return "object"


TIME_KEY_DTYPE = "datetime64[ns]"


def kernel_key_dtype(t: DataType) -> str:
    """The pandas dtype of a grouping-key column of type ``t`` for a kernel that takes time keys as datetime64.

    TIMESTAMP and TIMESTAMP_LTZ keys stay the ``datetime64[ns]`` Spark's Arrow
    conversion gives (naive, in the job's zone, UTC; NULL is NaT) instead of
    becoming objects: the same values, but hashed and factorized as integers,
    not as objects (strings, for ``hash_pandas_object``), about 30 times faster.
    Only kernels that read their keys' time values through ``epoch_ms`` or pass
    them on unchanged use it (the window aggregation; for columns other than keys,
    :func:`kernel_column_dtypes`).
    """
    return TIME_KEY_DTYPE if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ") else kernel_input_dtype(t)


def kernel_column_dtypes(types: dict[str, DataType], columns: list[str], keys: list[str],
                         datetime_columns: bool) -> dict[str, str]:
    """The pandas dtype of each of a kernel's input ``columns``: :func:`kernel_input_dtype`, but a TIMESTAMP
    column other than a key as ``datetime64[ns]`` for a kernel that takes it so (``datetime_columns``,
    :attr:`~changeflow.kernels.contract.KernelBase.datetime_columns`). Keys keep their dtype: the bucket and
    state page of a key are hashes of its values, which must not change under a query's existing state."""
    return {c: kernel_key_dtype(types[c]) if datetime_columns and c not in keys else kernel_input_dtype(types[c])
            for c in columns}


def arrow_table(node: Source) -> pa.Table:
    """The source's rows as an Arrow table typed by the source schema."""
    names = node.field_names
    if node.kind == "elements":
        columns = list(zip(*node.payload, strict=True)) if node.payload else [()] * len(names)
        arrays = [pa.array(list(c), type=_arrow_type(t)) for c, (_, t) in zip(columns, node.schema, strict=True)]
        return pa.Table.from_arrays(arrays, names=names)
    if node.kind == "arrow":   # already typed by the source schema (a connector's arrow_rows)
        return node.payload
    if node.kind == "pandas":
        frame: pd.DataFrame = node.payload
        return pa.Table.from_pandas(frame[names], schema=pa.schema(
            [(n, _arrow_type(t)) for n, t in node.schema]), preserve_index=False)
    raise TypeError(f"source {node.name} of kind {node.kind} is not a local collection")


def batch_frame(spark: SparkSession, node: Source) -> DataFrame:
    """The source as a Spark batch DataFrame with a ``_seq`` column of source positions."""
    if node.kind == "connector":  # a DDL table's connector
        from changeflow.runtime.spark.connectors.connector_sources import connector_batch_frame
        return connector_batch_frame(spark, node)
    if node.kind == "spark":
        return node.payload.withColumn(SEQ, F.monotonically_increasing_id())
    if node.kind == "datastream":  # a DataStream converted to a Table, run as Spark batch (.bridge)
        from changeflow.runtime.spark.bridge import batch_changes
        return batch_changes(spark, node)
    table = arrow_table(node)
    table = table.append_column(SEQ, pa.array(range(table.num_rows), type=pa.int64()))
    schema = struct(node.schema).add(SEQ, T.LongType(), False)
    if table.num_rows == 0:
        return spark.createDataFrame([], schema)
    if any(t.root in ("MAP", "MULTISET", "ROW") for _, t in node.schema):
        return spark.createDataFrame(table, schema=schema)  # pandas would turn maps into pair lists
    return spark.createDataFrame(table.to_pandas(types_mapper=_nullable_mapper), schema=schema)


def stream_frame(spark: SparkSession, node: Source, directory: str, rows_per_batch: int,
                 end_of_input: bool = False) -> DataFrame:
    """The source as a streaming DataFrame of ``+I`` changes, one file per micro-batch.

    With ``end_of_input`` a bounded source's end-of-input control row
    (:mod:`.control_rows`) follows its last rows, in their micro-batch
    (:mod:`.source_files`).
    """
    if node.kind == "connector":  # a DDL table's connector
        from changeflow.runtime.spark.connectors.connector_sources import connector_stream_frame
        return connector_stream_frame(spark, node, directory, rows_per_batch, end_of_input)
    if node.kind == "spark" and node.payload.isStreaming:
        return _ordered_stream(node)
    schema = struct(node.schema).add(SEQ, T.LongType(), True)
    stream = staged_stream(spark, directory, schema, lambda: _with_positions(node), rows_per_batch,
                           f"source {node.name}", (lambda: _end_row(node)) if end_of_input else None)
    return bounded_changes(stream, node, end_of_input)


def bounded_changes(stream: DataFrame, node: Source, end_of_input: bool) -> DataFrame:
    """A bounded source's stream of rows (its columns and ``_seq``) as ``+I`` changes.

    With ``end_of_input`` the row whose ``_seq`` is END_OF_INPUT is the source's
    end-of-input control row.
    """
    kind, sub = F.lit(0).cast("byte"), F.lit(0).cast("long")
    if end_of_input:
        from changeflow.runtime.spark.control_rows import CONTROL, END_OF_INPUT, source_id

        marker = F.col(SEQ) == END_OF_INPUT
        kind = F.when(marker, F.lit(CONTROL)).otherwise(F.lit(0)).cast("byte")
        sub = F.when(marker, F.lit(source_id(node.name))).otherwise(F.lit(0)).cast("long")
    return stream.select(*[F.col(f"`{n}`") for n in node.field_names], kind.alias(KIND), F.col(SEQ), sub.alias(SUB))


def _with_positions(node: Source) -> DataFrame | pa.Table:
    """The bounded source's rows, each with its position in the input as ``_seq``."""
    if node.kind == "spark":
        return node.payload.withColumn(SEQ, F.monotonically_increasing_id())
    table = arrow_table(node)
    return table.append_column(SEQ, pa.array(range(table.num_rows), type=pa.int64()))


def _end_row(node: Source) -> pa.Table:
    """One row with ``_seq`` = END_OF_INPUT, values null (:func:`bounded_changes` makes it a control row)."""
    from changeflow.runtime.spark.control_rows import END_OF_INPUT

    arrays = [pa.nulls(1, type=_arrow_type(t)) for _, t in node.schema]
    arrays.append(pa.array([END_OF_INPUT], type=pa.int64()))
    return pa.Table.from_arrays(arrays, names=node.field_names + [SEQ])


def flush_signal_rows(spark: SparkSession, node: Source, directory: str) -> DataFrame:
    """The flush signals of a job over ``node``'s unbounded stream as control rows (:mod:`.flush_signals`)."""
    from changeflow.runtime.spark.flush_signals import signal_rows

    types = {f.name: f for f in struct(node.schema).fields}
    return signal_rows(spark, directory, [types[n] for n in node.field_names])


def _ordered_stream(node: Source) -> DataFrame:
    """A user's streaming DataFrame, stamped with its rows' positions.

    File streams carry each row's position in its file (``_metadata.row_index``);
    with one file per micro-batch that is the exact input order. Other streams
    have no row order within a micro-batch (as a parallel Flink source has none
    across its splits): every row gets position 0 and ties keep arrival order.
    """
    df = node.payload
    try:
        stamped = df.withColumn(SEQ, F.col("_metadata.row_index"))
    except AnalysisException:
        warnings.warn(f"source {node.name} is not a file stream: rows of one micro-batch have no "
                      "defined order (per-key changes follow Spark's arrival order)", stacklevel=3)
        stamped = df.withColumn(SEQ, F.lit(0).cast("long"))
    return stamped.select(*[F.col(f"`{n}`") for n in node.field_names],
                          F.lit(0).cast("byte").alias(KIND), F.col(SEQ).cast("long"),
                          F.lit(0).cast("long").alias(SUB))


def _arrow_type(t: DataType) -> pa.DataType:
    return arrow_type(t)


def _nullable_mapper(arrow_type: pa.DataType):
    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    return None
