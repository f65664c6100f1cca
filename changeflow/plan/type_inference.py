"""Result types of expressions, following Flink's (Calcite's) rules.

Types matter beyond display: integer division and the integer results of AVG
or STDDEV over an integral column must come out as Flink computes them.
"""

from __future__ import annotations

from changeflow.common.types import DataType, DataTypes
from changeflow.plan.expressions import Agg, Alias, Call, Column, Expression, Literal

_INTEGRAL_RANK = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4}


class PlanError(ValueError):
    """A program that cannot be planned: names the column, expression or construct."""


def numeric_join(left: DataType, right: DataType) -> DataType:
    """The type of ``left op right`` for arithmetic ``+ - * /``."""
    nullable = left.nullable or right.nullable
    if not (left.is_numeric and right.is_numeric):
        raise PlanError(f"arithmetic needs numeric operands, got {left} and {right}")
    if "DOUBLE" in (left.root, right.root) or "FLOAT" in (left.root, right.root):
        return DataTypes.DOUBLE(nullable)
    if "DECIMAL" in (left.root, right.root):
        return DataTypes.DECIMAL(38, max(t.params[1] if t.params else 0 for t in (left, right)), nullable)
    wider = left if _INTEGRAL_RANK[left.root] >= _INTEGRAL_RANK[right.root] else right
    return wider.with_nullable(nullable)


def type_of(expr: Expression, schema: dict[str, DataType]) -> DataType:
    """The Flink type of ``expr`` over a row of ``schema`` (name -> type)."""
    if isinstance(expr, Alias):
        return type_of(expr.child, schema)
    if isinstance(expr, Column):
        if expr.name not in schema:
            raise PlanError(
                f"column {expr.name!r} not found; available columns: {', '.join(schema) or '(none)'}"
            )
        return schema[expr.name]
    if isinstance(expr, Literal):
        return expr.type()
    if isinstance(expr, Agg):
        raise PlanError(f"aggregate {expr} is not allowed here")
    assert isinstance(expr, Call)
    args = [type_of(a, schema) if not _is_type_arg(expr, i) else None for i, a in enumerate(expr.args)]
    f = expr.function
    if f in ("+", "-", "*", "/"):
        return numeric_join(args[0], args[1])
    if f == "%":
        # MOD takes the type of its divisor (Calcite's NULLABLE_MOD).
        if not (args[0].is_integral or args[0].root == "DECIMAL") or not args[1].is_numeric:
            raise PlanError(f"MOD needs exact numeric operands, got {args[0]} and {args[1]} in {expr}")
        return args[1].with_nullable(args[0].nullable or args[1].nullable)
    if f in ("==", "!=", "<", "<=", ">", ">="):
        _check_comparable(expr, args[0], args[1])
        return DataTypes.BOOLEAN(args[0].nullable or args[1].nullable)
    if f in ("and", "or"):
        for a, t in zip(expr.args, args):
            if t.root != "BOOLEAN":
                raise PlanError(f"{f.upper()} needs BOOLEAN operands, but {a} is {t}")
        return DataTypes.BOOLEAN(args[0].nullable or args[1].nullable)
    if f == "not":
        return DataTypes.BOOLEAN(args[0].nullable)
    if f in ("is_null", "is_not_null"):
        return DataTypes.BOOLEAN(False)
    if f == "negate":
        return args[0]
    if f == "cast":
        return expr.args[1].value.with_nullable(args[0].nullable)
    raise PlanError(f"unsupported function {f!r} in {expr}")


def _is_type_arg(call: Call, index: int) -> bool:
    return call.function == "cast" and index == 1


def _check_comparable(expr: Expression, left: DataType, right: DataType) -> None:
    if left.is_numeric and right.is_numeric:
        return
    if left.root == right.root or (left.is_string and right.is_string):
        return
    raise PlanError(f"cannot compare {left} with {right} in {expr}")
