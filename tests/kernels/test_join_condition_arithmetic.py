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


def test_a_timestamp_shifted_by_an_interval_bounds_the_pair_on_both_paths():
    """Nexmark q7's WHERE, which the planner pushes into the join: ``ts BETWEEN end - INTERVAL '10' SECOND AND end``."""
    import datetime as dt

    import numpy as np

    from changeflow.expressions import Call, Literal
    from changeflow.kernels.join.condition_arrays import compile_array_condition

    ts, end = col("ts"), col("end")
    low = Call("plus_interval", (end, Literal(-10), Literal("SECOND")))
    month = Call("plus_interval", (end, Literal(1), Literal("MONTH")))
    condition = (ts >= low) & (ts <= end) & (ts < month)
    t0 = dt.datetime(2024, 1, 31, 0, 0, 10)
    pairs = [(t0, t0), (t0, t0 + dt.timedelta(seconds=10)),
             (t0, t0 + dt.timedelta(seconds=10, milliseconds=1)), (None, t0), (t0, None)]
    pair = compile_pair_condition(condition, ["k", "ts"], ["k0", "end"])
    assert [pair((1, a), (1, b)) for a, b in pairs] == [True, True, False, False, False]
    arrays = compile_array_condition(condition, ["k", "ts"], ["k0", "end"])
    left, right = (np.empty(len(pairs), dtype=object) for _ in range(2))
    left[:], right[:] = [a for a, _ in pairs], [b for _, b in pairs]
    assert arrays({"ts": left}, {"end": right}).tolist() == [True, True, False, False, False]
