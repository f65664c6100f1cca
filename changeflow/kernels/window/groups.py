"""Complete key groups out of a partition sorted by key, however Spark cuts it into Arrow batches.

A sort-based batch operator (Flink's batch execution, FLIP-331's end-of-input
operators) sees its input sorted by key and processes one key group at a
time. Spark hands ``mapInPandas`` a sorted partition as a sequence of Arrow
batches whose boundaries ignore keys, so :func:`complete_groups` carries a
batch's last (possibly incomplete) group over to the next batch: memory stays
one batch plus one group.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np
import pandas as pd


def group_bounds(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the runs of equal adjacent ``keys``.

    >>> group_bounds(np.asarray([b"a", b"a", b"b", b"c", b"c"], dtype=object))
    (array([0, 2, 3]), array([2, 3, 5]))
    """
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    changes = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    starts = np.r_[0, changes].astype(np.int64)
    ends = np.r_[changes, n].astype(np.int64)
    return starts, ends


def complete_groups(frames: Iterable[pd.DataFrame], key: str) -> Iterator[pd.DataFrame]:
    """Frames of whole key groups, in order, from ``frames`` sorted by the column ``key``.

    >>> parts = [pd.DataFrame({"k": [b"a", b"b"], "v": [1, 2]}), pd.DataFrame({"k": [b"b", b"b"], "v": [3, 4]}),
    ...          pd.DataFrame({"k": [b"b", b"c"], "v": [5, 6]})]
    >>> [f["v"].tolist() for f in complete_groups(parts, "k")]
    [[1], [2, 3, 4, 5], [6]]
    """
    # Parts of the one group that may continue in the next batch, kept as a list so
    # that a group spanning many batches is concatenated once, not once per batch.
    pending: list[pd.DataFrame] = []
    pending_key = None
    for frame in frames:
        if not len(frame):
            continue
        keys = frame[key].to_numpy()
        last = keys[-1]
        other = np.flatnonzero(keys != last)
        if not len(other):  # the whole batch is one key's
            if pending and pending_key != last:
                yield _concat(pending)
                pending = []
            pending.append(frame)
            pending_key = last
            continue
        tail = int(other[-1]) + 1
        # Everything before the tail ends a group: the pending parts' group ends with it at the latest.
        yield _concat(pending + [frame.iloc[:tail]])
        pending, pending_key = [frame.iloc[tail:]], last
    if pending:
        yield _concat(pending)


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return (pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]).reset_index(drop=True)
