"""PyFlink's user-function classes (``MapFunction``, ``ReduceFunction``, ``KeyedProcessFunction``, ...).

A user passes either one of these or a plain callable; :func:`as_callable`
turns both into the single method a runner calls. ``open(runtime_context)``
is called before the first record of each task (a Spark task runs one
partition or bucket of one micro-batch) and ``close()`` after its last one.

``is_output_idempotent()`` (FLIP-365, default False) lets a function declare
that re-emitting its latest output per key is harmless, so the flush-interval
buffer may drop superseded outputs. ``is_output_only_after_end_of_stream()``
(FLIP-331, default False) lets a keyed function declare that it emits nothing
before its input ends, so it may run with batch algorithms in a streaming job.

Window functions (``AggregateFunction``, ``WindowFunction``,
``ProcessWindowFunction``, their ``All`` forms for ``window_all``) and the
two-input ``CoGroupFunction``/``JoinFunction``/``FlatJoinFunction`` are at the
end of the module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, Generic, TypeVar

from changeflow.datastream.state import (AggregatingState, AggregatingStateDescriptor, ListState, ListStateDescriptor,
                                         MapState, MapStateDescriptor, ReducingState, ReducingStateDescriptor,
                                         ValueState, ValueStateDescriptor, state_for)
from changeflow.datastream.pyflink_names import module_getattr

__all__ = ["AggregateFunction", "AllWindowFunction", "BaseBroadcastProcessFunction", "BroadcastProcessFunction",
           "CoFlatMapFunction", "CoGroupFunction", "CoMapFunction", "CoProcessFunction", "FilterFunction",
           "FlatJoinFunction", "FlatMapFunction", "Function", "JoinFunction", "KeySelector",
           "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction", "KeyedProcessFunction", "MapFunction",
           "Partitioner", "ProcessAllWindowFunction", "ProcessFunction", "ProcessWindowFunction", "ReduceFunction",
           "RuntimeContext", "TimeDomain", "TimerService", "WindowFunction"]


# PyFlink's type parameters of its generic function classes (``WindowFunction[IN, OUT, KEY, W]``):
# subscripting is for the reader and type checkers; changeflow does not check them at run time.
IN = TypeVar("IN")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")
CW = TypeVar("CW")  # a window function's Context's window type (W of its function, named apart for type checkers)


class RuntimeContext:
    """What a function sees of the task it runs in (PyFlink's names)."""

    def __init__(self, task_name: str = "", subtask: int = 0, parallelism: int = 1,
                 job_parameters: dict[str, str] | None = None, state_of_current_key: Any = None,
                 clock: Any = None) -> None:
        self._task_name = task_name
        self._subtask = subtask
        self._parallelism = parallelism
        self._job_parameters = dict(job_parameters or {})
        self._state_of_current_key = state_of_current_key  # () -> dict, or None outside keyed functions
        self._clock = clock  # () -> processing time (ms) of the keyed kernel: state TTL measures it
        self._state_shapes: dict[str, tuple] = {}  # state name -> the descriptor kind and types it was asked with

    def get_task_name(self) -> str:
        return self._task_name

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_index_of_this_subtask(self) -> int:
        return self._subtask

    def get_attempt_number(self) -> int:
        return 0

    def get_task_name_with_subtasks(self) -> str:
        return f"{self._task_name} ({self._subtask + 1}/{self._parallelism})"

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return self._job_parameters.get(key, default_value)

    def get_state(self, state_descriptor: ValueStateDescriptor) -> ValueState:
        """The :class:`ValueState` of ``state_descriptor``, scoped to the current key."""
        return self._state(state_descriptor, ValueStateDescriptor, "get_state")

    def get_list_state(self, state_descriptor: ListStateDescriptor) -> ListState:
        """The :class:`ListState` of ``state_descriptor``, scoped to the current key."""
        return self._state(state_descriptor, ListStateDescriptor, "get_list_state")

    def get_map_state(self, state_descriptor: MapStateDescriptor) -> MapState:
        """The :class:`MapState` of ``state_descriptor``, scoped to the current key."""
        return self._state(state_descriptor, MapStateDescriptor, "get_map_state")

    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor) -> ReducingState:
        """The :class:`ReducingState` of ``state_descriptor``, scoped to the current key."""
        return self._state(state_descriptor, ReducingStateDescriptor, "get_reducing_state")

    def get_aggregating_state(self, state_descriptor: AggregatingStateDescriptor) -> AggregatingState:
        """The :class:`AggregatingState` of ``state_descriptor``, scoped to the current key."""
        return self._state(state_descriptor, AggregatingStateDescriptor, "get_aggregating_state")

    def _state(self, descriptor: Any, kind: type, method: str) -> Any:
        if type(descriptor) is not kind:
            raise TypeError(f"{method}() takes a {kind.__name__}, got {type(descriptor).__name__}")
        name = descriptor.get_name()
        if self._state_of_current_key is None:
            raise RuntimeError(f"keyed state {name!r} is only available to functions applied on a KeyedStream")
        # One name is one piece of state: asking for it again with another kind or type is a
        # mistake Flink also refuses (its state would be read with the wrong serializer).
        shape = (kind, repr(getattr(descriptor, "type_info", None)), repr(getattr(descriptor, "key_type_info", None)),
                 repr(getattr(descriptor, "value_type_info", None)))
        known = self._state_shapes.setdefault(name, shape)
        if known != shape:
            raise ValueError(f"{self._task_name}: keyed state {name!r} was already asked for as a {known[0].__name__} "
                             f"with other types; one name cannot hold two kinds or types of state")
        return state_for(descriptor, self._state_of_current_key, self._task_name, self._clock)


# An ABC with no abstract method of its own, as PyFlink's: its metaclass makes its subclasses'
# abstract methods binding; open and close are optional hooks, empty on purpose.
class Function(ABC):  # noqa: B024 - the root of the function ABCs (above)
    """Base of every user function."""

    def open(self, runtime_context: RuntimeContext) -> None:  # noqa: B027 - optional hook
        """Called once before the function's first record; does nothing unless overridden."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called once after the function's last record; does nothing unless overridden."""

    def is_output_idempotent(self) -> bool:
        """Whether re-emitting the latest output per key in place of all of them is harmless (FLIP-365)."""
        return False

    def is_output_only_after_end_of_stream(self) -> bool:
        """Whether the operator running this function emits only after its input ended (FLIP-331)."""
        return False


class MapFunction(Function):
    @abstractmethod
    def map(self, value: Any) -> Any:
        ...


class FlatMapFunction(Function):
    @abstractmethod
    def flat_map(self, value: Any) -> Any:
        """Returns or yields zero or more outputs."""


class FilterFunction(Function):
    @abstractmethod
    def filter(self, value: Any) -> bool:
        ...


class ReduceFunction(Function):
    @abstractmethod
    def reduce(self, value1: Any, value2: Any) -> Any:
        """Combines the running value ``value1`` with the next record ``value2``."""


class KeySelector(Function):
    @abstractmethod
    def get_key(self, value: Any) -> Any:
        ...


class TimeDomain:
    EVENT_TIME = 0
    PROCESSING_TIME = 1


class Partitioner(Function):
    """PyFlink's custom partitioner for ``partition_custom``: the parallel instance a key's records go to."""

    def partition(self, key: Any, num_partitions: int) -> int:
        raise NotImplementedError


class TimerService(ABC):
    """Registers timers of the current key and tells the time."""

    @abstractmethod
    def current_processing_time(self) -> int:
        ...

    @abstractmethod
    def current_watermark(self) -> int:
        ...

    @abstractmethod
    def register_processing_time_timer(self, timestamp: int) -> None:
        ...

    @abstractmethod
    def register_event_time_timer(self, timestamp: int) -> None:
        ...

    @abstractmethod
    def delete_processing_time_timer(self, timestamp: int) -> None:
        ...

    @abstractmethod
    def delete_event_time_timer(self, timestamp: int) -> None:
        ...


class ProcessFunction(Function):
    """Processes each record; ``process_element`` yields zero or more outputs."""

    class Context(ABC):
        @abstractmethod
        def timer_service(self) -> TimerService:
            ...

        @abstractmethod
        def timestamp(self) -> int:
            ...

    @abstractmethod
    def process_element(self, value: Any, ctx: "ProcessFunction.Context") -> Any:
        ...


class KeyedProcessFunction(Function):
    """Processes each record of a keyed stream with keyed state; ``process_element`` and ``on_timer`` yield
    outputs (``(OutputTag, value)`` for a side output)."""

    class Context(ABC):
        @abstractmethod
        def get_current_key(self) -> Any:
            ...

        @abstractmethod
        def timer_service(self) -> TimerService:
            ...

        @abstractmethod
        def timestamp(self) -> int:
            ...

    class OnTimerContext(Context):
        @abstractmethod
        def time_domain(self) -> int:
            ...

    @abstractmethod
    def process_element(self, value: Any, ctx: "KeyedProcessFunction.Context") -> Any:
        ...

    def on_timer(self, timestamp: int, ctx: "KeyedProcessFunction.OnTimerContext") -> Any:
        pass


_METHODS = {MapFunction: "map", FlatMapFunction: "flat_map", FilterFunction: "filter",
            ReduceFunction: "reduce", KeySelector: "get_key"}


def as_callable(func: Any, kind: type) -> Callable:
    """The method of ``func`` for a ``kind`` function class, or ``func`` itself when it is a plain callable.

    >>> as_callable(lambda x: x + 1, MapFunction)(1)
    2
    >>> as_callable(3, MapFunction)
    Traceback (most recent call last):
    ...
    TypeError: The input must be a MapFunction or a callable function, got int
    """
    if isinstance(func, kind):
        return getattr(func, _METHODS[kind])
    if isinstance(func, Function) or not callable(func):
        raise TypeError(f"The input must be a {kind.__name__} or a callable function, got {type(func).__name__}")
    return func


def describe(func: Any) -> str:
    """A name for ``func`` in error messages: its class or function name."""
    if isinstance(func, Function):
        return type(func).__qualname__
    return getattr(func, "__qualname__", None) or repr(func)


# --- window functions (PyFlink's signatures) ------------------------------------------------------


class AggregateFunction(Function):
    """Aggregates a window's elements through an accumulator (PyFlink's ``AggregateFunction``).

    ``add(value, accumulator)`` returns the new accumulator; ``merge(acc_a, acc_b)``
    combines two partial accumulators (changeflow pre-aggregates each partition of
    the input and merges the partials, as Flink's combiners do).
    """

    @abstractmethod
    def create_accumulator(self) -> Any:
        ...

    @abstractmethod
    def add(self, value: Any, accumulator: Any) -> Any:
        ...

    @abstractmethod
    def get_result(self, accumulator: Any) -> Any:
        ...

    @abstractmethod
    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        ...


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Evaluates a keyed window: ``apply(key, window, inputs)`` returns or yields outputs."""

    @abstractmethod
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        ...


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    """Evaluates a non-keyed window (``window_all``): ``apply(window, inputs)`` returns or yields outputs."""

    @abstractmethod
    def apply(self, window: Any, inputs: Any) -> Any:
        ...


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Evaluates a keyed window with a context: ``process(key, context, elements)`` yields outputs."""

    # Generic in the window type, as PyFlink's, so ``ProcessWindowFunction.Context[TimeWindow]`` annotates.
    class Context(ABC, Generic[CW]):
        @abstractmethod
        def window(self) -> Any:
            ...

        @abstractmethod
        def current_processing_time(self) -> int:
            ...

        @abstractmethod
        def current_watermark(self) -> int:
            ...

        @abstractmethod
        def window_state(self) -> Any:
            ...

        @abstractmethod
        def global_state(self) -> Any:
            ...

    @abstractmethod
    def process(self, key: Any, context: "ProcessWindowFunction.Context", elements: Any) -> Any:
        ...

    def clear(self, context: "ProcessWindowFunction.Context") -> None:
        """Called when a window is purged; a global window never is (as in Flink)."""


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    """Evaluates a non-keyed window with a context: ``process(context, elements)`` yields outputs."""

    class Context(ABC, Generic[CW]):
        @abstractmethod
        def window(self) -> Any:
            ...

        @abstractmethod
        def window_state(self) -> Any:
            ...

        @abstractmethod
        def global_state(self) -> Any:
            ...

    @abstractmethod
    def process(self, context: "ProcessAllWindowFunction.Context", elements: Any) -> Any:
        ...

    def clear(self, context: "ProcessAllWindowFunction.Context") -> None:
        """Called when a window is purged; a global window never is (as in Flink)."""


class CoGroupFunction(Function):
    """Flink's ``CoGroupFunction``: ``co_group(first, second)`` gets a key's elements of both inputs, yields outputs."""

    @abstractmethod
    def co_group(self, first: Any, second: Any) -> Any:
        ...


class JoinFunction(Function):
    """Flink's ``JoinFunction``: ``join(first, second)`` returns one output per pair of elements with equal keys."""

    @abstractmethod
    def join(self, first: Any, second: Any) -> Any:
        ...


class FlatJoinFunction(Function):
    """Flink's ``FlatJoinFunction``: ``join(first, second)`` yields zero or more outputs per pair."""

    @abstractmethod
    def join(self, first: Any, second: Any) -> Any:
        ...


# PyFlink has the two-input functions in this module too; they subclass Function, defined above.
from changeflow.datastream.co_functions import (BaseBroadcastProcessFunction,  # noqa: E402
                                                BroadcastProcessFunction, CoFlatMapFunction, CoMapFunction,
                                                CoProcessFunction, KeyedBroadcastProcessFunction,
                                                KeyedCoProcessFunction)

# PyFlink's names of pyflink.datastream.functions changeflow lacks on purpose fail naming themselves (.pyflink_names).
__getattr__ = module_getattr("pyflink.datastream.functions")
