"""Runs a user's ``KeyedProcessFunction`` over a bucket of keys at a time.

Records are processed in stamp order; before each one the runner makes its
key current, so the function's ``ValueState`` handles (obtained once in
``open()`` from the runtime context) read and write that key's values. Each
output gets the record's stamp extended by its index (a fan-out, see
:mod:`.records`), so downstream order is Flink's.

State: table ``keyed`` holds ``(_key, _state)``, a pickled dict of the key's
state values by descriptor name, loaded and stored once per call for all keys
of the batch. A key whose dict became empty (every state cleared) is deleted.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.keyed.records import KEY, ORD, VALUE, child_stamp, dumps, fail, loads
from changeflow.kernels.state import KeyedState

STATE = "_state"
_TABLE = "keyed"


class KeyedProcess:
    """The kernel of ``KeyedStream.process(KeyedProcessFunction)``.

    >>> from changeflow.datastream.functions import KeyedProcessFunction
    >>> from changeflow.datastream.state import ValueStateDescriptor
    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> from changeflow.kernels.keyed.records import source_stamp
    >>> class Count(KeyedProcessFunction):
    ...     def open(self, ctx): self.n = ctx.get_state(ValueStateDescriptor("n"))
    ...     def process_element(self, value, ctx):
    ...         self.n.update((self.n.value() or 0) + 1)
    ...         yield ctx.get_current_key(), self.n.value()
    >>> batch = pd.DataFrame({KEY: [dumps(k) for k in "aba"], VALUE: [dumps(k) for k in "aba"],
    ...                       ORD: [source_stamp(i, 0) for i in range(3)]})
    >>> state = InMemoryKeyedState()
    >>> [loads(v) for v in KeyedProcess(Count(), "Count").process(batch, state)[VALUE]]
    [('a', 1), ('b', 1), ('a', 2)]
    >>> [loads(v) for v in KeyedProcess(Count(), "Count").process(batch, state)[VALUE]]
    [('a', 3), ('b', 2), ('a', 4)]
    """

    def __init__(self, function: Any, name: str) -> None:
        self.function = function
        self.name = name

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        from changeflow.datastream.functions import RuntimeContext

        batch = batch.sort_values(ORD, kind="stable", ignore_index=True)
        keys = pd.DataFrame({KEY: pd.unique(batch[KEY])})
        stored = state.load(_TABLE, keys)
        values: dict[bytes, dict] = {}
        if len(stored) and STATE in stored.columns:
            values = {k: loads(v) for k, v in zip(stored[KEY], stored[STATE])}
        current: dict[str, Any] = {}

        def state_of_current_key() -> dict:
            return values.setdefault(current["key"], {})

        self.function.open(RuntimeContext(self.name, state_of_current_key=state_of_current_key))
        out_values: list[bytes] = []
        out_stamps: list[bytes] = []
        try:
            for key_blob, blob, stamp in zip(batch[KEY], batch[VALUE], batch[ORD]):
                record = loads(blob)
                key = loads(key_blob)
                current["key"] = key_blob
                ctx = _Context(key)
                try:
                    emitted = self.function.process_element(record, ctx)
                    outputs = list(emitted) if emitted is not None else []
                except Exception as error:
                    raise fail(self.name, record, error, key) from error
                for i, output in enumerate(outputs):
                    out_values.append(dumps(output))
                    out_stamps.append(child_stamp(stamp, i))
        finally:
            self.function.close()
        kept = [(k, dumps(v)) for k, v in values.items() if v]
        state.store(_TABLE, keys, pd.DataFrame({KEY: [k for k, _ in kept], STATE: [b for _, b in kept]}))
        return pd.DataFrame({VALUE: np.asarray(out_values, dtype=object), ORD: np.asarray(out_stamps, dtype=object)})


class _TimerService:
    """Tells the time. Timers are not supported yet: registering one fails loudly instead of never firing."""

    def current_processing_time(self) -> int:
        return int(time.time() * 1000)

    def current_watermark(self) -> int:
        return -(1 << 63)

    def _unsupported(self, what: str) -> None:
        raise NotImplementedError(f"{what} timers are not supported yet by changeflow's KeyedProcessFunction")

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._unsupported("processing-time")

    def register_event_time_timer(self, timestamp: int) -> None:
        self._unsupported("event-time")

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._unsupported("processing-time")

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._unsupported("event-time")


class _Context:
    def __init__(self, key: Any) -> None:
        self._key = key

    def get_current_key(self) -> Any:
        return self._key

    def timer_service(self) -> _TimerService:
        return _TimerService()

    def timestamp(self) -> Any:
        return None  # records carry no timestamps (no watermark strategy)
