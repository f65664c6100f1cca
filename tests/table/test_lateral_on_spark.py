"""Table functions on Spark: a failing function names itself and the input row, in both modes;
open() runs in the worker before the first row."""

from __future__ import annotations

import sys

import pytest
from pyspark import cloudpickle

from changeflow.common import DataTypes
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col
from changeflow.table.udf import TableFunction, udtf

pytestmark = pytest.mark.spark

# Spark's workers cannot import this test module: ship its functions and classes by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Fragile(TableFunction):
    def eval(self, line):
        if line == "bad":
            raise ValueError("cannot split")
        yield from line.split()


class NoModel(TableFunction):
    def open(self, function_context):
        raise FileNotFoundError("model.bin")

    def eval(self, line):
        yield line


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_a_failing_table_function_names_itself_and_the_row(spark, mode):
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t = t_env.from_elements([("a b",), ("bad",)], ["line"])
    fragile = udtf(Fragile(), result_types=[DataTypes.STRING()], name="fragile")
    table = t.join_lateral(fragile(col("line")).alias("w"))
    with pytest.raises(UserFunctionError, match=r"user function fragile failed on input \('bad',\): "
                                                r"ValueError: cannot split"), table.execute().collect() as rows:
        list(rows)


def test_a_failing_open_is_named(spark):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    t = t_env.from_elements([("a",)], ["line"])
    broken = udtf(NoModel(), result_types=[DataTypes.STRING()], name="no_model")
    table = t.flat_map(broken(col("line")))
    with pytest.raises(UserFunctionError, match=r"no_model failed in open\(\): FileNotFoundError: model.bin"), \
            table.execute().collect() as rows:
        list(rows)


def test_control_rows_of_a_flush_interval_pass_a_table_function(spark):
    # With execution.max-flush-interval, end-of-input and flush control rows travel through the
    # query; the correlate above a buffering aggregation passes them on untouched.
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("execution.max-flush-interval", "1 s")
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 1)], ["k", "v"])
    sums = t.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    upto = udtf(lambda n: range(1, n + 1), result_types=[DataTypes.BIGINT()], name="upto")
    with sums.join_lateral(upto(col("s")).alias("i")).execute().collect() as rows:
        final = sorted(tuple(r) for r in rows if str(r.get_row_kind()) in ("+I", "+U"))
    assert final == [("a", 2, 1), ("a", 2, 2), ("b", 2, 1), ("b", 2, 2)]
