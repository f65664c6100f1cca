"""``WindowedStream``, ``AllWindowedStream`` and the windowed ``co_group``/``join`` (PyFlink's and Flink's names).

``KeyedStream.window(assigner)`` gives a :class:`WindowedStream`,
``DataStream.window_all(assigner)`` an :class:`AllWindowedStream`; their
``reduce``, ``aggregate``, ``process`` and ``apply`` take PyFlink 2.3's
arguments. ``DataStream.co_group(other)`` and ``DataStream.join(other)`` follow
Flink's Java API (PyFlink has neither)::

    first.co_group(second).where(key1).equal_to(key2).window(assigner).apply(CoGroupFunction)
    first.join(second).where(key1).equal_to(key2).window(assigner).apply(JoinFunction)

With ``GlobalWindows`` (:mod:`.window`) and
``create_with_end_of_stream_trigger()`` the window fires once per key after
all input, and the operator runs with batch algorithms (FLIP-331); with
``create()`` it never fires. With an event-time assigner
(``TumblingEventTimeWindows``, ``SlidingEventTimeWindows``,
``EventTimeSessionWindows``) windows fire as the watermark passes their end;
``allowed_lateness(ms)`` and ``side_output_late_data(tag)`` say what happens to
late records (:mod:`changeflow.kernels.window.event_time`). Processing-time assigners
(``TumblingProcessingTimeWindows``, ``SlidingProcessingTimeWindows``,
``ProcessingTimeSessionWindows``) window records by arrival time and fire on the
clock (:mod:`changeflow.kernels.window.processing_time`). Count windows
(``KeyedStream.count_window``, ``DataStream.count_window_all``) fire when full;
``trigger()`` replaces the trigger of both (:mod:`.window_triggers`). The windowed
``co_group``/``join`` take ``GlobalWindows`` only.

>>> from changeflow.datastream import StreamExecutionEnvironment
>>> from changeflow.datastream.window import GlobalWindows
>>> env = StreamExecutionEnvironment.get_execution_environment()
>>> ds = env.from_collection([("a", 1), ("b", 2), ("a", 3)])
>>> totals = ds.key_by(lambda r: r[0]).window(GlobalWindows.create_with_end_of_stream_trigger()).reduce(
...     lambda a, b: (a[0], a[1] + b[1]))
>>> totals.get_name()
'Window(GlobalWindows(trigger=EndOfStreamTrigger), reduce(<lambda>))'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from changeflow.common.typeinfo import PickledBytesTypeInfo
from changeflow.datastream.functions import (AggregateFunction, AllWindowFunction, CoGroupFunction, FlatJoinFunction,
                                             JoinFunction, KeySelector, ProcessAllWindowFunction,
                                             ProcessWindowFunction, ReduceFunction, WindowFunction, describe)
from changeflow.datastream.window import (EndOfStreamTrigger, GlobalWindow, GlobalWindows, NeverTrigger, TimeWindow,
                                          Trigger, check_assigner, check_trigger, count_window_of, global_window_of,
                                          is_kernel_assigner, kernel_trigger)
# The module, not the name: changeflow.kernels.window imports the keyed kernels, which import this
# package's functions, so a worker that loads a window kernel first meets this module mid-import.
from changeflow.kernels.window import evaluate as window_kernels
from changeflow.kernels.window.event_time import EventWindows
from changeflow.kernels.window.processing_time import check_trigger_domain
from changeflow.plan.stream_nodes import CoGroupNode, EventWindowNode, WindowNode

if TYPE_CHECKING:
    from changeflow.datastream.data_stream import DataStream, KeyedStream

__all__ = ["AllWindowedStream", "CoGroupedStreams", "JoinedStreams", "WindowedStream"]


def _spec(*args: Any) -> "window_kernels.WindowSpec":
    # Only global windows exist here: the window that fires is GlobalWindow's one instance.
    return window_kernels.WindowSpec(*args, window=GlobalWindow.get())


def window_all_key(value: Any) -> None:
    """The key of ``window_all``: every element in one group (Flink runs it at parallelism 1)."""
    return None


def _require(value: Any, kinds: tuple, what: str) -> None:
    if not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"{what} takes an instance of {names}, got {type(value).__name__}")


class _Windowed:
    """What :class:`WindowedStream` and :class:`AllWindowedStream` share; ``keyed`` tells them apart."""

    keyed = True
    _window_functions: tuple = ()

    def __init__(self, stream: "DataStream", key_selector: Any, assigner: Any, where: str) -> None:
        self._stream = stream
        self._key_selector = key_selector
        # Event-time and count windows run in the window kernel (kernels.window.event_time), global windows not.
        self._kernel = is_kernel_assigner(assigner)
        self._assigner: Any = assigner if self._kernel else check_assigner(assigner, where)
        self._trigger: Trigger = self._assigner.get_default_trigger()
        self._trigger_set = False  # trigger() was called (the operator's name shows the trigger)
        self._lateness = 0
        self._late_tag: Any = None

    def get_execution_environment(self):
        return self._stream.get_execution_environment()

    def get_input_type(self):
        return self._stream.get_type()

    def trigger(self, trigger: Trigger):
        """Replaces the assigner's trigger: ``EventTimeTrigger``, ``CountTrigger``, ``ContinuousEventTimeTrigger`` or
        ``NeverTrigger``, each possibly in a ``PurgingTrigger`` (:mod:`.window_triggers`), run by the window kernel;
        for global windows also ``EndOfStreamTrigger`` (FLIP-331's batch path, as ``NeverTrigger`` there)."""
        where = f"{type(self).__name__}.trigger()"
        if isinstance(self._assigner, GlobalWindows):  # e.g. CountTrigger: the window kernel runs the global window
            self._kernel = isinstance(trigger, Trigger) and not isinstance(trigger, (NeverTrigger, EndOfStreamTrigger))
        if self._kernel:
            kernel_trigger(trigger, where)
            self._trigger, self._trigger_set = trigger, True
            return self
        self._trigger, self._trigger_set = check_trigger(trigger, where, kernel=True), True
        return self

    def allowed_lateness(self, time_ms: int):
        """How long (ms) after its end an event-time window still takes late records (firing again for
        each); a global window is never late (it ends at the end of time): accepted and without effect."""
        if int(time_ms) < 0:
            raise ValueError(f"allowed_lateness must not be negative, got {time_ms}")
        self._lateness = int(time_ms)
        return self

    def side_output_late_data(self, output_tag: Any):
        """Late records (too late for every window, past the allowed lateness) go to ``output_tag``'s side
        output (``get_side_output(output_tag)`` of the window's result) instead of being dropped."""
        if not getattr(type(output_tag), "is_output_tag", False):
            raise TypeError(f"side_output_late_data() takes an OutputTag, got {type(output_tag).__name__}")
        if not self._kernel:
            raise ValueError("side_output_late_data(): a global window has no late data; it needs an event-time "
                             "window assigner")
        self._late_tag = output_tag
        return self

    def reduce(self, reduce_function: Callable | ReduceFunction, window_function: Any = None,
               output_type: Any = None) -> "DataStream":
        """Reduces each window with ``reduce_function(a, b)`` (associative), then the optional window function."""
        if not isinstance(reduce_function, ReduceFunction) and not callable(reduce_function):
            raise TypeError("reduce() takes a ReduceFunction or a callable function")
        self._check_window_function(window_function)
        if window_function is None and output_type is None:
            output_type = self.get_input_type()
        return self._build(_spec("reduce", reduce_function, window_function, self.keyed, output_type),
                           describe(reduce_function), output_type)

    def aggregate(self, aggregate_function: AggregateFunction, window_function: Any = None,
                  accumulator_type: Any = None, output_type: Any = None) -> "DataStream":
        """Aggregates each window with an ``AggregateFunction``, then the optional window function."""
        _require(aggregate_function, (AggregateFunction,), "aggregate()")
        self._check_window_function(window_function)
        return self._build(_spec("aggregate", aggregate_function, window_function, self.keyed, output_type),
                           describe(aggregate_function), output_type)

    def apply(self, window_function: Any, output_type: Any = None) -> "DataStream":
        """Evaluates each window with ``window_function.apply(...)`` over all its elements."""
        _require(window_function, self._window_functions[:1], "apply()")
        return self._build(_spec("apply", window_function, None, self.keyed, output_type),
                           describe(window_function), output_type)

    def process(self, process_window_function: Any, output_type: Any = None) -> "DataStream":
        """Evaluates each window with ``process(...)`` over all its elements and a context."""
        _require(process_window_function, self._window_functions[1:], "process()")
        return self._build(_spec("process", process_window_function, None, self.keyed, output_type),
                           describe(process_window_function), output_type)

    def _check_window_function(self, window_function: Any) -> None:
        if window_function is not None:
            _require(window_function, self._window_functions, "the window_function argument")

    def _build(self, spec: "window_kernels.WindowSpec", function_name: str, output_type: Any) -> "DataStream":
        from changeflow.datastream.data_stream import DataStream

        name = f"{'Window' if self.keyed else 'WindowAll'}({self._assigner!r}, {spec.kind}({function_name}))"
        if self._trigger_set:
            name = name[:-1] + f", trigger={self._trigger!r})"
        if self._kernel:
            windows = EventWindows(**self._assigner.spec())
            trigger = kernel_trigger(self._trigger, "trigger()")
            check_trigger_domain(windows, trigger, f"{type(self).__name__}.trigger()")
            spec = window_kernels.WindowSpec(spec.kind, spec.function, spec.window_function, spec.keyed,
                                             spec.output_type)
            node = EventWindowNode(name, output_type or PickledBytesTypeInfo(), input=self._stream._node,
                                   key_selector=self._key_selector, function=spec.function, spec=spec,
                                   windows=windows, make_window=_window_maker(windows),
                                   lateness=self._lateness, late_tag=self._late_tag,
                                   trigger=trigger)
            return DataStream(self._stream._env, node)
        node = WindowNode(name, output_type or PickledBytesTypeInfo(), input=self._stream._node,
                          key_selector=self._key_selector, function=spec.function, spec=spec, trigger=self._trigger)
        return DataStream(self._stream._env, node)


def _window_maker(windows: EventWindows) -> Any:
    """What builds the window a window function sees from the kernel's ``(start, end)``."""
    if windows.kind == "global":
        return global_window_of
    return TimeWindow if windows.event_time else count_window_of


class WindowedStream(_Windowed):
    """A keyed stream cut into windows; window functions get the key."""

    keyed = True
    _window_functions = (WindowFunction, ProcessWindowFunction)

    def __init__(self, keyed_stream: "KeyedStream", window_assigner: Any) -> None:
        super().__init__(keyed_stream, keyed_stream._key_selector, window_assigner, "KeyedStream.window()")


class AllWindowedStream(_Windowed):
    """A whole stream cut into windows (``window_all``): one group, window functions get no key."""

    keyed = False
    _window_functions = (AllWindowFunction, ProcessAllWindowFunction)

    def __init__(self, data_stream: "DataStream", window_assigner: Any) -> None:
        super().__init__(data_stream, window_all_key, window_assigner, "DataStream.window_all()")


# --- two inputs: Flink's CoGroupedStreams / JoinedStreams ------------------------------------------


def _key_selector(key: Any, where: str) -> Any:
    if not isinstance(key, KeySelector) and not callable(key):
        raise TypeError(f"{where} takes a KeySelector or a callable function, got {type(key).__name__}")
    return key


class _TwoInputs:
    """``a.co_group(b)`` / ``a.join(b)``: then ``where(key1)``, ``equal_to(key2)``, ``window(assigner)``."""

    _operation = "co_group"

    def __init__(self, first: "DataStream", second: "DataStream") -> None:
        if first._env is not second._env:
            raise ValueError(f"{self._operation}() needs streams of the same StreamExecutionEnvironment")
        self._first = first
        self._second = second

    def where(self, key_selector: Callable | KeySelector) -> "_Where":
        return _Where(self, _key_selector(key_selector, f"{self._operation}().where()"))


class CoGroupedStreams(_TwoInputs):
    """``first.co_group(second)``: for each key, ``co_group(first's elements, second's elements)``."""

    _operation = "co_group"


class JoinedStreams(_TwoInputs):
    """``first.join(second)``: an inner join, ``join(a, b)`` for each pair of elements with equal keys."""

    _operation = "join"


class _Where:
    def __init__(self, inputs: _TwoInputs, first_key: Any) -> None:
        self._inputs = inputs
        self._first_key = first_key

    def equal_to(self, key_selector: Callable | KeySelector) -> "_EqualTo":
        where = f"{self._inputs._operation}().where(...).equal_to()"
        return _EqualTo(self._inputs, self._first_key, _key_selector(key_selector, where))


class _EqualTo:
    def __init__(self, inputs: _TwoInputs, first_key: Any, second_key: Any) -> None:
        self._inputs = inputs
        self._first_key = first_key
        self._second_key = second_key

    def window(self, assigner: Any) -> "WithWindow":
        where = f"{self._inputs._operation}().where(...).equal_to(...).window()"
        return WithWindow(self, check_assigner(assigner, where))


class WithWindow:
    """A windowed co-group or join, waiting for its function (``apply``)."""

    def __init__(self, keys: _EqualTo, assigner: Any) -> None:
        self._keys = keys
        self._assigner = assigner
        self._trigger = assigner.get_default_trigger()

    def trigger(self, trigger: Trigger) -> "WithWindow":
        self._trigger = check_trigger(trigger, "WithWindow.trigger()")
        return self

    def apply(self, function: Any, output_type: Any = None) -> "DataStream":
        """``co_group``: a CoGroupFunction (or callable ``(first, second)`` yielding outputs); ``join``: a
        JoinFunction, FlatJoinFunction or callable ``(a, b)`` returning one output."""
        from changeflow.datastream.data_stream import DataStream

        inputs = self._keys._inputs
        if inputs._operation == "co_group":
            if not isinstance(function, CoGroupFunction) and (not callable(function) or _is_function(function)):
                raise TypeError(f"co_group(...).apply() takes a CoGroupFunction or a callable function, "
                                f"got {type(function).__name__}")
            kind, label = "co_group", "CoGroup"
        else:
            if not isinstance(function, (JoinFunction, FlatJoinFunction)) and (
                    not callable(function) or _is_function(function)):
                raise TypeError(f"join(...).apply() takes a JoinFunction, a FlatJoinFunction or a callable function, "
                                f"got {type(function).__name__}")
            kind, label = ("flat_join" if isinstance(function, FlatJoinFunction) else "join"), "Join"
        name = f"{label}({self._assigner!r}, {describe(function)})"
        node = CoGroupNode(name, output_type or PickledBytesTypeInfo(), first=inputs._first._node,
                           second=inputs._second._node, first_key=self._keys._first_key,
                           second_key=self._keys._second_key, function=function, kind=kind, trigger=self._trigger,
                           output_type=output_type)
        return DataStream(inputs._first._env, node)


def _is_function(value: Any) -> bool:
    from changeflow.datastream.functions import Function

    return isinstance(value, Function)
