"""Arithmetic has Flink's (Java's) semantics in streaming and batch mode, whatever Spark's ANSI mode.

Flink wraps integer overflow (``+ - *``, negation, SUM/AVG accumulators), gives
Infinity/NaN for a DOUBLE divided by zero, NULL for a DECIMAL result that does not
fit its type, and fails an integer division by zero. Spark 4 in ANSI mode raised
ARITHMETIC_OVERFLOW / DIVIDE_BY_ZERO instead (and only in batch mode for SUM).
"""

from __future__ import annotations

import decimal
import math
import re

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.testing.harness import materialize_table

pytestmark = pytest.mark.spark

INT_MAX, INT_MIN = 2**31 - 1, -2**31
LONG_MAX, LONG_MIN = 2**63 - 1, -2**63

SCHEMA = T.ROW([T.FIELD("k", T.STRING()), T.FIELD("i", T.INT()), T.FIELD("j", T.INT()),
                T.FIELD("l", T.BIGINT()), T.FIELD("m", T.BIGINT()), T.FIELD("d", T.DOUBLE()),
                T.FIELD("z", T.DOUBLE()), T.FIELD("big", T.DECIMAL(38, 0)), T.FIELD("s", T.SMALLINT())])
ROWS = [("a", INT_MAX, 1, LONG_MAX, 2, 1.5, 0.0, decimal.Decimal(10) ** 37, 32767),
        ("a", 5, 0, 1, -1, -2.5, -0.0, decimal.Decimal(3), -7)]


@pytest.fixture(params=["stream_env", "batch_env"])
def env(request):
    t_env = request.getfixturevalue(request.param)
    t_env.create_temporary_view("t", t_env.from_elements(ROWS, SCHEMA))
    return t_env


def test_scalar_arithmetic_wraps_and_divides_as_java(env):
    rows = materialize_table(env.sql_query(
        "SELECT i + j, i * 2, l + 1, l * m, -(l + 1), (l + 1) / -1, (l + 1) % -1, i - (-1 - i), s + s, "
        "d / z, -d / z, z / z, MOD(l, 3), big * 100, big + big, i / 2 "
        "FROM t WHERE j = 1"))
    assert len(rows) == 1
    (r,) = rows
    assert tuple(r)[:9] == (INT_MIN, -2, LONG_MIN, -2, LONG_MIN, LONG_MIN, 0, -1, -2)
    # i - (-1 - i) is MAX - MIN: 2^32 - 1 wraps to -1.
    # s + s: SMALLINT + SMALLINT is SMALLINT in Flink and wraps at 16 bits (32767 * 2 -> -2).
    assert r[9] == math.inf and r[10] == -math.inf and math.isnan(r[11])
    assert r[12] == LONG_MAX % 3
    # DECIMAL(38, 0): 10^39 and 2 * 10^37 (fits) -- overflow is NULL, as Flink's DecimalData.
    assert r[13] is None and r[14] == 2 * decimal.Decimal(10) ** 37
    assert r[15] == INT_MAX // 2


def test_double_division_by_negative_and_zero_dividend(env):
    rows = materialize_table(env.sql_query("SELECT d / z, z / z FROM t WHERE j = 0"))
    (r,) = rows
    # -2.5 / -0.0 is +Infinity (the zero's sign counts, as in Java); -0.0 / -0.0 is NaN.
    assert r[0] == math.inf and math.isnan(r[1])


@pytest.mark.parametrize("sql, expr", [
    ("SELECT i / j FROM t", "i / j"),
    ("SELECT l % (m + 1) FROM t", "l % (m + 1)"),
])
def test_integer_division_by_zero_fails_naming_the_sql_expression(env, sql, expr):
    with pytest.raises(Exception, match=re.escape(f"Division by zero in `{expr}`: dividend ")):
        materialize_table(env.sql_query(sql))


def test_sum_and_avg_of_bigint_and_int_wrap_in_both_modes(env):
    rows = materialize_table(env.sql_query(
        "SELECT k, SUM(l), AVG(l), SUM(i), AVG(i), COUNT(l), SUM(DISTINCT l) FROM t GROUP BY k"))
    # SUM(BIGINT) wraps: MAX + 1 = MIN; AVG(BIGINT) is the wrapped sum / count (Java's truncation).
    # SUM(INT) is an INT in Flink and wraps at 32 bits: MAX + 5 = MIN + 4; AVG(INT) sums in a long.
    assert [tuple(r) for r in rows] == [
        ("a", LONG_MIN, LONG_MIN // 2, INT_MIN + 4, (INT_MAX + 5) // 2, 2, LONG_MIN)]


def test_bigint_wrap_around_matches_java_on_random_and_extreme_values(spark):
    import random

    from pyspark.sql import functions as F

    from changeflow.runtime.spark.arithmetic import wrapping_long

    def java(x: int) -> int:
        return (x + 2**63) % 2**64 - 2**63

    rnd = random.Random(7)
    edges = [LONG_MIN, LONG_MIN + 1, -2**32, -1, 0, 1, 2**31, 2**32 - 1, LONG_MAX - 1, LONG_MAX]
    values = edges + [rnd.randint(LONG_MIN, LONG_MAX) for _ in range(40)]
    pairs = [(a, b) for a in values for b in values[::3]] + [(None, 1), (1, None)]
    frame = spark.createDataFrame(pairs, "a long, b long")
    got = frame.select("a", "b", *[wrapping_long(op, F.col("a"), F.col("b")).alias(name)
                                   for op, name in (("+", "s"), ("-", "d"), ("*", "p"))]).collect()
    for r in got:
        if r.a is None or r.b is None:
            assert (r.s, r.d, r.p) == (None, None, None)
        else:
            assert (r.s, r.d, r.p) == (java(r.a + r.b), java(r.a - r.b), java(r.a * r.b)), (r.a, r.b)


def test_batch_bigint_sum_wraps_as_java_on_random_values(spark):
    import random

    from pyspark.sql import functions as F

    from changeflow.kernels.aggregate.functions import AggCall
    from changeflow.runtime.spark.batch import aggregate_column

    rnd = random.Random(11)
    rows = [(k, rnd.choice([LONG_MIN, LONG_MAX, -1, rnd.randint(LONG_MIN, LONG_MAX)])) for k in range(5)
            for _ in range(30)] + [(5, None)]
    frame = spark.createDataFrame(rows, "k long, x long").withColumn("_seq", F.lit(0).cast("long"))
    call = AggCall("sum", "x", T.BIGINT(), "s")
    got = dict(frame.groupBy("k").agg(aggregate_column(call).alias("s")).collect())
    expected = {k: (sum(x for kk, x in rows if kk == k) + 2**63) % 2**64 - 2**63 for k in range(5)}
    assert got == {**expected, 5: None}
