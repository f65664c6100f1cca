"""The broadcast state pattern's operator: a (Keyed)BroadcastProcessFunction over a stream and a broadcast stream.

Flink gives every record of the broadcast stream to each parallel instance of
the operator, and each instance keeps its own copy of the *broadcast state*,
which only ``process_broadcast_element`` writes, so the copies stay equal. Here
an instance is a bucket of the operator's stateful stage: its host sends every
bucket one copy of each broadcast record, keyed by that bucket's *routing key*
(:func:`routing_key`, never a user key: it is not a pickle), and the kernel
keeps the bucket's broadcast states (a dict of maps by state name) in table
``broadcast`` under the bucket-wide key, so they survive a restart with the
checkpoint. Only one copy of a broadcast record (marked :data:`~.co_process.SECOND`)
emits what ``process_broadcast_element`` yields; the others (:data:`QUIET`) apply
it to their bucket's state alone. Flink at parallelism ``n`` emits those outputs
``n`` times; changeflow emits them once, as Flink at parallelism 1.

Order: the records of one call (a micro-batch, or with event time a stretch of
it between two watermarks: the host calls the kernel per stretch) are applied
broadcast records first (in their stamp order), then the others (in theirs), so
a micro-batch's records see the rules of the same micro-batch. Flink's batch execution reads the whole
broadcast input first, which this order gives for a bounded input in batch
mode; in streaming mode Flink interleaves the two inputs as they arrive.

A record of the other input (:data:`~.co_process.FIRST`) is processed as in a
keyed co-process operator: keyed state, timers and ``on_timer`` for a
``KeyedBroadcastProcessFunction``; for a ``BroadcastProcessFunction`` (a stream
without keys) its key is only a spread over the buckets, and the function gets
neither keyed state nor timers. Both read the broadcast state through a
read-only view (``on_timer`` too).
"""

from __future__ import annotations

import zlib
from typing import Any, Callable

import numpy as np
import pandas as pd

from changeflow.kernels.keyed.co_process import FIRST, SECOND, CoCalls, KeyedCoProcess, MarkedChains
from changeflow.kernels.keyed.process import STATE, ProcessContext, _Run
from changeflow.kernels.keyed.records import KEY, VALUE, decode, dumps, fail, loads, timestamp_of
from changeflow.kernels.order import Stamp, stamps_of
from changeflow.kernels.state import KeyedState

#: The mark of a broadcast record's copy that updates its bucket's state without emitting anything.
QUIET = b"\x03"
_ROUTE = b"\x00route:"  # routing keys start so; a pickled key starts with b"\x80"
_TABLE = "broadcast"
_BUCKET_KEY = b""


def routing_key(index: int) -> bytes:
    """The ``index``-th routing key (the host picks, per bucket, one that its hash sends there)."""
    return _ROUTE + index.to_bytes(4, "big")


def is_routing_key(key_blob: Any) -> bool:
    return isinstance(key_blob, bytes) and key_blob.startswith(_ROUTE)


class SpreadKey:
    """The key selector of a stream without keys connected to a broadcast stream: a hash of the record, which
    only spreads the records over the stage's buckets (the function sees no key).

    >>> SpreadKey()(("a", 1)) == SpreadKey()(("a", 1)), 0 <= SpreadKey()("b") < 1 << 32
    (True, True)
    """

    def __call__(self, value: Any) -> int:
        return zlib.crc32(dumps(value))


class BroadcastCalls(CoCalls):
    """A broadcast process function's calls: side 0 ``process_element`` (a read-only view of the broadcast
    state), side 1 ``process_broadcast_element`` (read and write), and ``on_timer`` (read-only).

    ``handles`` is the API's factory of state handles, ``(descriptor, current, operator, writable) -> handle``
    (``current()`` the dict of broadcast states by name); ``states`` is that dict, which the kernel sets for
    each call. ``keyed``: the function is a ``KeyedBroadcastProcessFunction``.
    """

    def __init__(self, function: Any, output_type: Any, name: str, handles: Callable[..., Any],
                 keyed: bool) -> None:
        super().__init__(function, "broadcast", output_type, name)
        self.name = name
        self.handles = handles
        self.keyed = keyed
        self.states: dict = {}

    def call(self, side: int, value: Any, ctx: Any) -> list:
        writable = side == 1
        view = BroadcastContext(ctx, self, writable) if writable or not self.keyed else KeyedReadOnlyContext(ctx, self)
        return super().call(side, value, view)

    def on_timer(self, timestamp: int, ctx: Any) -> list:
        return super().on_timer(timestamp, KeyedReadOnlyContext(ctx, self))

    def state(self, descriptor: Any, writable: bool) -> Any:
        return self.handles(descriptor, lambda: self.states, self.name, writable)


class BroadcastContext:
    """The ``ctx`` of ``process_broadcast_element`` (``writable``) and of a ``BroadcastProcessFunction``'s
    ``process_element`` (read-only): the record's timestamp, the time and watermark, the broadcast state."""

    def __init__(self, ctx: ProcessContext, calls: BroadcastCalls, writable: bool = False) -> None:
        self._ctx = ctx
        self._calls = calls
        self._writable = writable

    def timestamp(self) -> Any:
        return self._ctx.timestamp()

    def current_processing_time(self) -> int:
        return self._ctx.timer_service().current_processing_time()

    def current_watermark(self) -> int:
        return self._ctx.timer_service().current_watermark()

    def get_broadcast_state(self, state_descriptor: Any) -> Any:
        return self._calls.state(state_descriptor, self._writable)


class KeyedReadOnlyContext(BroadcastContext):
    """The ``ctx`` of a ``KeyedBroadcastProcessFunction``'s ``process_element`` and ``on_timer``: also the
    current key, the timer service and (in ``on_timer``) the timer's time domain."""

    def get_current_key(self) -> Any:
        return self._ctx.get_current_key()

    def timer_service(self) -> Any:
        return self._ctx.timer_service()

    def time_domain(self) -> int:
        return self._ctx.time_domain()


class BroadcastProcess(KeyedCoProcess):
    """The kernel of ``stream.connect(rules.broadcast(...)).process(function)`` (see the module); ``function`` a
    :class:`BroadcastCalls`.

    >>> from changeflow.datastream.functions import RuntimeContext
    >>> from changeflow.datastream.state import MapStateDescriptor, broadcast_state_for
    >>> from changeflow.kernels.keyed.records import record_frame
    >>> from changeflow.kernels.order import source_stamp
    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> limits = MapStateDescriptor("limits")
    >>> class Check:  # a KeyedBroadcastProcessFunction
    ...     def process_element(self, value, ctx):
    ...         yield value, value <= (ctx.get_broadcast_state(limits).get("max") or 0)
    ...     def process_broadcast_element(self, value, ctx):
    ...         ctx.get_broadcast_state(limits).put("max", value)
    >>> calls = BroadcastCalls(Check(), None, "Check", broadcast_state_for, keyed=True)
    >>> kernel = BroadcastProcess(calls, "Check", runtime_context=RuntimeContext)
    >>> batch = record_frame([FIRST + dumps(5), SECOND + dumps(7)], [source_stamp(0, 0), source_stamp(0, 1)],
    ...                      [dumps(5), routing_key(0)])
    >>> [loads(v) for v in kernel.process(batch, InMemoryKeyedState())[VALUE]]  # the rule first
    [(5, True)]
    """

    function: BroadcastCalls

    def __init__(self, function: BroadcastCalls, name: str, clock: Any = None, with_keys: bool = False, *,
                 runtime_context: Any = None, side_tags: dict[str, Any] | None = None) -> None:
        if runtime_context is not None and not function.keyed:
            runtime_context = _WithoutKeyedState(runtime_context)
        super().__init__(function, name, clock, with_keys, runtime_context=runtime_context, side_tags=side_tags)

    def arranged(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Broadcast records first, each once (two copies met in one batch partition: the emitting one kept)."""
        marks = np.asarray([v[:1] if isinstance(v, bytes) else b"" for v in batch[VALUE]], dtype=object)
        broadcast = (marks == SECOND) | (marks == QUIET)
        if not broadcast.any():
            return batch
        copies = batch.loc[broadcast].assign(_quiet=marks[broadcast] == QUIET)
        stamps = pd.Series(stamps_of(copies), index=copies.index)
        # Stable: stamp order kept; of the copies of one record, the emitting one (not quiet) first.
        copies = copies.assign(_stamp=stamps).sort_values(["_quiet"], kind="stable")
        copies = copies.loc[~copies["_stamp"].duplicated()].sort_index()
        return pd.concat([copies.drop(columns=["_quiet", "_stamp"]), batch.loc[~broadcast]], ignore_index=True)

    def new_run(self, state: KeyedState, keys: Any) -> _Run:
        return _BroadcastRun(self, state, [k for k in keys if not is_routing_key(k)])

    def element(self, run: _Run, key_blob: bytes, blob: bytes, kind: int, stamp: Stamp) -> None:
        mark = blob[:1]
        if mark == FIRST:
            super().element(run, key_blob, blob, kind, stamp)
        elif mark in (SECOND, QUIET):
            assert isinstance(run, _BroadcastRun)
            run.broadcast_element(decode(blob[1:], kind), timestamp_of(blob[1:]), key_blob, stamp,
                                  emit=mark == SECOND)
        else:
            raise ValueError(f"{self.name}: a record without its input's mark ({mark!r})")


class _BroadcastRun(_Run):
    """A call's run with the bucket's broadcast states loaded (and stored back by ``commit``)."""

    kernel: BroadcastProcess

    def __init__(self, kernel: BroadcastProcess, state: KeyedState, keys: Any) -> None:
        bucket = pd.DataFrame({KEY: np.asarray([_BUCKET_KEY], dtype=object)})
        rows = state.load(_TABLE, bucket)
        self.broadcast = loads(rows[STATE].iloc[0]) if len(rows) and STATE in rows.columns else {}
        self.stored = dumps(self.broadcast)
        kernel.function.states = self.broadcast
        super().__init__(kernel, state, keys)

    def _state_of_current_key(self) -> dict:
        if is_routing_key(self.current):
            raise RuntimeError(f"{self.kernel.name}: keyed state is not available in process_broadcast_element "
                               f"(it has no current key)")
        return super()._state_of_current_key()

    def broadcast_element(self, value: Any, timestamp: int | None, route: bytes, stamp: Stamp, emit: bool) -> None:
        """``process_broadcast_element(value, ctx)``; its outputs emitted when ``emit`` (one copy of the record)."""
        self.current, self.timestamp = route, timestamp
        try:
            outputs = self.kernel.function.call(1, value, ProcessContext(None, self, timestamp))
        except Exception as error:
            raise fail(f"{self.kernel.name}.process_broadcast_element", value, error) from error
        if emit:
            self._emit(outputs, stamp)

    def commit(self) -> None:
        super().commit()
        blob = dumps(self.broadcast)
        if blob != self.stored:
            bucket = pd.DataFrame({KEY: np.asarray([_BUCKET_KEY], dtype=object)})
            kept = bucket.assign(**{STATE: np.asarray([blob], dtype=object)}) if self.broadcast else bucket.iloc[:0]
            self.state.store(_TABLE, bucket, kept)


class _WithoutKeyedState:
    """A runtime context factory giving no keyed state: a ``BroadcastProcessFunction``'s stream has no keys."""

    def __init__(self, factory: Any) -> None:
        self.factory = factory

    def __call__(self, name: str, state_of_current_key: Any = None, **extra: Any) -> Any:
        return self.factory(name, **extra)


class BroadcastChains(MarkedChains):
    """Each input's chain (:class:`MarkedChains`), then every broadcast record (mark ``SECOND``) copied to each
    routing key of ``routes`` (one per bucket, the first copy emitting, the others :data:`QUIET`). Without
    ``routes`` a broadcast record keeps one copy, keyed :func:`routing_key` ``(0)`` (batch mode: the host
    copies it)."""

    def __init__(self, first: Any, second: Any, routes: list[bytes] | None) -> None:
        super().__init__(first, second)
        self.routes = routes

    def process(self, frame: pd.DataFrame) -> pd.DataFrame:
        out = super().process(frame)
        second = np.asarray([isinstance(v, bytes) and v[:1] == SECOND for v in out[VALUE]], dtype=bool)
        if not second.any():
            return out
        rules = out.loc[second].reset_index(drop=True)
        routes = self.routes or [routing_key(0)]
        copies = []
        for i, route in enumerate(routes):
            copy = rules.copy()
            copy[KEY] = np.asarray([route] * len(copy), dtype=object)
            if i:
                copy[VALUE] = np.asarray([QUIET + v[1:] for v in copy[VALUE]], dtype=object)
            copies.append(copy)
        return pd.concat([out.loc[~second]] + copies, ignore_index=True)
