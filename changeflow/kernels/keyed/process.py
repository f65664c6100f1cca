"""Runs a user's ``KeyedProcessFunction`` over a bucket of keys at a time.

Records are processed in stamp order; before each one the runner makes its
key current, so the function's state handles (``ValueState``, ``ListState``,
``MapState``, ``ReducingState``, ``AggregatingState``, obtained once in
``open()`` from the runtime context) read and write that key's values. Each
output gets the record's stamp extended by its index (a fan-out, see
:mod:`.records`), so downstream order is Flink's.

State: table ``keyed`` holds ``(_key, _state)``, a pickled dict of the key's
state values by descriptor name (a value, a list, a dict or an accumulator),
loaded and stored once per call for all keys of the batch. A key whose dict
became empty (every state cleared) is deleted.

Processing-time timers: table ``timers`` holds every pending ``(key, time)`` of
the bucket under one reserved key, so the Spark runtime needs one Spark timer
per bucket (at the earliest time) and :meth:`KeyedProcess.fire` finds the due
timers without knowing the keys. In streaming mode a timer fires in the first
micro-batch whose processing time has reached it; timers still pending when a
bounded input ends do not fire, as in Flink's streaming mode. In batch mode
every timer of a key fires, in time order, right after the key's input, as in
Flink's batch execution (both checked against PyFlink 2.3).

Event-time timers: table ``event_timers``, the same layout. The kernel has
``event_time`` set, so its host calls :meth:`KeyedProcess.on_watermark` when
the watermark advances: every timer ``t <= watermark`` fires (Flink's rule),
earliest first over the bucket's keys, with ``ctx.time_domain()`` EVENT_TIME
and ``ctx.timestamp()`` ``t``; its outputs carry ``t`` as their event
timestamp. At the end of bounded input the watermark is ``MAX_WATERMARK`` and
every event-time timer fires; in batch mode a key's event-time timers fire
after its input, before its processing-time timers, as Flink's batch
execution does. ``ctx.timestamp()`` in ``process_element`` is the record's
event timestamp (None when it has none), and outputs keep it.

Side outputs: a value yielded as ``(output_tag, value)`` (from ``process_element``
or ``on_timer``) is a record of that side output, in the kernel's one output
among the main records, its ``_value`` marked (:func:`~.records.side_mark`);
the host splits them. The kernel is told which side outputs are read
(``side_tags``) and drops the values of any other, as Flink drops a side output
nobody reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.common.typeinfo import conform
from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import (KEY, VALUE, decode, dumps, fail, kind_of, loads, output_tag_of,
                                              record_frame, side_mark, timestamp_of)
from changeflow.kernels.order import Stamp, child_stamp, key_end_stamp, sort_records, stamps_of, timer_stamp
from changeflow.kernels.contract import MAX_WATERMARK, MIN_WATERMARK, KernelBase, wall_clock
from changeflow.kernels.keyed.user import (EVENT_TIME, PROCESSING_TIME, ContextFactory, close_functions,
                                           open_functions)
from changeflow.kernels.state import KeyedState

STATE = "_state"
_TABLE = "keyed"


class KeyedProcess(KernelBase):
    """The kernel of ``KeyedStream.process(KeyedProcessFunction)``.

    >>> from changeflow.datastream.functions import KeyedProcessFunction, RuntimeContext
    >>> from changeflow.datastream.state import ValueStateDescriptor
    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> from changeflow.kernels.keyed.records import record_frame
    >>> from changeflow.kernels.order import source_stamp
    >>> class Count(KeyedProcessFunction):
    ...     def open(self, ctx): self.n = ctx.get_state(ValueStateDescriptor("n"))
    ...     def process_element(self, value, ctx):
    ...         self.n.update((self.n.value() or 0) + 1)
    ...         yield ctx.get_current_key(), self.n.value()
    >>> batch = record_frame([dumps(k) for k in "aba"], [source_stamp(i, 0) for i in range(3)],
    ...                      [dumps(k) for k in "aba"])
    >>> state = InMemoryKeyedState()
    >>> [loads(v) for v in KeyedProcess(Count(), "Count", runtime_context=RuntimeContext).process(batch, state)[VALUE]]
    [('a', 1), ('b', 1), ('a', 2)]
    >>> [loads(v) for v in KeyedProcess(Count(), "Count", runtime_context=RuntimeContext).process(batch, state)[VALUE]]
    [('a', 3), ('b', 2), ('a', 4)]
    """

    has_timers = True  # processing-time timers: next_timer / on_timer (the kernel contract)
    event_time = True  # event-time timers: on_watermark (the kernel contract)

    def __init__(self, function: Any, name: str, clock: Any = None, with_keys: bool = False, *,
                 runtime_context: ContextFactory | None = None, side_tags: dict[str, Any] | None = None) -> None:
        self.function = function
        # The side outputs read downstream, their tag ids -> the tags' TypeInformation (or None): their values
        # are converted to it and emitted marked; any other side output's are dropped.
        self.side_tags = side_tags or {}
        # Builds the context open() gets (the API's RuntimeContext; see .user): its keyed state
        # reads and writes the current key's values, which this kernel keeps.
        self.runtime_context = runtime_context
        self.name = name
        # ctx.timer_service().current_processing_time(): the host's clock (Spark: the micro-batch's timestamp).
        self.clock = clock or wall_clock
        # Streaming output also has the ``_key`` column (the flush buffer keys by it).
        self.with_keys = with_keys

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Processes a batch of records (streaming: timers fire later, through :meth:`fire`)."""
        batch = self.arranged(sort_records(batch))
        run = self.new_run(state, pd.unique(batch[KEY]))
        try:
            for key_blob, blob, kind, stamp in zip(batch[KEY], batch[VALUE], batch[KIND].tolist(), stamps_of(batch),
                                                   strict=True):
                self.element(run, key_blob, blob, kind, stamp)
        finally:
            close_functions(run.opened)
        run.commit()
        return run.output()

    def arranged(self, batch: pd.DataFrame) -> pd.DataFrame:
        """The records of a call (in stamp order) in the order they are processed: as they are here."""
        return batch

    def new_run(self, state: KeyedState, keys: Any) -> "_Run":
        """One call's state, timers and outputs for ``keys`` (a subclass may give its own run)."""
        return _Run(self, state, keys)

    def element(self, run: "_Run", key_blob: bytes, blob: bytes, kind: int, stamp: Stamp) -> None:
        """Processes one record (``blob`` its ``_value``) of the current call ``run``: ``process_element``."""
        run.process_element(key_blob, decode(blob, kind), stamp, timestamp_of(blob), self.function.process_element)

    def process_bounded(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Batch mode: all of each key's input, then every timer of the key, as Flink's batch execution.

        Flink's batch execution fires a key's pending processing-time timers,
        in time order, once the key's input ends.
        """
        from changeflow.kernels.state import InMemoryKeyedState

        batch = self.arranged(sort_records(batch))
        state = InMemoryKeyedState()
        run = self.new_run(state, pd.unique(batch[KEY]))
        try:
            for key_blob, group in batch.groupby(KEY, sort=False):
                assert isinstance(key_blob, bytes)  # the group's value of the pickled-key column
                for blob, kind, stamp in zip(group[VALUE], group[KIND].tolist(), stamps_of(group), strict=True):
                    self.element(run, key_blob, blob, kind, stamp)
                # After every output of the key's last record: its event-time timers (the watermark is
                # Long.MAX_VALUE at the key's end), then the others.
                last = stamps_of(group.iloc[-1:])[0]
                self.current_watermark = MAX_WATERMARK
                run.fire_timers(MAX_WATERMARK, only_key=key_blob, stamp_base=key_end_stamp(last, event=True),
                                event=True)
                self.current_watermark = MIN_WATERMARK
                run.fire_timers(None, only_key=key_blob, stamp_base=key_end_stamp(last, event=False))
        finally:
            close_functions(run.opened)
        return run.output()

    def on_timer(self, now: int, state: KeyedState) -> pd.DataFrame:
        """Streaming: calls ``on_timer`` for every timer due at ``now``, in time order (timers are bucket-wide)."""
        run = self.new_run(state, [])
        try:
            run.fire_timers(now, stamp_base=None)
        finally:
            close_functions(run.opened)
        run.commit()
        return run.output()

    fire = on_timer  # the name it had before the kernel contract

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame:
        """Event time reached ``watermark``: every event-time timer ``t <= watermark`` fires, earliest first."""
        self.current_watermark = watermark  # what current_watermark() reads in on_timer, as in Flink
        run = self.new_run(state, [])
        try:
            run.fire_timers(watermark, stamp_base=None, event=True)
        finally:
            close_functions(run.opened)
        run.commit()
        return run.output()

    def next_timer(self, state: KeyedState) -> int | None:
        """The earliest pending timer of the bucket, or None."""
        timers = _load_timers(state)
        return min((t for ts in timers.values() for t in ts), default=None)


# Timers of a whole bucket are kept under one reserved key (no pickled key is empty), so that
# a bucket's due timers are found without knowing its keys: one row per (key, time).
_TIMER_TABLE = "timers"
_EVENT_TIMER_TABLE = "event_timers"
_BUCKET_KEY = b""
_TIMER_KEY, _TIME = "_timer_key", "_time"


def _load_timers(state: KeyedState, table: str = _TIMER_TABLE) -> dict[bytes, set[int]]:
    rows = state.load(table, pd.DataFrame({KEY: np.asarray([_BUCKET_KEY], dtype=object)}))
    timers: dict[bytes, set[int]] = {}
    if len(rows) and _TIME in rows.columns:
        for k, t in zip(rows[_TIMER_KEY], rows[_TIME], strict=True):
            timers.setdefault(k, set()).add(int(t))
    return timers


class _Run:
    """One call of the kernel: the keys' state values and timers, the function opened, outputs."""

    def __init__(self, kernel: KeyedProcess, state: KeyedState, keys: Any) -> None:
        self.kernel = kernel
        self.state = state
        self.keys = pd.DataFrame({KEY: np.asarray(list(keys), dtype=object)})
        stored = state.load(_TABLE, self.keys) if len(self.keys) else pd.DataFrame()
        self.values: dict[bytes | None, dict] = {}
        if len(stored) and STATE in stored.columns:
            self.values = {k: loads(v) for k, v in zip(stored[KEY], stored[STATE], strict=True)}
        self.timers = _load_timers(state)
        self.timers_changed = False
        self.event_timers = _load_timers(state, _EVENT_TIMER_TABLE)
        self.event_timers_changed = False
        self.timestamp: int | None = None  # the event timestamp outputs get (the record's or the timer's)
        self.current: bytes | None = None
        self.out_values: list[bytes] = []
        self.out_kinds: list[int] = []
        self.out_keys: list[bytes] = []
        self.out_stamps: list[Stamp] = []
        self.opened = open_functions([kernel.function], kernel.name, kernel.runtime_context,
                                     self._state_of_current_key, clock=lambda: kernel.clock())

    def _current_key(self) -> bytes:
        # Timers and outputs come only from the ProcessContext that process_element and fire_timers build
        # after setting the current key.
        assert self.current is not None, "no current key outside process_element / on_timer"
        return self.current

    def _state_of_current_key(self) -> dict:
        # State read in open() has no current key yet: it reads the None key's (empty) values
        # (Flink raises there instead).
        if self.current not in self.values:
            # A key first touched by a timer is not among the batch's keys: load it now.
            self._load_key(self.current)
        return self.values.setdefault(self.current, {})

    def _load_key(self, key_blob: bytes | None) -> None:
        keys = pd.DataFrame({KEY: np.asarray([key_blob], dtype=object)})
        if not (self.keys[KEY] == key_blob).any():
            self.keys = pd.concat([self.keys, keys], ignore_index=True)
        stored = self.state.load(_TABLE, keys)
        if len(stored) and STATE in stored.columns:
            self.values[key_blob] = loads(stored[STATE].iloc[0])

    def process_element(self, key_blob: bytes, record: Any, stamp: Stamp, timestamp: int | None,
                        call: Any) -> None:
        """``call(record, ctx)`` (the function's method for the record) with ``key_blob`` the current key."""
        self.current = key_blob
        self.timestamp = timestamp
        key = loads(key_blob)
        try:
            emitted = call(record, ProcessContext(key, self, timestamp))
            outputs = list(emitted) if emitted is not None else []
        except Exception as error:
            raise fail(self.kernel.name, record, error, key) from error
        self._emit(outputs, stamp)

    def fire_timers(self, now: int | None, stamp_base: Stamp | None, only_key: bytes | None = None,
                    event: bool = False) -> None:
        """Fires due timers (all of ``only_key``'s when ``now`` is None), earliest first; timers set meanwhile too.

        ``event``: the event-time timers (due when ``t <= now``, the watermark), else the processing-time ones.
        """
        fired = 0
        timers = self.event_timers if event else self.timers
        while True:
            due = [(t, k) for k, ts in timers.items() if only_key is None or k == only_key
                   for t in ts if now is None or t <= now]
            if not due:
                return
            t, k = min(due)
            timers[k].discard(t)
            if event:
                self.event_timers_changed = True
            else:
                self.timers_changed = True
            self.current = k
            # An event-time timer's outputs carry its time (Flink's TimestampedCollector); a processing-time
            # timer's none.
            self.timestamp = t if event else None
            key = loads(k)
            domain = EVENT_TIME if event else PROCESSING_TIME
            try:
                emitted = self.kernel.function.on_timer(t, ProcessContext(key, self, t, domain))
                outputs = list(emitted) if emitted is not None else []
            except Exception as error:
                raise fail(f"{self.kernel.name}.on_timer", f"timer at {t}", error, key) from error
            # Outputs of timers sort after every source-stamped record of their micro-batch (.order).
            base = stamp_base if stamp_base is not None else timer_stamp(t, event)
            self._emit(outputs, child_stamp(base, fired))
            fired += 1

    def register(self, t: int) -> None:
        self.timers.setdefault(self._current_key(), set()).add(int(t))
        self.timers_changed = True

    def delete(self, t: int) -> None:
        self.timers.get(self._current_key(), set()).discard(int(t))
        self.timers_changed = True

    def register_event(self, t: int) -> None:
        self.event_timers.setdefault(self._current_key(), set()).add(int(t))
        self.event_timers_changed = True

    def delete_event(self, t: int) -> None:
        self.event_timers.get(self._current_key(), set()).discard(int(t))
        self.event_timers_changed = True

    def _emit(self, outputs: list[Any], stamp: Stamp) -> None:
        current = self._current_key()
        for i, output in enumerate(outputs):
            mark = b""
            tag = output_tag_of(output)
            if tag is not None:
                if tag not in self.kernel.side_tags:
                    continue
                mark, output = side_mark(tag), _side_value(self.kernel, tag, output[1])
            self.out_values.append(mark + dumps(output, self.timestamp))
            self.out_kinds.append(kind_of(output))
            self.out_keys.append(current)
            self.out_stamps.append(child_stamp(stamp, i))

    def commit(self) -> None:
        kept = [(k, dumps(v)) for k, v in self.values.items() if v]
        if len(self.keys):
            self.state.store(_TABLE, self.keys, pd.DataFrame({KEY: np.asarray([k for k, _ in kept], dtype=object),
                                                              STATE: np.asarray([b for _, b in kept], dtype=object)}))
        if self.timers_changed:
            _store_timers(self.state, _TIMER_TABLE, self.timers)
        if self.event_timers_changed:
            _store_timers(self.state, _EVENT_TIMER_TABLE, self.event_timers)

    def output(self) -> pd.DataFrame:
        return record_frame(self.out_values, self.out_stamps, self.out_keys if self.kernel.with_keys else None,
                            self.out_kinds)


def _side_value(kernel: KeyedProcess, tag: str, value: Any) -> Any:
    """``value`` converted to the declared type of side output ``tag`` (PyFlink serializes it with that type)."""
    type_info = kernel.side_tags[tag]
    if type_info is None or not type_info.is_declared():
        return value
    return conform(type_info, value, f"the side output {tag!r} of {kernel.name}")


def _store_timers(state: KeyedState, table: str, timers: dict[bytes, set[int]]) -> None:
    pairs = sorted((k, t) for k, ts in timers.items() for t in ts)
    bucket = pd.DataFrame({KEY: np.asarray([_BUCKET_KEY], dtype=object)})
    state.store(table, bucket, pd.DataFrame({
        KEY: np.asarray([_BUCKET_KEY] * len(pairs), dtype=object),
        _TIMER_KEY: np.asarray([k for k, _ in pairs], dtype=object),
        _TIME: np.asarray([t for _, t in pairs], dtype=np.int64)}))


class _TimerService:
    """Processing-time and event-time timers of the current key, and the operator's watermark."""

    def __init__(self, run: _Run | None) -> None:
        self._run = run

    def current_processing_time(self) -> int:
        return self._run.kernel.clock() if self._run else wall_clock()

    def current_watermark(self) -> int:
        # Flink's Long.MIN_VALUE before the first watermark (and in a stateless ProcessFunction here).
        return self._run.kernel.current_watermark if self._run else MIN_WATERMARK

    def _keyed(self) -> _Run:
        if self._run is None:
            raise RuntimeError("timers are only available to functions applied on a KeyedStream")
        return self._run

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._keyed().register(timestamp)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._keyed().delete(timestamp)

    def register_event_time_timer(self, timestamp: int) -> None:
        self._keyed().register_event(timestamp)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._keyed().delete_event(timestamp)


class ProcessContext:
    """The ``ctx`` a ``ProcessFunction``/``KeyedProcessFunction`` gets: the current key, the timer
    service, and (in ``on_timer``) the firing timer's time. A stateless ``process`` in a chain
    (:mod:`changeflow.kernels.chain`) gets one without a key or timers."""

    def __init__(self, key: Any, run: _Run | None = None, timestamp: int | None = None,
                 time_domain: int = PROCESSING_TIME) -> None:
        self._key = key
        self._run = run
        self._timestamp = timestamp
        self._time_domain = time_domain

    def get_current_key(self) -> Any:
        return self._key

    def timer_service(self) -> _TimerService:
        return _TimerService(self._run)

    def timestamp(self) -> Any:
        """The record's event timestamp (None when it has none), or in ``on_timer`` the timer's time."""
        return self._timestamp

    def time_domain(self) -> int:
        """In ``on_timer``: the firing timer's ``TimeDomain`` value (EVENT_TIME 0, PROCESSING_TIME 1)."""
        return self._time_domain
