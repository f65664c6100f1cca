"""Calls of user-defined functions registered by name, as the SQL front end sees them.

The query planner translates expressions deep below the statement that knows the
environment's function catalog; the catalog in use for the statement being planned is
set here (:func:`using`) and read by :func:`user_call` and :func:`is_user_aggregate`.
A name is looked up only after the built-in functions (Flink: temporary system
functions, built-ins, temporary catalog functions).
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

from sqlglot import exp

from changeflow.expressions import Expression, UserCall
from changeflow.functions import UserFunction

_FUNCTIONS: contextvars.ContextVar[Any] = contextvars.ContextVar("changeflow_sql_functions", default=None)


@contextlib.contextmanager
def using(functions: Any) -> Iterator[None]:
    """Resolve function names through ``functions`` (a ``FunctionCatalog``) while planning inside."""
    token = _FUNCTIONS.set(functions)
    try:
        yield
    finally:
        _FUNCTIONS.reset(token)


def lookup(name: str) -> UserFunction | None:
    functions = _FUNCTIONS.get()
    return None if functions is None else functions.lookup(name)


def is_user_aggregate(node: exp.Expr) -> bool:
    """Whether ``node`` calls a registered aggregate function (``udaf``)."""
    if not isinstance(node, exp.Anonymous):
        return False
    function = lookup(node.name)
    return function is not None and function.kind == "aggregate"


def user_call(node: exp.Anonymous, translate: Callable[[exp.Expr], Expression]) -> UserCall | None:
    """The call of a registered function named by ``node``, or None when no such function is registered."""
    function = lookup(node.name)
    if function is None:
        return None
    return UserCall(function, tuple(translate(a) for a in node.expressions))
