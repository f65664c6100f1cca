"""Keyed reduce: Flink's ``StreamGroupedReduceOperator`` over a bucket of keys at a time.

Streaming mode emits the running value after every record (one output per
input, stamped like it); batch mode (:meth:`KeyedReduce.final`) emits each
key's final value once, after all its input, as Flink's batch execution does.
The first record of a key is its initial value; the function is called as
``reduce(running, record)``. A function with an ``accept_first(record)`` method (the
built-in ``sum``, which checks the summed field is a number) has it called on each key's
first record, which ``reduce`` never sees.

State: table ``acc`` holds ``(_key, _acc)``, the pickled running value per key,
loaded and stored once per call for all keys of the batch.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import (KEY, VALUE, decode, dumps, fail, kind_of, loads, record_frame,
                                              records_of, timestamp_of)
from changeflow.kernels.order import sort_records, stamp_arrays, stamps_of
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.keyed.user import ContextFactory, close_functions, method_or_self, open_functions
from changeflow.kernels.state import KeyedState

ACC = "_acc"
_TABLE = "acc"


class KeyedReduce(KernelBase):
    """Folds records per key with ``reduce(running, record)``.

    ``function`` is the user's ReduceFunction (its ``open``/``close`` are called
    per call, ``open`` with a context from ``runtime_context``: :mod:`.user`) or
    a callable; ``name`` names it in errors. With ``with_keys`` the
    streaming output also has the ``_key`` column (the flush buffer keys by it).

    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> from changeflow.kernels.keyed.records import record_frame
    >>> from changeflow.kernels.order import source_stamp
    >>> batch = record_frame([dumps(("a", 1)), dumps(("b", 2)), dumps(("a", 3))],
    ...                      [source_stamp(i, 0) for i in range(3)], [dumps("a"), dumps("b"), dumps("a")])
    >>> sum_ = KeyedReduce(lambda x, y: (x[0], x[1] + y[1]), "sum")
    >>> [loads(v) for v in sum_.process(batch, InMemoryKeyedState())[VALUE]]
    [('a', 1), ('b', 2), ('a', 4)]
    >>> sorted(loads(v) for v in sum_.final(batch)[VALUE])
    [('a', 4), ('b', 2)]
    """

    def __init__(self, function: Any, name: str, with_keys: bool = False, *,
                 runtime_context: ContextFactory | None = None) -> None:
        self.function = function
        self.runtime_context = runtime_context
        self.name = name
        self.with_keys = with_keys

    # --- streaming: one output per input -----------------------------------------------
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        batch = sort_records(batch)
        keys = pd.DataFrame({KEY: pd.unique(batch[KEY])})
        stored = state.load(_TABLE, keys)
        running: dict[bytes, Any] = {}
        if len(stored) and ACC in stored.columns:
            running = {k: loads(v) for k, v in zip(stored[KEY], stored[ACC], strict=True)}
        outputs, kinds = self._fold(batch, running, emit_each=True)
        # The running values are pickled whole (a Row with its kind), as Flink's state serializer keeps them.
        state.store(_TABLE, keys, pd.DataFrame({KEY: list(running), ACC: [dumps(v) for v in running.values()]}))
        return record_frame(outputs, stamp_arrays(batch), batch[KEY].to_numpy() if self.with_keys else None, kinds)

    # --- batch: one output per key ------------------------------------------------------
    def final(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Each key's final value, stamped with the key's last record (all of a key's input is in ``batch``)."""
        batch = sort_records(batch)
        running: dict[bytes, Any] = {}
        self._fold(batch, running, emit_each=False)
        last = batch.drop_duplicates(KEY, keep="last")
        stamps = dict(zip(last[KEY], stamps_of(last), strict=True))
        return records_of(list(running.values()), [stamps[k] for k in running])

    def process_bounded(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Batch execution (the kernel contract): :meth:`final`."""
        return self.final(batch)

    def _fold(self, batch: pd.DataFrame, running: dict[bytes, Any],
              emit_each: bool) -> tuple[list[bytes], list[int]]:
        """Folds ``batch`` into ``running``; with ``emit_each``, each running value's ``_value`` and ``_kind``."""
        opened = open_functions([self.function], self.name, self.runtime_context)
        reduce = method_or_self(self.function, "reduce")
        first = getattr(self.function, "accept_first", None)
        outputs: list[bytes] = []
        kinds: list[int] = []
        try:
            for key, blob, kind in zip(batch[KEY], batch[VALUE], batch[KIND].tolist(), strict=True):
                record = decode(blob, kind)
                try:
                    if key in running:
                        value = reduce(running[key], record)
                    else:
                        value = first(record) if first is not None else record
                except Exception as error:
                    raise fail(self.name, record, error, loads(key)) from error
                running[key] = value
                if emit_each:  # the running value keeps the record's event timestamp, as Flink's does
                    outputs.append(dumps(value, timestamp_of(blob)))
                    kinds.append(kind_of(value))
        finally:
            close_functions(opened)
        return outputs, kinds
