"""Runs the local phase of two-phase aggregation inside Spark's ``mapInPandas``.

``mapInPandas`` hands a Python worker one partition's rows of the micro-batch
as an iterator of Arrow-sized pandas frames. The local phase must see all of
them at once: pre-aggregating each frame separately would ship one partial per
key and *frame*, which for a few hundred thousand keys is hardly fewer rows
than the input. So the whole iterator is consumed, then grouped once.
"""

from __future__ import annotations

from typing import Iterator

import pandas as pd

from changeflow.kernels.aggregate.local import LocalGroupAggregate
from changeflow.runtime.spark.processor import normalize


class LocalPhase:
    """The function given to ``mapInPandas``: a partition's rows in, its partial rows out.

    ``dtypes`` maps input columns to the pandas dtypes the kernel expects (see
    :func:`~changeflow.runtime.spark.processor.normalize`); ``input_columns``
    are the names of the columns Spark sends, in order, and ``output_columns``
    the names Spark expects for the kernel's output columns, in order.
    """

    def __init__(self, kernel: LocalGroupAggregate, input_columns: list[str], dtypes: dict[str, str],
                 output_columns: list[str]) -> None:
        self.kernel = kernel
        self.input_columns = list(input_columns)
        self.dtypes = dict(dtypes)
        self.output_columns = list(output_columns)

    def __call__(self, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        parts = [f for f in frames if len(f)]
        if not parts:
            return
        batch = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        batch.columns = self.input_columns
        out = self.kernel.process(normalize(batch, self.dtypes))
        out.columns = self.output_columns
        if len(out):
            yield out
