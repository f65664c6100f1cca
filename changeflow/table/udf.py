"""Python user-defined functions, as PyFlink's ``pyflink.table.udf``.

>>> from changeflow.table import DataTypes
>>> from changeflow.table.expressions import col
>>> plus_one = udf(lambda i: i + 1, result_type=DataTypes.BIGINT(), name="plus_one")
>>> str(plus_one(col("a")))
'plus_one(a)'

``udf`` makes a scalar function (``func_type="pandas"``: ``eval`` takes and returns
``pandas.Series``), ``udtf`` a table function, ``udaf`` an aggregate function,
``udtaf`` a table aggregate function. Each takes a plain callable or an instance
of the function class of its kind; the result is called with expressions to make
a call (:class:`~changeflow.expressions.UserCall`), or registered by name with
``TableEnvironment.create_temporary_function`` for SQL.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable

from changeflow.common.types import DataType
from changeflow.expressions import Expression, UserCall, to_expression
from changeflow.functions import (AggregateFunction, FunctionContext, FunctionKind, ImperativeAggregateFunction,
                                  ScalarFunction, TableAggregateFunction, TableFunction, UserDefinedFunction,
                                  UserFunction)

__all__ = [
    "AggregateFunction", "FunctionContext", "ScalarFunction", "TableAggregateFunction", "TableFunction",
    "UserDefinedFunction", "UserDefinedFunctionWrapper", "udaf", "udf", "udtaf", "udtf",
]


def to_data_type(value: DataType | str, what: str) -> DataType:
    """A declared type: a DataType, or its SQL text (``'BIGINT'``, ``'ROW<a INT, b STRING>'``)."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        from changeflow.sql.ddl import parse_type  # the SQL type grammar, one place
        return parse_type(value, what)[0]
    raise TypeError(f"Invalid {what}: expected a DataType or a type string, got {value!r}")


def _types(values: Any, what: str) -> tuple[DataType, ...] | None:
    if values is None:
        return None
    if isinstance(values, DataType) and values.root == "ROW":
        return tuple(t for _, t in values.params)
    if isinstance(values, (DataType, str)):
        values = [values]
    return tuple(to_data_type(v, what) for v in values)


class UserDefinedFunctionWrapper:
    """A user function ready to call with expressions: ``f(col("a"), 1)`` is a call of it."""

    def __init__(self, function: UserFunction) -> None:
        self.function = function

    @property
    def name(self) -> str:
        return self.function.name

    def __call__(self, *args: Any) -> Expression:
        return UserCall(self.function, tuple(to_expression(a) for a in args))

    def alias(self, *alias_names: str) -> "UserDefinedFunctionWrapper":
        """Names for the columns a table function or table aggregate function emits."""
        self.function.alias_names = tuple(alias_names)
        return self

    def __repr__(self) -> str:
        return f"<{self.function.kind} function {self.function.name}>"


class _DelegatingScalar(ScalarFunction):
    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.eval = func  # type: ignore[method-assign]  # called per row: no delegating frame in between

    def eval(self, *args: Any) -> Any:
        return self.func(*args)


class _DelegatingTable(TableFunction):
    def __init__(self, func: Callable[..., Iterable[Any]]) -> None:
        self.func = func

    def eval(self, *args: Any) -> Iterable[Any]:
        return self.func(*args)


class _DelegatingPandasAggregate(AggregateFunction):
    """A pandas aggregate given as a plain callable: ``f(*series) -> value`` over a group's rows."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func

    def create_accumulator(self) -> list:
        return []

    def accumulate(self, accumulator: list, *args: Any) -> None:
        accumulator.append(args)

    def get_value(self, accumulator: list) -> Any:
        import pandas as pd
        columns = list(zip(*accumulator, strict=True)) if accumulator else []
        return self.func(*[pd.Series(c) for c in columns])


def _checked(f: Any, base: type, kind: str) -> UserDefinedFunction | None:
    """``f`` if it is an instance of ``base``; None for a plain callable; an error otherwise."""
    if inspect.isclass(f) or (not isinstance(f, UserDefinedFunction) and not callable(f)):
        raise TypeError(f"Invalid function: not a function or callable (__call__ is not defined): {type(f)}")
    if isinstance(f, UserDefinedFunction):
        if not isinstance(f, base):
            raise TypeError(f"Invalid function for {kind}: {type(f).__name__} is not a {base.__name__}")
        return f
    return None


def _name(f: Any, name: str | None) -> str:
    return name or getattr(f, "__name__", None) or type(f).__name__


def _deterministic(f: Any, deterministic: bool | None) -> bool:
    if isinstance(f, UserDefinedFunction):
        if deterministic is not None and deterministic != f.is_deterministic():
            raise ValueError(f"Inconsistent deterministic: {deterministic} and {f.is_deterministic()}")
        return f.is_deterministic()
    return True if deterministic is None else deterministic


def _make(kind: FunctionKind, f: Any, instance: UserDefinedFunction, input_types: Any, result_type: DataType | None,
          deterministic: bool | None, name: str | None, func_type: str = "general",
          accumulator_type: DataType | None = None) -> UserDefinedFunctionWrapper:
    if func_type not in ("general", "pandas"):
        raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
    return UserDefinedFunctionWrapper(UserFunction(
        name=_name(f, name), kind=kind, instance=instance, result_type=result_type,
        input_types=_types(input_types, "input_types"), accumulator_type=accumulator_type,
        func_type=func_type, deterministic=_deterministic(f, deterministic)))  # type: ignore[arg-type]


def udf(f: Any = None, input_types: Any = None, result_type: DataType | str | None = None,
        deterministic: bool | None = None, name: str | None = None, func_type: str = "general") -> Any:
    """A scalar function from a callable or a :class:`ScalarFunction` (usable as a decorator)."""
    if func_type not in ("general", "pandas"):
        raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
    if f is None:
        return functools.partial(udf, input_types=input_types, result_type=result_type,
                                 deterministic=deterministic, name=name, func_type=func_type)
    if inspect.iscoroutinefunction(f):
        raise NotImplementedError("udf: async scalar functions (AsyncScalarFunction) are not supported by changeflow")
    instance = _checked(f, ScalarFunction, "udf") or _DelegatingScalar(f)
    if result_type is None:
        raise TypeError(f"udf {_name(f, name)}: result_type is required")
    return _make("scalar", f, instance, input_types, to_data_type(result_type, "result_type"), deterministic,
                 name, func_type)


def udtf(f: Any = None, input_types: Any = None, result_types: Any = None, deterministic: bool | None = None,
         name: str | None = None) -> Any:
    """A table function from a generator function or a :class:`TableFunction` (usable as a decorator).

    ``result_types`` is a list of types (columns ``f0, f1, ...``) or a ``ROW`` type (its field names).
    """
    if f is None:
        return functools.partial(udtf, input_types=input_types, result_types=result_types,
                                 deterministic=deterministic, name=name)
    instance = _checked(f, TableFunction, "udtf") or _DelegatingTable(f)
    if result_types is None:
        raise TypeError(f"udtf {_name(f, name)}: result_types is required")
    return _make("table", f, instance, input_types, _row_of(result_types), deterministic, name)


def _row_of(result_types: Any) -> DataType:
    """The ROW type a table function emits: a ROW as given, or fields ``f0, f1, ...``."""
    if isinstance(result_types, (DataType, str)):
        single = to_data_type(result_types, "result_types")
        if single.root == "ROW":
            return single
        result_types = [single]
    fields = tuple((f"f{i}", to_data_type(t, "result_types")) for i, t in enumerate(result_types))
    return DataType("ROW", True, fields)


def _aggregate(kind: FunctionKind, base: type, f: Any, input_types: Any, result_type: Any, accumulator_type: Any,
               deterministic: bool | None, name: str | None, func_type: str) -> UserDefinedFunctionWrapper:
    instance = _checked(f, base, "udaf" if kind == "aggregate" else "udtaf")
    if instance is None:
        if kind != "aggregate" or func_type != "pandas":
            raise TypeError(f"Invalid function: {'udaf' if kind == 'aggregate' else 'udtaf'} takes an instance of "
                            f"{base.__name__} (a plain function only with func_type='pandas')")
        instance = _DelegatingPandasAggregate(f)
    assert isinstance(instance, ImperativeAggregateFunction)
    if result_type is None:
        result_type = instance.get_result_type()
    if accumulator_type is None and func_type == "general":
        try:
            accumulator_type = instance.get_accumulator_type()
        except NotImplementedError:
            accumulator_type = None   # changeflow keeps accumulators as Python objects; the type is optional
    result = to_data_type(result_type, "result_type")
    if kind == "table_aggregate" and result.root != "ROW":
        result = DataType("ROW", True, (("f0", result),))
    acc = to_data_type(accumulator_type, "accumulator_type") if accumulator_type is not None else None
    return _make(kind, f, instance, input_types, result, deterministic, name, func_type, acc)


def udaf(f: Any = None, input_types: Any = None, result_type: Any = None, accumulator_type: Any = None,
         deterministic: bool | None = None, name: str | None = None, func_type: str = "general") -> Any:
    """An aggregate function from an :class:`AggregateFunction` (or, ``func_type="pandas"``, a callable)."""
    if f is None:
        return functools.partial(udaf, input_types=input_types, result_type=result_type,
                                 accumulator_type=accumulator_type, deterministic=deterministic, name=name,
                                 func_type=func_type)
    return _aggregate("aggregate", AggregateFunction, f, input_types, result_type, accumulator_type, deterministic,
                      name, func_type)


def udtaf(f: Any = None, input_types: Any = None, result_type: Any = None, accumulator_type: Any = None,
          deterministic: bool | None = None, name: str | None = None, func_type: str = "general") -> Any:
    """A table aggregate function from a :class:`TableAggregateFunction`."""
    if f is None:
        return functools.partial(udtaf, input_types=input_types, result_type=result_type,
                                 accumulator_type=accumulator_type, deterministic=deterministic, name=name,
                                 func_type=func_type)
    if func_type != "general":
        raise ValueError("udtaf: only func_type='general' is supported (as in PyFlink)")
    return _aggregate("table_aggregate", TableAggregateFunction, f, input_types, result_type, accumulator_type,
                      deterministic, name, func_type)
