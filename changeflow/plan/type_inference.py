"""Result types of expressions, following Flink's (Calcite's) rules.

Types matter beyond display: integer division and the integer results of AVG
or STDDEV over an integral column must come out as Flink computes them.
Decimal arithmetic follows Flink's ``LogicalTypeMerging`` (``v * 2.5`` over an
INT is ``DECIMAL(13, 1)``); the scalar functions of the SQL front end type as
Flink 2.3 types them (checked with PyFlink's ``get_schema()``).
"""

from __future__ import annotations

from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import Agg, Alias, Call, Column, Expression, Literal, UserCall
from changeflow.plan.cast_rules import cast_error, castable
from changeflow.plan.java_regex import group_ends
from changeflow.plan.json_calls import JSON_FUNCTIONS, json_type

_INTEGRAL_RANK = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4}


class PlanError(ValueError):
    """A program that cannot be planned: names the column, expression or construct."""


# Decimal precision of each integral type, as Flink widens it in decimal arithmetic.
_INTEGRAL_PRECISION = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}
MAX_PRECISION = 38

# The type of PROCTIME(): Flink's TIMESTAMP_LTZ(3) NOT NULL marked *PROCTIME*. The
# marker rides in ``params`` so the type stays a plain value.
PROCTIME_MARKER = "*PROCTIME*"


def proctime_type(nullable: bool = False) -> DataType:
    """The type of a processing-time attribute.

    >>> is_proctime(proctime_type())
    True
    """
    return DataType("TIMESTAMP_LTZ", nullable, (3, PROCTIME_MARKER))


def is_proctime(t: DataType) -> bool:
    return t.root == "TIMESTAMP_LTZ" and PROCTIME_MARKER in t.params


def _decimal_parts(t: DataType) -> tuple[int, int]:
    """(precision, scale) of a DECIMAL or integral type."""
    if t.root == "DECIMAL":
        return t.params[0], t.params[1]
    return _INTEGRAL_PRECISION[t.root], 0


def _bounded_decimal(precision: int, scale: int, nullable: bool) -> DataType:
    """DECIMAL(precision, scale) capped at 38 digits, keeping at least 6 (or the given fewer)
    fraction digits as Flink's ``LogicalTypeMerging.adjustPrecisionScale`` does."""
    if precision <= MAX_PRECISION:
        return DataTypes.DECIMAL(precision, scale, nullable)
    digits = precision - scale
    scale = max(min(scale, 6), MAX_PRECISION - digits)
    return DataTypes.DECIMAL(MAX_PRECISION, scale, nullable)


def decimal_arithmetic(op: str, left: DataType, right: DataType, nullable: bool) -> DataType:
    """Flink's result type of ``left op right`` when one side is DECIMAL and neither approximate.

    >>> from changeflow.common.types import DataTypes
    >>> str(decimal_arithmetic("*", DataTypes.INT(), DataTypes.DECIMAL(2, 1), True))
    'DECIMAL(13, 1)'
    >>> str(decimal_arithmetic("/", DataTypes.INT(), DataTypes.DECIMAL(2, 1), True))
    'DECIMAL(17, 6)'
    """
    p1, s1 = _decimal_parts(left)
    p2, s2 = _decimal_parts(right)
    if op in ("+", "-"):
        scale = max(s1, s2)
        return _bounded_decimal(max(p1 - s1, p2 - s2) + scale + 1, scale, nullable)
    if op == "*":
        return _bounded_decimal(p1 + p2 + 1, s1 + s2, nullable)
    if op == "/":
        integer_digits = p1 - s1 + s2
        scale = max(6, s1 + p2 + 1)
        return _bounded_decimal(integer_digits + scale, scale, nullable)
    raise ValueError(op)


def numeric_join(left: DataType, right: DataType, op: str = "+") -> DataType:
    """The type of ``left op right`` for arithmetic ``+ - * /``."""
    nullable = left.nullable or right.nullable
    if not (left.is_numeric and right.is_numeric):
        raise PlanError(f"arithmetic needs numeric operands, got {left} and {right}")
    if "DOUBLE" in (left.root, right.root) or "FLOAT" in (left.root, right.root):
        return DataTypes.DOUBLE(nullable)
    if "DECIMAL" in (left.root, right.root):
        return decimal_arithmetic(op, left, right, nullable)
    wider = left if _INTEGRAL_RANK[left.root] >= _INTEGRAL_RANK[right.root] else right
    return wider.with_nullable(nullable)


def common_type(types: list[DataType], what: str) -> DataType:
    """The least restrictive type of ``types`` (CASE branches, COALESCE, UNION ALL columns).

    NULL literals (root ``NULL``) take the others' type; strings of different
    lengths meet at VARCHAR; numbers at the wider one.
    """
    known = [t for t in types if t.root != "NULL"]
    nullable = any(t.nullable for t in types)
    if not known:
        return DataType("NULL", True)
    first = known[0]
    if all(t.root == first.root and t.params == first.params for t in known):
        return first.with_nullable(nullable)
    if all(t.is_string for t in known):
        if all(t.root == "CHAR" and t.params for t in known) or all(t.root in ("CHAR", "VARCHAR") and t.params
                                                                   for t in known):
            root = "CHAR" if all(t.root == "CHAR" for t in known) and len({t.params for t in known}) == 1 \
                else "VARCHAR"
            return DataType(root, nullable, (max(t.params[0] for t in known),))
        return DataTypes.STRING(nullable)
    if all(t.is_numeric for t in known):
        result = known[0]
        for t in known[1:]:
            result = _wider_numeric(result, t)
        return result.with_nullable(nullable)
    if all(t.root in ("TIMESTAMP", "TIMESTAMP_LTZ") for t in known) and len({t.root for t in known}) == 1:
        return DataType(first.root, nullable, (max(t.params[0] for t in known),))
    raise PlanError(f"{what}: incompatible types {', '.join(str(t) for t in known)}")


def _wider_numeric(a: DataType, b: DataType) -> DataType:
    if "DOUBLE" in (a.root, b.root) or "FLOAT" in (a.root, b.root):
        return DataTypes.DOUBLE() if "DOUBLE" in (a.root, b.root) else DataTypes.FLOAT()
    if "DECIMAL" in (a.root, b.root):
        (p1, s1), (p2, s2) = _decimal_parts(a), _decimal_parts(b)
        scale = max(s1, s2)
        return _bounded_decimal(max(p1 - s1, p2 - s2) + scale, scale, True)
    return a if _INTEGRAL_RANK[a.root] >= _INTEGRAL_RANK[b.root] else b


# The Table API's window expressions (changeflow/table/window.py): the window planner reads them;
# anywhere else they have no value, and are refused by name.
WINDOW_CALLS = {
    "interval": "an interval (lit(n).seconds ...) is supported only as a window's size, slide or gap, or an "
                "OVER window's preceding bound",
    "row_interval": "row_interval(n) is supported only as an OVER window's preceding bound",
    "over_bound": "UNBOUNDED_ROW/UNBOUNDED_RANGE/CURRENT_ROW/CURRENT_RANGE bound an OVER window only",
    "window_property": "a group window property (start, end, rowtime, proctime) is supported only in the select of "
                       "window(...).group_by(...)",
    "over": "an aggregate over an OVER window is supported only in the select of over_window(...)",
}


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
    if isinstance(expr, UserCall):
        from changeflow.plan.user_call_types import user_call_type
        return user_call_type(expr, [type_of(a, schema) for a in expr.args])
    assert isinstance(expr, Call)
    f = expr.function
    if f in ("cast", "try_cast"):
        # The second argument is the target type, a constant rather than a value to type.
        source = type_of(expr.args[0], schema)
        target: DataType = expr.constant_arg(1)
        if not castable(source, target):
            raise PlanError(cast_error(source, target, expr))
        return target.with_nullable(True if f == "try_cast" else source.nullable)
    if f in JSON_FUNCTIONS:  # their constant clauses are specs, not values to type
        return json_type(expr, schema, type_of)
    if f in WINDOW_CALLS:
        raise PlanError(f"{expr}: {WINDOW_CALLS[f]}")
    args = [type_of(a, schema) for a in expr.args]
    if f in ("+", "-", "*", "/"):
        if not (args[0].is_numeric and args[1].is_numeric):
            raise PlanError(f"arithmetic {expr} needs numeric operands, but {_operand(expr.args[0], args[0])} "
                            f"and {_operand(expr.args[1], args[1])}")
        return numeric_join(args[0], args[1], f)
    if f == "%":
        # MOD takes the type of its divisor (Calcite's NULLABLE_MOD).
        if not (args[0].is_integral or args[0].root == "DECIMAL") or not args[1].is_numeric:
            raise PlanError(f"MOD needs exact numeric operands, but {_operand(expr.args[0], args[0])} and "
                            f"{_operand(expr.args[1], args[1])} in {expr}")
        return args[1].with_nullable(args[0].nullable or args[1].nullable)
    if f in ("==", "!=", "<", "<=", ">", ">="):
        _check_comparable(expr, expr.args[0], args[0], expr.args[1], args[1])
        return DataTypes.BOOLEAN(args[0].nullable or args[1].nullable)
    if f in ("and", "or", "not"):
        for a, t in zip(expr.args, args, strict=True):
            if t.root not in ("BOOLEAN", "NULL"):
                raise PlanError(f"{f.upper()} needs BOOLEAN operands, but {_operand(a, t)}")
        return DataTypes.BOOLEAN(any(t.nullable for t in args))
    if f in ("is_true", "is_false", "is_not_true", "is_not_false") and args[0].root not in ("BOOLEAN", "NULL"):
        raise PlanError(f"{f.replace('_', ' ').upper()} needs a BOOLEAN operand, but {_operand(expr.args[0], args[0])}")
    if f in ("is_null", "is_not_null", "is_true", "is_false", "is_not_true", "is_not_false"):
        return DataTypes.BOOLEAN(False)
    if f == "negate":
        return args[0]
    if f == "hash_code":  # internal: the bucket of a split distinct aggregation (plan/rules/split_distinct.py)
        return DataTypes.INT(False)
    if f == "not_distinct":
        _check_comparable(expr, expr.args[0], args[0], expr.args[1], args[1])
        return DataTypes.BOOLEAN(False)
    if f in ("timestampdiff", "floor_to"):
        times = args[1:] if f == "timestampdiff" else args[:1]
        for a, t in zip(expr.args[1:] if f == "timestampdiff" else expr.args[:1], times, strict=True):
            if t.root not in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ"):
                raise PlanError(f"{f.upper()} needs dates or timestamps, but {_operand(a, t)}")
        return DataTypes.INT(_nullable(times)) if f == "timestampdiff" else args[0]
    if f == "plus_interval":
        if args[0].root not in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ"):
            raise PlanError(f"INTERVAL arithmetic needs a date or timestamp, but {_operand(expr.args[0], args[0])}")
        return args[0]
    rule = SCALAR_FUNCTIONS.get(f)
    if rule is None:
        raise PlanError(f"unsupported function {f!r} in {expr}")
    return rule(expr, args)


def _operand(expr: Expression, t: DataType) -> str:
    return f"{expr} is {t}"


def _nullable(args: list[DataType]) -> bool:
    return any(t.nullable for t in args)


def _string_result(expr: Call, args: list[DataType]) -> DataType:
    return DataTypes.STRING(_nullable(args))


def _need_strings(expr: Call, args: list[DataType], positions: tuple[int, ...] = (0,)) -> None:
    for i in positions:
        if i < len(args) and not (args[i].is_string or args[i].root == "NULL"):
            raise PlanError(f"{expr.function.upper()} needs a string, but {_operand(expr.args[i], args[i])} "
                            f"in {expr}")


def _string_function(positions: tuple[int, ...] = (0,)):
    def rule(expr: Call, args: list[DataType]) -> DataType:
        _need_strings(expr, args, positions)
        return DataTypes.STRING(_nullable(args))
    return rule


def _regexp_extract(expr: Call, args: list[DataType]) -> DataType:
    # Flink's REGEXP_EXTRACT(s, regex[, group]) is NULL whenever nothing (or no such group) matches.
    _need_strings(expr, args, (0, 1))
    if len(args) > 2 and not args[2].is_integral:
        raise PlanError(f"REGEXP_EXTRACT needs an integer group index, but {_operand(expr.args[2], args[2])} in {expr}")
    if not all(isinstance(a, Literal) and a.value is not None for a in expr.args[1:]):
        # Spark cannot tell a group that took no part in a match from an empty one: changeflow tells
        # them apart by reading the pattern (runtime/spark/regexp_extract.py), so it must be known.
        raise PlanError(f"REGEXP_EXTRACT with a pattern or group index that is not a literal is not supported "
                        f"by changeflow, in {expr}")
    try:
        group_ends(expr.args[1].value)  # type: ignore[attr-defined]
    except ValueError as e:
        raise PlanError(f"REGEXP_EXTRACT: the pattern {expr.args[1]} is not a regular expression changeflow reads "
                        f"({e})") from None
    return DataTypes.STRING()


def _concat_ws(expr: Call, args: list[DataType]) -> DataType:
    # CONCAT_WS skips NULL strings (only a NULL separator makes the value NULL), yet
    # Flink types it nullable whenever any argument is.
    _need_strings(expr, args, tuple(range(len(args))))
    return DataTypes.STRING(_nullable(args))


def _int_of_string(expr: Call, args: list[DataType]) -> DataType:
    _need_strings(expr, args, tuple(range(len(args))))
    return DataTypes.INT(_nullable(args))


def _boolean(expr: Call, args: list[DataType]) -> DataType:
    return DataTypes.BOOLEAN(_nullable(args))


def _like(expr: Call, args: list[DataType]) -> DataType:
    _need_strings(expr, args, (0, 1))
    return DataTypes.BOOLEAN(_nullable(args))


def _in(expr: Call, args: list[DataType]) -> DataType:
    for a, t in zip(expr.args[1:], args[1:], strict=True):
        _check_comparable(expr, expr.args[0], args[0], a, t)
    return DataTypes.BOOLEAN(_nullable(args))


def _case(expr: Call, args: list[DataType]) -> DataType:
    """``case(cond1, value1, ..., [else])``: the branches' common type; without ELSE it can be NULL."""
    conditions = args[0:len(args) - len(args) % 2:2]
    # expr.args[0::2] also holds the ELSE value when there is one: zip stops at the conditions.
    for a, t in zip(expr.args[0::2], conditions, strict=False):
        if t.root not in ("BOOLEAN", "NULL"):
            raise PlanError(f"CASE WHEN needs a BOOLEAN condition, but {_operand(a, t)}")
    values = args[1::2] + ([args[-1]] if len(args) % 2 else [DataType("NULL", True)])
    return common_type(values, f"CASE branches of {expr}")


def _coalesce(expr: Call, args: list[DataType]) -> DataType:
    t = common_type(args, f"{expr.function.upper()} arguments of {expr}")
    return t.with_nullable(all(a.nullable for a in args))


def _nullif(expr: Call, args: list[DataType]) -> DataType:
    _check_comparable(expr, expr.args[0], args[0], expr.args[1], args[1])
    return args[0].with_nullable(True)


def _same_as_first(expr: Call, args: list[DataType]) -> DataType:
    if not args[0].is_numeric:
        raise PlanError(f"{expr.function.upper()} needs a number, but {_operand(expr.args[0], args[0])}")
    return args[0].with_nullable(_nullable(args))


def _double(expr: Call, args: list[DataType]) -> DataType:
    for a, t in zip(expr.args, args, strict=True):
        if not t.is_numeric:
            raise PlanError(f"{expr.function.upper()} needs numbers, but {_operand(a, t)}")
    return DataTypes.DOUBLE(_nullable(args))


def _fixed(t: DataType):
    return lambda expr, args: t


def _extract(expr: Call, args: list[DataType]) -> DataType:
    t = args[1]
    if t.root not in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ"):
        raise PlanError(f"EXTRACT({expr.constant_arg(0)} FROM ...) needs a date or timestamp, but "
                        f"{_operand(expr.args[1], t)}")
    return DataTypes.BIGINT(t.nullable)


def _date_format(expr: Call, args: list[DataType]) -> DataType:
    if args[0].root not in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ") and not args[0].is_string:
        raise PlanError(f"DATE_FORMAT needs a timestamp or string, but {_operand(expr.args[0], args[0])}")
    return DataTypes.STRING(True)


def _unix_timestamp(expr: Call, args: list[DataType]) -> DataType:
    return DataTypes.BIGINT(bool(args) and _nullable(args))


def _get_field(expr: Call, args: list[DataType]) -> DataType:
    """``row.field``: the field's type, nullable when the row is."""
    name = expr.constant_arg(1)
    if args[0].root != "ROW":
        raise PlanError(f"cannot access field '{name}' of {expr.args[0]}: it is {args[0]}, not a ROW")
    fields = dict(args[0].params)
    if name not in fields:
        raise PlanError(f"ROW {expr.args[0]} has no field '{name}'; its fields: {', '.join(fields)}")
    return fields[name].with_nullable(fields[name].nullable or args[0].nullable)


def _current_watermark(expr: Call, args: list[DataType]) -> DataType:
    """CURRENT_WATERMARK(rowtime): the watermark as the rowtime's type, no longer a time attribute, nullable.

    Flink's type strategy accepts one rowtime attribute and fails validation on
    anything else with ``Invalid function call:`` and the argument types.
    """
    from changeflow.plan.event_time import is_rowtime, plain_time

    if len(args) != 1 or not is_rowtime(args[0]):
        shown = ", ".join(str(plain_time(t)) for t in args)
        why = ""
        if len(args) == 1 and args[0].root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            why = (f"\nCURRENT_WATERMARK() must be called with a single rowtime attribute argument, "
                   f"but '{shown}' cannot be a time attribute.")
        raise PlanError(f"Invalid function call:\nCURRENT_WATERMARK({shown}){why}")
    return plain_time(args[0]).with_nullable(True)


def _to_timestamp_ltz(expr: Call, args: list[DataType]) -> DataType:
    """``TO_TIMESTAMP_LTZ(epoch[, precision])``: the instant ``epoch`` units of 10^-precision s after 1970
    (milliseconds without a precision), ``TIMESTAMP_LTZ(max(precision, 3))`` as Flink 2.3 types it."""
    if args[0].is_string:
        raise NotImplementedError("TO_TIMESTAMP_LTZ of a string (a date-time text parsed in a time zone) is not "
                                  "supported by changeflow: TO_TIMESTAMP_LTZ takes a numeric epoch value here")
    if not args[0].is_numeric:
        raise PlanError(f"Invalid function call:\nTO_TIMESTAMP_LTZ({', '.join(map(str, args))})")
    return DataType("TIMESTAMP_LTZ", args[0].nullable, (max(ltz_epoch_precision(expr), 3),))


def ltz_epoch_precision(expr: Call) -> int:
    """The precision argument of a ``TO_TIMESTAMP_LTZ`` call (3 when absent); it must be a literal 0-9."""
    if len(expr.args) < 2:
        return 3
    value = expr.args[1].value if isinstance(expr.args[1], Literal) else None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 9:
        raise PlanError(f"TO_TIMESTAMP_LTZ's precision must be an integer literal from 0 to 9, got {expr.args[1]}")
    return value


# Scalar functions of the SQL front end: Call.function -> result-type rule(call, arg types).
SCALAR_FUNCTIONS = {
    "concat": _string_result, "concat_ws": _concat_ws, "upper": _string_function(), "lower": _string_function(),
    "trim": _string_function((0, 2)), "ltrim": _string_function(), "rtrim": _string_function(),
    "initcap": _string_function(), "reverse": _string_function(), "replace": _string_function((0, 1, 2)),
    "regexp_replace": _string_function((0, 1, 2)), "regexp_extract": _regexp_extract, "substring": _string_function(),
    "lpad": _string_function((0, 2)), "rpad": _string_function((0, 2)), "left": _string_function(),
    "right": _string_function(), "split_index": _string_function((0, 1)),
    "char_length": _int_of_string, "position": _int_of_string,
    "like": _like, "in": _in, "case": _case, "coalesce": _coalesce, "ifnull": _coalesce, "nullif": _nullif,
    "abs": _same_as_first, "floor": _same_as_first, "ceil": _same_as_first, "round": _same_as_first,
    "power": _double, "sqrt": _double, "ln": _double, "exp": _double, "log10": _double,
    "current_timestamp": _fixed(DataType("TIMESTAMP_LTZ", False, (3,))),
    "now": _fixed(DataType("TIMESTAMP_LTZ", False, (3,))),
    "localtimestamp": _fixed(DataTypes.TIMESTAMP(3, False)), "current_date": _fixed(DataTypes.DATE(False)),
    "proctime": _fixed(proctime_type()),
    "to_timestamp": _fixed(DataTypes.TIMESTAMP(3, True)), "to_date": _fixed(DataTypes.DATE(True)),
    "to_timestamp_ltz": _to_timestamp_ltz,
    "date_format": _date_format, "extract": _extract, "unix_timestamp": _unix_timestamp,
    "from_unixtime": _fixed(DataTypes.STRING(True)), "current_watermark": _current_watermark,
    "get_field": _get_field,
    # The session zone's conversions (plan/time_zone.py): wall clock <-> instant, of the value's precision.
    "ltz_to_local": lambda e, a: DataTypes.TIMESTAMP(a[0].params[0], a[0].nullable),
    "local_to_ltz": lambda e, a: DataType("TIMESTAMP_LTZ", a[0].nullable, (a[0].params[0],)),
    "local_seconds_to_epoch": _same_as_first,
}


def _check_comparable(expr: Expression, left_expr: Expression, left: DataType, right_expr: Expression,
                      right: DataType) -> None:
    if "NULL" in (left.root, right.root):
        return
    if left.is_numeric and right.is_numeric:
        return
    if left.root == right.root or (left.is_string and right.is_string):
        return
    if {left.root, right.root} <= {"TIMESTAMP", "TIMESTAMP_LTZ", "DATE"}:
        return
    raise PlanError(f"cannot compare {left_expr} of type {left} with {right_expr} of type {right} in {expr}")
