"""The local phase of a window aggregation: one partition's rows folded per window and key before the shuffle.

A window aggregation (:class:`~changeflow.kernels.aggregate.window_agg.WindowAggregate`)
drops a row as *late* when its window's end - 1 ms is at or before the watermark
in force at the row's position. Folding rows before that decision is exact only
for rows whose lateness is the same: this phase folds a partition's rows per
window, key and *side*, a row's side telling whether the partition's own
watermarks had reached its window's end - 1 ms at its position.

Why a side decides. The watermark the window aggregation applies at position
``p`` is the largest watermark emitted at a position before ``p``: those of the
previous micro-batches (``C0``), of the other partitions (``F(p)``) and of this
one (``w(p)``), so ``W(p) = max(C0, F(p), w(p))``. When every other partition's
positions lie outside this partition's range of positions (the sources whose
rows keep their positions per partition: :func:`partition_local_positions` in
the runtime decides which), ``F(p)`` is one constant ``C`` over the
partition's rows. Then for a window ending at ``E`` (``E - 1`` compared):

* rows where ``w(p) >= E - 1`` are late whatever ``C`` is;
* rows where ``w(p) < E - 1`` are late exactly when ``max(C0, C) >= E - 1``:
  all of them or none.

So each (window, key, side) folds into one partial row (Flink's
LocalWindowAggregate ships partial accumulators the same way) stamped with the
last row's position (:class:`LocalGroupAggregate`): the window aggregation
judges the partial late at that position exactly as it would judge each of
the partial's rows, drops it whole (counting its ``_count`` rows) or merges it.
A window's on-time rows all precede the watermark that fires it, so its
accumulators when it fires, and its result, are those of the one-phase kernel.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.local import LocalGroupAggregate, mergeable
from changeflow.kernels.aggregate.window_agg import epoch_ms
from changeflow.kernels.changelog import SEQ
from changeflow.kernels.window.zone_time import WindowClock

SIDE = "__late_here"   # the side of a row (see the module docstring): a grouping column of this phase only


class LocalWindowAggregate:
    """Folds one partition's rows of a micro-batch into partial rows per window, key and side.

    ``keys`` are the window aggregation's grouping columns (``window_end``
    among them), ``calls`` its aggregate calls (every one :func:`mergeable`).
    :meth:`process` takes the partition's rows and the ``(position, watermark)``
    pairs its watermark assigner emitted in the partition.

    >>> from changeflow.common.types import DataTypes
    >>> local = LocalWindowAggregate(["we", "k"], [AggCall("sum", "v", DataTypes.BIGINT(), "s")], "we")
    >>> rows = pd.DataFrame({"we": pd.to_datetime([1000, 1000, 1000, 2000], unit="ms"), "k": [1, 1, 1, 1],
    ...                      "v": pd.array([1, 2, 4, 8], dtype="Int64"), "_kind": pd.array([0] * 4, dtype="int8"),
    ...                      "_seq": [1, 2, 3, 4], "_sub": [0, 0, 0, 0]})
    >>> out = local.process(rows, [(2, 999)])   # after position 2 the watermark 999 has closed the first window
    >>> out.sort_values("_seq")[["_count", "s.sum", "_seq"]].values.tolist()
    [[2, 3, 2], [1, 4, 3], [1, 8, 4]]
    """

    def __init__(self, keys: list[str], calls: list[AggCall], window_end: str, zone: str | None = None) -> None:
        if window_end not in keys:
            raise ValueError(f"the window end column {window_end!r} must be a grouping key")
        self.keys = list(keys)
        self.window_end = window_end
        self.window_clock = WindowClock(zone)   # end - 1 ms, or in a session zone the instant the window fires at
        self.local = LocalGroupAggregate(self.keys + [SIDE], list(calls))

    @staticmethod
    def applies_to(calls: Sequence[AggCall]) -> bool:
        """Whether every call's accumulators merge (the condition of two-phase aggregation)."""
        return all(mergeable(c) for c in calls)

    def process(self, batch: pd.DataFrame, watermarks: Sequence[tuple[int, int]]) -> pd.DataFrame:
        """The partial rows of ``batch`` (insert-only rows) given the partition's watermarks, in stamp order."""
        late = np.zeros(len(batch), dtype=bool)
        if len(watermarks) and len(batch):
            marks = sorted(watermarks)
            positions = np.asarray([p for p, _ in marks], dtype=np.int64)
            values = np.maximum.accumulate(np.asarray([w for _, w in marks], dtype=np.int64))
            # A watermark at position q follows the rows with _seq <= q (as the window aggregation applies it).
            index = np.searchsorted(positions, batch[SEQ].to_numpy(dtype=np.int64), side="left")
            before = index > 0
            fire = self.window_clock.fire_at(epoch_ms(batch[self.window_end])[before])
            late[before] = fire <= values[index[before] - 1]
        partials = self.local.process(batch.assign(**{SIDE: late}))
        return partials.drop(columns=[SIDE])


__all__ = ["LocalWindowAggregate"]
