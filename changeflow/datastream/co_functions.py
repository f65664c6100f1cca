"""PyFlink's two-input functions, for ``DataStream.connect(other)``'s ``ConnectedStreams`` (:mod:`.connected_streams`).

``CoMapFunction`` (``map1``/``map2``), ``CoFlatMapFunction``
(``flat_map1``/``flat_map2``), ``CoProcessFunction`` and
``KeyedCoProcessFunction`` (``process_element1``/``process_element2(value, ctx)``,
and ``on_timer`` for the keyed one): the method ending in 1 gets the records of
the stream ``connect`` was called on, the one ending in 2 those of its argument.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from changeflow.datastream.functions import Function, KeyedProcessFunction, ProcessFunction

__all__ = ["CoFlatMapFunction", "CoMapFunction", "CoProcessFunction", "KeyedCoProcessFunction"]


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
