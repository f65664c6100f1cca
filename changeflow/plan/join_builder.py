"""Builds a :class:`~changeflow.plan.nodes.Join` node from a join condition.

``join(left, right, join_type, condition)`` is shared by the Table API
(``Table.join`` and the outer-join methods) and the SQL planner. It

* names the output columns as Flink does: the left columns, then the right columns,
  a right column whose name is already taken renamed with the first free numeric
  suffix (``id`` -> ``id0``, Calcite's uniquify);
* makes the columns of the outer side(s) nullable (a LEFT join pads the right side
  with NULLs, a RIGHT join the left, a FULL join both);
* splits the condition (over the output names) into equi-join keys, the conjuncts
  ``left_column = right_column``, and the rest, which stays a filter on pairs.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.plan.nodes import Source
>>> from changeflow.table.expressions import col
>>> users = Source("users", (("id", DataTypes.INT(False)), ("name", DataTypes.STRING())), "elements", [])
>>> regions = Source("regions", (("id", DataTypes.INT(False)), ("region", DataTypes.STRING())), "elements", [])
>>> node = join(users, regions, "LEFT", (col("id") == col("id0")) & (col("name") != col("region")))
>>> [(n, str(t)) for n, t in node.schema]
[('id', 'INT NOT NULL'), ('name', 'STRING'), ('id0', 'INT'), ('region', 'STRING')]
>>> node.left_keys, node.right_keys, str(node.condition)
(('id',), ('id',), '(name != region)')
"""

from __future__ import annotations

from changeflow.common.types import DataType
from changeflow.expressions import Call, Column, Expression, strip_alias
from changeflow.plan.nodes import Aggregate, Deduplicate, Filter, Join, PlanNode, Project, Schema
from changeflow.plan.type_inference import PlanError, numeric_join, type_of

JOIN_TYPES = ("INNER", "LEFT", "RIGHT", "FULL")
_ALIASES = {"INNER": "INNER", "LEFT": "LEFT", "LEFT OUTER": "LEFT", "RIGHT": "RIGHT", "RIGHT OUTER": "RIGHT",
            "FULL": "FULL", "FULL OUTER": "FULL"}


def join(left: PlanNode, right: PlanNode, join_type: str, condition: Expression | None) -> Join:
    """``left <join_type> JOIN right ON condition``; ``condition`` is over the output column names."""
    kind = _ALIASES.get(" ".join(join_type.upper().split()))
    if kind is None:
        raise PlanError(f"unknown join type {join_type!r}; expected INNER, LEFT, RIGHT or FULL [OUTER]")
    left_names, right_names = left.field_names, right.field_names
    out_right = output_names(left_names, right_names)
    left_nullable, right_nullable = kind in ("RIGHT", "FULL"), kind in ("LEFT", "FULL")
    # Rowtime columns keep their *ROWTIME* type, as Flink prints them, though a regular join's
    # output is no time attribute (event_time.is_time_attribute).
    schema: Schema = tuple(
        [(n, t.with_nullable(True) if left_nullable else t) for n, t in left.schema]
        + [(n, t.with_nullable(True) if right_nullable else t)
           for n, (_, t) in zip(out_right, right.schema, strict=True)]
    )
    # Types as the condition sees them: the inputs' own (padding happens after matching).
    input_types = dict(list(left.schema) + list(zip(out_right, (t for _, t in right.schema), strict=True)))
    left_keys: list[str] = []
    right_keys: list[str] = []
    rest: list[Expression] = []
    if condition is not None:
        condition = strip_alias(condition)
        t = type_of(condition, input_types)
        if t.root != "BOOLEAN":
            raise PlanError(f"join condition {condition} must be BOOLEAN, but it is {t}")
        if condition.contains_aggregate():
            raise PlanError(f"aggregate in join condition {condition}")
        to_right_input = dict(zip(out_right, right_names, strict=True))
        for conjunct in _conjuncts(condition):
            pair = _equi_pair(conjunct, set(left_names), set(out_right))
            if pair is None:
                rest.append(conjunct)
                continue
            left_key, right_key = pair
            join_key_type(input_types[left_key], input_types[right_key], conjunct)
            left_keys.append(left_key)
            right_keys.append(to_right_input[right_key])
    remaining = None
    for c in rest:
        remaining = c if remaining is None else Call("and", (remaining, c))
    return Join(left, right, kind, tuple(left_keys), tuple(right_keys), remaining, schema)


def output_names(left_names: list[str], right_names: list[str]) -> list[str]:
    """The right side's output names: clashing names get the first free suffix 0, 1, ..."""
    taken = set(left_names)
    out = []
    for name in right_names:
        new = name
        i = 0
        while new in taken:
            new = f"{name}{i}"
            i += 1
        taken.add(new)
        out.append(new)
    return out


def join_key_type(left: DataType, right: DataType, where: Expression | None = None) -> DataType:
    """The type both sides of an equi-join key are compared in."""
    if left.root == right.root:
        return left.with_nullable(left.nullable or right.nullable)
    if left.is_numeric and right.is_numeric:
        return numeric_join(left, right)
    if left.is_string and right.is_string:
        return left.with_nullable(left.nullable or right.nullable)
    raise PlanError(f"join key {where if where is not None else ''} compares {left} with {right}")


def unique_key_of(node: PlanNode) -> tuple[str, ...] | None:
    """Columns that identify a row of ``node``'s output among the live rows, if known.

    A group aggregation's output is unique per grouping key (a global aggregate
    has one row: the empty key), a deduplication per its key; projections keep a
    unique key whose columns they pass through unchanged. None: no unique key
    (Flink's planner knows more cases; a missing key only changes how mini-batch
    folding groups records, never the result).
    """
    if isinstance(node, Aggregate):
        return tuple(node.keys)
    if isinstance(node, Deduplicate):
        return tuple(node.keys)
    if isinstance(node, Filter):
        return unique_key_of(node.input)
    if isinstance(node, Project):
        inner = unique_key_of(node.input)
        if inner is None:
            return None
        passed = {}
        for name, expr in node.exprs:
            expr = strip_alias(expr)
            if isinstance(expr, Column) and expr.name not in passed:
                passed[expr.name] = name
        if all(k in passed for k in inner):
            return tuple(passed[k] for k in inner)
    return None


def _conjuncts(expr: Expression) -> list[Expression]:
    expr = strip_alias(expr)
    if isinstance(expr, Call) and expr.function == "and":
        return _conjuncts(expr.args[0]) + _conjuncts(expr.args[1])
    return [expr]


def _equi_pair(expr: Expression, left: set[str], right: set[str]) -> tuple[str, str] | None:
    """``(left_column, right_output_column)`` when ``expr`` is an equality of one column of each side."""
    if not (isinstance(expr, Call) and expr.function == "==" and len(expr.args) == 2):
        return None
    a, b = (strip_alias(x) for x in expr.args)
    if not (isinstance(a, Column) and isinstance(b, Column)):
        return None
    if a.name in left and b.name in right:
        return a.name, b.name
    if b.name in left and a.name in right:
        return b.name, a.name
    return None
