"""``OperatorAttributes``: what an operator tells the planner about itself (FLIP-365, FLIP-331).

Two attributes, both False unless the operator says otherwise:

``is_output_idempotent``  a later output for a key supersedes the earlier ones, so
                          emitting only the last of them gives the same job result
                          (FLIP-365). With ``execution.max-flush-interval`` set, such an
                          operator buffers its latest output per key and flushes
                          periodically, if it is keyed or runs with parallelism 1.
``is_output_only_after_end_of_stream``
                          the operator emits nothing before its input ends (Flink
                          1.20's name for FLIP-331's ``isOutputOnEOF``), so it may run
                          with batch algorithms.

Attributes are immutable; build them with :class:`OperatorAttributesBuilder`.
A user function reports idempotence by defining ``is_output_idempotent()``
(:func:`function_is_output_idempotent` reads it, defaulting to False as Flink's
``Function`` does), and output after end of input only by defining
``is_output_only_after_end_of_stream()`` (:func:`function_is_output_only_after_end_of_stream`).

>>> attrs = OperatorAttributesBuilder().set_output_idempotent(True).build()
>>> attrs.is_output_idempotent(), attrs.is_output_only_after_end_of_stream()
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OperatorAttributes:
    """Facts about an operator the planner may use to optimise (see the module docstring)."""

    output_idempotent: bool = False
    output_only_after_end_of_stream: bool = False

    def is_output_idempotent(self) -> bool:
        """Whether emitting only the last of several outputs (per key, if keyed) gives the same result."""
        return self.output_idempotent

    def is_output_only_after_end_of_stream(self) -> bool:
        """Whether the operator emits its output only after its input has ended."""
        return self.output_only_after_end_of_stream


class OperatorAttributesBuilder:
    """Builds :class:`OperatorAttributes`; every attribute defaults to False."""

    def __init__(self) -> None:
        self._output_idempotent = False
        self._output_only_after_end_of_stream = False

    def set_output_idempotent(self, is_output_idempotent: bool) -> "OperatorAttributesBuilder":
        self._output_idempotent = _flag("is_output_idempotent", is_output_idempotent)
        return self

    def set_output_only_after_end_of_stream(self, value: bool) -> "OperatorAttributesBuilder":
        self._output_only_after_end_of_stream = _flag("is_output_only_after_end_of_stream", value)
        return self

    def build(self) -> OperatorAttributes:
        return OperatorAttributes(self._output_idempotent, self._output_only_after_end_of_stream)


def function_is_output_idempotent(function: Any) -> bool:
    """What a user function reports through ``is_output_idempotent()``; False when it has no such method.

    >>> class Latest:
    ...     def is_output_idempotent(self): return True
    >>> function_is_output_idempotent(Latest()), function_is_output_idempotent(lambda a, b: a + b)
    (True, False)
    """
    return _declared(function, "is_output_idempotent")


def function_is_output_only_after_end_of_stream(function: Any) -> bool:
    """What a user function reports through ``is_output_only_after_end_of_stream()`` (FLIP-331); False by default.

    >>> class AtTheEnd:
    ...     def is_output_only_after_end_of_stream(self): return True
    >>> function_is_output_only_after_end_of_stream(AtTheEnd()), function_is_output_only_after_end_of_stream(max)
    (True, False)
    """
    return _declared(function, "is_output_only_after_end_of_stream")


def _declared(function: Any, attribute: str) -> bool:
    method = getattr(function, attribute, None)
    if method is None:
        return False
    return _flag(f"{type(function).__name__}.{attribute}()", method())


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return value
