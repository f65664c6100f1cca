"""The changelog frame: how a batch of changes travels between operators.

A changelog batch is a pandas DataFrame of the row's own columns plus three
bookkeeping columns:

``_kind``  int8, the :class:`~changeflow.common.RowKind` value (0 +I, 1 -U, 2 +U, 3 -D)
``_seq``   int64, position of the source row the change descends from
``_sub``   int64, position of the change among the descendants of that source row

Sorting by ``(_seq, _sub)`` restores the order in which a single-threaded Flink
job would see the changes. Spark's shuffle does not keep row order, so every
stateful kernel sorts its input by these two columns before folding it, and
stamps its output so that the next operator can do the same.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KIND = "_kind"
SEQ = "_seq"
SUB = "_sub"
BOOKKEEPING = (KIND, SEQ, SUB)

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
# The _kind of a control row (end of input, a flush signal); a watermark row's is larger
# (changeflow.runtime.spark.control_rows). Changes and DataStream records carry them alike.
CONTROL = 4

# Each operator input row yields at most this many output changes (an aggregate
# emits -U and +U for one input row), so ``sub * FANOUT + i`` keeps every
# descendant of one source row distinct and ordered.
FANOUT = 4


def is_retraction(kinds: pd.Series | np.ndarray) -> np.ndarray:
    """True where the change takes a row away (-U or -D)."""
    k = np.asarray(kinds)
    return (k == UPDATE_BEFORE) | (k == DELETE)


def sort_changes(batch: pd.DataFrame) -> pd.DataFrame:
    """The batch in source order (stable, so equal stamps keep arrival order)."""
    return batch.sort_values([SEQ, SUB], kind="stable", ignore_index=True)


def child_sub(parent_sub: np.ndarray, index: int) -> np.ndarray:
    """The ``_sub`` stamp of the ``index``-th change emitted for an input row."""
    return np.asarray(parent_sub, dtype=np.int64) * FANOUT + index
