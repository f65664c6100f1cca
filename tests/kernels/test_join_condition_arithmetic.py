"""A join's residual condition computes as Flink (Java) does: doubles divide by zero to Infinity/NaN."""

import pytest

from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.table.expressions import col


def test_a_double_divided_by_zero_is_infinite_and_the_pair_matches():
    test = compile_pair_condition(col("v") / col("w") > 1.0, ["k", "v"], ["k0", "w"])
    assert test((1, 3.0), (1, 0.0)) is True        # +Infinity > 1
    assert test((1, -3.0), (1, 0.0)) is False       # -Infinity
    assert test((1, 0.0), (1, 0.0)) is False        # NaN compares false


def test_an_integer_divided_by_zero_fails_naming_the_condition():
    test = compile_pair_condition(col("v") % col("w") == 0, ["k", "v"], ["k0", "w"])
    with pytest.raises(ZeroDivisionError, match=r"division by zero in join condition \(7 % 0\)"):
        test((1, 7), (1, 0))
