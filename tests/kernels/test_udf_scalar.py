"""The scalar Python function kernel (changeflow.kernels.udf), without Spark: how a batch's
columns reach a function (Arrow arrays for a general function, pandas Series for a pandas
function), what it returns, and how failures are named."""

from __future__ import annotations

import datetime
import decimal
import math

import pandas as pd
import pyarrow as pa
import pytest

from changeflow.common import Row
from changeflow.common.types import DataType, DataTypes
from changeflow.functions import FunctionContext, ScalarFunction, UserFunction
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.kernels.udf.scalar import ScalarEvaluator
from changeflow.kernels.udf.values import arrow_arguments
from changeflow.table.udf import udf


def evaluator(wrapper, *arg_types, context=None) -> ScalarEvaluator:
    ev = ScalarEvaluator(wrapper.function, arg_types, context)
    ev.open()
    return ev


def test_general_function_is_called_per_row_with_python_values():
    seen = []

    @udf(result_type=DataTypes.BIGINT())
    def f(i, s):
        seen.append((i, type(i), s))
        return None if i is None else i * 10

    ev = evaluator(f, DataTypes.BIGINT(), DataTypes.STRING())
    out = ev.eval_arrow([pa.array([1, None, 3]), pa.array(["a", None, "c"])], 3, pa.int64())
    assert out.type == pa.int64() and out.to_pylist() == [10, None, 30]
    assert seen == [(1, int, "a"), (None, type(None), None), (3, int, "c")]


def test_double_nulls_and_nans_stay_apart_both_ways():
    f = udf(lambda d: "null" if d is None else ("nan" if math.isnan(d) else str(d)), result_type="STRING")
    ev = evaluator(f, DataTypes.DOUBLE())
    out = ev.eval_arrow([pa.array([1.5, None, float("nan")])], 3, pa.string())
    assert out.to_pylist() == ["1.5", "null", "nan"]
    same = evaluator(udf(lambda d: d, result_type=DataTypes.DOUBLE()), DataTypes.DOUBLE())
    back = same.eval_arrow([pa.array([1.5, None, float("nan")])], 3, pa.float64())
    assert back.null_count == 1 and back.to_pylist()[:2] == [1.5, None] and math.isnan(back.to_pylist()[2])


def test_timestamps_dates_decimals_arrays_and_rows_arrive_as_pyflink_passes_them():
    got = []
    f = udf(lambda *args: got.append(args) or 1, result_type="INT")
    row_type = DataTypes.ROW([DataTypes.FIELD("x", DataTypes.INT()), DataTypes.FIELD("y", DataTypes.STRING())])
    map_type = DataType("MAP", True, (DataTypes.STRING(), DataTypes.INT()))
    ev = evaluator(f, DataTypes.TIMESTAMP(3), DataTypes.DATE(), DataTypes.DECIMAL(5, 2),
                   DataTypes.ARRAY(DataTypes.BIGINT()), row_type, map_type, DataTypes.TIMESTAMP_LTZ(3))
    moment = datetime.datetime(2024, 1, 2, 3, 4, 5)
    ev.eval_arrow([pa.array([moment], pa.timestamp("us")), pa.array([datetime.date(2024, 1, 2)]),
                   pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)), pa.array([[1, 2]]),
                   pa.array([{"x": 7, "y": "q"}]), pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32())),
                   pa.array([moment], pa.timestamp("us", tz="UTC"))], 1, pa.int32())
    (args,) = got
    assert args[0] == moment and type(args[0]) is datetime.datetime
    assert args[1] == datetime.date(2024, 1, 2)
    assert args[2] == decimal.Decimal("1.25")
    assert args[3] == [1, 2] and type(args[3]) is list
    assert args[4] == Row(x=7, y="q") and args[4].y == "q"
    assert args[5] == {"a": 1}
    assert args[6] == moment and args[6].tzinfo is None  # an instant, passed naive in UTC as changeflow's TIMESTAMP


def test_rows_maps_and_decimals_go_back_to_arrow_checked():
    row_type = DataTypes.ROW([DataTypes.FIELD("n", DataTypes.INT()),
                              DataTypes.FIELD("m", DataType("MAP", True, (DataTypes.STRING(), DataTypes.INT())))])
    f = udf(lambda i: None if i is None else Row(i, {"k": i}), result_type=row_type)
    arrow_type = pa.struct([("n", pa.int32()), ("m", pa.map_(pa.string(), pa.int32()))])
    out = evaluator(f, DataTypes.INT()).eval_arrow([pa.array([1, None], pa.int32())], 2, arrow_type)
    assert out.to_pylist() == [{"n": 1, "m": [("k", 1)]}, None]
    h = udf(lambda i: decimal.Decimal("1.005") * i, result_type=DataTypes.DECIMAL(10, 2))
    assert evaluator(h, DataTypes.INT()).eval_arrow([pa.array([1])], 1, pa.decimal128(10, 2)).to_pylist() \
        == [decimal.Decimal("1.01")]


def test_results_are_checked_against_the_declared_type():
    f = udf(lambda s: s, result_type="BIGINT", name="echo")
    ev = evaluator(f, DataTypes.STRING())
    with pytest.raises(UserFunctionError, match=r"user function echo failed on row \('x',\): result 'x' of Python "
                                                r"type str does not fit the declared result type BIGINT"):
        ev.eval_arrow([pa.array(["x"])], 1, pa.int64())
    g = udf(lambda i: i * 1000, result_type=DataTypes.INT(), name="big")
    with pytest.raises(UserFunctionError, match="out of the range of the declared result type INT"):
        evaluator(g, DataTypes.INT()).eval_arrow([pa.array([7, 3_000_000])], 2, pa.int32())
    d = udf(lambda i: i, result_type=DataTypes.DOUBLE())
    assert evaluator(d, DataTypes.INT()).eval_arrow([pa.array([2])], 1, pa.float64()).to_pylist() == [2.0]
    b = udf(lambda i: i > 1, result_type=DataTypes.BOOLEAN(), name="flag")
    assert evaluator(b, DataTypes.INT()).eval_arrow([pa.array([1, 2])], 2, pa.bool_()).to_pylist() == [False, True]


def test_a_failing_row_names_the_function_and_the_row():
    f = udf(lambda a, b: a // b, result_type="BIGINT", name="divide")
    ev = evaluator(f, DataTypes.BIGINT(), DataTypes.BIGINT())
    with pytest.raises(UserFunctionError) as info:
        ev.eval_arrow([pa.array([4, 5]), pa.array([2, 0])], 2, pa.int64())
    assert str(info.value) == "user function divide failed on row (5, 0): ZeroDivisionError: integer division or " \
                              "modulo by zero"


def test_open_runs_once_with_the_context_and_close_at_the_end():
    calls = []

    class Scale(ScalarFunction):
        def open(self, function_context):
            calls.append("open")
            self.k = int(function_context.get_job_parameter("k", "1"))

        def eval(self, i):
            return i * self.k

        def close(self):
            calls.append("close")

    f = udf(Scale(), result_type="BIGINT")
    ev = evaluator(f, DataTypes.BIGINT(), context=FunctionContext({"k": "3"}))
    assert ev.eval_arrow([pa.array([1, 2])], 2, pa.int64()).to_pylist() == [3, 6]
    assert ev.eval_arrow([pa.array([5])], 1, pa.int64()).to_pylist() == [15]
    ev.close()
    ev.close()  # closing twice closes once
    assert calls == ["open", "close"]


def test_a_failure_in_open_says_so():
    class Broken(ScalarFunction):
        def open(self, function_context):
            raise OSError("model file missing")

        def eval(self, i):
            return i

    ev = ScalarEvaluator(udf(Broken(), result_type="INT", name="broken").function, (DataTypes.INT(),))
    with pytest.raises(UserFunctionError, match=r"^user function broken failed in open\(\): OSError: model file "
                                                r"missing$"):
        ev.open()


def test_pandas_function_is_called_once_per_batch():
    calls = []

    def add(a, b):
        calls.append(len(a))
        return a + b

    f = udf(add, result_type=DataTypes.DOUBLE(), func_type="pandas")
    ev = evaluator(f, DataTypes.BIGINT(), DataTypes.DOUBLE())
    out = ev.eval_batch([pd.Series([1, 2, 3], index=[7, 8, 9]), pd.Series([0.5, 0.5, 0.5])])
    assert out.tolist() == [1.5, 2.5, 3.5] and calls == [3]


def test_pandas_result_length_and_type_are_checked():
    short = udf(lambda a: a.head(1), result_type="BIGINT", func_type="pandas", name="short")
    with pytest.raises(UserFunctionError, match="The result length '1' of Pandas UDF 'short' is not equal to the "
                                                "input length '2'"):
        evaluator(short, DataTypes.BIGINT()).eval_batch([pd.Series([1, 2])])
    scalar = udf(lambda a: 1, result_type="BIGINT", func_type="pandas", name="one")
    with pytest.raises(UserFunctionError, match="must be pandas.Series or pandas.DataFrame, got int"):
        evaluator(scalar, DataTypes.BIGINT()).eval_batch([pd.Series([1])])
    boom = udf(lambda a: a / "x", result_type="BIGINT", func_type="pandas", name="boom")
    with pytest.raises(UserFunctionError, match=r"pandas user function boom failed on a batch of 2 rows \(first "
                                                r"row \(1,\)\): TypeError"):
        evaluator(boom, DataTypes.BIGINT()).eval_batch([pd.Series([1, 2])])


def test_a_function_of_no_arguments_gets_the_batch_length():
    f = udf(lambda: 7, result_type="INT")
    assert evaluator(f).eval_arrow([], 3, pa.int32()).to_pylist() == [7, 7, 7]
    p = udf(lambda: pd.Series([1, 2]), result_type="INT", func_type="pandas")
    assert evaluator(p).eval_batch([], length=2).tolist() == [1, 2]


def test_arrow_arguments_nested_nulls_and_the_wrong_entry_point():
    nested = DataTypes.ARRAY(DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())]))
    assert arrow_arguments(pa.array([[{"a": 1}, None], None]), nested) == [[Row(a=1), None], None]
    assert arrow_arguments(pa.array([True, None]), DataTypes.BOOLEAN()) == [True, None]
    general = evaluator(udf(lambda i: i, result_type="INT"), DataTypes.INT())
    with pytest.raises(ValueError, match="eval_arrow takes its batches"):
        general.eval_batch([pd.Series([1])])
    vectorised = evaluator(udf(lambda i: i, result_type="INT", func_type="pandas"), DataTypes.INT())
    with pytest.raises(ValueError, match="eval_batch takes its batches"):
        vectorised.eval_arrow([pa.array([1])], 1, pa.int32())


def test_only_scalar_functions_are_evaluated_here():
    with pytest.raises(ValueError, match="not a scalar function"):
        ScalarEvaluator(UserFunction("t", "table", udf(lambda: 1, result_type="INT").function.instance, None), ())
