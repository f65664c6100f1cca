"""User-defined functions: the classes a user subclasses, and what the planner keeps of a function.

The class names and methods are PyFlink's (``pyflink.table.udf``), re-exported by
:mod:`changeflow.table.udf` with the ``udf``/``udtf``/``udaf``/``udtaf``
decorators. They live here, beside :mod:`changeflow.expressions`, because every
layer sees them: the front ends build calls of them, the planner types those
calls, and the kernels run them (kernels import no API module).

A call of a user function in an expression is a :class:`~changeflow.expressions.UserCall`
whose :class:`UserFunction` holds the user's object and its declared types.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from changeflow.common.types import DataType

FunctionKind = Literal["scalar", "table", "aggregate", "table_aggregate"]
FunctionType = Literal["general", "pandas"]


class FunctionContext:
    """What ``open()`` gets: the job's parameters (PyFlink's ``FunctionContext``).

    ``get_job_parameter`` reads the job's configuration (``pipeline.global-job-parameters``
    in Flink; here the environment's configuration as well). Task figures are those
    of the Spark task running the function.
    """

    def __init__(self, job_parameters: dict[str, str] | None = None, task_name: str = "",
                 subtask_index: int = 0, parallelism: int = 1, attempt: int = 0) -> None:
        self._job_parameters = dict(job_parameters or {})
        self._task_name = task_name
        self._subtask_index = subtask_index
        self._parallelism = parallelism
        self._attempt = attempt

    def get_job_parameter(self, key: str, default_value: str) -> str:
        """The job parameter ``key``, or ``default_value`` when it is not set."""
        return self._job_parameters.get(key, default_value)

    def get_task_name(self) -> str:
        return self._task_name

    def get_task_name_with_subtasks(self) -> str:
        return f"{self._task_name} ({self._subtask_index + 1}/{self._parallelism})"

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_index_of_this_subtask(self) -> int:
        return self._subtask_index

    def get_attempt_number(self) -> int:
        return self._attempt

    def get_metric_group(self) -> Any:
        raise NotImplementedError("FunctionContext.get_metric_group: user metrics are not supported by changeflow")


class UserDefinedFunction(abc.ABC):  # noqa: B024 - no abstract method, as PyFlink's base
    """The base of every user-defined function: ``open``/``close`` around its use."""

    def open(self, function_context: FunctionContext) -> None:  # noqa: B027 - optional hook
        """Called once before the function's first call in a task (set-up, e.g. loading a model)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called once after the function's last call in a task."""

    def is_deterministic(self) -> bool:
        """True when the same arguments always give the same result (the default)."""
        return True


class ScalarFunction(UserDefinedFunction):
    """Maps the values of one row to one value: implement ``eval(*args)``."""

    @abc.abstractmethod
    def eval(self, *args: Any) -> Any:
        ...


class TableFunction(UserDefinedFunction):
    """Maps the values of one row to any number of rows: ``eval(*args)`` yields them."""

    @abc.abstractmethod
    def eval(self, *args: Any) -> Iterable[Any]:
        ...


class ImperativeAggregateFunction(UserDefinedFunction):
    """An aggregate kept in an accumulator: ``create_accumulator``, ``accumulate`` and,
    over retracting input, ``retract``; ``merge`` for two-phase (local/global) plans."""

    @abc.abstractmethod
    def create_accumulator(self) -> Any:
        ...

    @abc.abstractmethod
    def accumulate(self, accumulator: Any, *args: Any) -> None:
        ...

    def retract(self, accumulator: Any, *args: Any) -> None:
        """Take a row back out of the accumulator (needed over updating input)."""
        raise NotImplementedError(f"{type(self).__name__}.retract is not implemented")

    def merge(self, accumulator: Any, accumulators: Iterable[Any]) -> None:
        """Fold other accumulators into ``accumulator`` (needed for two-phase aggregation)."""
        raise NotImplementedError(f"{type(self).__name__}.merge is not implemented")

    def get_result_type(self) -> DataType | str:
        raise NotImplementedError(f"{type(self).__name__}: declare result_type in udaf()/udtaf() or "
                                  f"implement get_result_type")

    def get_accumulator_type(self) -> DataType | str:
        raise NotImplementedError(f"{type(self).__name__}: declare accumulator_type in udaf()/udtaf() or "
                                  f"implement get_accumulator_type")


class AggregateFunction(ImperativeAggregateFunction):
    """Aggregates a group's rows into one value: ``get_value(accumulator)``."""

    @abc.abstractmethod
    def get_value(self, accumulator: Any) -> Any:
        ...


class TableAggregateFunction(ImperativeAggregateFunction):
    """Aggregates a group's rows into any number of rows: ``emit_value(accumulator)`` yields them."""

    @abc.abstractmethod
    def emit_value(self, accumulator: Any) -> Iterable[Any]:
        ...


@dataclass(eq=False)
class UserFunction:
    """What the planner and the kernels know of a user function (compared by identity).

    ``instance`` is the user's object (a plain Python callable is wrapped into the
    function class of its kind by :mod:`changeflow.table.udf`). ``result_type`` is
    the declared result: for a table function a ``ROW`` of its result types.
    ``input_types`` are the declared argument types, or None when undeclared (the
    arguments are then passed as they are typed). ``func_type`` ``"pandas"`` means
    ``eval`` takes and returns ``pandas.Series`` (an aggregate: takes Series, returns one value).
    """

    name: str
    kind: FunctionKind
    instance: UserDefinedFunction
    result_type: DataType | None
    input_types: tuple[DataType, ...] | None = None
    accumulator_type: DataType | None = None
    func_type: FunctionType = "general"
    deterministic: bool = True
    takes_row: bool = False          # Table.map/flat_map/aggregate with a Row argument
    alias_names: tuple[str, ...] = field(default_factory=tuple)

    def __repr__(self) -> str:
        return f"UserFunction({self.name!r}, {self.kind}, {self.func_type})"
