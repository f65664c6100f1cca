"""The non-equi part of a join condition, evaluated on many pairs of rows at once.

The vectorised join (:mod:`.vector_join`) tests a condition on every candidate pair
of a batch. :func:`compile_array_condition` compiles the same expressions as
:func:`~.condition.compile_pair_condition` into a function of column arrays: each
column is an object array of Python values (None for NULL), one element per pair,
and every operator applies Python's own operator (numpy's object loops call it
element by element without a Python frame) or the pair test's function (Java's
``/`` and ``%``, CAST, three-valued AND/OR), so both give the same answer.

>>> import numpy as np
>>> from changeflow.table.expressions import col
>>> test = compile_array_condition(col("v") < col("w") - 1, ["k", "v"], ["k0", "w"])
>>> test({"v": np.array([2, 2, None], dtype=object)}, {"w": np.array([5, 3, 5], dtype=object)}).tolist()
[True, False, False]
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from changeflow.expressions import Alias, Call, Column, Expression, Literal
from changeflow.kernels.join.condition import _and, _cast, _divide, _mod, _or, interval_shift

Columns = dict[str, np.ndarray]
ArrayTest = Callable[[Columns, Columns], np.ndarray]
_Eval = Callable[[Columns, Columns, int], np.ndarray]

_NUMPY = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
          ">=": operator.ge, "+": operator.add, "-": operator.sub, "*": operator.mul}
_PYTHON = {"/": _divide, "%": _mod}


def condition_columns(expr: Expression) -> set[str]:
    """The column names ``expr`` reads."""
    if isinstance(expr, Column):
        return {expr.name}
    if isinstance(expr, Alias):
        return condition_columns(expr.child)
    if isinstance(expr, Call):
        return set().union(*(condition_columns(a) for a in expr.args)) if expr.args else set()
    return set()


def compile_array_condition(expr: Expression, left_names: list[str], right_names: list[str]) -> ArrayTest:
    """A function ``(left_columns, right_columns) -> bool array``: True where ``expr`` is TRUE for the pair."""
    sides = {n: 0 for n in left_names} | {n: 1 for n in right_names}
    evaluate = _compile(expr, sides)

    def test(left: Columns, right: Columns) -> np.ndarray:
        n = len(next(iter((left | right).values()))) if (left or right) else 0
        out = evaluate(left, right, n)
        return np.asarray(np.frompyfunc(_is_true, 1, 1)(out), dtype=bool).reshape(n)
    return test


# numpy ufuncs made by frompyfunc cannot be pickled (a kernel travels to Spark's executors pickled), so
# the functions below are module-level and wrapped at evaluation time.
def _is_true(v: Any) -> bool:
    return v is True


def _not(v: Any) -> Any:
    return None if v is None else not v


def _nulls(values: np.ndarray) -> np.ndarray:
    return np.asarray(values == None, dtype=bool)  # noqa: E711 (element by element, on an object array)


def _compile(expr: Expression, sides: dict[str, int]) -> _Eval:
    if isinstance(expr, Alias):
        return _compile(expr.child, sides)
    if isinstance(expr, Column):
        if expr.name not in sides:
            raise ValueError(f"join condition refers to column {expr.name!r}, which is not a join output column; "
                             f"columns: {', '.join(sides)}")
        name, side = expr.name, sides[expr.name]
        return (lambda left, right, n: left[name]) if side == 0 else (lambda left, right, n: right[name])
    if isinstance(expr, Literal):
        value = expr.value

        def literal(left: Columns, right: Columns, n: int) -> np.ndarray:
            out = np.empty(n, dtype=object)
            out[:] = [value] * n  # one by one: a list value must not be unpacked
            return out
        return literal
    if not isinstance(expr, Call):
        raise ValueError(f"join condition cannot contain {expr}")
    f = expr.function
    if f == "cast":
        target = expr.args[1]
        if not isinstance(target, Literal):
            raise ValueError(f"join condition has a CAST without a literal type: {expr}")
        return _elementwise(_Cast(_cast(_first, target.value.root, expr)), _compile(expr.args[0], sides))
    args = [_compile(a, sides) for a in expr.args]
    if f in ("and", "or"):
        return _elementwise(_and if f == "and" else _or, *args)
    if f == "not":
        return _elementwise(_not, *args)
    if f in ("is_null", "is_not_null"):
        (a,) = args
        wanted = f == "is_null"
        return lambda left, right, n: _boxed(_nulls(a(left, right, n)) == wanted)
    if f == "negate":
        return _strict(operator.neg, *args)
    if f in _NUMPY:
        return _strict(_NUMPY[f], *args)
    if f in _PYTHON:
        return _strict(_Elementwise(_PYTHON[f]), *args)
    if f == "plus_interval":
        return _strict(_Elementwise(interval_shift(expr)), args[0])
    raise ValueError(f"function {f!r} is not supported in a join condition: {expr}")


def _boxed(values: np.ndarray) -> np.ndarray:
    """An array as Python objects (numpy's bools become Python's True and False)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values.tolist()
    return out


def _first(left: Any, right: Any) -> Any:
    return left


class _Cast:
    """A pair-test CAST (a function of a pair) as a function of one value."""

    def __init__(self, cast: Callable[[Any, Any], Any]) -> None:
        self.cast = cast

    def __call__(self, v: Any) -> Any:
        return self.cast(v, None)


class _Elementwise:
    """A Python function of scalars applied to arrays element by element."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *arrays: np.ndarray) -> np.ndarray:
        return np.frompyfunc(self.fn, len(arrays), 1)(*arrays)


def _elementwise(fn: Callable[..., Any], *args: _Eval) -> _Eval:
    apply = _Elementwise(fn)

    def evaluate(left: Columns, right: Columns, n: int) -> np.ndarray:
        return np.asarray(apply(*(a(left, right, n) for a in args)), dtype=object).reshape(n)
    return evaluate


def _strict(fn: Callable[..., Any], *args: _Eval) -> _Eval:
    """An operator that is NULL when an operand is NULL, applied where none is."""
    def evaluate(left: Columns, right: Columns, n: int) -> np.ndarray:
        values = [a(left, right, n) for a in args]
        null = np.zeros(n, dtype=bool)
        for v in values:
            null |= _nulls(v)
        out = np.full(n, None, dtype=object)
        ok = ~null
        if ok.any():
            result = fn(*(v[ok] for v in values))
            out[ok] = _boxed(np.asarray(result)) if np.asarray(result).dtype != object else result
        return out
    return evaluate
