"""The ``TableEnvironment`` methods that register Python functions by name (PyFlink's names).

A function registered here is called by name from SQL (``SELECT f(a) FROM t``)
and from the Table API (``call("f", col("a"))``). Flink's resolution order holds:
a temporary system function shadows a built-in of its name; a temporary catalog
function is found after the built-ins. Names are case-insensitive.

Java functions (``create_java_temporary_function`` and friends) are refused:
they need a JVM class path, which changeflow does not manage.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

from changeflow.catalog.functions import FunctionCatalog
from changeflow.sql.catalog_statements import builtin_function_names
from changeflow.functions import AggregateFunction, TableAggregateFunction, UserFunction
from changeflow.table.udf import UserDefinedFunctionWrapper, udaf, udtaf

__all__ = ["FunctionMethods", "register_function", "registered_function", "user_function"]

# The function catalogs of the live environments, for ``call("name", ...)`` (see registered_function).
_CATALOGS: "weakref.WeakSet[FunctionCatalog]" = weakref.WeakSet()


def user_function(function: Any, name: str | None = None) -> UserFunction:
    """What a registration or ``call`` takes: a ``udf``/``udtf``/``udaf``/``udtaf`` result, or an
    AggregateFunction/TableAggregateFunction instance (wrapped as PyFlink wraps it)."""
    if isinstance(function, AggregateFunction):
        function = udaf(function)
    elif isinstance(function, TableAggregateFunction):
        function = udtaf(function)
    if not isinstance(function, UserDefinedFunctionWrapper):
        raise TypeError(f"expected a Python user-defined function (made by udf, udtf, udaf or udtaf), got "
                        f"{type(function).__name__}")
    if name is None:
        return function.function
    return dataclasses.replace(function.function, name=name)


def register_function(functions: FunctionCatalog, name: str, function: Any, system: bool,
                      if_not_exists: bool = False) -> None:
    """Register ``function`` as ``name`` in ``functions`` (SQL's ``CREATE FUNCTION ... LANGUAGE PYTHON``)."""
    _CATALOGS.add(functions)
    functions.create(name, user_function(function, name), system, if_not_exists)


def registered_function(name: str) -> UserFunction:
    """The function registered as ``name``, for the Table API's ``call("name", ...)``.

    A Table API expression is built before it is given to a table, so the name is
    resolved when ``call`` runs, in the environments of this process (a program
    has one, as a rule); a name registered differently in two environments is an
    error asking for the function object instead.
    """
    found = {id(f): f for f in (c.lookup(name) for c in list(_CATALOGS)) if f is not None}
    if not found:
        raise ValueError(f"call({name!r}): no function {name!r} is registered; register it with "
                         f"create_temporary_function or create_temporary_system_function, or pass the "
                         f"function itself to call()")
    if len(found) > 1:
        raise ValueError(f"call({name!r}): {name!r} names different functions in several TableEnvironments; "
                         f"pass the function itself to call()")
    return next(iter(found.values()))


def _java(method: str) -> NotImplementedError:
    return NotImplementedError(f"TableEnvironment.{method}: Java user-defined functions are not supported by "
                               f"changeflow (they need a JVM class path, which changeflow does not manage); "
                               f"write the function in Python with udf/udtf/udaf and register it with "
                               f"create_temporary_function")


class FunctionMethods:
    """Mixed into ``TableEnvironment``: function registration over its catalog's ``functions``."""

    def _functions(self) -> FunctionCatalog:
        functions: FunctionCatalog = self._catalog.functions  # type: ignore[attr-defined]
        _CATALOGS.add(functions)
        return functions

    def create_temporary_function(self, path: str, function: Any) -> None:
        """Register ``function`` as a temporary catalog function named ``path``."""
        self._functions().create(path, user_function(function, path), system=False)

    def create_temporary_system_function(self, name: str, function: Any) -> None:
        """Register ``function`` as a temporary system function (it shadows a built-in of that name)."""
        self._functions().create(name, user_function(function, name), system=True)

    def drop_temporary_function(self, path: str) -> bool:
        """Drop a temporary catalog function; False when none has that name."""
        return self._functions().drop(path, system=False, if_exists=True)

    def drop_temporary_system_function(self, name: str) -> bool:
        """Drop a temporary system function; False when none has that name."""
        return self._functions().drop(name, system=True, if_exists=True)

    def drop_function(self, path: str) -> bool:
        """Drop a permanent catalog function: changeflow has none (only temporary functions), so False."""
        return False

    def list_user_defined_functions(self) -> list[str]:
        """The names of the registered user-defined functions, sorted."""
        return self._functions().list()

    def list_functions(self) -> list[str]:
        """The names of the built-in functions changeflow implements and of the user-defined ones."""
        return sorted(set(builtin_function_names()) | set(self._functions().list()))

    def create_java_temporary_function(self, path: str, function_class_name: str) -> None:
        raise _java("create_java_temporary_function")

    def create_java_temporary_system_function(self, name: str, function_class_name: str) -> None:
        raise _java("create_java_temporary_system_function")

    def create_java_function(self, path: str, function_class_name: str, ignore_if_exists: bool | None = None) -> None:
        raise _java("create_java_function")
