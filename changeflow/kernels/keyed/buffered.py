"""A keyed DataStream kernel's records as the append output the FLIP-365 flush buffer takes.

The flush machinery (:class:`~changeflow.kernels.flush.LatestPerKey`, the Spark
runtime's ``BucketFlusher``/``MemoryFlusher``) buffers changelog frames: key
columns, value columns and ``_kind``/``_seq``/``_sub``. A keyed DataStream
operator (keyed ``reduce``/``sum``/..., a ``KeyedProcessFunction`` reporting
``is_output_idempotent()``) emits records ``(_key, _value, _kind, _seq, _sub)`` whose
latest per key supersedes the earlier ones: an *append* idempotent output. So
:class:`ChangelogRecords` sorts the records of one call by stamp: a record's
stamp is a change's ``(_seq, _sub)``, all the buffer needs to find each key's
latest record, and a flushed record keeps the stamp and the ``_kind`` (its
value's RowKind) of the record it is, which downstream operators and sinks read
as always. The same buffer and flush policy as the Table API's group
aggregation, no second buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import KEY, VALUE
from changeflow.kernels.order import STAMP, sort_records
from changeflow.kernels.contract import WrappingKernel
from changeflow.kernels.state import KeyedState

#: The buffer's key and value columns for DataStream records (the stamp is the buffer's ``_seq``/``_sub``).
KEY_COLUMNS = [KEY]
OUTPUT_COLUMNS = [KEY, VALUE]


def as_changelog(records: pd.DataFrame) -> pd.DataFrame:
    """``(_key, _value, _kind, _seq, _sub)`` records in stamp order, each keeping its ``_kind``.

    >>> from changeflow.kernels.keyed.records import record_frame
    >>> recs = record_frame([b"x", b"y"], [(5, 0), (2, 0)], [b"a", b"b"], kinds=[0, 2])
    >>> as_changelog(recs)[[KEY, KIND, *STAMP]].to_dict("list")
    {'_key': [b'b', b'a'], '_kind': [2, 0], '_seq': [2, 5], '_sub': [0, 0]}
    """
    if KEY not in records.columns:
        raise ValueError(f"a buffered keyed operator's output needs the {KEY} column, got {list(records.columns)}")
    ordered = sort_records(records)
    return ordered[OUTPUT_COLUMNS].assign(**{KIND: ordered[KIND].to_numpy(dtype=np.int8),
                                             **{c: ordered[c].to_numpy(dtype=np.int64) for c in STAMP}})


class ChangelogRecords(WrappingKernel):
    """Wraps a keyed kernel built ``with_keys=True``: its records as the buffer's append output (module docstring).

    >>> from changeflow.kernels.keyed.reduce import KeyedReduce
    >>> from changeflow.kernels.keyed.records import dumps, loads
    >>> from changeflow.kernels.keyed.records import record_frame
    >>> from changeflow.kernels.order import source_stamp
    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> from changeflow.kernels.flush import LatestPerKey
    >>> batch = record_frame([dumps(("a", 1)), dumps(("a", 2)), dumps(("b", 5))],
    ...                      [source_stamp(i, 0) for i in range(3)], [dumps("a"), dumps("a"), dumps("b")])
    >>> kernel = ChangelogRecords(KeyedReduce(lambda x, y: (x[0], x[1] + y[1]), "sum", with_keys=True))
    >>> changes = kernel.process(batch, InMemoryKeyedState())
    >>> buffer = LatestPerKey(KEY_COLUMNS, [VALUE], changelog=False, keep_kinds=True)
    >>> [loads(v) for v in buffer.drain(buffer.merge(buffer.empty(changes), changes))[VALUE]]
    [('a', 3), ('b', 5)]
    """

    def __init__(self, kernel: Any) -> None:
        if not getattr(kernel, "with_keys", False):
            raise ValueError(f"{type(kernel).__name__} must be built with_keys=True to have its output buffered")
        self.kernel = kernel

    # The kernel contract: the wrapped kernel's (WrappingKernel), its outputs as changes.
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        return as_changelog(self.kernel.process(batch, state))

    def on_timer(self, now: int, state: KeyedState) -> pd.DataFrame | None:
        return _changes(self.kernel.on_timer(now, state))

    fire = on_timer  # the name it had before the kernel contract

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        return _changes(self.kernel.on_watermark(watermark, state))

    def flush(self, state: KeyedState) -> pd.DataFrame | None:
        return _changes(self.kernel.flush(state))

    def end_of_input(self, state: KeyedState) -> pd.DataFrame | None:
        return _changes(self.kernel.end_of_input(state))


def _changes(records: pd.DataFrame | None) -> pd.DataFrame | None:
    return None if records is None else as_changelog(records)
