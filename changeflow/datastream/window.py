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
:mod:`changeflow.kernels.window.event_time`). PyFlink's count windows
(:class:`CountTumblingWindowAssigner`, :class:`CountSlidingWindowAssigner`,
``KeyedStream.count_window``) put a key's n-th record in :class:`CountWindow`
``n // size`` (tumbling) or in each window of ``size`` records starting every
``slide`` records, and fire a window when it has ``size`` records
(:class:`CountTrigger`). ``trigger()`` replaces a window's trigger with
:class:`EventTimeTrigger`, :class:`CountTrigger`,
:class:`ContinuousEventTimeTrigger`, :class:`ProcessingTimeTrigger`,
:class:`ContinuousProcessingTimeTrigger` or :class:`NeverTrigger`, each possibly in a
:class:`PurgingTrigger`. Processing-time windows
(:class:`TumblingProcessingTimeWindows`, :class:`SlidingProcessingTimeWindows`,
:class:`ProcessingTimeSessionWindows`) assign a record by its arrival time and
fire on a processing-time timer at their end - 1 (:class:`ProcessingTimeTrigger`;
see :mod:`changeflow.kernels.window.processing_time`).

>>> GlobalWindows.create_with_end_of_stream_trigger()
GlobalWindows(trigger=EndOfStreamTrigger)
>>> GlobalWindows.create().get_default_trigger().fires_at_end_of_stream
False
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from changeflow.datastream.window_triggers import (ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger,
                                                   CountTrigger, EndOfStreamTrigger, EventTimeTrigger, NeverTrigger,
                                                   ProcessingTimeTrigger, PurgingTrigger, Trigger, _millis,
                                                   check_trigger, kernel_trigger)
from changeflow.datastream.pyflink_names import module_getattr

T = TypeVar("T")  # PyFlink's Trigger[T, W] / WindowAssigner[T, W] (for readers and type checkers)
W = TypeVar("W")

__all__ = ["ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger", "CountSlidingWindowAssigner",
           "CountTrigger", "CountTumblingWindowAssigner", "CountWindow", "DynamicEventTimeSessionWindows",
           "EndOfStreamTrigger",
           "EventTimeSessionWindows", "EventTimeTrigger", "GlobalWindow", "GlobalWindows", "NeverTrigger",
           "ProcessingTimeSessionWindows", "ProcessingTimeTrigger", "PurgingTrigger", "SessionWindowTimeGapExtractor",
           "SlidingEventTimeWindows",
           "SlidingProcessingTimeWindows", "TimeWindow", "Trigger", "TumblingEventTimeWindows",
           "TumblingProcessingTimeWindows", "Window", "WindowAssigner", "check_assigner", "check_trigger",
           "is_kernel_assigner", "kernel_trigger"]

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


class CountWindow(Window):
    """The ``id``-th count window of a key (PyFlink's ``CountWindow``); it ends at ``Long.MAX_VALUE``."""

    def __init__(self, id: int) -> None:  # noqa: A002 (PyFlink's name)
        self.id = id

    def max_timestamp(self) -> int:
        return MAX_LONG_VALUE

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountWindow) and self.id == other.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"


def count_window_of(window_id: int, end: int) -> CountWindow:
    """The :class:`CountWindow` of the window kernel's ``(id, end)``."""
    return CountWindow(window_id)


def global_window_of(window_id: int, end: int) -> GlobalWindow:
    """The :class:`GlobalWindow` of the window kernel's ``(0, end)``."""
    return GlobalWindow.get()


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

    def spec(self) -> dict:
        """The window kernel's ``EventWindows`` arguments, when a trigger of the kernel replaces the default one."""
        return {"kind": "global"}

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


class _KernelAssigner(WindowAssigner):
    """An assigner the window kernel runs (event time or count); ``spec()`` gives its ``EventWindows`` arguments."""

    def spec(self) -> dict:
        raise NotImplementedError


class CountTumblingWindowAssigner(_KernelAssigner):
    """A key's records in windows of ``window_size`` records, one after the other (PyFlink's)."""

    def __init__(self, window_size: int) -> None:
        if int(window_size) <= 0:
            raise ValueError(f"a count window needs a positive size, got {window_size}")
        self._window_size = int(window_size)

    @staticmethod
    def of(window_size: int) -> "CountTumblingWindowAssigner":
        return CountTumblingWindowAssigner(window_size)

    def get_default_trigger(self, env: Any = None) -> Trigger:
        return CountTrigger(self._window_size)

    def spec(self) -> dict:
        return {"kind": "count_tumbling", "size": self._window_size}

    def __repr__(self) -> str:
        return f"CountTumblingWindowAssigner({self._window_size})"


class CountSlidingWindowAssigner(_KernelAssigner):
    """A key's records in windows of ``window_size`` records starting every ``window_slide`` records (PyFlink's:
    each window fires once, when full; unlike Java's ``countWindow(size, slide)``, which fires every ``slide``
    records with the last ``size``, partial windows at the start included)."""

    def __init__(self, window_size: int, window_slide: int) -> None:
        if int(window_size) <= 0 or int(window_slide) <= 0:
            raise ValueError(f"a count window needs a positive size and slide, got {window_size}, {window_slide}")
        self._window_size, self._window_slide = int(window_size), int(window_slide)

    @staticmethod
    def of(window_size: int, window_slide: int) -> "CountSlidingWindowAssigner":
        return CountSlidingWindowAssigner(window_size, window_slide)

    def get_default_trigger(self, env: Any = None) -> Trigger:
        return CountTrigger(self._window_size)

    def spec(self) -> dict:
        return {"kind": "count_sliding", "size": self._window_size, "slide": self._window_slide}

    def __repr__(self) -> str:
        return f"CountSlidingWindowAssigner({self._window_size}, {self._window_slide})"


class _TimeAssigner(_KernelAssigner):
    """What the event-time and processing-time assigners share: the window arithmetic (the kernel's), the
    checks and the factories. A processing-time twin (``_processing_time``) assigns a record by its arrival
    time and fires on :class:`ProcessingTimeTrigger`; errors name the class the user called."""

    _processing_time = False

    def get_default_trigger(self, env: Any = None) -> Trigger:
        return ProcessingTimeTrigger() if self._processing_time else EventTimeTrigger()

    def is_event_time(self) -> bool:
        return not self._processing_time

    def _spec(self, **arguments: Any) -> dict:
        return {**arguments, "processing_time": True} if self._processing_time else arguments


_Tumbling_ = TypeVar("_Tumbling_", bound="_Tumbling")  # each factory returns its own class
_Sliding_ = TypeVar("_Sliding_", bound="_Sliding")
_Sessions_ = TypeVar("_Sessions_", bound="_Sessions")


class _Tumbling(_TimeAssigner):
    def __init__(self, size: int, offset: int) -> None:
        if abs(offset) >= size:
            raise ValueError(f"{type(self).__name__} parameters must satisfy abs(offset) < size")
        self._size, self._offset = size, offset

    @classmethod
    def of(cls: type[_Tumbling_], size: Any, offset: Any = None) -> _Tumbling_:
        where = f"{cls.__name__}.of()"
        return cls(_millis(size, where), 0 if offset is None else _millis(offset, where))

    def spec(self) -> dict:
        return self._spec(kind="tumbling", size=self._size, offset=self._offset)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._offset})"


class _Sliding(_TimeAssigner):
    def __init__(self, size: int, slide: int, offset: int) -> None:
        if abs(offset) >= slide or size <= 0:
            raise ValueError(f"{type(self).__name__} parameters must satisfy abs(offset) < slide and size > 0")
        self._size, self._slide, self._offset = size, slide, offset

    @classmethod
    def of(cls: type[_Sliding_], size: Any, slide: Any, offset: Any = None) -> _Sliding_:
        where = f"{cls.__name__}.of()"
        return cls(_millis(size, where), _millis(slide, where), 0 if offset is None else _millis(offset, where))

    def spec(self) -> dict:
        return self._spec(kind="sliding", size=self._size, slide=self._slide, offset=self._offset)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._slide}, {self._offset})"


class _Sessions(_TimeAssigner):
    def __init__(self, session_gap: int) -> None:
        if session_gap <= 0:
            raise ValueError(f"{type(self).__name__} parameters must satisfy 0 < size")
        self._session_gap = session_gap

    @classmethod
    def with_gap(cls: type[_Sessions_], size: Any) -> _Sessions_:
        return cls(_millis(size, f"{cls.__name__}.with_gap()"))

    @classmethod
    def with_dynamic_gap(cls, extractor: "SessionWindowTimeGapExtractor") -> "_Sessions":
        """Sessions whose gap each record gives: ``extractor.extract(value)`` ms (event time only)."""
        if cls._processing_time:
            raise NotImplementedError(f"{cls.__name__}.with_dynamic_gap() (Dynamic{cls.__name__}) "
                                      "is not supported by changeflow")
        return DynamicEventTimeSessionWindows(extractor)

    def spec(self) -> dict:
        return self._spec(kind="session", gap=self._session_gap)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._session_gap})"


class SessionWindowTimeGapExtractor:
    """Gives a session window's gap per record: ``extract(element)`` returns it in milliseconds (> 0)."""

    def extract(self, element: Any) -> int:
        raise NotImplementedError(f"{type(self).__name__}.extract(element) must return the record's gap in ms")


class TumblingEventTimeWindows(_Tumbling):
    """Windows of ``size`` ms, one after the other (shifted by ``offset``)."""


class SlidingEventTimeWindows(_Sliding):
    """Windows of ``size`` ms starting every ``slide`` ms (shifted by ``offset``)."""


class EventTimeSessionWindows(_Sessions):
    """Sessions: a record's window ``[t, t + gap)`` merges with every window it touches."""


class DynamicEventTimeSessionWindows(_Sessions):
    """Sessions whose gap each record gives (``EventTimeSessionWindows.with_dynamic_gap``): a record's window
    ``[t, t + extractor.extract(value))`` merges with every window it touches."""

    def __init__(self, extractor: SessionWindowTimeGapExtractor) -> None:
        if not callable(getattr(extractor, "extract", None)):
            raise TypeError(f"with_dynamic_gap takes a SessionWindowTimeGapExtractor, got {extractor!r}")
        super().__init__(1)  # the gap is the extractor's, per record
        self._extractor = extractor

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> "DynamicEventTimeSessionWindows":
        return DynamicEventTimeSessionWindows(extractor)

    def spec(self) -> dict:
        return self._spec(kind="session", gap_extractor=_CheckedGap(self._extractor))

    def __repr__(self) -> str:
        return f"DynamicEventTimeSessionWindows({type(self._extractor).__name__})"


class _CheckedGap:
    """The window kernel's gap of a record: the user's ``extract(value)``, checked as Flink checks it."""

    def __init__(self, extractor: SessionWindowTimeGapExtractor) -> None:
        self.extractor = extractor

    def __call__(self, value: Any) -> int:
        gap = self.extractor.extract(value)
        if isinstance(gap, bool) or not isinstance(gap, int) or gap <= 0:
            raise ValueError(f"Dynamic session time gap must satisfy 0 < gap, got {gap!r} from "
                             f"{type(self.extractor).__name__}.extract")
        return gap


class TumblingProcessingTimeWindows(_Tumbling):
    """Windows of ``size`` ms of processing time, one after the other (shifted by ``offset``)."""

    _processing_time = True


class SlidingProcessingTimeWindows(_Sliding):
    """Windows of ``size`` ms of processing time starting every ``slide`` ms (shifted by ``offset``)."""

    _processing_time = True


class ProcessingTimeSessionWindows(_Sessions):
    """Sessions of processing time: a record's window ``[arrival, arrival + gap)`` merges with every window it
    touches."""

    _processing_time = True


def is_kernel_assigner(assigner: Any) -> bool:
    """Whether the window kernel runs ``assigner``'s windows (event-time, processing-time and count windows)."""
    return isinstance(assigner, _KernelAssigner)


def check_assigner(assigner: Any, where: str) -> GlobalWindows:
    """``assigner`` if changeflow can run it, else an error naming it.

    >>> try:
    ...     check_assigner("tumbling", "window()")
    ... except ValueError as error:
    ...     print(str(error).split(" only, ")[-1])
    got str 'tumbling'
    """
    if isinstance(assigner, GlobalWindows):
        return assigner
    name = type(assigner).__name__
    if is_kernel_assigner(assigner):
        raise ValueError(f"{where} does not support event-time, processing-time or count windows ({assigner!r}): "
                         "they are supported by KeyedStream.window() and DataStream.window_all()")
    kinds = "" if where.startswith(("co_group", "join")) else (
        ", the event-time, processing-time and count windows of changeflow.datastream.window")
    raise ValueError(f"{where} supports GlobalWindows.create() and GlobalWindows.create_with_end_of_stream_trigger()"
                     f"{kinds} only, got {name} {assigner!r}" + (
                         ": window assigners of other modules (PyFlink's, user-defined) are not supported"
                         if "Window" in name else ""))


# PyFlink's names of pyflink.datastream.window changeflow lacks on purpose fail naming themselves (.pyflink_names).
__getattr__ = module_getattr("pyflink.datastream.window")
