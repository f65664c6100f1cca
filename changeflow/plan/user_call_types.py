"""The type of a call of a user-defined function, and the check of its arguments.

A scalar function's call has the function's declared ``result_type``. Where the
function declares ``input_types``, the call must pass that many arguments, each
of a type Flink casts implicitly to the declared one (a narrower number to a
wider one, a string to a string); the runtime then passes the argument as the
declared type (:func:`argument_types`). Without ``input_types`` the arguments
go in as they are typed, as Flink infers them.
"""

from __future__ import annotations

from changeflow.common.types import INTEGRAL, DataType
from changeflow.expressions import UserCall
from changeflow.plan.type_inference import PlanError

_NUMERIC_ORDER = INTEGRAL + ("DECIMAL", "FLOAT", "DOUBLE")


def user_call_type(call: UserCall, arg_types: list[DataType]) -> DataType:
    """The result type of ``call`` (its arguments typed ``arg_types``); a PlanError naming a bad call."""
    function = call.function
    if function.kind in ("aggregate", "table_aggregate"):
        raise PlanError(f"aggregate function {call} is not allowed here")
    if function.kind == "table":
        raise PlanError(f"table function {call} cannot be used as a scalar expression; call it in a lateral join "
                        f"(LATERAL TABLE, join_lateral) or flat_map")
    argument_types(call, arg_types)
    if function.result_type is None:
        raise PlanError(f"scalar function {function.name} has no result type")
    return function.result_type


def argument_types(call: UserCall, arg_types: list[DataType]) -> list[DataType]:
    """The types the function receives its arguments as: the declared input types, or the arguments' own."""
    declared = call.function.input_types
    if declared is None:
        return list(arg_types)
    if len(declared) != len(arg_types):
        raise PlanError(f"Invalid function call {call}: {call.function.name} declares {len(declared)} input "
                        f"type(s) ({', '.join(map(str, declared))}) but is called with {len(arg_types)} argument(s)")
    for i, (given, wanted) in enumerate(zip(arg_types, declared, strict=True)):
        if not implicitly_castable(given, wanted):
            raise PlanError(f"Invalid function call {call}: argument {i + 1} ({call.args[i]}) is {given}, which "
                            f"cannot be passed as the declared input type {wanted}")
    return list(declared)


def implicitly_castable(given: DataType, wanted: DataType) -> bool:
    """Whether Flink passes a value of ``given`` where ``wanted`` is declared without an explicit CAST."""
    if given.root == "NULL" or (given.root == wanted.root and given.root not in ("ARRAY", "MAP", "ROW", "MULTISET")):
        return True
    if given.is_numeric and wanted.is_numeric:
        return _NUMERIC_ORDER.index(given.root) <= _NUMERIC_ORDER.index(wanted.root)
    if given.is_string and wanted.is_string:
        return True
    if given.root in ("ARRAY", "MULTISET") and given.root == wanted.root:
        return implicitly_castable(given.element_type, wanted.element_type)
    return given.root == wanted.root and given.params == wanted.params
