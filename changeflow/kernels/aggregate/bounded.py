"""A group aggregation over bounded input in one pass: the batch path of Python aggregates.

Spark's built-in aggregates cannot run a Python ``udaf``; the batch translator
hash-partitions the rows by the grouping keys and hands each partition to
:func:`aggregate_partition`, which folds it with the streaming kernel itself
(mini-batch, insert-only: one bundle, one ``+I`` per key). The result is therefore
the streaming result materialized, by construction.

A global aggregate (no keys) over no rows still has one row in batch mode (Flink's
batch result: COUNT 0, SUM NULL, a udaf's ``get_value(create_accumulator())``);
streaming emits nothing for it, so :func:`empty_global_row` makes that row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.json_aggs import JSON_AGGREGATES, empty_result
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.user import UserAggCall, _Runner, output_arrays, result_values
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.state import InMemoryKeyedState


def aggregate_partition(kernel: KernelBase, keys: list[str], batch: pd.DataFrame) -> pd.DataFrame:
    """Fold a partition's rows (all rows of their keys, with ``_seq``) with ``kernel``; final rows only.

    Each output row carries the smallest ``_seq`` of its key's input rows (the order in
    which a later FIRST_VALUE sees the groups, as the built-in batch aggregation).
    """
    frame = batch.copy()
    frame[KIND] = np.full(len(frame), INSERT, dtype=np.int8)
    frame[SUB] = np.zeros(len(frame), dtype=np.int64)
    out = kernel.process(frame, InMemoryKeyedState())
    if keys and len(out):
        index = KeyIndex(frame, keys)
        first = np.full(index.size, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, index.codes, frame[SEQ].to_numpy(dtype=np.int64))
        out[SEQ] = first[index.lookup(out)]
    elif len(out):
        out[SEQ] = int(frame[SEQ].min())
    return out.drop(columns=[KIND, SUB]).reset_index(drop=True)


def empty_global_row(calls: list[AggCall]) -> pd.DataFrame:
    """The one row of a global aggregate over no input (batch mode)."""
    data: dict[str, Any] = {}
    for call in calls:
        if isinstance(call, UserAggCall):
            runner = _Runner(call.function_def)
            value = runner.value(runner.create())
        elif call.function in ("count", "count_star", "sum0"):
            value = 0
        elif call.function == "collect":
            value = {}
        elif call.function in JSON_AGGREGATES:
            value = empty_result(call.function)
        else:
            value = None
        data.update(output_arrays(call, result_values([value], call.result_type)))
    data[SEQ] = np.zeros(1, dtype=np.int64)
    return pd.DataFrame(data)
