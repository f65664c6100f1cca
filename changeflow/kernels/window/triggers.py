"""The triggers of the DataStream window kernel (:mod:`.event_time`): Flink's ``Trigger`` s as data.

A :class:`TriggerSpec` is what the API's trigger (``EventTimeTrigger``,
``CountTrigger.of(n)``, ``ContinuousEventTimeTrigger.of(interval)``,
``NeverTrigger``, ``ProcessingTimeTrigger``,
``ContinuousProcessingTimeTrigger.of(interval)``, each optionally wrapped in
``PurgingTrigger.of``) tells the kernel. Its methods are Flink's ``onElement`` /
``onEventTime`` / ``onProcessingTime`` / ``onMerge`` over a window's :class:`Pane`
(the trigger's state: the element count, the next continuous firing, the timers
it registered, all in the trigger's time domain: event time, or processing time
when :attr:`TriggerSpec.processing_time`). Each returns whether the window fires;
with ``purge`` a firing also empties the window's contents (``FIRE_AND_PURGE``).

>>> pane, count = Pane(), TriggerSpec("count", count=2)
>>> [count.on_element(pane, t, max_timestamp=9, time=-1) for t in (1, 2, 3)]
[False, True, False]
>>> pane, continuous = Pane(), TriggerSpec("continuous_event_time", interval=4)
>>> continuous.on_element(pane, 1, max_timestamp=9, time=-1), sorted(pane.timers)
(False, [4, 9])
>>> pane.timers.discard(4)  # the host removes the timer it fires
>>> continuous.on_event_time(pane, 4, max_timestamp=9), sorted(pane.timers)
(True, [8, 9])
>>> pane, clock = Pane(), TriggerSpec("continuous_processing_time", interval=4)
>>> clock.on_element(pane, 0, max_timestamp=19, time=5), sorted(pane.timers)  # time: the processing time
(False, [8])
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("event_time", "count", "continuous_event_time", "never", "processing_time", "continuous_processing_time")
PROCESSING_TIME_KINDS = ("processing_time", "continuous_processing_time")


@dataclass
class Pane:
    """A window's trigger state: ``count`` (CountTrigger), ``next_fire`` (the continuous triggers' fire-time
    state), ``timers`` (the pending timers the trigger registered, in its time domain)."""

    count: int = 0
    next_fire: int | None = None
    timers: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class TriggerSpec:
    """One of Flink's triggers: ``kind`` in :data:`KINDS`, ``count`` (CountTrigger's size), ``interval`` (ms,
    the continuous triggers), ``purge`` (wrapped in PurgingTrigger)."""

    kind: str = "event_time"
    count: int = 0
    interval: int = 0
    purge: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown trigger kind {self.kind!r}")

    @property
    def processing_time(self) -> bool:
        """The trigger's timers are processing-time timers (the host fires them through ``on_timer``)."""
        return self.kind in PROCESSING_TIME_KINDS

    def on_element(self, pane: Pane, timestamp: int, max_timestamp: int, time: int) -> bool:
        """An element was added to the window: whether it fires now. ``time`` is the trigger's current time:
        the watermark, or for a :attr:`processing_time` trigger the processing time."""
        if self.kind == "processing_time":  # a timer at the window's end; never fires on an element
            pane.timers.add(max_timestamp)
            return False
        if self.kind == "continuous_processing_time":
            if pane.next_fire is None:  # PyFlink's: the element's processing time, not its timestamp
                self._next(pane, time - time % self.interval, max_timestamp)
            return False
        watermark = time
        if self.kind == "count":
            pane.count += 1
            if pane.count >= self.count:
                pane.count = 0  # CountTrigger clears its count when it fires
                return True
            return False
        if self.kind == "never":
            return False
        if max_timestamp <= watermark:  # the watermark passed the window already (a late element): fire now
            return True
        pane.timers.add(max_timestamp)
        if self.kind == "continuous_event_time" and pane.next_fire is None:
            # Python's %, as PyFlink's ContinuousEventTimeTrigger (Java's differs for negative timestamps)
            self._next(pane, timestamp - timestamp % self.interval, max_timestamp)
        return False

    def on_event_time(self, pane: Pane, time: int, max_timestamp: int) -> bool:
        """The trigger's timer at ``time`` fired (the host removed it from ``pane.timers``): whether it fires."""
        if self.kind == "event_time":
            return time == max_timestamp
        if self.kind != "continuous_event_time":
            return False
        if time == max_timestamp:
            return True
        if pane.next_fire == time:
            self._next(pane, time, max_timestamp)
            return True
        return False

    def on_processing_time(self, pane: Pane, time: int, max_timestamp: int) -> bool:
        """The trigger's processing-time timer at ``time`` fired (the host removed it from ``pane.timers``)."""
        if self.kind == "processing_time":  # PyFlink's ProcessingTimeTrigger fires on any of its timers
            return True
        if self.kind == "continuous_processing_time" and pane.next_fire == time:
            pane.next_fire = None
            self._next(pane, time, max_timestamp)
            return True
        return False

    def on_merge(self, panes: list[Pane], max_timestamp: int, time: int) -> Pane:
        """The trigger state of a session window merged from windows with ``panes`` (their timers are deleted,
        as Flink's ``clear`` of each merged window deletes them); ``time`` as in :meth:`on_element`."""
        merged = Pane()
        if self.kind == "count":
            merged.count = sum(p.count for p in panes)
        elif self.kind in ("event_time", "processing_time"):
            if max_timestamp > time:
                merged.timers.add(max_timestamp)
        elif self.kind in ("continuous_event_time", "continuous_processing_time"):
            fires = [p.next_fire for p in panes if p.next_fire is not None]
            if fires:
                merged.next_fire = min(fires)  # the fire-time state is a ReducingState of Min
                merged.timers.add(merged.next_fire)
        return merged

    def _next(self, pane: Pane, time: int, max_timestamp: int) -> None:
        pane.next_fire = min(time + self.interval, max_timestamp)
        pane.timers.add(pane.next_fire)

    def __repr__(self) -> str:
        inner = {"event_time": "EventTimeTrigger", "count": f"CountTrigger({self.count})",
                 "continuous_event_time": f"ContinuousEventTimeTrigger({self.interval})",
                 "never": "NeverTrigger", "processing_time": "ProcessingTimeTrigger",
                 "continuous_processing_time": f"ContinuousProcessingTimeTrigger({self.interval})"}[self.kind]
        return f"PurgingTrigger({inner})" if self.purge else inner
