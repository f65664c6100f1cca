"""Translates a logical plan into one Structured Streaming query.

Every operator consumes and produces a changelog DataFrame (the row's columns
plus ``_kind``, ``_seq``, ``_sub``), so stateful operators chain inside one query
in Append mode. Projections and filters are Spark Column expressions; group
aggregations run the pure kernel through :class:`KernelProcessor`.

A two-phase aggregation (:mod:`changeflow.plan.agg_phase`) first runs the
local phase in ``mapInPandas`` over each partition of the micro-batch, before
any shuffle, so the shuffle into ``transformWithStateInPandas`` carries one
partial row per key and partition instead of every input row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.aggregate.local import LocalGroupAggregate
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan import changelog_mode
from changeflow.plan.agg_phase import two_phase_aggregates
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project, Source
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.local_phase import LocalPhase
from changeflow.runtime.spark.processor import BUCKET, KernelProcessor
from changeflow.runtime.spark.sources import pandas_dtype, stream_frame
from changeflow.runtime.spark.types import struct

_BOOKKEEPING_FIELDS = [
    T.StructField(KIND, T.ByteType(), False),
    T.StructField(SEQ, T.LongType(), False),
    T.StructField(SUB, T.LongType(), False),
]


@dataclass(frozen=True)
class StreamingSettings:
    mini_batch: bool
    rows_per_batch: int   # source rows per micro-batch (the bundle when mini-batch is on)
    buckets: int          # hash buckets per stateful operator
    pages: int            # state pages per bucket
    agg_phase_strategy: str = "AUTO"  # table.optimizer.agg-phase-strategy


class StreamingTranslator:
    def __init__(self, spark: SparkSession, settings: StreamingSettings, workdir: str) -> None:
        self.spark = spark
        self.settings = settings
        self.workdir = workdir
        self._sources = 0

    def translate(self, node: PlanNode) -> DataFrame:
        self.modes = changelog_mode.infer(node)
        self.two_phase = two_phase_aggregates(node, mini_batch=self.settings.mini_batch,
                                              strategy=self.settings.agg_phase_strategy, modes=self.modes)
        return self._translate(node)

    def _translate(self, node: PlanNode) -> DataFrame:
        if isinstance(node, Source):
            self._sources += 1
            directory = os.path.join(self.workdir, f"source-{self._sources}")
            return stream_frame(self.spark, node, directory, self.settings.rows_per_batch)
        if isinstance(node, Project):
            child = self._translate(node.input)
            types = node.input.type_map()
            cols = [compile_expr(e, types).alias(n) for n, e in node.exprs]
            return child.select(*cols, KIND, SEQ, SUB)
        if isinstance(node, Filter):
            child = self._translate(node.input)
            return child.where(compile_expr(node.predicate, node.input.type_map()))
        if isinstance(node, Aggregate):
            return self._aggregate(node)
        raise TypeError(f"no streaming translation for {type(node).__name__}")

    def _aggregate(self, node: Aggregate) -> DataFrame:
        child = self._translate(node.input)
        insert_only = self.modes[id(node.input)].insert_only
        two_phase = id(node) in self.two_phase
        kernel = GroupAggregate(list(node.keys), list(node.calls), mini_batch=self.settings.mini_batch,
                                input_insert_only=insert_only, partial_input=two_phase)
        dtypes = {n: pandas_dtype(t) for n, t in node.input.schema}
        names = None  # the kernel's names of the input columns, when Spark's differ
        if two_phase:
            child, names, dtypes = self._local_aggregate(node, child)
        keys = [F.col(f"`{k}`") for k in node.keys]
        bucket = F.pmod(F.xxhash64(*keys), F.lit(self.settings.buckets)) if keys else F.lit(0).cast("long")
        keyed = child.withColumn(BUCKET, bucket)
        columns = keyed.columns if names is None else names + [BUCKET]
        processor = KernelProcessor(kernel, list(node.keys), dtypes, self.settings.pages, columns)
        out_schema = T.StructType(struct(node.schema).fields + _BOOKKEEPING_FIELDS)
        return keyed.groupBy(BUCKET).transformWithStateInPandas(
            statefulProcessor=processor, outputStructType=out_schema, outputMode="Append", timeMode="None"
        )

    def _local_aggregate(self, node: Aggregate, child: DataFrame) -> tuple[DataFrame, list[str], dict[str, str]]:
        """The local phase over each partition of the micro-batch.

        Returns the partial rows, the kernel's names of their columns and the
        pandas dtypes the global phase reads them as.
        """
        local = LocalGroupAggregate(list(node.keys), list(node.calls))
        types = node.input.type_map()
        # Ship only what the local phase reads: every column crosses into Python.
        needed = list(dict.fromkeys(list(node.keys) + [c.arg for c in node.calls if c.arg is not None]))
        child = child.select(*[F.col(f"`{n}`") for n in needed], KIND, SEQ, SUB)
        partials = local.partial_schema
        # The kernel names partial columns "<output>.<field>"; pyspark itself
        # cannot resolve dotted names (transformWithStateInPandas looks columns
        # up unquoted), so Spark carries them under plain names, mapped by position.
        spark_names = _fresh_names(len(partials), taken=set(node.keys))
        spark_schema = [(k, types[k]) for k in node.keys] + [(n, t) for n, (_, t) in zip(spark_names, partials)]
        function = LocalPhase(local, child.columns, {n: pandas_dtype(types[n]) for n in needed},
                              [n for n, _ in spark_schema] + [KIND, SEQ, SUB])
        out = T.StructType(struct(spark_schema).fields + _BOOKKEEPING_FIELDS)
        kernel_schema = [(k, types[k]) for k in node.keys] + partials
        names = [n for n, _ in kernel_schema] + [KIND, SEQ, SUB]
        return child.mapInPandas(function, out), names, {n: _partial_dtype(t) for n, t in kernel_schema}


def _partial_dtype(t: DataType) -> str:
    """The pandas dtype the global phase reads a partial column as.

    The NOT NULL counts and sums stay plain int64, as Arrow delivers them: the
    nullable Int64 that nullable columns need would cost a copy and a mask
    per column for nothing.
    """
    return "int64" if t.is_integral and not t.nullable else pandas_dtype(t)


def _fresh_names(count: int, taken: set[str]) -> list[str]:
    prefix = "_partial"
    while any(t.startswith(prefix) for t in taken):
        prefix = "_" + prefix
    return [f"{prefix}{i}" for i in range(count)]
