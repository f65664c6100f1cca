"""Deduplication and Top-N kernels (Flink's ``runtime/operators/deduplicate`` and ``rank``).

:class:`InsertOnlyDeduplicate` keeps the first or last row per key on processing time
over insert-only input (vectorised); :class:`RetractingDeduplicate` does the
same over retracting input, keeping each key's live rows in an ordered
multiset; :class:`TopN` is ``ROW_NUMBER() ... BETWEEN start AND end`` over
insert-only or retracting input. All take a ``mini_batch`` flag that folds a
batch per key.
"""

from changeflow.kernels.rank.deduplicate import InsertOnlyDeduplicate
from changeflow.kernels.rank.deduplicate_retract import RetractingDeduplicate
from changeflow.kernels.rank.rowtime_deduplicate import RowtimeDeduplicate
from changeflow.kernels.rank.top_n import TopN

__all__ = ["InsertOnlyDeduplicate", "RetractingDeduplicate", "RowtimeDeduplicate", "TopN", "deduplicate_kernel"]


def deduplicate_kernel(columns: list[str], keys: list[str], *, keep_last: bool, mini_batch: bool,
                       input_insert_only: bool, ttl_ms: int = 0, rowtime: str | None = None,
                       on_watermark: bool = False):
    """The deduplication kernel for an input of this changelog mode.

    Insert-only input keeps the vectorised :class:`InsertOnlyDeduplicate` (Flink's
    functions); an input that retracts gets :class:`RetractingDeduplicate`.

    >>> type(deduplicate_kernel(["k", "v"], ["k"], keep_last=True, mini_batch=False, input_insert_only=False)).__name__
    'RetractingDeduplicate'

    With ``ttl_ms`` (``table.exec.state.ttl``) the insert-only kernel is wrapped
    in :class:`~changeflow.kernels.ttl.KeyStateTtl` (a key's state expires a TTL
    after its last write); the retracting one expires each row a TTL after its
    insertion itself. Ordered by a ``rowtime`` column (insert-only input) it is
    :class:`RowtimeDeduplicate`, emitting on the watermark if ``on_watermark``.
    """
    if rowtime is not None:
        if not input_insert_only:
            raise ValueError(f"deduplication ordered by the rowtime column {rowtime!r} takes insert-only input")
        kernel = RowtimeDeduplicate(columns, keys, rowtime, keep_last=keep_last, on_watermark=on_watermark)
    elif not input_insert_only:
        return RetractingDeduplicate(columns, keys, keep_last=keep_last, mini_batch=mini_batch, ttl_ms=ttl_ms)
    else:
        kernel = InsertOnlyDeduplicate(columns, keys, keep_last=keep_last, mini_batch=mini_batch)
    if ttl_ms > 0:
        from changeflow.kernels.ttl import KeyStateTtl

        return KeyStateTtl(kernel, keys, ttl_ms)
    return kernel
