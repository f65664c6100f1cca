"""A call of a scalar Python function compiled to a Spark Column: an Iterator ``arrow_udf`` or ``pandas_udf``.

The function runs in Spark's Python workers on Arrow batches (no Python call per
row through a socket): the Iterator form hands a task its batches one after
another, so the function's ``open()`` runs once per task before the first batch
and ``close()`` after the last, as in Flink, and each batch is evaluated by
:class:`~changeflow.kernels.udf.scalar.ScalarEvaluator`. A general function's
``eval`` runs per row inside the batch over Python values taken straight from
the Arrow arrays (an ``arrow_udf``: no pandas conversion either way, and a
DOUBLE's NULL stays apart from NaN); a pandas function's once per batch over
Series (a ``pandas_udf``).
A nondeterministic function is marked so, which keeps Spark's optimizer from
evaluating it twice or moving it.

The ``FunctionContext`` a function's ``open()`` gets carries the job parameters:
Flink's ``pipeline.global-job-parameters`` (``k1:v1,k2:v2``) of the environment's
configuration when the job is submitted (:func:`job_parameters`).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_type

from changeflow.common.types import DataType
from changeflow.config.job_parameters import job_parameters_of
from changeflow.expressions import Expression, UserCall
from changeflow.functions import FunctionContext, UserFunction
from changeflow.kernels.udf.scalar import ScalarEvaluator
from changeflow.plan.type_inference import type_of
from changeflow.plan.user_call_types import argument_types
from changeflow.runtime.spark.spark_types import to_spark

_job_parameters: ContextVar[dict[str, str] | None] = ContextVar("changeflow_job_parameters", default=None)


@contextmanager
def job_parameters(configuration: Any) -> Iterator[None]:
    """While a job is translated, the job parameters its functions' ``FunctionContext`` returns."""
    token = _job_parameters.set(job_parameters_of(configuration))
    try:
        yield
    finally:
        _job_parameters.reset(token)


def compile_user_call(call: UserCall, schema: dict[str, DataType],
                      compile_arg: Callable[[Expression], Column]) -> Column:
    """A Spark Column computing the scalar function call ``call`` over ``schema``."""
    function = call.function
    if function.kind != "scalar":
        raise NotImplementedError(f"{function.kind.replace('_', ' ')} function {function.name} cannot be called "
                                  f"where a scalar value is expected: {call}")
    if function.result_type is None:
        raise ValueError(f"scalar function {function.name} has no result type")
    given = [type_of(a, schema) for a in call.args]
    arg_types = tuple(argument_types(call, given))
    # An argument of a narrower declared input type is passed as the declared type (INT -> DOUBLE), as Flink casts it.
    columns = [compile_arg(a) if g.root == t.root else compile_arg(a).cast(to_spark(t))
               for a, g, t in zip(call.args, given, arg_types, strict=True)]
    inputs = columns or [F.lit(0)]     # a function of no arguments still needs the batch's rows
    spark_type = to_spark(function.result_type)
    general = function.func_type == "general"
    run = _batch_runner(function, arg_types, len(columns), dict(_job_parameters.get() or {}),
                        to_arrow_type(spark_type, timezone="UTC") if general else None,
                        isinstance(spark_type, T.StructType))
    with warnings.catch_warnings():
        # The explicit SCALAR_ITER type is deprecated in favour of type hints, which cannot describe
        # a variable number of arguments; it is the same UDF.
        warnings.simplefilter("ignore")
        from pyspark.sql.functions import ArrowUDFType, PandasUDFType, arrow_udf, pandas_udf
        spark_udf = (arrow_udf(run, spark_type, ArrowUDFType.SCALAR_ITER) if general  # type: ignore[call-overload]
                     else pandas_udf(run, spark_type, PandasUDFType.SCALAR_ITER))  # type: ignore[call-overload]
    if not function.deterministic:
        spark_udf = spark_udf.asNondeterministic()
    return spark_udf(*inputs)


def _batch_runner(function: UserFunction, arg_types: tuple[DataType, ...], arity: int, parameters: dict[str, str],
                  arrow_type: Any, struct_result: bool) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function a task's Python worker runs over its batches (pickled with what it closes over): Arrow
    arrays for a general function (``arrow_type`` is its result's), pandas Series for a pandas function."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext
        task = TaskContext.get()
        context = FunctionContext(parameters, task_name=function.name,
                                  subtask_index=task.partitionId() if task is not None else 0,
                                  attempt=task.attemptNumber() if task is not None else 0)
        evaluator = ScalarEvaluator(function, arg_types, context)
        evaluator.open()
        failed = False
        try:
            for batch in batches:
                parts = list(batch) if isinstance(batch, tuple) else [batch]
                if arrow_type is not None:
                    yield evaluator.eval_arrow(parts[:arity], len(parts[0]), arrow_type)
                    continue
                result = evaluator.eval_batch(parts[:arity], len(parts[0]))
                if struct_result and not isinstance(result, pd.DataFrame):
                    result = pd.DataFrame([r if r is not None else {} for r in result])
                yield result
        except BaseException:
            failed = True
            raise
        finally:
            try:
                evaluator.close()
            except Exception:
                if not failed:  # the batch's failure is the one to report
                    raise

    return run
