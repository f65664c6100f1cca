"""The non-equi part of a join condition, evaluated on one pair of rows.

A join's ``ON`` clause is split by the planner into equality keys (which route rows
to their join key's state) and the rest, an :class:`~changeflow.expressions.Expression`
over the output columns. The streaming join tests the rest for each candidate pair
of its state, so it is compiled once into a Python function of the two row tuples.

SQL's three-valued logic holds: a comparison with NULL is UNKNOWN, and a pair
matches only when the condition is TRUE (UNKNOWN filters the pair, as in Flink).

>>> from changeflow.table.expressions import col
>>> test = compile_pair_condition(col("v") < col("w") - 1, ["k", "v"], ["k0", "w"])
>>> test((1, 2), (1, 5)), test((1, 2), (1, 3)), test((1, None), (1, 5))
(True, False, False)
"""

from __future__ import annotations

import calendar
import datetime
import math
import operator
from typing import Any, Callable

from changeflow.expressions import Alias, Call, Column, Expression, Literal

PairTest = Callable[[tuple, tuple], bool]
_Eval = Callable[[tuple, tuple], Any]

_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def compile_pair_condition(expr: Expression, left_names: list[str], right_names: list[str]) -> PairTest:
    """A function ``(left_row, right_row) -> bool``: True where ``expr`` is TRUE for the pair."""
    evaluate = _compile(expr, {n: (0, i) for i, n in enumerate(left_names)} |
                        {n: (1, i) for i, n in enumerate(right_names)})
    return lambda left, right: evaluate(left, right) is True


def _compile(expr: Expression, positions: dict[str, tuple[int, int]]) -> _Eval:
    if isinstance(expr, Alias):
        return _compile(expr.child, positions)
    if isinstance(expr, Column):
        if expr.name not in positions:
            raise ValueError(f"join condition refers to column {expr.name!r}, which is not a join output column; "
                             f"columns: {', '.join(positions)}")
        side, index = positions[expr.name]
        return (lambda left, right: left[index]) if side == 0 else (lambda left, right: right[index])
    if isinstance(expr, Literal):
        value = expr.value
        return lambda left, right: value
    if not isinstance(expr, Call):
        raise ValueError(f"join condition cannot contain {expr}")
    f = expr.function
    if f == "cast":
        target = expr.args[1]
        if not isinstance(target, Literal):  # the planner gives CAST its type as a literal
            raise ValueError(f"join condition has a CAST without a literal type: {expr}")
        return _cast(_compile(expr.args[0], positions), target.value.root, expr)
    args = [_compile(a, positions) for a in expr.args]
    if f == "and":
        a, b = args
        return lambda left, right: _and(a(left, right), b(left, right))
    if f == "or":
        a, b = args
        return lambda left, right: _or(a(left, right), b(left, right))
    if f == "not":
        (a,) = args
        return lambda left, right: None if (v := a(left, right)) is None else not v
    if f == "is_null":
        (a,) = args
        return lambda left, right: a(left, right) is None
    if f == "is_not_null":
        (a,) = args
        return lambda left, right: a(left, right) is not None
    if f == "negate":
        (a,) = args
        return lambda left, right: None if (v := a(left, right)) is None else -v
    if f in _COMPARE:
        return _strict(_COMPARE[f], *args)
    if f in ("+", "-", "*"):
        return _strict({"+": operator.add, "-": operator.sub, "*": operator.mul}[f], *args)
    if f == "/":
        return _strict(_divide, *args)
    if f == "%":
        return _strict(_mod, *args)
    if f == "plus_interval":
        shift, a = interval_shift(expr), args[0]
        return lambda left, right: None if (v := a(left, right)) is None else shift(v)
    raise ValueError(f"function {f!r} is not supported in a join condition: {expr}")


_TIMEDELTA_UNITS = {"DAY": "days", "HOUR": "hours", "MINUTE": "minutes", "SECOND": "seconds"}


class IntervalShift:
    """``t + INTERVAL 'n' UNIT`` of one date or timestamp value (``plus_interval``): YEAR and MONTH
    move the calendar month and keep the day, clamped to the month's last (as Flink's and Java's
    ``plusMonths``); the other units add a fixed duration.

    >>> import datetime as dt
    >>> IntervalShift(1, "MONTH")(dt.datetime(2024, 1, 31, 5)), IntervalShift(-10, "SECOND")(dt.datetime(2024, 1, 1))
    (datetime.datetime(2024, 2, 29, 5, 0), datetime.datetime(2023, 12, 31, 23, 59, 50))
    """

    def __init__(self, count: int, unit: str) -> None:
        if unit not in _TIMEDELTA_UNITS and unit not in ("YEAR", "MONTH"):
            raise ValueError(f"INTERVAL unit {unit!r} is not supported in a join condition")
        self.months = count * 12 if unit == "YEAR" else count if unit == "MONTH" else 0
        self.delta = datetime.timedelta(**{_TIMEDELTA_UNITS[unit]: count}) if unit in _TIMEDELTA_UNITS else None

    def __call__(self, value: Any) -> Any:
        if self.delta is not None:
            return value + self.delta
        years, month = divmod(value.month - 1 + self.months, 12)
        year = value.year + years
        return value.replace(year=year, month=month + 1, day=min(value.day, calendar.monthrange(year, month + 1)[1]))


def interval_shift(expr: Call) -> IntervalShift:
    """The shift of a ``plus_interval`` call (its count and unit are literals, as the SQL front end makes them)."""
    _, count, unit = expr.args
    if not isinstance(count, Literal) or not isinstance(unit, Literal):
        raise ValueError(f"join condition has an INTERVAL without a literal count and unit: {expr}")
    return IntervalShift(int(count.value), str(unit.value))


def _strict(fn: Callable[[Any, Any], Any], a: _Eval, b: _Eval) -> _Eval:
    """A binary function that is NULL when either operand is NULL."""
    def evaluate(left: tuple, right: tuple) -> Any:
        x, y = a(left, right), b(left, right)
        if x is None or y is None:
            return None
        return fn(x, y)
    return evaluate


def _and(x: Any, y: Any) -> Any:
    if x is False or y is False:
        return False
    if x is None or y is None:
        return None
    return True


def _or(x: Any, y: Any) -> Any:
    if x is True or y is True:
        return True
    if x is None or y is None:
        return None
    return False


def _integral(x: Any, y: Any) -> bool:
    return isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool) and not isinstance(y, bool)


def _divide(x: Any, y: Any) -> Any:
    """Java's ``/``: integers truncate toward zero and fail on zero; doubles give Infinity or NaN.

    >>> _divide(-7, 2), _divide(1.0, 0), _divide(-1.0, 0.0), _divide(1.0, -0.0), math.isnan(_divide(0.0, 0))
    (-3, inf, -inf, -inf, True)
    """
    if _integral(x, y):
        if y == 0:
            raise ZeroDivisionError(f"division by zero in join condition ({x} / {y})")
        q = abs(x) // abs(y)  # Java's integer division truncates toward zero
        return q if (x >= 0) == (y >= 0) else -q
    if y == 0:  # IEEE 754, as Java's double division (Python raises instead)
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def _mod(x: Any, y: Any) -> Any:
    """Java's ``%``: the sign of the dividend; integers fail on zero, doubles give NaN.

    >>> _mod(-7, 2), _mod(7, -2), _mod(2**62 + 1, 3), math.isnan(_mod(1.5, 0))
    (-1, 1, 2, True)
    """
    if _integral(x, y):
        if y == 0:
            raise ZeroDivisionError(f"division by zero in join condition ({x} % {y})")
        rest = abs(x) % abs(y)  # exact for longs (fmod would go through a double)
        return rest if x >= 0 else -rest
    if y == 0:
        return math.nan
    return math.fmod(x, y)


def _to_string(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _cast(a: _Eval, root: str, expr: Expression) -> _Eval:
    if root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        convert: Callable[[Any], Any] = int
    elif root in ("FLOAT", "DOUBLE"):
        convert = float
    elif root in ("STRING", "VARCHAR", "CHAR"):
        convert = _to_string
    elif root == "BOOLEAN":
        convert = bool
    else:
        raise ValueError(f"CAST to {root} is not supported in a join condition: {expr}")
    return lambda left, right: None if (v := a(left, right)) is None else convert(v)
