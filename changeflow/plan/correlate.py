"""The correlate: each input row joined with the rows a Python function computes from it.

Flink plans a lateral join with a table function (``FROM t, LATERAL TABLE(f(a))``,
``Table.join_lateral``), ``Table.flat_map`` and ``Table.map`` as a *correlate*:
the function runs once per input row and its rows are joined to that row
(``PythonCorrelate`` in Flink's plan). It keeps no state, so it passes the
input's changelog through: every row the function emits for an input change
carries that change's kind (a ``-U`` input row gives ``-U`` rows), which is
what Flink emits over an updating input.

:func:`correlate` builds the node and types it; ``map`` uses the same node with
a scalar function whose ROW result is one row per input row.

>>> from changeflow.common.types import DataTypes
>>> from changeflow.expressions import Column, UserCall
>>> from changeflow.functions import TableFunction, UserFunction
>>> from changeflow.plan.nodes import Source
>>> class Split(TableFunction):
...     def eval(self, s):
...         yield from s.split()
>>> f = UserFunction("split", "table", Split(), DataTypes.ROW([DataTypes.FIELD("f0", DataTypes.STRING())]))
>>> src = Source("t", (("line", DataTypes.STRING()),), "elements", [])
>>> node = correlate(src, UserCall(f, (Column("line"),)), "INNER", ["word"])
>>> [(n, str(t)) for n, t in node.schema]
[('line', 'STRING'), ('word', 'STRING')]
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.common.types import DataType
from changeflow.expressions import Column, Expression, UserCall
from changeflow.plan.nodes import PlanNode, Schema, _DeclaredSchema, _OneInput
from changeflow.plan.type_inference import PlanError, type_of

JOIN_TYPES = ("INNER", "LEFT")


@dataclass(frozen=True, eq=False)
class Correlate(_OneInput, _DeclaredSchema):
    """The rows of ``call`` (a table function, or a ROW-valued scalar function) per input row.

    ``call``'s arguments are expressions over the input's columns; a function that
    takes the whole row (``flat_map(f)``, ``map(f)``, ``join_lateral(f.alias(...))``)
    has one argument per input column and gets them as one named ``Row``.
    ``function_fields`` are the output names and types of the function's columns.
    ``join_type`` ``LEFT`` keeps an input row the function emits nothing for, with
    NULLs in the function's columns. ``keep_input`` False outputs only the
    function's columns (``flat_map``, ``map``), else the input's then the function's.
    """

    input: PlanNode
    call: UserCall
    join_type: str
    function_fields: Schema
    keep_input: bool
    out_schema: Schema

    @property
    def takes_row(self) -> bool:
        return self.call.function.takes_row


def result_fields(call: UserCall) -> Schema:
    """The columns ``call``'s function emits: its ROW result's fields, or one column ``f0``."""
    t = call.function.result_type
    if t is None:
        raise PlanError(f"function {call.function.name} declares no result type")
    if t.root == "ROW":
        return tuple((n, ft) for n, ft in t.params)
    return (("f0", t),)


def correlate(input: PlanNode, call: UserCall, join_type: str, names: list[str] | None = None,
              keep_input: bool = True) -> Correlate:
    """``input`` joined laterally with ``call``'s rows; ``names`` rename the function's columns."""
    if join_type not in JOIN_TYPES:
        raise PlanError(f"a lateral join with a table function is INNER or LEFT, not {join_type}")
    kind = call.function.kind
    if kind not in ("table", "scalar"):
        raise PlanError(f"{call.function.name} is a {kind.replace('_', ' ')} function; a lateral join, flat_map "
                        f"and map take a table function (map: a scalar function)")
    types = input.type_map()
    for arg in call.args:
        if arg.contains_aggregate():
            raise PlanError(f"aggregate {arg} as an argument of {call.function.name}")
        type_of(arg, types)  # an unknown column or a bad expression fails here, naming it
    fields = result_fields(call)
    if names is not None:
        if len(names) != len(fields):
            raise PlanError(f"{call.function.name} emits {len(fields)} columns "
                            f"({', '.join(n for n, _ in fields)}) but {len(names)} names were given: "
                            f"{', '.join(names)}")
        fields = tuple((n, t) for n, (_, t) in zip(names, fields, strict=True))
    if join_type == "LEFT":
        fields = tuple((n, t.with_nullable(True)) for n, t in fields)
    out = (tuple(input.schema) if keep_input else ()) + fields
    seen: set[str] = set()
    for n, _ in out:
        if n in seen:
            raise PlanError(f"ambiguous column name {n!r} in the result of {call.function.name}: input columns "
                            f"{input.field_names}, function columns {[f for f, _ in fields]}; rename with "
                            f"alias(...)")
        seen.add(n)
    node = Correlate(input, call, join_type, fields, keep_input, out)
    argument_types(node)  # a call with the wrong number of declared arguments fails here
    return node


def row_call(function, input: PlanNode) -> UserCall:
    """A call of ``function`` (a :class:`~changeflow.functions.UserFunction` marked ``takes_row``) with every
    input column, as PyFlink's ``f(with_columns(col('*')))``."""
    return UserCall(function, tuple(Column(n) for n in input.field_names))


def argument_types(node: Correlate) -> list[DataType]:
    """The types the function gets its arguments in: the declared ``input_types``, else the arguments' own."""
    declared = node.call.function.input_types
    types = node.input.type_map()
    typed = [type_of(a, types) for a in node.call.args]
    if declared is None or node.takes_row:
        return typed
    if len(declared) != len(typed):
        raise PlanError(f"{node.call.function.name} declares {len(declared)} input types but is called with "
                        f"{len(typed)} arguments: {node.call}")
    return [t.with_nullable(True) for t in declared]


def describe(node: Correlate) -> str:
    """EXPLAIN's line, after Flink's ``PythonCorrelate``."""
    names = node.input.field_names
    position = {n: i for i, n in enumerate(names)}

    def invocation(arg: Expression) -> str:
        return f"${position[arg.name]}" if isinstance(arg, Column) and arg.name in position else str(arg)

    name = node.call.function.name
    rendered = ", ".join(invocation(a) for a in node.call.args)
    row_type = ", ".join(f"{t} {n}" for n, t in node.schema)
    kind = "table" if node.call.function.kind == "table" else "row"
    return (f"PythonCorrelate(invocation=[{name}({rendered})], correlate=[{kind}({name}("
            f"{','.join(str(a) for a in node.call.args)}))], select=[{','.join(node.field_names)}], "
            f"rowType=[RecordType({row_type})], joinType=[{node.join_type}])")


__all__ = ["Correlate", "argument_types", "correlate", "describe", "result_fields", "row_call"]
