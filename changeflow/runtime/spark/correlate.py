"""Spark translation of a correlate (:mod:`changeflow.plan.correlate`): a lateral join, ``flat_map``, ``map``.

The call's arguments are computed in Spark's JVM as columns (``_arg0``, ...),
then one ``mapInPandas`` over the input frame runs the function over each
Arrow batch (:class:`~changeflow.kernels.udf.table_function.TableFunctionRunner`),
in both modes: no shuffle and no state, so the operator keeps its input's
partitioning. ``open()`` runs once per partition before the first batch and
``close()`` after the last. In a streaming query control rows (end of input,
flush signals) pass through with NULLs in the function's columns.
"""

from __future__ import annotations

from typing import Iterator

import pandas as pd
from pyspark import TaskContext
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.expressions import Call, Literal
from changeflow.functions import FunctionContext
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.frames import select
from changeflow.kernels.udf.table_function import TableFunctionRunner
from changeflow.plan.correlate import Correlate, argument_types
from changeflow.plan.type_inference import type_of
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.control_rows import CONTROL
from changeflow.runtime.spark.errors import worker_note
from changeflow.runtime.spark.spark_types import struct

_ARG = "_arg"


def correlate_stream(translator, node: Correlate) -> DataFrame:
    """The changelog frame of ``node`` in a streaming query."""
    child = _with_arguments(translator._translate(node.input), node, [KIND, SEQ, SUB])
    schema = translator.changelog_struct(node.schema)
    return child.mapInPandas(_Correlator(node, control=translator.control), schema)


def correlate_batch(translator, node: Correlate) -> DataFrame:
    """The rows of ``node`` (and ``_seq``) in a batch job; the rows a function emits share their input's ``_seq``."""
    child = _with_arguments(translator.translate(node.input), node, [SEQ])
    schema = T.StructType(struct(node.schema).fields + [T.StructField(SEQ, T.LongType(), False)])
    return child.mapInPandas(_Correlator(node, control=False), schema)


def _with_arguments(frame: DataFrame, node: Correlate, bookkeeping: list[str]) -> DataFrame:
    """The input columns the output keeps, one column per argument, and the bookkeeping."""
    types = node.input.type_map()
    args = []
    for i, (arg, typed, wanted) in enumerate(zip(node.call.args, _typed(node), argument_types(node), strict=True)):
        if typed != wanted.with_nullable(True):
            arg = Call("cast", (arg, Literal(wanted, None)))  # as PyFlink, to the declared input type
        args.append(compile_expr(arg, types).alias(f"{_ARG}{i}"))
    kept = [F.col(f"`{n}`") for n in node.input.field_names] if node.keep_input else []
    return frame.select(*kept, *args, *bookkeeping)


def _typed(node: Correlate) -> list:
    types = node.input.type_map()
    return [type_of(a, types).with_nullable(True) for a in node.call.args]


class _Correlator:
    """The ``mapInPandas`` function: a runner per partition, opened before its first batch."""

    def __init__(self, node: Correlate, control: bool) -> None:
        self.function = node.call.function
        self.arg_types = argument_types(node)
        self.names = [n for n, _ in node.function_fields]
        self.outer = node.join_type == "LEFT"
        self.keep_input = node.keep_input
        self.row_names = list(node.input.field_names) if node.takes_row else None
        self.output = list(node.field_names)
        self.integral = [n for n, t in node.schema if t.is_integral]
        self.control = control

    def __call__(self, batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        arg_columns = [f"{_ARG}{i}" for i in range(len(self.arg_types))]
        runner = TableFunctionRunner(self.function, arg_columns, self.arg_types, self.names, self.outer,
                                     self.keep_input, self.row_names)
        opened = False
        worker_note(f"table function {self.function.name}")
        try:
            for batch in batches:
                if not opened:
                    runner.open(_context(self.function.name))
                    opened = True
                yield self._run(runner, batch)
        finally:
            worker_note(None)
            if opened:
                runner.close()

    def _run(self, runner: TableFunctionRunner, batch: pd.DataFrame) -> pd.DataFrame:
        control = None
        if self.control:
            is_control = batch[KIND] >= CONTROL
            if is_control.any():
                control = select(batch, is_control)
                batch = select(batch, ~is_control).reset_index(drop=True)
        out = runner.process(batch)
        if control is not None:
            kept = [c for c in control.columns if not str(c).startswith(_ARG)]
            out = pd.concat([out, select(control, kept)], ignore_index=True)
        out = out.reindex(columns=self.output + [c for c in (KIND, SEQ, SUB) if c in out.columns])
        for name in self.integral:  # NULLs made an integral column float64; Arrow takes nullable ints
            out[name] = out[name].astype("Int64")
        return out


def _context(name: str) -> FunctionContext:
    """What ``open()`` gets: the Spark task's partition as the subtask."""
    task = TaskContext.get()
    if task is None:
        return FunctionContext(task_name=name)
    return FunctionContext(task_name=name, subtask_index=task.partitionId(), attempt=task.attemptNumber())


__all__ = ["correlate_batch", "correlate_stream"]
