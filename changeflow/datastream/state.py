"""PyFlink's keyed state: descriptors and the ``ValueState``/``ListState``/``MapState``/
``ReducingState``/``AggregatingState`` handles.

A keyed function (``KeyedProcessFunction``) asks its runtime context for state by descriptor
in ``open()``; the handle it gets is bound to the *current key*, which the runner
(:mod:`changeflow.kernels.keyed.process`) switches before each record. The values themselves
live in the runner's per-key dict (one entry per state name: the value, a list, a dict or an
accumulator), which it loads and stores a bucket of keys at a time through the kernel's
:class:`~changeflow.kernels.state.KeyedState`.

Declared types are enforced: a value written to state whose descriptor declares a
``TypeInformation`` (``ValueStateDescriptor("count", Types.LONG())``) is converted to it
(``Types.DOUBLE()`` turns ``1`` into ``1.0``, as Flink's serializer would) or refused with a
``ValueError`` naming the operator, the state, the declared type and the value. Flink fails
the same write when its serializer meets the value; changeflow keeps Python values, so
without the check a string would sit in a ``LONG`` state. ``Types.PICKLED_BYTE_ARRAY()``
or no type accepts any value.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterable, TypeVar

from changeflow.common.typeinfo import conform
from changeflow.datastream.state_ttl_config import StateTtlConfig
from changeflow.datastream.pyflink_names import module_getattr

__all__ = ["AggregatingState", "AggregatingStateDescriptor", "BroadcastState", "ListState", "ListStateDescriptor",
           "MapState", "MapStateDescriptor", "ReadOnlyBroadcastState", "ReducingState", "ReducingStateDescriptor",
           "State", "StateDescriptor", "StateTtlConfig", "ValueState", "ValueStateDescriptor"]


# PyFlink's type parameters (``ValueState[T]``, ``MapState[K, V]``, ``ListState[T]``): for readers and
# type checkers only.
T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
IN = TypeVar("IN")
OUT = TypeVar("OUT")


def _declared(type_info: Any) -> Any:
    """The type values are checked against, or None (no type, or PICKLED_BYTE_ARRAY)."""
    if type_info is None:
        return None
    if not callable(getattr(type_info, "from_value", None)):
        raise TypeError(f"a state descriptor takes a TypeInformation (Types.LONG(), ...), got {type_info!r}")
    return type_info if type_info.is_declared() else None


class StateDescriptor:
    """Names a piece of keyed state and its type."""

    def __init__(self, name: str, type_info: Any = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a state descriptor needs a non-empty name, got {name!r}")
        self.name = name
        self.type_info = type_info
        self.ttl_config: StateTtlConfig | None = None
        _declared(type_info)

    def get_name(self) -> str:
        return self.name

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        """Give the state a processing-time TTL (see :mod:`changeflow.kernels.keyed.ttl` for the rules)."""
        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(f"enable_time_to_live takes a StateTtlConfig, got {type(ttl_config).__name__}")
        self.ttl_config = ttl_config if ttl_config.is_enabled() else None


class ValueStateDescriptor(StateDescriptor):
    """Describes a :class:`ValueState`: ``ValueStateDescriptor("count", Types.LONG())``."""

    def __init__(self, name: str, value_type_info: Any = None) -> None:
        super().__init__(name, value_type_info)


class ListStateDescriptor(StateDescriptor):
    """Describes a :class:`ListState`: ``ListStateDescriptor("seen", Types.STRING())`` (the element type)."""

    def __init__(self, name: str, elem_type_info: Any = None) -> None:
        super().__init__(name, elem_type_info)
        self.elem_type_info = elem_type_info


class MapStateDescriptor(StateDescriptor):
    """Describes a :class:`MapState`: ``MapStateDescriptor("counts", Types.STRING(), Types.LONG())``."""

    def __init__(self, name: str, key_type_info: Any = None, value_type_info: Any = None) -> None:
        super().__init__(name, None)
        _declared(key_type_info)
        _declared(value_type_info)
        self.key_type_info = key_type_info
        self.value_type_info = value_type_info


class ReducingStateDescriptor(StateDescriptor):
    """Describes a :class:`ReducingState`: ``ReducingStateDescriptor("sum", lambda a, b: a + b, Types.LONG())``."""

    def __init__(self, name: str, reduce_function: Any, type_info: Any = None) -> None:
        super().__init__(name, type_info)
        reduce = getattr(reduce_function, "reduce", reduce_function)
        if not callable(reduce):
            raise TypeError(f"ReducingStateDescriptor {name!r} takes a ReduceFunction or a callable, "
                            f"got {type(reduce_function).__name__}")
        self.reduce_function = reduce


class AggregatingStateDescriptor(StateDescriptor):
    """Describes an :class:`AggregatingState`: an ``AggregateFunction`` and its accumulator type."""

    def __init__(self, name: str, agg_function: Any, state_type_info: Any = None) -> None:
        super().__init__(name, state_type_info)
        for method in ("create_accumulator", "add", "get_result"):
            if not callable(getattr(agg_function, method, None)):
                raise TypeError(f"AggregatingStateDescriptor {name!r} takes an AggregateFunction, "
                                f"got {type(agg_function).__name__} (no {method}())")
        self.agg_function = agg_function


class State:
    """Keyed state scoped to the key of the record being processed."""

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "") -> None:
        self._name = name
        self._current = current  # () -> the current key's dict of state values
        self._where = f"state {name!r}" + (f" of {operator}" if operator else "")

    def _checker(self, type_info: Any, what: str) -> Callable[[Any], Any]:
        """A function converting a value to ``type_info`` (or passing it, when undeclared), naming the state."""
        declared = _declared(type_info)
        if declared is None:
            return lambda value: value
        convert = declared.converter()
        if repr(declared) == "Types.FLOAT()":
            # PyFlink hands back the Python float written to a FLOAT state (its state cache keeps
            # Python objects), not the value rounded to single precision: checked, kept as written.
            narrow = convert
            convert = lambda value: value if narrow(value) is None else float(value)  # noqa: E731
        where = f"{what} of {self._where}" if what else self._where

        def check(value: Any) -> Any:
            try:
                return convert(value)
            except ValueError:
                return conform(declared, value, where, convert)  # raises, naming the state
        return check

    def clear(self) -> None:
        """Removes the current key's value of this state."""
        self._current().pop(self._name, None)


class ValueState(State, Generic[T]):
    """One value per key; ``value()`` is None until ``update()``.

    >>> from changeflow.common import Types
    >>> values = {}
    >>> s = ValueState("n", lambda: values.setdefault("k", {}))
    >>> s.value() is None
    True
    >>> s.update(3); s.value(), values
    (3, {'k': {'n': 3}})
    >>> s.clear(); values
    {'k': {}}
    >>> ValueState("n", lambda: values.setdefault("k", {}), "Count", Types.LONG()).update("3")
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: state 'n' of Count is declared Types.LONG(), but the value '3' (str) does not fit it:
    value '3' does not fit Types.LONG(): expected an int, got str
    """

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "", type_info: Any = None) -> None:
        super().__init__(name, current, operator)
        self._check = self._checker(type_info, "")

    def value(self) -> Any:
        return self._current().get(self._name)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._current()[self._name] = self._check(value)


class ListState(State, Generic[T]):
    """A list per key: ``get()`` (empty when unset), ``add``, ``add_all``, ``update``, ``clear``."""

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "", elem_type_info: Any = None) -> None:
        super().__init__(name, current, operator)
        self._check = self._checker(elem_type_info, "an element")

    def get(self) -> list:
        """A copy of the key's elements, so that changing it does not bypass the type check."""
        return list(self._current().get(self._name, ()))

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError(f"{self._where}: cannot add None to a ListState (as in Flink)")
        self._current().setdefault(self._name, []).append(self._check(value))

    def add_all(self, values: Iterable[Any]) -> None:
        checked = self._checked(values)
        if checked:
            self._current().setdefault(self._name, []).extend(checked)

    def update(self, values: Iterable[Any]) -> None:
        checked = self._checked(values)
        if checked:
            self._current()[self._name] = checked
        else:
            self.clear()

    def _checked(self, values: Iterable[Any]) -> list:
        if values is None:
            raise ValueError(f"{self._where}: the list of values to add or update is None")
        out = []
        for value in values:
            if value is None:
                raise ValueError(f"{self._where}: cannot add None to a ListState (as in Flink)")
            out.append(self._check(value))
        return out


class MapState(State, Generic[K, V]):
    """A dict per key, with Flink's methods (``get``, ``put``, ``put_all``, ``remove``, ``contains``,
    ``keys``, ``values``, ``items``, ``is_empty``) and Python's (``state[k]``, ``k in state``, ...)."""

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "", key_type_info: Any = None,
                 value_type_info: Any = None) -> None:
        super().__init__(name, current, operator)
        self._check_key = self._checker(key_type_info, "a map key")
        self._check_value = self._checker(value_type_info, "a map value")

    def _map(self) -> dict:
        return self._current().get(self._name, {})

    def get(self, key: Any) -> Any:
        return self._map().get(key)

    def put(self, key: Any, value: Any) -> None:
        key, value = self._check_key(key), self._check_value(value)
        self._current().setdefault(self._name, {})[key] = value

    def put_all(self, dict_value: dict) -> None:
        checked = {self._check_key(k): self._check_value(v) for k, v in dict(dict_value).items()}
        if checked:
            self._current().setdefault(self._name, {}).update(checked)

    def remove(self, key: Any) -> None:
        entries = self._current().get(self._name)
        if entries is not None:
            entries.pop(key, None)
            if not entries:
                self.clear()

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def keys(self) -> list:
        return list(self._map().keys())

    def values(self) -> list:
        return list(self._map().values())

    def items(self) -> list:
        return list(self._map().items())

    def is_empty(self) -> bool:
        return not self._map()

    def __getitem__(self, key: Any) -> Any:
        entries = self._map()
        if key not in entries:
            raise KeyError(key)
        return entries[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: Any) -> None:
        if key not in self._map():
            raise KeyError(key)
        self.remove(key)

    def __contains__(self, key: Any) -> bool:
        return self.contains(key)

    def __iter__(self):
        return iter(self.keys())


class ReducingState(State, Generic[T]):
    """One value per key folded with the descriptor's reduce function: ``add``, ``get``, ``clear``."""

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "", type_info: Any = None,
                 reduce_function: Callable[[Any, Any], Any] | None = None) -> None:
        super().__init__(name, current, operator)
        self._check = self._checker(type_info, "")
        self._reduce = reduce_function

    def get(self) -> Any:
        return self._current().get(self._name)

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError(f"{self._where}: cannot add None to a ReducingState (as in Flink)")
        values = self._current()
        value = self._check(value)
        if self._name in values:
            # made from a ReducingStateDescriptor, whose reduce function is required
            assert self._reduce is not None
            value = self._check(self._reduce(values[self._name], value))
        values[self._name] = value


class AggregatingState(State, Generic[IN, OUT]):
    """An accumulator per key fed by the descriptor's ``AggregateFunction``: ``add``, ``get``, ``clear``.

    The declared type is the accumulator's (``AggregatingStateDescriptor``'s ``state_type_info``).
    """

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "", type_info: Any = None,
                 agg_function: Any = None) -> None:
        super().__init__(name, current, operator)
        self._check = self._checker(type_info, "the accumulator")
        self._agg = agg_function

    def get(self) -> Any:
        values = self._current()
        return self._agg.get_result(values[self._name]) if self._name in values else None

    def add(self, value: Any) -> None:
        values = self._current()
        accumulator = values[self._name] if self._name in values else self._agg.create_accumulator()
        values[self._name] = self._check(self._agg.add(value, accumulator))


class ReadOnlyBroadcastState(State, Generic[K, V]):
    """The broadcast state as ``process_element`` (and ``on_timer``) of a broadcast process function see it:
    ``get``, ``contains``, ``keys``, ``values``, ``items``, ``is_empty`` (a :class:`MapState`'s). It has no
    ``put``, ``put_all`` or ``remove`` (PyFlink's has none either: using one is an AttributeError), and
    ``clear`` raises, as Flink's Java read-only view does: only ``process_broadcast_element`` writes the
    broadcast state, so that every parallel instance keeps the same one."""

    _READS = frozenset({"get", "contains", "keys", "values", "items", "is_empty"})

    def __init__(self, name: str, current: Callable[[], dict], operator: str = "", key_type_info: Any = None,
                 value_type_info: Any = None) -> None:
        super().__init__(name, current, operator)
        self._map = MapState(name, current, operator, key_type_info, value_type_info)

    def __getattr__(self, name: str) -> Any:
        if name in ReadOnlyBroadcastState._READS:
            return getattr(self._map, name)
        where = self.__dict__.get("_where", "the broadcast state")  # not self._where: no recursion before __init__
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r} ({where} is read-only "
                             f"here: process_broadcast_element writes it)")

    def __getitem__(self, key: Any) -> Any:  # dunder methods are looked up on the class, not via __getattr__
        return self._map[key]

    def __contains__(self, key: Any) -> bool:
        return self._map.contains(key)

    def __iter__(self):
        return iter(self._map.keys())

    def clear(self) -> None:
        raise RuntimeError(f"{self._where} is read-only here: only process_broadcast_element may clear it")


class BroadcastState(MapState, Generic[K, V]):
    """The broadcast state as ``process_broadcast_element`` sees it: a :class:`MapState` it reads and writes
    (``put``, ``put_all``, ``remove``, ``clear`` too), one per parallel instance, the same in all of them."""


def broadcast_state_for(descriptor: Any, current: Callable[[], dict], operator: str, writable: bool) -> State:
    """The handle of broadcast state ``descriptor`` (a :class:`MapStateDescriptor`) over ``current()``, the
    operator's dict of broadcast states by name: a :class:`BroadcastState`, or when not ``writable`` a
    :class:`ReadOnlyBroadcastState` (what the broadcast process functions' kernel asks for)."""
    if not isinstance(descriptor, MapStateDescriptor):
        raise TypeError(f"get_broadcast_state() takes a MapStateDescriptor, got {type(descriptor).__name__}")
    kind = BroadcastState if writable else ReadOnlyBroadcastState
    return kind(descriptor.get_name(), current, operator, descriptor.key_type_info, descriptor.value_type_info)


def state_for(descriptor: StateDescriptor, current: Callable[[], dict], operator: str,
              clock: Callable[[], int] | None = None) -> State:
    """The handle of ``descriptor``'s state, scoped to the key ``current()`` gives.

    A descriptor with a TTL gets the handle of :mod:`.state_ttl`, reading time from ``clock``.
    """
    plain = _plain_state(descriptor, current, operator)
    if descriptor.ttl_config is None:
        return plain
    if clock is None:
        raise RuntimeError(f"{operator}: state {descriptor.get_name()!r} has a TTL, but this operator has no "
                           f"processing-time clock to measure it")
    from changeflow.datastream.state_ttl import ttl_state  # it subclasses this module's handles
    return ttl_state(plain, descriptor.ttl_config, clock)


def _plain_state(descriptor: StateDescriptor, current: Callable[[], dict], operator: str) -> State:
    name = descriptor.get_name()
    if isinstance(descriptor, ListStateDescriptor):
        return ListState(name, current, operator, descriptor.elem_type_info)
    if isinstance(descriptor, MapStateDescriptor):
        return MapState(name, current, operator, descriptor.key_type_info, descriptor.value_type_info)
    if isinstance(descriptor, ReducingStateDescriptor):
        return ReducingState(name, current, operator, descriptor.type_info, descriptor.reduce_function)
    if isinstance(descriptor, AggregatingStateDescriptor):
        return AggregatingState(name, current, operator, descriptor.type_info, descriptor.agg_function)
    return ValueState(name, current, operator, descriptor.type_info)


# PyFlink's names of pyflink.datastream.state changeflow lacks on purpose fail naming themselves (.pyflink_names).
__getattr__ = module_getattr("pyflink.datastream.state")
