"""``Table.join_lateral``, ``left_outer_join_lateral``, ``flat_map`` and ``map``: a table joined with a Python function.

Each builds a :class:`~changeflow.plan.correlate.Correlate`. A function is given
either as a call (``split(col('line')).alias('word')``) or, as in PyFlink, as the
function itself, which then takes the whole row as one ``Row`` argument
(``t.flat_map(split)``, ``t.join_lateral(split.alias('word'))``).

>>> from changeflow.table import DataTypes, EnvironmentSettings, TableEnvironment
>>> from changeflow.table.expressions import col
>>> from changeflow.table.udf import udtf
>>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
>>> t = t_env.from_elements([("a b",)], ["line"])
>>> split = udtf(lambda s: s.split(), result_types=[DataTypes.STRING()], name="split")
>>> t.join_lateral(split(col("line")).alias("word")).get_schema().get_field_names()
['line', 'word']
>>> t.flat_map(split(col("line"))).get_schema().get_field_names()
['f0']
"""

from __future__ import annotations

import dataclasses
from typing import Any

from changeflow.expressions import Alias, Call, Column, Expression, Literal, MultiAlias, UserCall
from changeflow.plan import builder
from changeflow.plan.correlate import correlate, row_call
from changeflow.plan.nodes import PlanNode
from changeflow.plan.type_inference import PlanError
from changeflow.table.udf import UserDefinedFunctionWrapper


def join_lateral(plan: PlanNode, call: Any, predicate: Expression | None, join_type: str) -> PlanNode:
    """``plan`` joined with the rows of a table function call (INNER or LEFT), filtered by ``predicate``."""
    what = "join_lateral" if join_type == "INNER" else "left_outer_join_lateral"
    if isinstance(call, UserDefinedFunctionWrapper):
        names = call.function.alias_names
        if not names:
            raise AttributeError("table_function_call must be followed by a alias function"
                                 "e.g. table_function.alias(\"a\", \"b\")")
        user_call, names = row_call(_taking_row(call, "table", what), plan), list(names)
    else:
        user_call, names = _call(call, "table", what)
    if predicate is not None and not isinstance(predicate, Expression):
        raise TypeError(f"{what}: the join predicate must be an Expression, got {predicate!r}")
    if join_type == "LEFT" and predicate is not None and not _is_true(predicate):
        raise PlanError("Predicate for lateral left outer join with table function can only be empty or literal "
                        f"true (got {predicate}).")
    node: PlanNode = correlate(plan, user_call, join_type, names)
    if predicate is not None and not _is_true(predicate):
        function_columns = set(node.field_names) - set(plan.field_names)
        if not _has_equi_predicate(predicate, set(plan.field_names), function_columns):
            # Flink's Table API joins with a predicate only if it relates the two sides by an equality.
            raise PlanError(f"Invalid join condition: {predicate}. At least one equi-join predicate is required.")
        node = builder.filter_(node, predicate)
    return node


def _has_equi_predicate(predicate: Expression, left: set[str], right: set[str]) -> bool:
    """Whether a conjunct of ``predicate`` is ``left_column == right_column`` (Flink's EquiJoinExistsChecker)."""
    if isinstance(predicate, Call) and predicate.function == "and":
        return any(_has_equi_predicate(a, left, right) for a in predicate.args)
    if isinstance(predicate, Call) and predicate.function == "==":
        a, b = predicate.args
        if isinstance(a, Column) and isinstance(b, Column):
            return (a.name in left and b.name in right) or (a.name in right and b.name in left)
    return False


def flat_map(plan: PlanNode, func: Any) -> PlanNode:
    """The rows of a table function over each row; only the function's columns."""
    if isinstance(func, UserDefinedFunctionWrapper):
        return correlate(plan, row_call(_taking_row(func, "table", "flat_map"), plan), "INNER", keep_input=False)
    user_call, names = _call(func, "table", "flat_map")
    return correlate(plan, user_call, "INNER", names, keep_input=False)


def map_(plan: PlanNode, func: Any) -> PlanNode:
    """One row per row: a scalar function's value, a ROW expanded into its fields."""
    if isinstance(func, UserDefinedFunctionWrapper):
        return correlate(plan, row_call(_taking_row(func, "scalar", "map"), plan), "INNER", keep_input=False)
    user_call, names = _call(func, "scalar", "map")
    return correlate(plan, user_call, "INNER", names, keep_input=False)


def _taking_row(wrapper: UserDefinedFunctionWrapper, kind: str, what: str):
    """The wrapper's function, marked to take the whole row (a copy: the same function may be called otherwise)."""
    _check_kind(wrapper.function.kind, wrapper.function.name, kind, what)
    return dataclasses.replace(wrapper.function, takes_row=True)


def _call(expr: Any, kind: str, what: str) -> tuple[UserCall, list[str] | None]:
    """The user function call in ``expr`` and the names an alias gives its columns."""
    names: list[str] | None = None
    if isinstance(expr, MultiAlias):
        names, expr = list(expr.names), expr.child
    elif isinstance(expr, Alias):
        names, expr = [expr.name], expr.child
    if not isinstance(expr, UserCall):
        raise TypeError(f"{what} takes a call of a Python {kind} function (or the function), got {expr!r}")
    _check_kind(expr.function.kind, expr.function.name, kind, what)
    return expr, names


def _check_kind(actual: str, name: str, kind: str, what: str) -> None:
    if actual != kind:
        raise PlanError(f"{what} takes a {kind} function; {name} is a {actual.replace('_', ' ')} function")


def _is_true(predicate: Expression) -> bool:
    return isinstance(predicate, Literal) and predicate.value is True


__all__ = ["flat_map", "join_lateral", "map_"]
