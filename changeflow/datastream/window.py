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

Time and count windows (tumbling, sliding, session, ``count_window``) are not
supported: passing one fails with an error naming it.

>>> GlobalWindows.create_with_end_of_stream_trigger()
GlobalWindows(trigger=EndOfStreamTrigger)
>>> GlobalWindows.create().get_default_trigger().fires_at_end_of_stream
False
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")  # PyFlink's Trigger[T, W] / WindowAssigner[T, W] (for readers and type checkers)
W = TypeVar("W")

__all__ = ["EndOfStreamTrigger", "GlobalWindow", "GlobalWindows", "NeverTrigger", "Trigger", "Window",
           "WindowAssigner", "check_assigner", "check_trigger"]

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
    raise ValueError(f"{where} supports GlobalWindows.create() and GlobalWindows.create_with_end_of_stream_trigger()"
                     f" only, got {name} {assigner!r}" + (
                         ": time and count windows are not supported yet" if "Window" in name else ""))


def check_trigger(trigger: Any, where: str) -> Trigger:
    """``trigger`` if it is one of changeflow's triggers, else an error naming it."""
    if isinstance(trigger, (NeverTrigger, EndOfStreamTrigger)):
        return trigger
    raise ValueError(f"{where} supports NeverTrigger and EndOfStreamTrigger only (changeflow.datastream.window), "
                     f"got {type(trigger).__name__} {trigger!r}")
