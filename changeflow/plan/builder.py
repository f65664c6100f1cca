"""Turns Table API calls into logical plan nodes.

``group_by(keys).select(exprs)`` becomes three nodes, as in Flink's planner:
a projection that computes the grouping keys and aggregate arguments, the
:class:`~changeflow.plan.nodes.Aggregate` itself, and a projection that computes
the select list over the aggregate's output.
"""

from __future__ import annotations

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.functions import AggCall, result_type
from changeflow.expressions import Agg, Call, Column, Expression, UserCall, replace, strip_alias
from changeflow.kernels.aggregate.user import UserAggCall
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project
from changeflow.plan.type_inference import WINDOW_CALLS, PlanError, type_of
from changeflow.plan.user_aggregates import user_agg_call


def output_names(exprs: list[Expression], taken: list[str] | None = None) -> list[str]:
    """Names of a select list's columns: the alias, the column name, or ``EXPR$i``."""
    names = []
    for i, e in enumerate(exprs):
        name = e.output_name() or f"EXPR${i}"
        if name in names:
            raise PlanError(f"duplicate column name {name!r} in select list; use .alias(...) to rename")
        names.append(name)
    return names


def project(input: PlanNode, exprs: list[Expression]) -> PlanNode:
    """``SELECT exprs FROM input``; a select list with aggregates is a global aggregate."""
    over = next((n for e in exprs for n in e.walk() if isinstance(n, Call) and n.function == "over"), None)
    if over is not None:  # else its aggregate would make this a global aggregation, and fail obscurely
        raise PlanError(f"{over}: {WINDOW_CALLS['over']}")
    if any(e.contains_aggregate() for e in exprs):
        return aggregate(input, [], exprs)
    types = input.type_map()
    names = output_names(exprs)
    pairs = tuple((n, strip_alias(e)) for n, e in zip(names, exprs, strict=True))
    schema = tuple((n, type_of(e, types)) for n, e in pairs)
    if [n for n, _ in schema] == input.field_names and all(
        isinstance(e, Column) and e.name == n for n, e in pairs
    ):
        return input  # an identity projection adds nothing
    return Project(input, pairs, schema)


def filter_(input: PlanNode, predicate: Expression) -> PlanNode:
    if predicate.contains_aggregate():
        raise PlanError(f"aggregate in filter condition {predicate}; filter the aggregated table instead")
    t = type_of(predicate, input.type_map())
    if t.root != "BOOLEAN":
        raise PlanError(f"filter condition {predicate} must be BOOLEAN, but it is {t}")
    return Filter(input, predicate)


def aggregate(input: PlanNode, keys: list[Expression], select: list[Expression]) -> Project:
    """``SELECT select FROM input GROUP BY keys``."""
    in_types = input.type_map()
    pre: list[tuple[str, Expression]] = []  # the first projection

    def column_for(expr: Expression, preferred: str | None) -> str:
        expr = strip_alias(expr)
        for name, existing in pre:
            if existing is expr or (isinstance(expr, Column) and isinstance(existing, Column)
                                    and existing.name == expr.name):
                return name
        name = expr.name if isinstance(expr, Column) else (preferred or f"$f{len(pre)}")
        pre.append((name, expr))
        return name

    key_names = []
    for k in keys:
        if k.contains_aggregate():
            raise PlanError(f"aggregate {k} cannot be a grouping key")
        key_names.append(column_for(k, k.output_name()))

    calls: list[AggCall] = []
    agg_columns: dict[int, Expression] = {}
    by_text: dict[str, Expression] = {}  # an aggregate written twice (select and HAVING) is computed once
    for e in select:
        for node in e.walk():
            if isinstance(node, Agg) and id(node) not in agg_columns and str(node) in by_text:
                agg_columns[id(node)] = by_text[str(node)]
            if isinstance(node, UserCall) and node.is_aggregate and id(node) not in agg_columns:
                call = user_agg_call(node, column_for, in_types, f"$agg{len(calls)}")
                if call.result_type.root == "ROW":
                    raise NotImplementedError(
                        f"{node}: an aggregate function with a ROW result in select(...) is not supported by "
                        f"changeflow; expand it with aggregate({node}.alias(...)).select(...)")
                calls.append(call)
                agg_columns[id(node)] = Column(call.output)
            if isinstance(node, Agg) and id(node) not in agg_columns:
                if any(isinstance(inner, Agg) for inner in (node.arg.walk() if node.arg is not None else ())):
                    raise PlanError(f"nested aggregate in {node}")
                arg_name = None if node.arg is None else column_for(node.arg, None)
                arg_type = None if node.arg is None else type_of(strip_alias(node.arg), in_types)
                function = node.function
                output = f"$agg{len(calls)}"
                calls.append(AggCall(function=function, arg=arg_name, arg_type=arg_type,
                                     output=output, distinct=node.is_distinct,
                                     separator="," if node.separator is None else node.separator))
                agg_columns[id(node)] = Column(output)
                by_text[str(node)] = agg_columns[id(node)]

    pre_schema = tuple((n, type_of(e, in_types)) for n, e in pre)
    pre_node = Project(input, tuple(pre), pre_schema) if pre else input
    pre_types = dict(pre_schema)
    # Types as Flink prints them: a rowtime column keeps its *ROWTIME* mark through a regular aggregation
    # too, though it is no time attribute there (event_time.is_time_attribute decides that).
    agg_schema = tuple([(k, pre_types[k]) for k in key_names] +
                       [(c.output, aggregate_type(c, bool(key_names))) for c in calls])
    agg_node = Aggregate(pre_node, tuple(key_names), tuple(calls), agg_schema)

    # The select list may use keys (by name or by the same expression) and aggregates.
    key_by_expr = {id(strip_alias(k)): Column(n) for k, n in zip(keys, key_names, strict=True)}
    key_by_text: dict[str, Expression] = {str(strip_alias(k)): Column(n) for k, n in zip(keys, key_names, strict=True)
                   if not isinstance(strip_alias(k), Column)}
    rewritten = [replace(e, {**agg_columns, **key_by_expr}, key_by_text) for e in select]
    agg_types = dict(agg_schema)
    for original, e in zip(select, rewritten, strict=True):
        for node in e.walk():
            if isinstance(node, Column) and node.name not in agg_types:
                raise PlanError(
                    f"column {node.name!r} in {original} is neither a grouping key nor inside an "
                    f"aggregate; grouping keys: {', '.join(key_names) or '(none)'}"
                )
    names = output_names(select)
    pairs = tuple((n, strip_alias(e)) for n, e in zip(names, rewritten, strict=True))
    schema = tuple((n, type_of(e, agg_types)) for n, e in pairs)
    return Project(agg_node, pairs, schema)


# Functions whose result is NULL only for NULL input or an empty group (Calcite's
# ARG0_NULLABLE_IF_EMPTY): a grouped aggregate over a NOT NULL column is NOT NULL.
_NULL_ONLY_IF_EMPTY = ("sum", "min", "max", "avg")


def aggregate_type(call: AggCall, grouped: bool) -> DataType:
    """The result type of an aggregate call, with Flink's nullability."""
    if isinstance(call, UserAggCall):
        return call.result_type  # as declared by the Python function
    t = result_type(call.function, call.arg_type)
    if call.function in _NULL_ONLY_IF_EMPTY:
        assert call.arg_type is not None  # SUM, MIN, MAX and AVG always have an argument
        return t.with_nullable(call.arg_type.nullable or not grouped)
    return t


def rename(input: PlanNode, names: list[str]) -> PlanNode:
    if len(names) != len(input.schema):
        raise PlanError(
            f"alias gives {len(names)} names for {len(input.schema)} columns {input.field_names}"
        )
    return Project(input, tuple((n, Column(old)) for n, old in zip(names, input.field_names, strict=True)),
                   tuple((n, t) for n, (_, t) in zip(names, input.schema, strict=True)))


def add_columns(input: PlanNode, exprs: list[Expression]) -> PlanNode:
    existing = [Column(n) for n in input.field_names]
    for e in exprs:
        if e.output_name() in input.field_names:
            raise PlanError(f"column {e.output_name()!r} already exists; use add_or_replace_columns")
    return project(input, existing + list(exprs))
