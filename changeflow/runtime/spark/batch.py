"""Translates a logical plan into Spark batch operations (bounded input, final result).

Group aggregation uses Spark's own hash/sort aggregation. Each aggregate is
written so that its value equals Flink's: integral AVG, STDDEV and VAR use
Flink's integer arithmetic, FIRST/LAST_VALUE and LISTAGG follow input order
(the ``_seq`` column of the source), and the DISTINCT forms work over the set of
distinct non-null values.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator, cast

import pandas as pd

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.kernels.aggregate.functions import AggCall, result_type
from changeflow.kernels.aggregate.json_aggs import JSON_AGGREGATES, json_array_of, json_object_of
from changeflow.kernels.changelog import SEQ
from changeflow.plan.correlate import Correlate
from changeflow.plan.event_time import WatermarkAssigner, WindowTableFunction
from changeflow.plan.over import OverAggregate
from changeflow.kernels.aggregate.user import is_user_call
from changeflow.plan.nodes import (Aggregate, Deduplicate, Filter, Join, PlanNode, Project, Rank, Replicate, Sink,
                                   Sort, Source, TableAggregate, Union)
from changeflow.runtime.spark.arithmetic import wrapping_long
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.current_watermark import refuse_in_batch
from changeflow.runtime.spark.sources import batch_frame
from changeflow.runtime.spark.spark_types import struct, to_spark


class BatchTranslator:
    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def by_key_partition(self, child: DataFrame, keys: list[str], dtypes: dict[str, str], schema: Any,
                         fold: Callable[[pd.DataFrame | None], pd.DataFrame | None]) -> DataFrame:
        """Bounded input folded in Python a partition at a time (what Spark's own operators cannot run).

        ``child``'s ``dtypes`` columns and ``_seq`` are hash-partitioned by ``keys`` (one partition
        without keys); ``fold`` gets each partition's rows as one frame of those dtypes (None for an
        empty one) and returns the plan schema ``schema``'s columns plus ``_seq``, or None.
        """
        frame = child.select(*[F.col(f"`{n}`") for n in dtypes], SEQ)
        key_columns = [F.col(f"`{k}`") for k in keys]
        frame = frame.repartition(self.spark.sparkContext.defaultParallelism, *key_columns) if keys \
            else frame.repartition(1)
        names = [n for n, _ in schema] + [SEQ]

        def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:  # no self: it runs on executors
            chunks = list(batches)
            rows = pd.concat(chunks, ignore_index=True) if chunks else None
            if rows is not None and len(rows):
                rows = rows.astype(dtypes)
            out = fold(rows if rows is not None and len(rows) else None)
            if out is not None:
                yield cast(pd.DataFrame, out[names])

        return frame.mapInPandas(run, T.StructType(struct(schema).fields + [T.StructField(SEQ, T.LongType(), False)]))

    def translate(self, node: PlanNode) -> DataFrame:
        """A DataFrame of the result's columns plus ``_seq`` (the order rows arrive in)."""
        if isinstance(node, Source):
            return batch_frame(self.spark, node)
        if isinstance(node, Project):
            types = node.input.type_map()
            refuse_in_batch([e for _, e in node.exprs], types)
            child = self.translate(node.input)
            return child.select(*[compile_expr(e, types).alias(n) for n, e in node.exprs], SEQ)
        if isinstance(node, Filter):
            refuse_in_batch([node.predicate], node.input.type_map())
            return self.translate(node.input).where(compile_expr(node.predicate, node.input.type_map()))
        if isinstance(node, Aggregate) and any(is_user_call(c) for c in node.calls) \
                or isinstance(node, TableAggregate):
            # Python aggregate functions: Spark's aggregates cannot run them (user_aggregates.py).
            from changeflow.runtime.spark.user_aggregates import aggregate_batch
            return aggregate_batch(self, node)
        if isinstance(node, Aggregate):
            return self._aggregate(node)
        if isinstance(node, Union):
            names = [n for n, _ in node.schema]
            # Columns match by position: every input has the union's arity (the planner checks).
            frames = [self.translate(child).select(
                *[F.col(f"`{old}`").alias(new) for old, new in zip(child.field_names, names, strict=True)], SEQ)
                for child in node.inputs]
            return functools.reduce(DataFrame.unionAll, frames)
        if isinstance(node, WatermarkAssigner):  # batch has no watermarks: every window is complete
            return self.translate(node.input)
        if isinstance(node, OverAggregate):
            from changeflow.runtime.spark.over import over_aggregate_batch
            return over_aggregate_batch(self, node)
        if isinstance(node, WindowTableFunction):
            from changeflow.runtime.spark.event_time import window_frame
            return window_frame(self.translate(node.input), node, [SEQ])
        if isinstance(node, Replicate):
            from changeflow.runtime.spark.replicate import replicate_batch
            return replicate_batch(self.translate(node.input), node, SEQ)
        if isinstance(node, Join):
            from changeflow.runtime.spark.join import join_batch
            return join_batch(self, node)
        if isinstance(node, (Deduplicate, Rank)):
            from changeflow.runtime.spark.rank import rank_batch
            return rank_batch(self, node)
        if isinstance(node, Sort):
            from changeflow.runtime.spark.rank import sort_batch
            return sort_batch(self, node)
        if isinstance(node, Sink):
            return self.translate(node.input)  # the job writes the rows (runtime/spark/jobs.py)
        if isinstance(node, Correlate):
            from changeflow.runtime.spark.correlate import correlate_batch
            return correlate_batch(self, node)
        raise TypeError(f"no batch translation for {type(node).__name__}")

    def _aggregate(self, node: Aggregate) -> DataFrame:
        child = self.translate(node.input)
        keys = [F.col(f"`{k}`") for k in node.keys]
        aggs = [aggregate_column(c).alias(c.output) for c in node.calls]
        # A downstream FIRST_VALUE sees groups in the order their first row arrived.
        aggs.append(F.min(SEQ).alias(SEQ))
        grouped = child.groupBy(*keys).agg(*aggs) if keys else child.agg(*aggs)
        return grouped.select(*[F.col(f"`{n}`").cast(to_spark(t)) for n, t in node.schema], SEQ)


def aggregate_column(call: AggCall) -> Column:
    """A Spark aggregate expression with Flink's result for ``call``."""
    out_type = to_spark(result_type(call.function, call.arg_type))
    if call.function == "count_star":
        return F.count(F.lit(1)).cast(out_type)
    x = F.col(f"`{call.arg}`")
    f = call.function
    if f in ("first_value", "last_value"):
        ordered = F.when(x.isNotNull(), F.col(SEQ))
        return (F.min_by(x, ordered) if f == "first_value" else F.max_by(x, ordered)).cast(out_type)
    if f == "listagg":
        values = _ordered_values(x)
        if call.distinct:
            values = F.array_distinct(values)
        return F.when(F.size(values) > 0, F.array_join(values, call.separator))
    if f == "collect":
        return _multiset(x)
    if f in JSON_AGGREGATES:
        return _json_aggregate(f)(_ordered_values(x))
    if call.distinct:
        distinct = _over_distinct(call, F.array_distinct(F.collect_list(x)))
        return (_wrap(distinct, call) if f in ("sum", "sum0") else distinct).cast(out_type)
    if f == "count":
        return F.count(x).cast(out_type)
    if f == "sum":
        return _wrap(_sum(x, call), call).cast(out_type)
    if f == "sum0":
        return _wrap(F.coalesce(_sum(x, call), F.lit(0)), call).cast(out_type)
    if f == "min":
        return F.min(x)
    if f == "max":
        return F.max(x)
    if f == "avg":
        integral = call.typed_arg[1].is_integral
        return moments(f, _sum(x, call), None, F.count(x), integral).cast(out_type)
    # Flink computes STDDEV/VAR in DOUBLE (a Welford M2) and casts at the end;
    # Spark's own functions use the same kind of numerically stable update.
    return _VARIANCE[f](x.cast("double")).cast(out_type)


_WIDTH = {"TINYINT": 8, "SMALLINT": 16, "INT": 32}


def _sum(x: Column, call: AggCall) -> Column:
    """The sum of ``x``; an integral sum in BIGINT that wraps around as Java's long does.

    Flink's SUM/AVG accumulators are Java longs; Spark's SUM of a BIGINT fails on
    overflow in ANSI mode (and summing in DECIMAL would be slow). Each value is
    split into its high and low 32 bits, each half summed exactly in BIGINT (exact
    for groups of fewer than 2^31 rows; beyond that Spark's overflow error, never
    a wrong value), and the halves recombined with wrap-around shifts.
    """
    arg_type = call.typed_arg[1]
    if not arg_type.is_integral:
        return F.sum(x)
    if arg_type.root != "BIGINT":
        return F.sum(x.cast("long"))  # at most 32-bit values: exact in a long
    x = x.cast("long")
    low = F.sum(x.bitwiseAND(F.lit(0xFFFFFFFF)))
    high = F.sum(F.shiftright(x, 32))
    return F.shiftleft(high + F.shiftright(low, 32), 32).bitwiseOR(low.bitwiseAND(F.lit(0xFFFFFFFF)))


def _wrap(total: Column, call: AggCall) -> Column:
    """A sum of a narrow integer type wraps around on overflow, as Java's int does."""
    bits = _WIDTH.get(call.typed_arg[1].root)
    if bits is None:
        return total
    half = 1 << (bits - 1)
    return F.pmod(total.cast("long") + F.lit(half), F.lit(1 << bits)) - F.lit(half)


_VARIANCE = {"var_pop": F.var_pop, "var_samp": F.var_samp,
             "stddev_pop": F.stddev_pop, "stddev_samp": F.stddev_samp}


def moments(function: str, s: Column, s2: Column | None, n: Column, integral: bool) -> Column:
    """AVG, VAR_* and STDDEV_* from sum, sum of squares and count.

    Integral AVG is the integer division of the sum by the count (truncating
    toward zero, as Java). VAR/STDDEV are computed in DOUBLE and cast by the caller.
    """
    if function == "avg":
        return F.when(n > 0, F.call_function("div", s, n) if integral else s / n)
    assert s2 is not None, f"{function} needs the sum of squares"  # only AVG is called without one
    centered = s2 - s * s / n
    if function in ("var_pop", "stddev_pop"):
        var = F.when(n > 0, centered / n)
    else:
        var = F.when(n > 1, centered / (n - 1))
    if function.startswith("stddev"):
        return F.pow(var.cast("double"), F.lit(0.5))
    return var


def _over_distinct(call: AggCall, values: Column) -> Column:
    """An aggregate over an array of distinct non-null values."""
    f = call.function
    integral = call.arg_type.is_integral if call.arg_type is not None else False
    zero = F.lit(0).cast("long") if integral else F.lit(0.0)
    n = F.size(values)
    # An integral sum wraps as Java's long (Flink's accumulator); narrow types are wrapped by the caller.
    s = F.aggregate(values, zero, (lambda acc, v: wrapping_long("+", acc, v.cast("long"))) if integral
                    else (lambda acc, v: acc + v))
    s2 = F.aggregate(values, F.lit(0.0), lambda acc, v: acc + v.cast("double") * v.cast("double"))
    if f == "count":
        return n
    if f == "sum":
        return F.when(n > 0, s)
    if f == "sum0":
        return s
    if f == "min":
        return F.array_min(values)
    if f == "max":
        return F.array_max(values)
    if f == "avg":
        return moments(f, s, None, n, integral)
    return moments(f, s.cast("double"), s2, n, False)


def _ordered_values(x: Column) -> Column:
    pairs = F.array_sort(F.collect_list(F.when(x.isNotNull(), F.struct(F.col(SEQ).alias("o"), x.alias("v")))))
    return F.transform(pairs, lambda p: p["v"])


def _json_aggregate(function: str):
    """JSON_ARRAYAGG / JSON_OBJECTAGG of a group's JSON texts in arrival order, by the kernels' own functions."""
    def build(texts) -> str:
        return json_array_of(texts) if function.startswith("json_arrayagg") else json_object_of(texts, function)

    def run(groups: pd.Series) -> pd.Series:
        return pd.Series([build(texts) for texts in groups], dtype=object)
    # pyspark's stubs type pandas_udf's function argument by its older call forms only.
    return F.pandas_udf(run, "string")  # pyright: ignore[reportCallIssue, reportArgumentType]


def _multiset(x: Column) -> Column:
    """COLLECT: a map from each non-null value to its multiplicity."""
    values = F.collect_list(x)
    distinct = F.array_distinct(values)
    counts = F.transform(distinct, lambda v: F.size(F.filter(values, lambda w: w == v)).cast("int"))
    return F.map_from_arrays(distinct, counts)
