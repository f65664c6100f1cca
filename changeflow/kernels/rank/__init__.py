"""Deduplication and Top-N kernels (Flink's ``runtime/operators/deduplicate`` and ``rank``).

:class:`Deduplicate` keeps the first or last row per key on processing time
over insert-only input (vectorised); :class:`RetractingDeduplicate` does the
same over retracting input, keeping each key's live rows in an ordered
multiset; :class:`TopN` is ``ROW_NUMBER() ... BETWEEN start AND end`` over
insert-only or retracting input. All take a ``mini_batch`` flag that folds a
batch per key.
"""

from changeflow.kernels.rank.deduplicate import Deduplicate
from changeflow.kernels.rank.deduplicate_retract import RetractingDeduplicate
from changeflow.kernels.rank.top_n import TopN

__all__ = sorted(["Deduplicate", "RetractingDeduplicate", "TopN"])
