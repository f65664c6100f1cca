"""Window assigners and triggers of the DataStream API: ``GlobalWindows`` (PyFlink's names, FLIP-331).

``GlobalWindows`` puts every element of a key (of the whole stream, for
``window_all``) into one :class:`GlobalWindow`. What decides when it fires is
its trigger:

``GlobalWindows.create()``
    Flink's default :class:`NeverTrigger`: the window never fires, not even at
    the end of a bounded input, so the windowed operator emits nothing (as in
    Flink; useful only with a custom trigger there).
``GlobalWindows.create_with_end_of_stream_trigger()``
    FLIP-331's :class:`EndOfStreamTrigger`: the window fires once, after all
    input. PyFlink 2.3 has no Python API for it (Flink's Java API has
    ``GlobalWindows.createWithEndOfStreamTrigger()``). The windowed operator's
    output then comes only after end of input
    (``OperatorAttributes.is_output_only_after_end_of_stream``), so changeflow
    runs it with batch algorithms even in a streaming job
    (:mod:`changeflow.runtime.spark.end_of_stream`).

Event-time windows (:class:`TumblingEventTimeWindows`, :class:`SlidingEventTimeWindows`,
:class:`EventTimeSessionWindows`) assign each record by its event timestamp
(``assign_timestamps_and_watermarks``) to :class:`TimeWindow` s, which fire
when the watermark passes their end (Flink's :class:`EventTimeTrigger`; see
:mod:`changeflow.kernels.window.event_time`). Processing-time and count
windows are not supported: passing one fails with an error naming it.

>>> GlobalWindows.create_with_end_of_stream_trigger()
GlobalWindows(trigger=EndOfStreamTrigger)
>>> GlobalWindows.create().get_default_trigger().fires_at_end_of_stream
False
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")  # PyFlink's Trigger[T, W] / WindowAssigner[T, W] (for readers and type checkers)
W = TypeVar("W")

__all__ = ["EndOfStreamTrigger", "EventTimeSessionWindows", "EventTimeTrigger", "GlobalWindow", "GlobalWindows",
           "NeverTrigger", "SlidingEventTimeWindows", "TimeWindow", "Trigger", "TumblingEventTimeWindows", "Window",
           "WindowAssigner", "check_assigner", "check_trigger", "is_event_time_assigner"]

MAX_LONG_VALUE = (1 << 63) - 1  # Flink's Long.MAX_VALUE: the global window's end, the final watermark


class Window:
    """A window elements are grouped into."""

    def max_timestamp(self) -> int:
        raise NotImplementedError


class GlobalWindow(Window):
    """The one window of :class:`GlobalWindows`; it ends at ``Long.MAX_VALUE``, as Flink's."""

    @staticmethod
    def get() -> "GlobalWindow":
        return GlobalWindow()

    def max_timestamp(self) -> int:
        return MAX_LONG_VALUE

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, GlobalWindow)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "GlobalWindow"


class Trigger(Generic[T, W]):
    """When a window fires. changeflow has the two triggers of :class:`GlobalWindows`."""

    fires_at_end_of_stream = False

    def __repr__(self) -> str:
        return type(self).__name__


class NeverTrigger(Trigger):
    """Never fires: the default trigger of ``GlobalWindows.create()``."""


class EndOfStreamTrigger(Trigger):
    """Fires once, when the input has ended (FLIP-331)."""

    fires_at_end_of_stream = True


class WindowAssigner(Generic[T, W]):
    """Assigns elements to windows."""

    def get_default_trigger(self, env: Any = None) -> Trigger:
        raise NotImplementedError

    def is_event_time(self) -> bool:
        return False


class GlobalWindows(WindowAssigner):
    """Assigns every element to the same :class:`GlobalWindow`."""

    def __init__(self, trigger: Trigger | None = None) -> None:
        self._trigger = trigger if trigger is not None else NeverTrigger()

    @staticmethod
    def create() -> "GlobalWindows":
        """Global windows with Flink's default trigger, which never fires."""
        return GlobalWindows(NeverTrigger())

    @staticmethod
    def create_with_end_of_stream_trigger() -> "GlobalWindows":
        """Global windows that fire once, after all input (FLIP-331)."""
        return GlobalWindows(EndOfStreamTrigger())

    def assign_windows(self, element: Any, timestamp: int, context: Any = None) -> list[GlobalWindow]:
        return [GlobalWindow.get()]

    def get_default_trigger(self, env: Any = None) -> Trigger:
        return self._trigger

    def __repr__(self) -> str:
        return f"GlobalWindows(trigger={self._trigger!r})"


class TimeWindow(Window):
    """A window of event time ``[start, end)`` (ms); PyFlink's ``TimeWindow``."""

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: "TimeWindow") -> bool:
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: "TimeWindow") -> "TimeWindow":
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        return timestamp - (timestamp - offset + window_size) % window_size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeWindow) and (self.start, self.end) == (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __lt__(self, other: "TimeWindow") -> bool:
        return (self.start, self.end) < (other.start, other.end)

    def __repr__(self) -> str:
        return f"TimeWindow(start={self.start}, end={self.end})"


class EventTimeTrigger(Trigger):
    """Fires a window when the watermark passes its end (the default trigger of event-time windows)."""


def _millis(value: Any, what: str) -> int:
    """A ``Time`` or ``Duration`` (PyFlink 2.3's window assigners take ``Time``) in ms."""
    for method in ("to_milliseconds", "to_millis"):
        convert = getattr(value, method, None)
        if callable(convert):
            millis: Any = convert()
            return int(millis)
    raise TypeError(f"{what} takes a Time (or Duration), got {value!r}")


class _EventTimeAssigner(WindowAssigner):
    """What the event-time assigners share; ``spec()`` gives the kernel's ``EventWindows`` arguments."""

    def get_default_trigger(self, env: Any = None) -> Trigger:
        return EventTimeTrigger()

    def is_event_time(self) -> bool:
        return True

    def spec(self) -> dict:
        raise NotImplementedError


class TumblingEventTimeWindows(_EventTimeAssigner):
    """Windows of ``size`` ms, one after the other (shifted by ``offset``)."""

    def __init__(self, size: int, offset: int) -> None:
        if abs(offset) >= size:
            raise ValueError("TumblingEventTimeWindows parameters must satisfy abs(offset) < size")
        self._size, self._offset = size, offset

    @staticmethod
    def of(size: Any, offset: Any = None) -> "TumblingEventTimeWindows":
        return TumblingEventTimeWindows(_millis(size, "TumblingEventTimeWindows.of()"),
                                        0 if offset is None else _millis(offset, "TumblingEventTimeWindows.of()"))

    def spec(self) -> dict:
        return {"kind": "tumbling", "size": self._size, "offset": self._offset}

    def __repr__(self) -> str:
        return f"TumblingEventTimeWindows({self._size}, {self._offset})"


class SlidingEventTimeWindows(_EventTimeAssigner):
    """Windows of ``size`` ms starting every ``slide`` ms (shifted by ``offset``)."""

    def __init__(self, size: int, slide: int, offset: int) -> None:
        if abs(offset) >= slide or size <= 0:
            raise ValueError("SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0")
        self._size, self._slide, self._offset = size, slide, offset

    @staticmethod
    def of(size: Any, slide: Any, offset: Any = None) -> "SlidingEventTimeWindows":
        where = "SlidingEventTimeWindows.of()"
        return SlidingEventTimeWindows(_millis(size, where), _millis(slide, where),
                                       0 if offset is None else _millis(offset, where))

    def spec(self) -> dict:
        return {"kind": "sliding", "size": self._size, "slide": self._slide, "offset": self._offset}

    def __repr__(self) -> str:
        return f"SlidingEventTimeWindows({self._size}, {self._slide}, {self._offset})"


class EventTimeSessionWindows(_EventTimeAssigner):
    """Sessions: a record's window ``[t, t + gap)`` merges with every window it touches."""

    def __init__(self, session_gap: int) -> None:
        if session_gap <= 0:
            raise ValueError("EventTimeSessionWindows parameters must satisfy 0 < size")
        self._session_gap = session_gap

    @staticmethod
    def with_gap(size: Any) -> "EventTimeSessionWindows":
        return EventTimeSessionWindows(_millis(size, "EventTimeSessionWindows.with_gap()"))

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> "EventTimeSessionWindows":
        raise NotImplementedError("EventTimeSessionWindows.with_dynamic_gap() (DynamicEventTimeSessionWindows) "
                                  "is not supported by changeflow")

    def spec(self) -> dict:
        return {"kind": "session", "gap": self._session_gap}

    def __repr__(self) -> str:
        return f"EventTimeSessionWindows({self._session_gap})"


def is_event_time_assigner(assigner: Any) -> bool:
    """Whether ``assigner`` is one of changeflow's event-time window assigners."""
    return isinstance(assigner, _EventTimeAssigner)


def check_assigner(assigner: Any, where: str) -> GlobalWindows:
    """``assigner`` if changeflow can run it, else an error naming it.

    >>> try:
    ...     check_assigner("tumbling", "window()")
    ... except ValueError as error:
    ...     print(str(error).split(" only, ")[1])
    got str 'tumbling'
    """
    if isinstance(assigner, GlobalWindows):
        return assigner
    name = type(assigner).__name__
    if is_event_time_assigner(assigner):
        raise ValueError(f"{where} does not support event-time windows ({assigner!r}): they are supported by "
                         "KeyedStream.window() and DataStream.window_all()")
    raise ValueError(f"{where} supports GlobalWindows.create() and GlobalWindows.create_with_end_of_stream_trigger()"
                     f" only, got {name} {assigner!r}" + (
                         ": processing-time and count windows are not supported yet" if "Window" in name else ""))


def check_trigger(trigger: Any, where: str) -> Trigger:
    """``trigger`` if it is one of changeflow's triggers, else an error naming it."""
    if isinstance(trigger, (NeverTrigger, EndOfStreamTrigger)):
        return trigger
    raise ValueError(f"{where} supports NeverTrigger and EndOfStreamTrigger only (changeflow.datastream.window), "
                     f"got {type(trigger).__name__} {trigger!r}")
