"""The kernel contract: what a host may call on a kernel, and what a kernel may expect of its host.

A *kernel* is one stateful operator's logic, pure (no Spark, no API class): it
reads changes (or DataStream records) a batch at a time and keeps everything it
must remember in a :class:`~changeflow.kernels.state.KeyedState` it is handed
on every call. A *host* runs it: the Spark runtime
(``changeflow.runtime.spark.processor.KernelProcessor``, one hash bucket of keys
per call, state in RocksDB pages) or the testing harness
(:class:`changeflow.testing.KernelHarness`, state in memory). Hosts call only
the methods of :class:`Kernel`; a kernel says what it can do by the attributes
of :class:`Kernel`, never by the presence of a method.

The calls, in the order a host makes them for one batch of a bucket:

1. :meth:`Kernel.bind_clock` once, before anything else: the processing-time
   clock the kernel reads (ms). The Spark host's clock gives a kernel with a
   TTL sweep the micro-batch's timestamp (so write times, expiry and sweeps
   share one clock and a re-run micro-batch sees the same time), and so it
   does a kernel with ``batch_clock`` set (a processing-time window: the
   records of a micro-batch share one arrival time, and its timers fire at
   that clock's time); any other kernel gets the wall clock; the harness's
   gives the time the test sets.
2. :meth:`Kernel.process_frames` with the batch's rows, if it has any (by
   default :meth:`Kernel.process` of them all; a two-input kernel keeps its
   inputs' frames apart).
3. :meth:`Kernel.flush` when the batch carried a flush signal (an upstream
   operator flushed its output buffer, FLIP-365), then
   :meth:`Kernel.end_of_input` once, when every source upstream has ended
   (it may emit only with ``emits_at_end_of_input`` set).
4. From a processing-time timer: :meth:`Kernel.on_timer` when
   ``has_timers`` and :meth:`Kernel.next_timer` is due; :meth:`Kernel.sweep`
   when ``sweep_interval_ms`` is set (and the host can fire timers).

A kernel object keeps no state between calls: the Spark runtime re-creates it
(unpickles it) every micro-batch, and the harness's :meth:`~changeflow.testing.KernelHarness.restore`
does the same to check it. Whatever it caches must be derivable from its
constructor arguments.

Event time: a kernel with ``event_time`` set has event-time timers. The host
calls :meth:`Kernel.on_watermark` when the watermark reaching the operator
advances, after the batch's rows, and the kernel fires the timers due at it
there (windows whose end the watermark passed, state the watermark made
obsolete). When every source upstream has ended, the host calls
``on_watermark(MAX_WATERMARK)`` before ``end_of_input``, as Flink emits
``Long.MAX_VALUE`` at the end of bounded input: every window fires. A kernel
without ``event_time`` is never called with a watermark (the
:class:`KernelBase` default refuses one). Before every call the host sets
``current_watermark`` to the watermark the operator has seen so far
(:data:`MIN_WATERMARK` before the first): the rows of a batch are processed
against the watermark that preceded them (a row of a window the watermark has
closed is late), then ``on_watermark`` moves it on. On Spark a micro-batch
carries watermarks among its rows, where the assigner emitted them
(``changeflow.runtime.spark.event_time``; thousands in a large micro-batch): the
host hands the kernel the batch with them in one call,
:meth:`Kernel.process_with_watermarks` (in step 2, instead of
``process_frames``). Its default (:class:`KernelBase`) cuts the batch at the
watermarks' positions and calls ``process_frames`` and ``on_watermark`` in turn
(:func:`~changeflow.kernels.watermark_batch.apply_by_segments`); a kernel may
override it with one pass that gives the same output (the window aggregation,
:mod:`changeflow.kernels.aggregate.window_agg`).

:class:`KernelBase` gives every optional part its default (no timers, no sweep,
nothing to flush or emit at end of input); a kernel subclasses it and overrides
what it has.
"""

from __future__ import annotations

import time
from typing import Callable, Protocol

import pandas as pd

from changeflow.kernels.state import InMemoryKeyedState, KeyedState
from changeflow.kernels.watermark_batch import apply_by_segments

MAX_WATERMARK = 2**63 - 1
"""The watermark at the end of bounded input (Flink's ``Watermark.MAX_WATERMARK``, ``Long.MAX_VALUE``)."""
MIN_WATERMARK = -(2**63)
"""The watermark before any (Flink's ``Long.MIN_VALUE``)."""

Clock = Callable[[], int]
"""Processing time in ms, as the host gives it (:meth:`Kernel.bind_clock`)."""


def wall_clock() -> int:
    """Processing time in ms from the system clock: a kernel's clock until its host binds one."""
    return int(time.time() * 1000)


class HostClock:
    """A clock a host sets before calling a kernel; the wall clock while unset.

    >>> clock = HostClock()
    >>> clock.set(1000); clock()
    1000
    >>> clock.set(None); clock() > 1000
    True
    """

    def __init__(self, now_ms: int | None = None) -> None:
        self.now_ms = now_ms

    def set(self, now_ms: int | None) -> None:
        """The time the kernel reads from now on (None: the wall clock)."""
        self.now_ms = None if now_ms is None else int(now_ms)

    def __call__(self) -> int:
        return wall_clock() if self.now_ms is None else self.now_ms


class Kernel(Protocol):
    """One stateful operator's logic (see the module docstring for the order of calls).

    Outputs are frames in the kernel's output layout (a changelog frame with
    ``_kind``/``_seq``/``_sub``, or DataStream records ``_value``/``_kind``/``_seq``/``_sub``,
    a record's ``_kind`` its value's RowKind: :mod:`changeflow.kernels.keyed.records`), or
    None for nothing; an empty frame means nothing too.
    """

    @property
    def has_timers(self) -> bool:
        """The kernel has processing-time timers: the host keeps one timer at
        :meth:`next_timer` and calls :meth:`on_timer` when it is due. Read-only for
        the host (a wrapper kernel answers for the kernel it wraps)."""
        ...

    @property
    def event_time(self) -> bool:
        """The kernel has event-time timers: the host calls :meth:`on_watermark` as the watermark
        advances, and with ``MAX_WATERMARK`` before :meth:`end_of_input`. Read-only for the host."""
        ...

    @property
    def emits_at_end_of_input(self) -> bool:
        """:meth:`end_of_input` may emit rows: the host must deliver the end of input to the kernel. A
        kernel with neither this nor ``event_time`` ignores watermarks and the end of input, so a host
        may leave them out (:func:`acts_on_signals`). Read-only for the host."""
        ...

    #: The watermark the operator has seen before the current call (ms); the host sets it.
    current_watermark: int

    #: How far behind its input's watermark the operator's output watermark is held (ms): an
    #: interval join's rows may be that much older than the watermark that emitted them.
    watermark_delay_ms: int

    #: The kernel reads the micro-batch's processing time (Spark's batch timestamp) rather than the wall
    #: clock, in every call of a micro-batch (see step 1 of the module docstring).
    batch_clock: bool

    #: The kernel's state expires (a TTL): the host should call :meth:`sweep`
    #: from a timer at most this often (ms), to reclaim keys that never come
    #: back. None: no sweep. Expiry on access does not depend on it.
    sweep_interval_ms: int | None

    @property
    def operator_name(self) -> str:
        """The operator's name in state metrics (a wrapper gives the wrapped kernel's)."""
        ...

    def bind_clock(self, clock: Clock) -> None:
        """Read processing time from ``clock`` from now on (the host calls it before any other method)."""
        ...

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Fold one batch of input into ``state``; return what it emits.

        The batch holds the keys of one host partition (a hash bucket), in any
        order: the kernel sorts by the bookkeeping stamps. State is read and
        written only through ``state``, a batch of keys at a time.
        """
        ...

    def process_frames(self, frames: list[pd.DataFrame], state: KeyedState) -> pd.DataFrame:
        """The host's entry point for a batch: its rows as the frames they arrived in (one or more).

        :class:`KernelBase` concatenates them and calls :meth:`process`. A kernel
        with two inputs (the join) overrides it: each frame holds one input's
        rows, and the inputs' columns differ, so concatenating them would pad
        each input's rows with the other's columns (and turn integers into floats).
        """
        ...

    def process_with_watermarks(self, frames: list[pd.DataFrame], watermarks: list[tuple[int, int]],
                                state: KeyedState) -> pd.DataFrame | None:
        """A batch's rows (as :meth:`process_frames` takes them) with the watermarks that arrived among them.

        ``watermarks`` are ``(position, watermark)`` pairs, both ascending, every
        watermark above ``current_watermark``: each follows the rows whose ``_seq``
        is at most its position (rows without ``_seq``, DataStream records, precede
        them all). The result must equal, row for row, :meth:`process_frames` of the
        rows up to the first position, then :meth:`on_watermark` of the first
        watermark with what it fires stamped at its position
        (:func:`~changeflow.kernels.watermark_batch.stamp_fired`), and so on, then
        the rows after the last position; rows fired by one watermark may come in
        another order only where ``on_watermark`` gives them no order of its own.
        On return ``current_watermark`` is the last watermark (only with ``event_time``).
        """
        ...

    def next_timer(self, state: KeyedState) -> int | None:
        """When the earliest pending processing-time timer is due (ms), or None (only with ``has_timers``)."""
        ...

    def on_timer(self, now: int, state: KeyedState) -> pd.DataFrame | None:
        """Fire every processing-time timer due at ``now``, earliest first; return what they emit."""
        ...

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        """Event time has reached ``watermark`` (ms): fire the event-time timers due at it, earliest first;
        return what they emit (only with ``event_time``)."""
        ...

    def flush(self, state: KeyedState) -> pd.DataFrame | None:
        """An upstream operator flushed its buffered output: emit what the kernel holds back, if anything."""
        ...

    def end_of_input(self, state: KeyedState) -> pd.DataFrame | None:
        """Every source upstream has ended: emit what waits for the end of input (once per host partition)."""
        ...

    def sweep(self, state: KeyedState, now: int | None = None) -> int | None:
        """Remove the expired state of every key at ``now`` (the clock when None); emit nothing.

        Returns when the oldest surviving state expires (ms), or None when none is left.
        """
        ...

    def process_bounded(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Batch execution: all input of complete keys at once, with fresh state; the final output."""
        ...


class KernelBase:
    """Defaults for the optional parts of :class:`Kernel`: a kernel overrides what it has.

    >>> class Count(KernelBase):
    ...     def process(self, batch, state):
    ...         return batch.assign(n=1)
    >>> k = Count()
    >>> k.has_timers, k.sweep_interval_ms, k.operator_name, k.end_of_input(InMemoryKeyedState())
    (False, None, 'Count', None)
    """

    has_timers: bool = False
    event_time: bool = False
    emits_at_end_of_input: bool = False
    batch_clock: bool = False
    #: The kernel takes TIMESTAMP columns other than its keys as ``datetime64[ns]`` (what Spark's Arrow
    #: conversion gives) rather than as objects: its host then ships them so, which saves converting
    #: every value to a Python object and pickling it as one (several µs per value).
    datetime_columns: bool = False
    current_watermark: int = MIN_WATERMARK
    #: How far behind its input's watermark the operator's output watermark stays (ms): an interval join
    #: holds it back by its largest bound, so that the pairs it emits are not late downstream (Flink's
    #: KeyedCoProcessOperatorWithWatermarkDelay). The host subtracts it from the watermarks it passes on.
    watermark_delay_ms: int = 0
    sweep_interval_ms: int | None = None
    # Class-level default: a kernel whose host binds no clock (a direct call in a test) reads the wall clock.
    clock: Clock = staticmethod(wall_clock)

    @property
    def operator_name(self) -> str:
        return type(self).__name__

    def bind_clock(self, clock: Clock) -> None:
        self.clock = clock

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        raise NotImplementedError(f"{type(self).__name__} does not implement process()")

    def process_frames(self, frames: list[pd.DataFrame], state: KeyedState) -> pd.DataFrame:
        return self.process(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True), state)

    def process_with_watermarks(self, frames: list[pd.DataFrame], watermarks: list[tuple[int, int]],
                                state: KeyedState) -> pd.DataFrame | None:
        """The default: segment by segment (:func:`~changeflow.kernels.watermark_batch.apply_by_segments`)."""
        if not watermarks:
            return self.process_frames(list(frames), state) if frames else None
        return apply_by_segments(self, frames, watermarks, state)

    def next_timer(self, state: KeyedState) -> int | None:
        return None

    def on_timer(self, now: int, state: KeyedState) -> pd.DataFrame | None:
        return None

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        raise NotImplementedError(f"{self.operator_name}: event time (on_watermark) reaches only kernels with "
                                  "event-time timers (event_time set), and this one has none")

    def flush(self, state: KeyedState) -> pd.DataFrame | None:
        return None

    def end_of_input(self, state: KeyedState) -> pd.DataFrame | None:
        return None

    def sweep(self, state: KeyedState, now: int | None = None) -> int | None:
        return None

    def process_bounded(self, batch: pd.DataFrame) -> pd.DataFrame:
        """The default batch algorithm: :meth:`process` over fresh in-memory state, then the end of input
        (:func:`end_of_input_output`)."""
        state = InMemoryKeyedState()
        out = self.process(batch, state)
        combined = concat_outputs(out, end_of_input_output(self, state))
        return out if combined is None else combined


class WrappingKernel(KernelBase):
    """A kernel that adds to another, ``self.kernel``: every contract call it does not override is the
    wrapped kernel's (the state TTL of :mod:`changeflow.kernels.ttl`, the changelog view of
    :mod:`changeflow.kernels.keyed.buffered`)."""

    kernel: Kernel

    @property
    def has_timers(self) -> bool:
        return self.kernel.has_timers

    @property
    def event_time(self) -> bool:  # type: ignore[override]  # the wrapped kernel's answer
        return self.kernel.event_time

    @property
    def emits_at_end_of_input(self) -> bool:  # type: ignore[override]  # the wrapped kernel's answer
        return self.kernel.emits_at_end_of_input

    @property
    def operator_name(self) -> str:
        return self.kernel.operator_name

    @property
    def batch_clock(self) -> bool:  # type: ignore[override]  # the wrapped kernel's answer
        return self.kernel.batch_clock

    @property
    def watermark_delay_ms(self) -> int:  # type: ignore[override]  # the wrapped kernel's
        return self.kernel.watermark_delay_ms

    @property
    def current_watermark(self) -> int:  # type: ignore[override]  # the wrapped kernel's
        return self.kernel.current_watermark

    @current_watermark.setter
    def current_watermark(self, value: int) -> None:
        self.kernel.current_watermark = value

    def bind_clock(self, clock: Clock) -> None:
        self.kernel.bind_clock(clock)

    def next_timer(self, state: KeyedState) -> int | None:
        return self.kernel.next_timer(state)

    def on_timer(self, now: int, state: KeyedState) -> pd.DataFrame | None:
        return self.kernel.on_timer(now, state)

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        return self.kernel.on_watermark(watermark, state)

    def flush(self, state: KeyedState) -> pd.DataFrame | None:
        return self.kernel.flush(state)

    def end_of_input(self, state: KeyedState) -> pd.DataFrame | None:
        return self.kernel.end_of_input(state)


def end_of_input_output(kernel: Kernel, state: KeyedState) -> pd.DataFrame | None:
    """What a kernel emits when every source upstream has ended: for an event-time kernel the
    final watermark first (``MAX_WATERMARK``: every window fires), then :meth:`Kernel.end_of_input`.
    Every host calls this, so the order is the same in Spark, in the harness and in batch."""
    fired = kernel.on_watermark(MAX_WATERMARK, state) if kernel.event_time else None
    ended = kernel.end_of_input(state)
    if ended is not None and len(ended) and not kernel.emits_at_end_of_input:
        # A host that trusts the declaration would never have called it (acts_on_signals): say so here.
        raise TypeError(f"{kernel.operator_name} emitted rows at the end of input but does not declare "
                        "emits_at_end_of_input (the kernel contract)")
    return concat_outputs(fired, ended)


def acts_on_signals(kernel: Kernel) -> bool:
    """Whether ``kernel`` acts on watermarks or on the end of input (``event_time`` or
    ``emits_at_end_of_input``): a host may leave both signals out for a kernel that does neither."""
    return kernel.event_time or kernel.emits_at_end_of_input


def concat_outputs(*outputs: pd.DataFrame | None) -> pd.DataFrame | None:
    """Outputs one after the other, skipping None and empty ones (None when all are).

    >>> concat_outputs(None, pd.DataFrame({"a": [1]}), pd.DataFrame({"a": []}))["a"].tolist()
    [1]
    >>> concat_outputs(None, None) is None
    True
    """
    parts = [o for o in outputs if o is not None and len(o)]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
