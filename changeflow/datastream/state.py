"""PyFlink's keyed state: ``ValueStateDescriptor`` and ``ValueState``.

A keyed function (``KeyedProcessFunction``) asks its runtime context for state
by descriptor in ``open()``; the handle it gets is bound to the *current key*,
which the runner (:mod:`changeflow.kernels.keyed.process`) switches before each
record. The values themselves live in the runner's per-key dict, which it
loads and stores a bucket of keys at a time through the kernel's
:class:`~changeflow.kernels.state.KeyedState`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["State", "StateDescriptor", "ValueState", "ValueStateDescriptor"]


class StateDescriptor:
    """Names a piece of keyed state and its type."""

    def __init__(self, name: str, type_info: Any = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a state descriptor needs a non-empty name, got {name!r}")
        self.name = name
        self.type_info = type_info

    def get_name(self) -> str:
        return self.name


class ValueStateDescriptor(StateDescriptor):
    """Describes a :class:`ValueState`: ``ValueStateDescriptor("count", Types.LONG())``."""


class State:
    """Keyed state scoped to the key of the record being processed."""

    def clear(self) -> None:
        raise NotImplementedError


class ValueState(State):
    """One value per key; ``value()`` is None until ``update()``.

    >>> values = {}
    >>> s = ValueState("n", lambda: values.setdefault("k", {}))
    >>> s.value() is None
    True
    >>> s.update(3); s.value(), values
    (3, {'k': {'n': 3}})
    >>> s.clear(); values
    {'k': {}}
    """

    def __init__(self, name: str, current: Any) -> None:
        self._name = name
        self._current = current  # () -> the current key's dict of state values

    def value(self) -> Any:
        return self._current().get(self._name)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._current()[self._name] = value

    def clear(self) -> None:
        self._current().pop(self._name, None)
