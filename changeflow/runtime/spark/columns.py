"""Compiles expressions to Spark Columns, so stateless work stays in the JVM.

Where Spark and Flink disagree the compiled Column follows Flink: ``/`` between
integers is integer division (truncating toward zero), as in Flink SQL.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeflow.common.types import DataType
from changeflow.plan.expressions import Alias, Call, Column as ColumnRef, Expression, Literal
from changeflow.plan.type_inference import type_of
from changeflow.runtime.spark.spark_types import to_spark

_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def compile_expr(expr: Expression, schema: dict[str, DataType]) -> Column:
    """A Spark Column computing ``expr`` (typed as Flink types it) over ``schema``."""
    if isinstance(expr, Alias):
        return compile_expr(expr.child, schema)
    if isinstance(expr, ColumnRef):
        return F.col(_quote(expr.name))
    if isinstance(expr, Literal):
        return F.lit(expr.value).cast(to_spark(expr.type()))
    assert isinstance(expr, Call), expr
    f = expr.function
    if f == "cast":
        return compile_expr(expr.args[0], schema).cast(to_spark(expr.args[1].value))
    args = [compile_expr(a, schema) for a in expr.args]
    result_type = type_of(expr, schema)
    if f in ("+", "-", "*"):
        a, b = args
        out = a + b if f == "+" else a - b if f == "-" else a * b
        return out.cast(to_spark(result_type))
    if f == "/":
        a, b = args
        if result_type.is_integral:
            # Java's integer division truncates toward zero; so does Spark's DIV.
            return F.call_function("div", a, b).cast(to_spark(result_type))
        return (a / b).cast(to_spark(result_type))
    if f == "%":
        return (args[0] % args[1]).cast(to_spark(result_type))
    if f in _COMPARE:
        return _COMPARE[f](*args)
    if f == "and":
        return args[0] & args[1]
    if f == "or":
        return args[0] | args[1]
    if f == "not":
        return ~args[0]
    if f == "negate":
        return -args[0]
    if f == "is_null":
        return args[0].isNull()
    if f == "is_not_null":
        return args[0].isNotNull()
    raise NotImplementedError(f"function {f} has no Spark translation")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
