"""The triggers of DataStream windows (PyFlink's names), re-exported by :mod:`.window`.

:class:`NeverTrigger` and :class:`EndOfStreamTrigger` are the triggers of
``GlobalWindows``; the others are those of the window kernel (event-time,
processing-time and count windows): each gives its
:class:`~changeflow.kernels.window.triggers.TriggerSpec` (``spec()``). The
processing-time triggers fire on processing-time timers
(:mod:`changeflow.kernels.window.processing_time`).

>>> PurgingTrigger.of(CountTrigger.of(3)).spec()
PurgingTrigger(CountTrigger(3))
>>> kernel_trigger(ProcessingTimeTrigger.create(), "trigger()")
ProcessingTimeTrigger
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Generic, TypeVar

from changeflow.kernels.window.triggers import TriggerSpec

T = TypeVar("T")  # PyFlink's Trigger[T, W] (for readers and type checkers)
W = TypeVar("W")

__all__ = ["ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger", "CountTrigger", "EndOfStreamTrigger",
           "EventTimeTrigger", "NeverTrigger", "ProcessingTimeTrigger", "PurgingTrigger", "Trigger", "check_trigger",
           "kernel_trigger"]


class Trigger(Generic[T, W]):
    """When a window fires: the triggers below (changeflow runs no user-defined ``Trigger``)."""

    fires_at_end_of_stream = False

    def spec(self) -> TriggerSpec:
        """What the window kernel runs (:class:`~changeflow.kernels.window.triggers.TriggerSpec`)."""
        raise ValueError(f"{self!r} is not supported by changeflow's windows")

    def __repr__(self) -> str:
        return type(self).__name__


class NeverTrigger(Trigger):
    """Never fires: the default trigger of ``GlobalWindows.create()``."""

    def spec(self) -> TriggerSpec:
        return TriggerSpec("never")


class EndOfStreamTrigger(Trigger):
    """Fires once, when the input has ended (FLIP-331)."""

    fires_at_end_of_stream = True


class EventTimeTrigger(Trigger):
    """Fires a window when the watermark passes its end (the default trigger of event-time windows)."""

    @staticmethod
    def create() -> "EventTimeTrigger":
        return EventTimeTrigger()

    def spec(self) -> TriggerSpec:
        return TriggerSpec("event_time")


class CountTrigger(Trigger):
    """Fires a window each time ``window_size`` more elements have arrived in it (keeping its contents)."""

    def __init__(self, window_size: int) -> None:
        if int(window_size) <= 0:
            raise ValueError(f"CountTrigger needs a positive count, got {window_size}")
        self._window_size = int(window_size)

    @staticmethod
    def of(window_size: int) -> "CountTrigger":
        return CountTrigger(window_size)

    def spec(self) -> TriggerSpec:
        return TriggerSpec("count", count=self._window_size)

    def __repr__(self) -> str:
        return f"CountTrigger({self._window_size})"


class ContinuousEventTimeTrigger(Trigger):
    """Fires a time window every ``interval`` of event time (as the watermark passes) and at its end."""

    def __init__(self, interval: int) -> None:
        if int(interval) <= 0:
            raise ValueError(f"ContinuousEventTimeTrigger needs a positive interval, got {interval}")
        self.interval = int(interval)

    @staticmethod
    def of(interval: Any) -> "ContinuousEventTimeTrigger":
        return ContinuousEventTimeTrigger(_millis(interval, "ContinuousEventTimeTrigger.of()"))

    def spec(self) -> TriggerSpec:
        return TriggerSpec("continuous_event_time", interval=self.interval)

    def __repr__(self) -> str:
        return f"ContinuousEventTimeTrigger({self.interval})"


class PurgingTrigger(Trigger):
    """``nested_trigger``, purging the window's contents each time it fires (FIRE_AND_PURGE)."""

    def __init__(self, nested_trigger: Trigger) -> None:
        if not isinstance(nested_trigger, Trigger):
            raise TypeError(f"PurgingTrigger.of() takes a Trigger, got {type(nested_trigger).__name__}")
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger) -> "PurgingTrigger":
        return PurgingTrigger(nested_trigger)

    def spec(self) -> TriggerSpec:
        return replace(self.nested_trigger.spec(), purge=True)

    def __repr__(self) -> str:
        return f"PurgingTrigger({self.nested_trigger!r})"


class ProcessingTimeTrigger(Trigger):
    """Fires a window once the processing time reaches its end - 1 (the default trigger of processing-time
    windows); on an event-time window, that is as soon as a processing-time timer fires after its first element."""

    @staticmethod
    def create() -> "ProcessingTimeTrigger":
        return ProcessingTimeTrigger()

    def spec(self) -> TriggerSpec:
        return TriggerSpec("processing_time")


class ContinuousProcessingTimeTrigger(Trigger):
    """Fires a window every ``interval`` of processing time, from the interval boundary at or before its first
    element's arrival, and at its end - 1 (a window that never ends, global or count, fires every interval)."""

    def __init__(self, interval: int) -> None:
        if int(interval) <= 0:
            raise ValueError(f"ContinuousProcessingTimeTrigger needs a positive interval, got {interval}")
        self.interval = int(interval)

    @staticmethod
    def of(interval: Any) -> "ContinuousProcessingTimeTrigger":
        return ContinuousProcessingTimeTrigger(_millis(interval, "ContinuousProcessingTimeTrigger.of()"))

    def spec(self) -> TriggerSpec:
        return TriggerSpec("continuous_processing_time", interval=self.interval)

    def __repr__(self) -> str:
        return f"ContinuousProcessingTimeTrigger({self.interval})"


_KERNEL_TRIGGERS = ("EventTimeTrigger, CountTrigger, ContinuousEventTimeTrigger, ProcessingTimeTrigger, "
                    "ContinuousProcessingTimeTrigger, NeverTrigger and PurgingTrigger")


def _millis(value: Any, what: str) -> int:
    """A ``Time`` or ``Duration`` (PyFlink 2.3's window assigners take ``Time``) in ms."""
    for method in ("to_milliseconds", "to_millis"):
        convert = getattr(value, method, None)
        if callable(convert):
            millis: Any = convert()
            return int(millis)
    raise TypeError(f"{what} takes a Time (or Duration), got {value!r}")


def kernel_trigger(trigger: Any, where: str) -> TriggerSpec:
    """What the window kernel runs for ``trigger``, or an error naming it (a user-defined one)."""
    if not isinstance(trigger, Trigger) or isinstance(trigger, EndOfStreamTrigger):
        raise ValueError(f"{where}: changeflow's time and count windows support {_KERNEL_TRIGGERS}, got "
                         f"{type(trigger).__name__} {trigger!r}")
    try:
        return trigger.spec()
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def check_trigger(trigger: Any, where: str, kernel: bool = False) -> Trigger:
    """``trigger`` if it is a trigger of global windows, else an error naming it (``kernel``: the message also
    names the window kernel's triggers, which a ``WindowedStream``'s global window takes too)."""
    if isinstance(trigger, (NeverTrigger, EndOfStreamTrigger)):
        return trigger
    others = (f", {_KERNEL_TRIGGERS.replace(', NeverTrigger and', ' and')}" if kernel else " and EndOfStreamTrigger")
    raise ValueError(f"{where} supports NeverTrigger{', EndOfStreamTrigger' if kernel else ''}{others} only "
                     f"(changeflow.datastream.window), got {type(trigger).__name__} {trigger!r}")
