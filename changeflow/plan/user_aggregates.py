"""Plans for Python aggregate functions: ``udaf`` calls, ``aggregate(...)`` and ``flat_aggregate(...)``.

* A ``udaf`` call in a grouped ``select`` (or SQL ``GROUP BY``) becomes a
  :class:`~changeflow.kernels.aggregate.user.UserAggCall` of the group aggregation
  (:func:`user_agg_call`, used by :mod:`changeflow.plan.builder`).
* ``group_by(...).aggregate(f(...).alias('a', 'b'))`` (:func:`aggregate`): one udaf call
  whose ROW result expands into columns after the keys; ``select`` then projects.
* ``group_by(...).flat_aggregate(f(...))`` (:func:`flat_aggregate`): a
  :class:`~changeflow.plan.nodes.TableAggregate` node; its rows are the keys and the
  fields each ``emit_value`` yields.
* :func:`check_plan` refuses at plan time what Flink refuses (see
  :func:`~changeflow.kernels.aggregate.user.check_call`).
"""

from __future__ import annotations

from typing import Callable

from changeflow.common.types import DataType
from changeflow.expressions import Agg, Alias, Column, Expression, MultiAlias, UserCall, strip_alias
from changeflow.kernels.aggregate.user import USER_FUNCTION, UserAggCall, check_call
from changeflow.plan.nodes import Aggregate, PlanNode, Project, TableAggregate, side_inputs
from changeflow.plan.type_inference import PlanError, type_of


def user_agg_call(node: UserCall, column_for: Callable[[Expression, str | None], str], in_types: dict[str, DataType],
                  output: str, expand: tuple[str, ...] = ()) -> UserAggCall:
    """The aggregate call of a ``udaf`` call; ``column_for`` puts each argument in the pre-projection."""
    function = node.function
    if function.kind == "table_aggregate":
        raise PlanError(f"table aggregate function {function.name} can only be called in flat_aggregate(...)")
    for arg in node.args:
        if any(isinstance(e, Agg) or (isinstance(e, UserCall) and e.is_aggregate) for e in arg.walk()):
            raise PlanError(f"nested aggregate in {node}")
    declared = function.input_types
    if declared is not None and len(declared) != len(node.args):
        raise PlanError(f"{function.name} takes {len(declared)} arguments ({', '.join(map(str, declared))}), "
                        f"called with {len(node.args)}: {node}")
    names = tuple(column_for(a, None) for a in node.args)
    types = tuple(type_of(strip_alias(a), in_types) for a in node.args)
    return UserAggCall(USER_FUNCTION, None, None, output, user=function, args=names, arg_types=types,
                       expand=expand)


def _split(func: Expression, what: str) -> tuple[UserCall, tuple[str, ...] | None]:
    """The call and its alias names (None: unaliased) of ``aggregate(...)`` / ``flat_aggregate(...)``."""
    names: tuple[str, ...] | None = None
    if isinstance(func, MultiAlias):
        names, func = func.names, func.child
    elif isinstance(func, Alias):
        names, func = (func.name,), func.child
    if not isinstance(func, UserCall) or not func.is_aggregate:
        raise PlanError(f"{what} takes a call of a Python {'table ' if what == 'flat_aggregate' else ''}"
                        f"aggregate function, got {func}")
    return func, names


def _result_columns(call: UserCall, names: tuple[str, ...] | None, what: str) -> tuple[str, ...]:
    result = call.function.result_type
    assert result is not None  # udaf/udtaf always declare one
    fields = [n for n, _ in result.params] if result.root == "ROW" else ["EXPR$0"]
    if names is None:
        return tuple(fields)
    if len(names) != len(fields):
        raise PlanError(f"{what}: {len(names)} alias names {list(names)} for the {len(fields)} result columns "
                        f"of {call.function.name} ({result})")
    return names


def _pre_project(input: PlanNode, keys: list[Expression]) -> tuple[list[tuple[str, Expression]], list[str],
                                                                  Callable[[Expression, str | None], str]]:
    pre: list[tuple[str, Expression]] = []

    def column_for(expr: Expression, preferred: str | None) -> str:
        expr = strip_alias(expr)
        for name, existing in pre:
            if existing is expr or (isinstance(expr, Column) and isinstance(existing, Column)
                                    and existing.name == expr.name):
                return name
        name = expr.name if isinstance(expr, Column) else (preferred or f"$f{len(pre)}")
        pre.append((name, expr))
        return name

    key_names = [column_for(k, k.output_name()) for k in keys]
    return pre, key_names, column_for


def _with_pre(input: PlanNode, pre: list[tuple[str, Expression]]) -> PlanNode:
    types = input.type_map()
    return Project(input, tuple(pre), tuple((n, type_of(e, types)) for n, e in pre)) if pre else input


def aggregate(input: PlanNode, keys: list[Expression], func: Expression) -> PlanNode:
    """``group_by(keys).aggregate(func)``: the keys, then the udaf's result (a ROW expands)."""
    call, names = _split(func, "aggregate")
    if call.function.kind != "aggregate":
        raise PlanError(f"aggregate(...) takes an aggregate function; {call.function.name} is a table aggregate "
                        f"function: use flat_aggregate(...)")
    columns = _result_columns(call, names, "aggregate")
    pre, key_names, column_for = _pre_project(input, keys)
    result = call.function.result_type
    assert result is not None
    expanded = result.root == "ROW"
    agg_call = user_agg_call(call, column_for, input.type_map(), columns[0] if not expanded else "$agg0",
                             expand=columns if expanded else ())
    pre_node = _with_pre(input, pre)
    types = pre_node.type_map()
    field_types = [t for _, t in result.params] if expanded else [result]
    schema = tuple([(k, types[k]) for k in key_names] + list(zip(columns, field_types, strict=True)))
    _check_distinct(schema)
    return Aggregate(pre_node, tuple(key_names), (agg_call,), schema)


def flat_aggregate(input: PlanNode, keys: list[Expression], func: Expression) -> PlanNode:
    """``group_by(keys).flat_aggregate(func)``: the keys, then the fields of each emitted row."""
    call, names = _split(func, "flat_aggregate")
    if call.function.kind != "table_aggregate":
        raise PlanError(f"flat_aggregate(...) takes a table aggregate function (udtaf); {call.function.name} is an "
                        f"aggregate function: use aggregate(...) or select(...)")
    if not names and call.function.alias_names:
        names = call.function.alias_names
    columns = _result_columns(call, names, "flat_aggregate")
    pre, key_names, column_for = _pre_project(input, keys)
    agg_call = user_agg_call_for_table(call, column_for, input.type_map())
    pre_node = _with_pre(input, pre)
    types = pre_node.type_map()
    result = call.function.result_type
    assert result is not None and result.root == "ROW"  # udtaf makes every result a ROW
    schema = tuple([(k, types[k]) for k in key_names] +
                   [(c, t) for c, (_, t) in zip(columns, result.params, strict=True)])
    _check_distinct(schema)
    return TableAggregate(pre_node, tuple(key_names), agg_call, schema)


def user_agg_call_for_table(call: UserCall, column_for: Callable[[Expression, str | None], str],
                            in_types: dict[str, DataType]) -> UserAggCall:
    """The call of a table aggregate function (its output names come from the node's schema)."""
    for arg in call.args:
        if any(isinstance(e, Agg) or (isinstance(e, UserCall) and e.is_aggregate) for e in arg.walk()):
            raise PlanError(f"nested aggregate in {call}")
    names = tuple(column_for(a, None) for a in call.args)
    types = tuple(type_of(strip_alias(a), in_types) for a in call.args)
    return UserAggCall(USER_FUNCTION, None, None, "$tagg", user=call.function, args=names, arg_types=types)


def _check_distinct(schema) -> None:
    names = [n for n, _ in schema]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise PlanError(f"ambiguous column names {repeated} in the aggregate's result {names}; rename with alias(...)")


def check_plan(plan: PlanNode, *, streaming: bool) -> None:
    """Refuse Python aggregate calls where Flink does (read the annotated changelog modes)."""
    for child in side_inputs(plan):
        check_plan(child, streaming=streaming)
    calls = plan.calls if isinstance(plan, Aggregate) else (plan.call,) if isinstance(plan, TableAggregate) else ()
    for c in calls:
        if isinstance(c, UserAggCall):
            check_call(c, streaming=streaming, input_insert_only=plan.inputs[0].traits.changelog_mode.insert_only)
