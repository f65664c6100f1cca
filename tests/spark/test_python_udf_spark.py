"""Scalar Python UDFs run on Spark: Table API and SQL calls, registration, open()/job parameters,
changelog kinds through a UDF projection, INSERT INTO, and errors naming the function and row.
(The Flink goldens of the UDF cases: tests/conformance/test_udf_conformance.py.)"""

from __future__ import annotations

import pytest

from changeflow.common import Row
from changeflow.common.types import DataTypes
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import call, col
from changeflow.table.udf import ScalarFunction, udf

pytestmark = pytest.mark.spark


def rows(table) -> list[tuple]:
    with table.execute().collect() as it:
        return [(str(r.get_row_kind()), *r) for r in it]


def test_udfs_in_select_where_add_columns_and_group_by_keys(batch_env):
    t = batch_env.from_elements([(1, "a"), (2, "b"), (3, "a"), (4, None)], ["id", "s"])
    parity = udf(lambda i: i % 2, result_type="BIGINT", name="parity")
    shout = udf(lambda s: None if s is None else s.upper(), result_type=DataTypes.STRING())
    out = t.add_columns(parity(col("id")).alias("p")).where(shout(col("s")).is_not_null) \
        .group_by(col("p")).select(col("p"), col("id").count.alias("n"))
    assert sorted(rows(out)) == [("+I", 0, 1), ("+I", 1, 2)]
    nested = t.select(shout(call(shout, col("s"))).alias("x"), call(parity, col("id") + 1).alias("y"))
    assert sorted(rows(nested), key=str) == sorted([("+I", "A", 0), ("+I", "B", 1), ("+I", "A", 0),
                                                    ("+I", None, 1)], key=str)



def test_a_general_function_gets_pyflinks_values_from_arrow_and_keeps_null_and_nan_apart(batch_env):
    t = batch_env.from_elements([(1,), (2,), (3,)], ["id"])
    # A NaN and a NULL made by one function reach the next one apart (through Arrow, both ways).
    make = udf(lambda i: {1: 1.5, 2: None, 3: float("nan")}[i], result_type="DOUBLE")
    what = udf(lambda d: "null" if d is None else ("nan" if d != d else "value"), result_type="STRING")
    got = {r[1]: (r[2], r[3]) for r in rows(t.select(col("id"), what(make(col("id"))), make(col("id"))))}
    assert got[1] == ("value", 1.5) and got[2] == ("null", None)
    assert got[3][0] == "nan" and got[3][1] != got[3][1]  # NaN comes back NaN, not NULL
    pair = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT()), DataTypes.FIELD("b", DataTypes.STRING())])
    batch_env.create_temporary_view("nums", batch_env.from_elements(
        [(1, Row(a=1, b="x"), {"k": 1}, [1, 2])],
        DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()), DataTypes.FIELD("r", pair),
                       DataTypes.FIELD("m", DataTypes.MAP(DataTypes.STRING(), DataTypes.BIGINT())),
                       DataTypes.FIELD("a", DataTypes.ARRAY(DataTypes.BIGINT()))])))
    batch_env.create_temporary_function("show_args", udf(
        lambda r, m, a, ts, lt, day, dec: f"{r.a}{r['b']}|{m}|{a}|{ts!r}|{lt!r}|{day!r}|{dec!r}",
        result_type="STRING"))
    (row,) = rows(batch_env.sql_query(
        "SELECT show_args(r, m, a, CAST('2024-01-02 03:04:05' AS TIMESTAMP(3)), "
        "CAST(CAST('1970-01-01 00:00:00' AS TIMESTAMP(3)) AS TIMESTAMP_LTZ(3)), DATE '2024-01-02', "
        "CAST(1.25 AS DECIMAL(5, 2))) FROM nums WHERE id = 1"))
    assert row[1] == ("1x|{'k': 1}|[1, 2]|datetime.datetime(2024, 1, 2, 3, 4, 5)|"
                      "datetime.datetime(1970, 1, 1, 0, 0)|datetime.date(2024, 1, 2)|Decimal('1.25')")


def test_registered_functions_from_sql_in_batch_and_streaming_insert(spark, tmp_path, stream_env):
    for t_env in (TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark), stream_env):
        t_env.create_temporary_function("PLUS_ONE", udf(lambda i: i + 1, result_type="BIGINT"))
        t_env.create_temporary_view("t", t_env.from_elements([(1,), (2,), (5,)], ["a"]))
        assert t_env.list_user_defined_functions() == ["plus_one"]
        out = t_env.sql_query("SELECT plus_one(a) AS b FROM t WHERE Plus_One(a) > 2")
        assert sorted(r[1] for r in rows(out)) == [3, 6]
        path = tmp_path / ("batch" if t_env is not stream_env else "stream")
        t_env.execute_sql(f"CREATE TABLE sink (b BIGINT) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                          f"'format' = 'csv')")
        t_env.execute_sql("INSERT INTO sink SELECT plus_one(plus_one(a)) FROM t").wait()
        written = sorted(int(line) for f in path.rglob("*") if f.is_file() and not f.name.startswith(".")
                         for line in f.read_text().split())
        assert written == [3, 4, 7]


def test_a_temporary_system_function_shadows_a_builtin(batch_env):
    batch_env.create_temporary_system_function("upper", udf(lambda s: s + "!", result_type="STRING"))
    batch_env.create_temporary_view("w", batch_env.from_elements([("a",)], ["s"]))
    assert rows(batch_env.sql_query("SELECT UPPER(s) FROM w")) == [("+I", "a!")]
    assert batch_env.drop_temporary_system_function("upper") is True
    assert batch_env.drop_temporary_system_function("upper") is False
    assert rows(batch_env.sql_query("SELECT UPPER(s) FROM w")) == [("+I", "A")]


def test_open_reads_job_parameters_once_per_task_and_pandas_udfs_run(batch_env):
    class Scale(ScalarFunction):
        def open(self, function_context):
            self.k = int(function_context.get_job_parameter("k", "1"))

        def eval(self, i):
            return i * self.k

    batch_env.get_config().set("pipeline.global-job-parameters", "k:7")
    t = batch_env.from_elements([(1, 0.5), (2, None)], ["a", "d"])
    added = udf(lambda a, d: a + d, result_type=DataTypes.DOUBLE(), func_type="pandas")
    out = t.select(udf(Scale(), result_type="BIGINT")(col("a")).alias("x"), added(col("a"), col("d")).alias("y"))
    assert set(rows(out)) == {("+I", 7, 1.5), ("+I", 14, None)}


def test_changelog_kinds_pass_through_a_udf_projection(stream_env):
    t = stream_env.from_elements([("a", 1), ("a", 2), ("b", 3)], ["k", "v"])
    label = udf(lambda k, s: f"{k}={s}", result_type="STRING")
    out = t.group_by(col("k")).select(col("k"), col("v").sum.alias("s")).select(label(col("k"), col("s")))
    assert rows(out) == [("+I", "a=1"), ("-U", "a=1"), ("+U", "a=3"), ("+I", "b=3")]


def test_a_failing_udf_names_itself_and_the_row(batch_env):
    t = batch_env.from_elements([(4, 2), (5, 0)], ["a", "b"])
    divide = udf(lambda a, b: a // b, result_type="BIGINT", name="divide")
    with pytest.raises(UserFunctionError, match=r"user function divide failed on row \(5, 0\): ZeroDivisionError"):
        rows(t.select(divide(col("a"), col("b"))))

    class Broken(ScalarFunction):
        def open(self, function_context):
            raise RuntimeError("no model")

        def eval(self, a):
            return a

    with pytest.raises(UserFunctionError, match=r"user function broken failed in open\(\): RuntimeError: no model"):
        rows(t.select(udf(Broken(), result_type="BIGINT", name="broken")(col("a"))))


def test_planning_errors_and_refusals(batch_env):
    t = batch_env.from_elements([(1, "x")], ["a", "s"])
    typed = udf(lambda i: i, input_types=[DataTypes.BIGINT()], result_type="BIGINT", name="typed")
    with pytest.raises(PlanError, match=r"Invalid function call typed\(s\): argument 1 \(s\) is STRING"):
        t.select(typed(col("s")))
    with pytest.raises(PlanError, match="declares 1 input type"):
        t.select(typed(col("a"), col("a")))
    with pytest.raises(NotImplementedError, match="create_java_temporary_function: Java user-defined functions"):
        batch_env.create_java_temporary_function("f", "com.example.F")
    with pytest.raises(ValueError, match="no function 'nope' is registered"):
        call("nope", col("a"))



@pytest.mark.parametrize("mode", ["STREAMING", "BATCH"])
def test_a_datastream_function_reads_the_global_job_parameters(spark, mode):
    from changeflow.common import Configuration
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from changeflow.datastream.functions import MapFunction

    class Tagged(MapFunction):
        def open(self, runtime_context):
            self.tag = (runtime_context.get_job_parameter("tag", "none") + "/"
                        + runtime_context.get_job_parameter("other", "default"))

        def map(self, value):
            return f"{value}:{self.tag}"

    config = Configuration()
    config.set_string("pipeline.global-job-parameters", "tag:x")
    env = StreamExecutionEnvironment.get_execution_environment(config, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode[mode])
    assert sorted(env.from_collection([1, 2]).map(Tagged()).execute_and_collect()) == ["1:x/default", "2:x/default"]
    # PyFlink's way: ExecutionConfig.set_global_job_parameters (replaces them; values as str()).
    env.get_config().set_global_job_parameters({"tag": "y,z", "other": 3})
    assert sorted(env.from_collection([1]).map(Tagged()).execute_and_collect()) == ["1:y,z/3"]
