"""How kernels call a user's DataStream function: by the methods of Flink's function interfaces, no API class.

Kernels import nothing from the DataStream API. A user function is any object:
a kernel calls the method Flink's interface names (``reduce``, ``process``,
``apply``, ``co_group``, ``join``) when the object has it, else the object
itself (a plain callable), and ``open(context)`` / ``close()`` around a call when
the object has them. The context ``open`` gets is built by ``runtime_context``,
a callable the kernel's builder passes in (the API's ``RuntimeContext`` class):
``runtime_context(task_name, state_of_current_key=...)``, where
``state_of_current_key`` returns the dict of the current key's state values
(keyed functions) or is None; a keyed kernel also passes ``clock=`` (its
processing time, which state TTL measures).
"""

from __future__ import annotations

from typing import Any, Callable

#: Builds the runtime context of a user function: ``(task_name, state_of_current_key=None) -> context``.
ContextFactory = Callable[..., Any]

#: Flink's ``TimeDomain`` values: a firing timer's domain (``ctx.time_domain()``).
EVENT_TIME = 0
PROCESSING_TIME = 1
#: Flink's ``Long.MAX_VALUE``: the global window's end and the final watermark of a bounded input.
MAX_LONG_VALUE = (1 << 63) - 1


def method_or_self(function: Any, method: str) -> Callable:
    """``function.<method>`` when the function defines it (a Flink function object), else ``function`` (a callable).

    >>> class Add:
    ...     def reduce(self, a, b): return a + b
    >>> method_or_self(Add(), "reduce")(1, 2), method_or_self(max, "reduce")(1, 2)
    (3, 2)
    """
    bound = getattr(function, method, None)
    return bound if callable(bound) else function


def open_functions(functions: list[Any], name: str, runtime_context: ContextFactory | None,
                   state_of_current_key: Callable[[], dict] | None = None,
                   clock: Callable[[], int] | None = None) -> list[Any]:
    """Call ``open(context)`` on every function object that has it; return those (to :func:`close_functions`).

    Raises ValueError naming the operator when a function needs a context and
    the kernel was built without ``runtime_context``.
    """
    opened = [f for f in functions if f is not None and callable(getattr(f, "open", None))]
    if not opened:
        return opened
    if runtime_context is None:
        raise ValueError(f"{name}: the kernel was built without a runtime_context, which the user function's "
                         f"open() needs")
    # ``clock`` (a keyed kernel's processing time, for state TTL) is passed only when given, so a
    # context factory without that parameter keeps working.
    extra = {"clock": clock} if clock is not None else {}
    for f in opened:
        f.open(runtime_context(name, state_of_current_key=state_of_current_key, **extra))
    return opened


def close_functions(opened: list[Any]) -> None:
    """Call ``close()`` on the functions :func:`open_functions` opened."""
    for f in opened:
        close = getattr(f, "close", None)
        if callable(close):
            close()
