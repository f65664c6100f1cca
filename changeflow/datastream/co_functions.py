"""PyFlink's two-input functions, for ``DataStream.connect(other)``'s ``ConnectedStreams`` (:mod:`.connected_streams`).

``CoMapFunction`` (``map1``/``map2``), ``CoFlatMapFunction``
(``flat_map1``/``flat_map2``), ``CoProcessFunction`` and
``KeyedCoProcessFunction`` (``process_element1``/``process_element2(value, ctx)``,
and ``on_timer`` for the keyed one): the method ending in 1 gets the records of
the stream ``connect`` was called on, the one ending in 2 those of its argument.

The broadcast process functions, for ``stream.connect(rules.broadcast(descriptor))``
(:mod:`.broadcast`): ``BroadcastProcessFunction`` (a stream without keys) and
``KeyedBroadcastProcessFunction`` (a keyed stream: keyed state, timers, ``on_timer``).
``process_element(value, ctx)`` gets the connected stream's records and reads the
broadcast state (``ctx.get_broadcast_state(descriptor)``, read-only);
``process_broadcast_element(value, ctx)`` gets the broadcast stream's and writes it.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from changeflow.datastream.functions import Function, KeyedProcessFunction, ProcessFunction

__all__ = ["BaseBroadcastProcessFunction", "BroadcastProcessFunction", "CoFlatMapFunction", "CoMapFunction",
           "CoProcessFunction", "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction"]


class CoMapFunction(Function):
    """One output per record of either input (a None result is dropped, as in PyFlink)."""

    @abstractmethod
    def map1(self, value: Any) -> Any:
        ...

    @abstractmethod
    def map2(self, value: Any) -> Any:
        ...


class CoFlatMapFunction(Function):
    """Zero or more outputs per record of either input (returned or yielded)."""

    @abstractmethod
    def flat_map1(self, value: Any) -> Any:
        ...

    @abstractmethod
    def flat_map2(self, value: Any) -> Any:
        ...


class CoProcessFunction(Function):
    """Processes the records of two inputs; each method yields zero or more outputs (``(OutputTag, value)``
    for a side output). Timers need keyed streams (:class:`KeyedCoProcessFunction`)."""

    Context = ProcessFunction.Context  # timer_service(), timestamp()

    @abstractmethod
    def process_element1(self, value: Any, ctx: "ProcessFunction.Context") -> Any:
        ...

    @abstractmethod
    def process_element2(self, value: Any, ctx: "ProcessFunction.Context") -> Any:
        ...


class KeyedCoProcessFunction(Function):
    """Processes the records of two keyed inputs with keyed state and timers shared by both; ``on_timer``
    yields what a firing timer outputs (``(OutputTag, value)`` for a side output, from any method)."""

    # The contexts of a KeyedProcessFunction: get_current_key(), timer_service(), timestamp(); time_domain().
    Context = KeyedProcessFunction.Context
    OnTimerContext = KeyedProcessFunction.OnTimerContext

    @abstractmethod
    def process_element1(self, value: Any, ctx: "KeyedProcessFunction.Context") -> Any:
        ...

    @abstractmethod
    def process_element2(self, value: Any, ctx: "KeyedProcessFunction.Context") -> Any:
        ...

    def on_timer(self, timestamp: int, ctx: "KeyedProcessFunction.OnTimerContext") -> Any:
        pass


class BaseBroadcastProcessFunction(Function):
    """What both broadcast process functions share: their contexts (PyFlink's names) and their two methods,
    ``process_element`` (the other stream's records, a read-only view of the broadcast state) and
    ``process_broadcast_element`` (the broadcast stream's, which write it); each yields zero or more outputs
    (``(OutputTag, value)`` for a side output)."""

    class BaseContext:
        """``timestamp()`` (the record's event timestamp, or the firing timer's time), ``current_processing_time()``
        and ``current_watermark()``."""

        def timestamp(self) -> Any:
            raise NotImplementedError

        def current_processing_time(self) -> int:
            raise NotImplementedError

        def current_watermark(self) -> int:
            raise NotImplementedError

    class Context(BaseContext):
        """The context of ``process_broadcast_element``: ``get_broadcast_state(descriptor)`` reads and writes."""

        def get_broadcast_state(self, state_descriptor: Any) -> Any:
            raise NotImplementedError

    class ReadOnlyContext(BaseContext):
        """The context of ``process_element``: ``get_broadcast_state(descriptor)`` is a read-only view."""

        def get_broadcast_state(self, state_descriptor: Any) -> Any:
            raise NotImplementedError

    @abstractmethod
    def process_element(self, value: Any, ctx: Any) -> Any:
        ...

    @abstractmethod
    def process_broadcast_element(self, value: Any, ctx: "BaseBroadcastProcessFunction.Context") -> Any:
        ...


class BroadcastProcessFunction(BaseBroadcastProcessFunction):
    """Processes a stream without keys against broadcast state (see :class:`BaseBroadcastProcessFunction`)."""


class KeyedBroadcastProcessFunction(BaseBroadcastProcessFunction):
    """Processes a keyed stream against broadcast state (see :class:`BaseBroadcastProcessFunction`), with keyed
    state and timers in ``process_element``, and ``on_timer`` for the timers."""

    class ReadOnlyContext(BaseBroadcastProcessFunction.ReadOnlyContext):
        """Also ``get_current_key()`` and ``timer_service()``."""

        def get_current_key(self) -> Any:
            raise NotImplementedError

        def timer_service(self) -> Any:
            raise NotImplementedError

    class OnTimerContext(ReadOnlyContext):
        """Also ``time_domain()``: the firing timer's."""

        def time_domain(self) -> Any:
            raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: "KeyedBroadcastProcessFunction.OnTimerContext") -> Any:
        pass
