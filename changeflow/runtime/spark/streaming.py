"""Translates a logical plan into one Structured Streaming query.

Every operator consumes and produces a changelog DataFrame (the row's columns
plus ``_kind``, ``_seq``, ``_sub``), so stateful operators chain inside one query
in Append mode. Projections and filters are Spark Column expressions; group
aggregations run the pure kernel through :class:`KernelProcessor`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan import changelog_mode
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project, Source
from changeflow.runtime.spark.columns import compile_expr
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


class StreamingTranslator:
    def __init__(self, spark: SparkSession, settings: StreamingSettings, workdir: str) -> None:
        self.spark = spark
        self.settings = settings
        self.workdir = workdir
        self._sources = 0

    def translate(self, node: PlanNode) -> DataFrame:
        self.modes = changelog_mode.infer(node)
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
        kernel = GroupAggregate(list(node.keys), list(node.calls),
                                mini_batch=self.settings.mini_batch, input_insert_only=insert_only)
        keys = [F.col(f"`{k}`") for k in node.keys]
        bucket = F.pmod(F.xxhash64(*keys), F.lit(self.settings.buckets)) if keys else F.lit(0).cast("long")
        keyed = child.withColumn(BUCKET, bucket)
        dtypes = {n: pandas_dtype(t) for n, t in node.input.schema}
        processor = KernelProcessor(kernel, list(node.keys), dtypes, self.settings.pages, keyed.columns)
        out_schema = T.StructType(struct(node.schema).fields + _BOOKKEEPING_FIELDS)
        return keyed.groupBy(BUCKET).transformWithStateInPandas(
            statefulProcessor=processor, outputStructType=out_schema, outputMode="Append", timeMode="None"
        )
