"""Flink's arithmetic (``+ - * / %``, negation) as Spark Columns, whatever Spark's ANSI mode.

Flink's generated code does Java arithmetic, and Spark 4 (ANSI mode on by default)
does not; each Column here gives Flink's result in both Spark modes, so a query
gives the same values in streaming and batch mode (where the aggregation kernels
already wrap as Java does):

- TINYINT/SMALLINT/INT/BIGINT ``+ - *`` and negation wrap around on overflow
  (Java's two's complement). A narrow type is computed in BIGINT, where it cannot
  overflow, and wrapped to its width with a mask; a BIGINT sum or difference is
  computed in 32-bit halves; a BIGINT product uses Spark's ``try_multiply`` and,
  only where that overflowed, the exact product in DECIMAL(38, 0) reduced modulo 2^64.
- Integer ``/`` truncates toward zero, ``MIN / -1`` wraps to ``MIN`` and ``% -1`` is
  0, as in Java; ``/`` or ``%`` by zero fails (Java's ArithmeticException), with an
  error naming the SQL expression and the row's operands instead of Spark's own.
- DOUBLE/FLOAT ``/`` by zero gives Infinity, -Infinity or NaN, and ``%`` by zero
  NaN (IEEE 754, as Java); Spark would fail (ANSI) or give NULL.
- DECIMAL ``+ - * /`` give NULL where the result does not fit its type (Flink's
  ``DecimalData`` returns null on overflow); DECIMAL ``/`` or ``%`` by zero fails
  (Java's BigDecimal raises).

No session setting is touched: the same Column is right with
``spark.sql.ansi.enabled`` true or false.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeflow.common.types import DataType

LONG_MIN = -(1 << 63)
_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_DEC = "decimal(38,0)"
_LOW = 0xFFFFFFFF  # the low 32 bits of a long


def _dec_lit(value: int) -> Column:
    # A string cast keeps a value beyond BIGINT's range exact (a Python int literal would not fit).
    return F.lit(str(value)).cast(_DEC)


def wrap_bits(x: Column, bits: int) -> Column:
    """A BIGINT Column whose values fit in 63 bits, wrapped to a signed ``bits``-bit integer."""
    half = 1 << (bits - 1)
    return (x + F.lit(half)).bitwiseAND(F.lit((1 << bits) - 1)) - F.lit(half)


def wrap_decimal_to_long(x: Column) -> Column:
    """An exact integer (DECIMAL(38, 0)) reduced to a Java long, modulo 2^64."""
    return (F.pmod(x + _dec_lit(1 << 63), _dec_lit(1 << 64)) - _dec_lit(1 << 63)).cast("long")


def wrapping_long(op: str, a: Column, b: Column) -> Column:
    """``a op b`` (``+ - *``) over BIGINT Columns with Java's wrap-around on overflow."""
    if op in ("+", "-"):
        # In 32-bit halves, none of which can overflow: the low halves' sum or difference
        # carries (an arithmetic shift: floor division) into the high halves', whose
        # shift left drops what Java's long drops. As fast as Spark's own + (measured).
        low_a, low_b = a.bitwiseAND(F.lit(_LOW)), b.bitwiseAND(F.lit(_LOW))
        low = low_a + low_b if op == "+" else low_a - low_b
        high_a, high_b = F.shiftright(a, 32), F.shiftright(b, 32)
        high = (high_a + high_b if op == "+" else high_a - high_b) + F.shiftright(low, 32)
        return F.shiftleft(high, 32).bitwiseOR(low.bitwiseAND(F.lit(_LOW)))
    tried = F.try_multiply(a, b)
    # try_multiply is NULL only where an operand is NULL or the product overflowed; the
    # exact DECIMAL product runs for the overflowed rows only (CASE evaluates lazily).
    exact = a.cast(_DEC) * b.cast(_DEC)
    return F.when(tried.isNull() & a.isNotNull() & b.isNotNull(), wrap_decimal_to_long(exact)).otherwise(tried)


def integral(op: str, a: Column, b: Column, result: DataType, where: str) -> Column:
    """``a op b`` with Java's integer semantics, typed ``result`` (an integral type)."""
    bits = _BITS[result.root]
    a, b = a.cast("long"), b.cast("long")
    if op in ("+", "-", "*"):
        if bits == 64:
            return wrapping_long(op, a, b)
        # Operands of at most 32 bits: the BIGINT result is exact, then wrapped.
        exact = a + b if op == "+" else a - b if op == "-" else a * b
        return wrap_bits(exact, bits)
    if op == "/":
        minus = wrapping_long("-", F.lit(0).cast("long"), a)  # x / -1 == -x, MIN / -1 == MIN
        quotient = F.when(b == -1, minus).otherwise(F.call_function("div", a, b))
        quotient = quotient if bits == 64 else wrap_bits(quotient, bits)
        return F.when(b == 0, division_by_zero(where, a, b)).otherwise(quotient)
    if op == "%":
        # |a % b| < |b|: the result fits the divisor's type (MOD's type). x % -1 is 0.
        rest = F.when(b == -1, F.when(a.isNotNull(), F.lit(0).cast("long"))).otherwise(a % b)
        return F.when(b == 0, division_by_zero(where, a, b)).otherwise(rest)
    raise ValueError(op)


def floating(op: str, a: Column, b: Column) -> Column:
    """``a op b`` over DOUBLE with IEEE 754 results for a zero divisor, as Java."""
    a, b = a.cast("double"), b.cast("double")
    if op in ("+", "-", "*"):
        return a + b if op == "+" else a - b if op == "-" else a * b
    nan = F.lit(float("nan"))
    if op == "%":
        return F.when(b == 0, F.when(a.isNotNull(), nan)).otherwise(a % b)
    if op == "/":
        # x / ±0.0 is ±Infinity by the signs of x and of the zero, NaN for 0 / 0 and NaN / 0.
        # The zero's sign shows in its text ("-0.0"); Spark's atan2 and comparisons ignore it.
        zero_sign = F.when(b.cast("string").startswith("-"), F.lit(-1.0)).otherwise(F.lit(1.0))
        infinite = F.signum(a) * zero_sign * F.lit(float("inf"))
        by_zero = F.when(a.isNull(), F.lit(None).cast("double")).when(
            F.isnan(a) | (a == 0), nan).otherwise(infinite)
        return F.when(b == 0, by_zero).otherwise(a / b)
    raise ValueError(op)


def decimal(op: str, a: Column, b: Column, result_spark_type, where: str) -> Column:
    """``a op b`` over DECIMAL: NULL where the result overflows its type, as Flink's DecimalData."""
    if op in ("+", "-", "*", "/"):
        tried = {"+": F.try_add, "-": F.try_subtract, "*": F.try_multiply, "/": F.try_divide}[op](a, b)
        out = tried.try_cast(result_spark_type)
        return F.when(b == 0, division_by_zero(where, a, b)).otherwise(out) if op == "/" else out
    if op == "%":
        return F.when(b == 0, division_by_zero(where, a, b)).otherwise(F.try_mod(a, b).try_cast(result_spark_type))
    raise ValueError(op)


def division_by_zero(where: str, a: Column, b: Column) -> Column:
    """Fails the query (Flink: ArithmeticException) with a message naming the SQL expression
    and the row's operands; Spark's own DIVIDE_BY_ZERO would name neither."""
    message = F.concat(F.lit(f"Division by zero in `{where}`: dividend "),
                       F.coalesce(a.cast("string"), F.lit("NULL")), F.lit(", divisor "), b.cast("string"))
    return F.raise_error(message)
