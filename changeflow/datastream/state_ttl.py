"""The keyed-state handles of a descriptor with ``enable_time_to_live(config)``.

Each class is the plain handle of :mod:`.state` with its reads and writes going
through :class:`~changeflow.kernels.keyed.ttl.KeyedTtl` (stamps, expiry on
access, the config's update type and visibility); the kernel's processing-time
clock comes from the runtime context.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from changeflow.datastream.state import (AggregatingState, ListState, MapState, ReducingState, State, ValueState)
from changeflow.datastream.state_ttl_config import StateTtlConfig
from changeflow.kernels.keyed.ttl import KeyedTtl

__all__ = ["keyed_ttl", "ttl_state"]


def keyed_ttl(config: StateTtlConfig, clock: Callable[[], int]) -> KeyedTtl:
    """The kernel's TTL rules for ``config``, reading time from ``clock``."""
    return KeyedTtl(config.get_ttl().to_milliseconds(),
                    update_on_read=config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite,
                    return_expired=(config.get_state_visibility()
                                    is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp),
                    clock=clock)


class _Ttl:
    _ttl: KeyedTtl
    _name: str
    _current: Callable[[], dict]

    def clear(self) -> None:
        KeyedTtl.clear(self._current(), self._name)


class TtlValueState(_Ttl, ValueState):
    def value(self) -> Any:
        return self._ttl.read(self._current(), self._name)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._ttl.write(self._current(), self._name, self._check(value))


class TtlListState(_Ttl, ListState):
    def get(self) -> list:
        return self._ttl.read_list(self._current(), self._name)

    def add(self, value: Any) -> None:
        self.add_all([value])

    def add_all(self, values: Iterable[Any]) -> None:
        checked = self._checked(values)
        if checked:
            self._ttl.append(self._current(), self._name, checked)

    def update(self, values: Iterable[Any]) -> None:
        self._ttl.replace_list(self._current(), self._name, self._checked(values))


class TtlMapState(_Ttl, MapState):
    def _map(self) -> dict:
        return self._ttl.entries(self._current(), self._name)

    def get(self, key: Any) -> Any:
        return self._ttl.read_entry(self._current(), self._name, key)[1]

    def contains(self, key: Any) -> bool:
        return self._ttl.read_entry(self._current(), self._name, key)[0]

    def put(self, key: Any, value: Any) -> None:
        self._ttl.put_entries(self._current(), self._name, {self._check_key(key): self._check_value(value)})

    def put_all(self, dict_value: dict) -> None:
        self._ttl.put_entries(self._current(), self._name,
                              {self._check_key(k): self._check_value(v) for k, v in dict(dict_value).items()})

    def remove(self, key: Any) -> None:
        self._ttl.remove_entry(self._current(), self._name, key)


class TtlReducingState(_Ttl, ReducingState):
    def get(self) -> Any:
        return self._ttl.read(self._current(), self._name)

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError(f"{self._where}: cannot add None to a ReducingState (as in Flink)")
        values = self._current()
        value = self._check(value)
        stored = self._ttl.read(values, self._name, for_update=True)
        if stored is not None:
            assert self._reduce is not None
            value = self._check(self._reduce(stored, value))
        self._ttl.write(values, self._name, value)


class TtlAggregatingState(_Ttl, AggregatingState):
    def get(self) -> Any:
        values = self._current()
        accumulator = self._ttl.read(values, self._name)
        return None if accumulator is None else self._agg.get_result(accumulator)

    def add(self, value: Any) -> None:
        values = self._current()
        accumulator = self._ttl.read(values, self._name, for_update=True)
        if accumulator is None:
            accumulator = self._agg.create_accumulator()
        self._ttl.write(values, self._name, self._check(self._agg.add(value, accumulator)))


_TTL_CLASSES: dict[type, type] = {ValueState: TtlValueState, ListState: TtlListState, MapState: TtlMapState,
                                  ReducingState: TtlReducingState, AggregatingState: TtlAggregatingState}


def ttl_state(plain: State, config: StateTtlConfig, clock: Callable[[], int]) -> State:
    """The TTL version of the handle ``plain`` (same name, key scope and type checks)."""
    handle = object.__new__(_TTL_CLASSES[type(plain)])
    handle.__dict__.update(plain.__dict__)
    handle._ttl = keyed_ttl(config, clock)
    return handle
