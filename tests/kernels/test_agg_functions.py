"""AggCall validation, Flink's result types, and the result formulas."""

import numpy as np
import pytest

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate import AggCall, GroupAggregate, result_type
from changeflow.kernels.aggregate.functions import avg_value, java_div, variance_value, wrap_integral

RESULT_TYPES = [
    ("count_star", None, "BIGINT NOT NULL"),
    ("count", T.STRING(), "BIGINT NOT NULL"),
    ("sum", T.INT(), "INT"),
    ("sum", T.TINYINT(), "TINYINT"),
    ("sum", T.BIGINT(nullable=False), "BIGINT"),
    ("sum", T.DOUBLE(), "DOUBLE"),
    ("sum0", T.INT(), "INT NOT NULL"),
    ("sum0", T.DOUBLE(), "DOUBLE NOT NULL"),
    ("avg", T.SMALLINT(), "SMALLINT"),
    ("avg", T.DOUBLE(), "DOUBLE"),
    ("min", T.STRING(), "STRING"),
    ("max", T.DATE(nullable=False), "DATE"),
    ("first_value", T.BIGINT(), "BIGINT"),
    ("last_value", T.DOUBLE(), "DOUBLE"),
    ("listagg", T.STRING(), "STRING"),
    ("var_pop", T.INT(), "INT"),
    ("stddev_samp", T.DOUBLE(), "DOUBLE"),
    ("collect", T.INT(), "MULTISET<INT> NOT NULL"),
]


@pytest.mark.parametrize("function, arg_type, expected", RESULT_TYPES, ids=[f"{f}({t})" for f, t, _ in RESULT_TYPES])
def test_result_type(function, arg_type, expected):
    assert str(result_type(function, arg_type)) == expected


@pytest.mark.parametrize("kwargs, message", [
    (dict(function="median", arg="v", arg_type=T.INT(), output="m"), "unknown aggregate function"),
    (dict(function="sum", arg=None, arg_type=None, output="s"), "only count_star takes no argument"),
    (dict(function="count_star", arg="v", arg_type=T.INT(), output="n"), "only count_star"),
    (dict(function="sum", arg="v", arg_type=None, output="s"), "arg_type is required"),
    (dict(function="avg", arg="v", arg_type=T.STRING(), output="a"), "needs a numeric argument"),
    (dict(function="listagg", arg="v", arg_type=T.INT(), output="l"), "needs a string argument"),
])
def test_invalid_calls_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AggCall(**kwargs)


def test_kernel_rejects_clashing_names():
    with pytest.raises(ValueError, match="repeated"):
        GroupAggregate(["k"], [AggCall("count_star", None, None, "k")], mini_batch=False, input_insert_only=False)
    with pytest.raises(ValueError, match="reserved"):
        GroupAggregate(["_seq"], [], mini_batch=False, input_insert_only=False)


def test_wrap_integral_is_a_java_narrowing_cast():
    values = np.array([2**31, -(2**31) - 1, 300, 5], dtype=np.int64)
    assert wrap_integral(values, T.INT()).tolist() == [-(2**31), 2**31 - 1, 300, 5]
    assert wrap_integral(values, T.TINYINT()).tolist() == [0, -1, 44, 5]


def test_java_div_truncates_toward_zero():
    assert java_div(np.array([7, -7, 7, -7, 6]), np.array([2, 2, -2, -2, 3])).tolist() == [3, -3, -3, 3, 2]


def test_avg_is_null_without_values():
    data, valid = avg_value(np.array([0, 9]), np.array([0, 2]), T.INT())
    assert valid.tolist() == [False, True] and data[1] == 4


def test_variance_formula_over_welford_m2():
    # x = 1, 2, 4: mean 7/3, M2 = 42/9; results are cast to INT (truncated).
    m2, valid, count = np.array([42 / 9]), np.array([True]), np.array([3])
    assert variance_value("var_pop", m2, valid, count, T.INT())[0].tolist() == [1]
    assert variance_value("var_samp", m2, valid, count, T.INT())[0].tolist() == [2]
    assert variance_value("stddev_pop", m2, valid, count, T.INT())[0].tolist() == [1]
    assert variance_value("stddev_samp", m2, valid, count, T.INT())[0].tolist() == [1]
    assert variance_value("var_pop", m2, valid, count, T.DOUBLE())[0].tolist() == [42 / 9 / 3]


def test_variance_is_null_for_too_few_values_or_an_invalid_m2():
    m2, count = np.array([0.0, 0.0, 5.0]), np.array([1, 0, 4])
    valid = np.array([True, False, False])
    assert variance_value("var_samp", m2, valid, count, T.DOUBLE())[1].tolist() == [False, False, False]
    assert variance_value("var_pop", m2, valid, count, T.DOUBLE())[1].tolist() == [True, False, False]
