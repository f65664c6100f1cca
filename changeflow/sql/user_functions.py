"""The user-defined functions a SQL statement sees while it is planned.

Flink resolves a function name case-insensitively: temporary system functions
first (they shadow a built-in of the same name), then built-in functions, then
temporary catalog functions. The statement layer plans a query inside
:func:`using_functions` with the environment's
:class:`~changeflow.catalog.functions.FunctionCatalog`; the expression translator
asks :func:`system_function` before a built-in and :func:`lookup` for a name SQL
does not know. Kept in a context variable, so the planner's signatures (and a
view's nested planning) need not carry the catalog.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from sqlglot import exp

from changeflow.catalog.functions import FunctionCatalog
from changeflow.functions import UserFunction

_current: ContextVar[FunctionCatalog | None] = ContextVar("changeflow_sql_functions", default=None)


@contextmanager
def using_functions(functions: FunctionCatalog | None) -> Iterator[None]:
    """Plan the statements inside with ``functions`` resolving user function names."""
    token = _current.set(functions)
    try:
        yield
    finally:
        _current.reset(token)


def system_function(name: str) -> UserFunction | None:
    """The temporary system function ``name``, which shadows a built-in of that name."""
    functions = _current.get()
    return functions.system_function(name) if functions is not None else None


def lookup(name: str) -> UserFunction | None:
    """The user function ``name`` resolves to (system, then catalog), if any."""
    functions = _current.get()
    return functions.lookup(name) if functions is not None else None


def known_names() -> list[str]:
    functions = _current.get()
    return functions.list() if functions is not None else []


def is_user_aggregate(node: exp.Expr) -> bool:
    """Whether ``node`` calls a registered aggregate function (``udaf``): a query with one aggregates."""
    if not isinstance(node, exp.Anonymous):
        return False
    function = lookup(node.name)
    return function is not None and function.kind == "aggregate"
