"""Aggregate calls, their Flink result types, and the formulas that finish them.

An :class:`AggCall` names one aggregate of a ``GROUP BY``: the function, its
argument column and type, and the output column. :func:`result_type` gives the
type Flink derives for it. The arithmetic that turns accumulators into a result
(integer overflow, Java's truncating division, Flink's variance reduction)
lives here, one function per formula, so that a difference found against Flink's
golden files is fixed in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from changeflow.common.types import DataType, DataTypes
from changeflow.kernels.aggregate.json_aggs import JSON_AGGREGATES

FUNCTIONS = (
    "count_star",
    "count",
    "sum",
    "sum0",
    "avg",
    "min",
    "max",
    "first_value",
    "last_value",
    "listagg",
    "stddev_pop",
    "stddev_samp",
    "var_pop",
    "var_samp",
    "collect",
) + JSON_AGGREGATES  # their argument is JSON text the front end built (.json_aggs)
VARIANCE_FUNCTIONS = ("stddev_pop", "stddev_samp", "var_pop", "var_samp")
_NEEDS_NUMERIC = ("sum", "sum0", "avg") + VARIANCE_FUNCTIONS


@dataclass(frozen=True)
class AggCall:
    """One aggregate call of a group aggregation.

    ``arg`` is the input column (None only for ``count_star``, i.e. ``COUNT(*)``),
    ``output`` the name of the result column. ``distinct`` aggregates each
    distinct argument value once; ``separator`` is LISTAGG's delimiter.

    >>> from changeflow.common.types import DataTypes
    >>> call = AggCall("sum", "amount", DataTypes.BIGINT(), "total")
    >>> str(call.result_type)
    'BIGINT'
    >>> str(AggCall("count_star", None, None, "n").result_type)
    'BIGINT NOT NULL'
    """

    function: str
    arg: str | None
    arg_type: DataType | None
    output: str
    distinct: bool = False
    separator: str = ","

    def __post_init__(self) -> None:
        if self.function not in FUNCTIONS:
            raise ValueError(f"unknown aggregate function {self.function!r}; expected one of {', '.join(FUNCTIONS)}")
        if (self.arg is None) != (self.function == "count_star"):
            raise ValueError(
                f"{self.function}: only count_star takes no argument column (got arg={self.arg!r})"
            )
        if self.arg is not None and self.arg_type is None:
            raise ValueError(f"{self.function}({self.arg}): arg_type is required")
        if self.function in _NEEDS_NUMERIC and not self.typed_arg[1].is_numeric:
            raise ValueError(f"{self.function}({self.arg}) needs a numeric argument, got {self.arg_type}")
        if self.function == "listagg" and not self.typed_arg[1].is_string:
            raise ValueError(f"listagg({self.arg}) needs a string argument, got {self.arg_type}")

    @property
    def typed_arg(self) -> tuple[str, DataType]:
        """The argument column and its type: every function but ``count_star`` has both (checked above)."""
        if self.arg is None or self.arg_type is None:
            raise ValueError(f"{self.function} takes no argument column")
        return self.arg, self.arg_type

    @property
    def result_type(self) -> DataType:
        return result_type(self.function, self.arg_type)

    @property
    def arg_columns(self) -> tuple[str, ...]:
        """The input columns the call reads (a Python aggregate may read several)."""
        return () if self.arg is None else (self.arg,)


def result_type(function: str, arg_type: DataType | None) -> DataType:
    """The type Flink gives the result of ``function`` over an argument of ``arg_type``.

    >>> from changeflow.common.types import DataTypes
    >>> str(result_type("avg", DataTypes.INT()))
    'INT'
    >>> str(result_type("sum0", DataTypes.DOUBLE()))
    'DOUBLE NOT NULL'
    >>> str(result_type("collect", DataTypes.STRING()))
    'MULTISET<STRING> NOT NULL'
    """
    if function in ("count_star", "count"):
        return DataTypes.BIGINT(nullable=False)
    if function == "listagg":
        return DataTypes.STRING()
    if function in JSON_AGGREGATES:  # in SQL, Calcite's VARCHAR(2000) NOT NULL (sql.json_functions casts)
        return DataTypes.STRING(nullable=False)
    if arg_type is None:
        raise ValueError(f"{function} needs an argument type")
    if function == "collect":
        return DataTypes.MULTISET(arg_type, nullable=False)
    if function in ("sum", "sum0"):
        if arg_type.root == "DECIMAL":
            # Flink widens a DECIMAL sum to the maximum precision, keeping the scale.
            base = DataTypes.DECIMAL(38, arg_type.params[1])
        else:
            base = arg_type
        return base.with_nullable(function == "sum")
    if function == "avg":
        if arg_type.root == "DECIMAL":
            return DataTypes.DECIMAL(38, max(6, arg_type.params[1]))
        return arg_type.with_nullable(True)
    if function in ("min", "max", "first_value", "last_value") + VARIANCE_FUNCTIONS:
        return arg_type.with_nullable(True)
    raise ValueError(f"unknown aggregate function {function!r}")


# --- integer arithmetic with Java semantics -------------------------------------------

_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def wrap_integral(values: np.ndarray, type_: DataType) -> np.ndarray:
    """``values`` (int64) narrowed to ``type_`` the way a Java cast wraps around.

    Sums are kept in int64; because two's-complement wrap-around commutes with
    addition, wrapping the final int64 sum equals wrapping after every step as
    Flink's ``int`` / ``short`` / ``byte`` accumulators do.
    """
    bits = _BITS[type_.root]
    values = np.asarray(values, dtype=np.int64)
    if bits == 64:
        return values
    shift = 64 - bits
    return (values << shift) >> shift


def java_div(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (Java's ``/``); callers mask zero divisors."""
    n = np.asarray(numerator, dtype=np.int64)
    d = np.asarray(denominator, dtype=np.int64)
    safe = np.where(d == 0, 1, d)
    q = n // safe
    # Python floors; Java truncates. They differ when the division is inexact
    # and the signs differ.
    inexact = (q * safe) != n
    return np.where(inexact & ((n < 0) != (safe < 0)), q + 1, q)


def double_to_integral(values: np.ndarray, type_: DataType) -> np.ndarray:
    """A Java ``(int) double`` cast: truncates, saturates at the type's range, NaN gives 0."""
    bits = _BITS[type_.root]
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    v = np.asarray(values, dtype=np.float64)
    out = np.zeros(len(v), dtype=np.int64)
    finite = ~np.isnan(v)
    clipped = np.clip(np.trunc(v[finite]), lo, hi)
    # float(2**63 - 1) rounds up to 2**63, which int64 cannot hold.
    out[finite] = np.where(clipped >= 2.0**63, hi, clipped).astype(np.int64)
    return out


# --- result formulas ----------------------------------------------------------------


def sum_value(total: np.ndarray, non_null: np.ndarray | None, arg_type: DataType) -> tuple[np.ndarray, np.ndarray]:
    """SUM / SUM0 from the running total (and, for SUM, the count of non-null inputs).

    Returns ``(values, valid)``: SUM is NULL when no non-null input remains,
    SUM0 (``non_null`` None) never is.
    """
    values = wrap_integral(total, arg_type) if arg_type.is_integral else np.asarray(total, dtype=np.float64)
    valid = np.ones(len(values), dtype=bool) if non_null is None else np.asarray(non_null) != 0
    return values, valid


def avg_value(total: np.ndarray, count: np.ndarray, arg_type: DataType) -> tuple[np.ndarray, np.ndarray]:
    """AVG = total / count in the argument's type; NULL when count is 0.

    For integral arguments Flink sums into a BIGINT and divides with Java's
    truncating long division, then casts to the argument type.
    """
    count = np.asarray(count, dtype=np.int64)
    valid = count != 0
    if arg_type.is_integral:
        return wrap_integral(java_div(total, count), arg_type), valid
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(total, dtype=np.float64) / np.where(valid, count, 1), valid


def variance_value(
    function: str, m2: np.ndarray, m2_valid: np.ndarray, count: np.ndarray, arg_type: DataType
) -> tuple[np.ndarray, np.ndarray]:
    """VAR_POP / VAR_SAMP / STDDEV_POP / STDDEV_SAMP from ``M2 = WELFORD_M2(x)`` and COUNT(x).

    Flink 2.3 plans these (its copy of Calcite's AggregateReduceFunctionsRule) as::

        VAR_POP(x)     = M2(x) / COUNT(x)
        VAR_SAMP(x)    = M2(x) / CASE COUNT(x) WHEN 1 THEN NULL ELSE COUNT(x) - 1 END
        STDDEV_POP(x)  = POWER(M2(x) / COUNT(x), 0.5)
        STDDEV_SAMP(x) = POWER(VAR_SAMP's quotient, 0.5)

    in DOUBLE arithmetic, then CAST to the argument's type (an integral result is
    truncated toward zero). ``M2`` is NULL (``m2_valid`` False) when its count is
    not positive or it went negative through unmatched retractions.
    """
    count = np.asarray(count, dtype=np.int64)
    sample = function.endswith("_samp")
    valid = np.asarray(m2_valid, dtype=bool) & (count > (1 if sample else 0))
    denominator = np.where(valid, count - 1 if sample else count, 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.asarray(m2, dtype=np.float64) / denominator
        if function.startswith("stddev"):
            result = np.power(result, 0.5)
    if arg_type.is_integral:
        return double_to_integral(result, arg_type), valid
    if arg_type.root == "FLOAT":
        return result.astype(np.float32).astype(np.float64), valid
    return result, valid
