"""Processing-time windows and triggers of the DataStream API: Flink's ``WindowOperator`` on the clock.

:class:`ProcessingTimeWindow` is the window kernel of :mod:`.event_time` with
processing-time timers (``has_timers``, see :mod:`changeflow.kernels.contract`).
It runs two cases:

- a processing-time assigner (``TumblingProcessingTimeWindows``,
  ``SlidingProcessingTimeWindows``, ``ProcessingTimeSessionWindows``:
  :class:`~.event_time.EventWindows` with ``processing_time``): a record goes
  to the windows of its arrival time, the processing time the kernel reads
  from its clock when it processes the record (on Spark the micro-batch's
  time, shared by the micro-batch's records; sessions merge on it). A record
  needs no timestamp and is never late. With the default
  ``ProcessingTimeTrigger`` a window fires on a processing-time timer at its
  ``max_timestamp`` (``end - 1``) and its state is dropped then (Flink's
  cleanup time of a processing-time window: no allowed lateness). The
  kernel has no event-time timers: it never sees a watermark, and the
  stream's watermarks pass it unchanged (the host forwards them);
- a processing-time trigger (``ProcessingTimeTrigger``,
  ``ContinuousProcessingTimeTrigger``, possibly purging) on an event-time,
  count or global window: windows are assigned, late and dropped by event
  time as in :mod:`.event_time`, and fire on the trigger's processing-time
  timers.

``on_timer(now)`` fires every pending trigger timer ``t <= now``, earliest
first (then by key and window), each firing's outputs stamped after the
micro-batch's records (:func:`~changeflow.kernels.order.timer_stamp`) and
carrying the window's ``max_timestamp`` as event timestamp, as Flink's; a
processing-time window whose ``max_timestamp`` has passed is dropped after
its timers fired. A timer registered while timers fire (a continuous
trigger's next firing) fires in the same call when ``now`` has reached it, as
in Flink, so a clock that jumps several intervals fires a continuous trigger
once per interval passed; one not later than the firing timer waits for the
next call. Nothing fires at the end of input in streaming mode: a window whose end the
clock has not reached when a bounded input ends never fires, as Flink's
streaming job ends with its input and drops it (checked with PyFlink 2.3).
Batch mode (:meth:`ProcessingTimeWindow.process_bounded`) is Flink's batch
execution: after a key's input its event-time timers fire at the final
watermark, then every processing-time timer, whatever its time, so every
processing-time window fires once (its function sees ``Long.MAX_VALUE`` as the
watermark, as in PyFlink 2.3) and a continuous trigger fires at every step up
to the window's end.

``next_timer`` and ``on_timer`` scan the bucket's windows (as ``on_watermark``
does for event time): the earliest trigger timer, and for a processing-time
window its ``max_timestamp``.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.contract import MAX_WATERMARK, concat_outputs, end_of_input_output
from changeflow.kernels.keyed.records import KEY, loads, record_frame
from changeflow.kernels.keyed.user import close_functions
from changeflow.kernels.order import child_stamp, timer_stamp
from changeflow.kernels.state import InMemoryKeyedState, KeyedState
from changeflow.kernels.window.evaluate import WindowSpec
from changeflow.kernels.window.event_time import _TABLE, STATE, EventTimeWindow, EventWindows, _Out, _store
from changeflow.kernels.window.triggers import TriggerSpec

__all__ = ["ProcessingTimeWindow", "check_trigger_domain", "window_kernel"]

_FIRE, _CLEANUP = 0, 1  # at one time a window's trigger fires before its state is dropped, as in Flink


class ProcessingTimeWindow(EventTimeWindow):
    """The window kernel with processing-time timers: a processing-time assigner, or a processing-time trigger
    (arguments as :class:`~.event_time.EventTimeWindow`'s; the default trigger of a processing-time assigner is
    ``ProcessingTimeTrigger``).

    >>> from changeflow.kernels.window.evaluate import WindowSpec
    >>> kernel = ProcessingTimeWindow(WindowSpec("reduce", lambda a, b: a + b), EventWindows(
    ...     "tumbling", 10, processing_time=True), "w")
    >>> kernel.has_timers, kernel.event_time, kernel.trigger
    (True, False, ProcessingTimeTrigger)
    """

    has_timers = True
    batch_clock = True  # the records of a micro-batch share its processing time (the kernel contract)

    def __init__(self, spec: WindowSpec, windows: EventWindows, name: str, *, trigger: TriggerSpec | None = None,
                 **kwargs: Any) -> None:
        if trigger is None and windows.processing_time:
            trigger = TriggerSpec("processing_time")
        super().__init__(spec, windows, name, trigger=trigger, **kwargs)
        check_trigger_domain(windows, self.trigger, name)
        # An event-time window keeps its event time (lateness, cleanup, late records); an arrival-time one has none.
        self.event_time = not windows.processing_time

    def next_timer(self, state: KeyedState) -> int | None:
        """The earliest pending trigger timer (or, for a processing-time window, end - 1) of the bucket."""
        return min((t for _, mine in _scan(state) for t, _, _ in self._timers(mine)), default=None)

    def on_timer(self, now: int, state: KeyedState) -> pd.DataFrame | None:
        """Fire the trigger timers due at ``now`` (earliest first), then drop the processing-time windows that
        ended by then; return what fired."""
        windows = dict(_scan(state))
        due = [(t, key_blob, w, what) for key_blob, mine in windows.items()
               for t, w, what in self._timers(mine) if t <= now]
        if not due:
            return None
        heapq.heapify(due)
        out = _Out()
        watermark = self.current_watermark
        opened = self._open()
        try:
            fired = 0
            while due:
                time, key_blob, w, what = heapq.heappop(due)
                entry = windows[key_blob][0].get(w)
                if entry is None:  # dropped at an earlier time of this call
                    continue
                if what == _CLEANUP:
                    self._clear(key_blob, w, watermark)
                    del windows[key_blob][0][w]
                    continue
                pane = entry[2]
                pane.timers.discard(time)
                before = set(pane.timers)
                if self.trigger.on_processing_time(pane, time, w[1] - 1):
                    self._fire(key_blob, w, entry, watermark, out, child_stamp(timer_stamp(time, False), fired))
                    fired += 1
                # A timer the firing registered fires in this call when due by ``now``, as Flink fires a timer
                # registered in the past at once; one at ``time`` or before (a continuous trigger re-registering
                # an event-time window's end) waits for the next call rather than firing again and again.
                for t in pane.timers - before:
                    if time < t <= now:
                        heapq.heappush(due, (t, key_blob, w, _FIRE))
        finally:
            close_functions(opened)
        keys = pd.DataFrame({KEY: np.asarray(list(windows), dtype=object)})
        _store(state, keys, windows)
        return out.frame()

    def process_bounded(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Batch mode: the input, then the final watermark, then every processing-time timer (Flink's batch
        timer service fires a key's processing-time timers after its input whatever their time)."""
        if self.trigger.kind == "continuous_processing_time" and not self.windows.event_time:
            raise ValueError(f"{self.name}: {self.trigger!r} on a window that never ends (global or count) is not "
                             "supported in batch mode: Flink's batch execution fires its timers after the key's input "
                             "up to the end of time")
        state = InMemoryKeyedState()
        out = self.process(batch, state)
        ended = end_of_input_output(self, state)
        self.current_watermark = MAX_WATERMARK  # what the window function's context shows, as in Flink
        combined = concat_outputs(out, ended, self.on_timer(MAX_WATERMARK, state))
        return record_frame([], []) if combined is None else combined

    def _timers(self, mine: list) -> list[tuple[int, tuple[int, int], int]]:
        """A key's pending processing-time timers: ``(time, window, _FIRE or _CLEANUP)``."""
        timers = []
        for w, entry in mine[0].items():
            if self.trigger.processing_time:
                timers.extend((t, w, _FIRE) for t in entry[2].timers)
            if self.windows.processing_time:  # Flink's cleanup time of a processing-time window: end - 1
                timers.append((w[1] - 1, w, _CLEANUP))
        return timers


def check_trigger_domain(windows: EventWindows, trigger: TriggerSpec, where: str) -> None:
    """An error naming ``trigger`` if it is an event-time trigger on a processing-time window (not supported)."""
    if windows.processing_time and trigger.kind in ("event_time", "continuous_event_time"):
        raise ValueError(f"{where}: {trigger!r} on a processing-time window is not supported by changeflow "
                         "(it takes ProcessingTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger and "
                         "NeverTrigger, possibly in a PurgingTrigger)")


def _scan(state: KeyedState) -> list[tuple[bytes, list]]:
    rows = state.scan(_TABLE)
    if not len(rows) or STATE not in rows.columns:
        return []
    return [(k, loads(v)) for k, v in zip(rows[KEY], rows[STATE], strict=True)]


def window_kernel(spec: WindowSpec, windows: EventWindows, name: str, *, trigger: TriggerSpec | None = None,
                  **kwargs: Any) -> EventTimeWindow:
    """The kernel of a DataStream window: :class:`ProcessingTimeWindow` with a processing-time assigner or
    trigger, else :class:`~.event_time.EventTimeWindow` (keyword arguments as theirs)."""
    if windows.processing_time or (trigger is not None and trigger.processing_time):
        return ProcessingTimeWindow(spec, windows, name, trigger=trigger, **kwargs)
    return EventTimeWindow(spec, windows, name, trigger=trigger, **kwargs)
