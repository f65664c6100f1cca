"""Python scalar UDF conformance cases, shared by the Flink recorder and changeflow's tests.

Each case is ``build(t_env, E) -> Table``; ``E`` holds ``col``, ``lit``, ``call``,
``DataTypes``, ``udf`` and ``ScalarFunction`` from ``pyflink.table`` (recorder:
``record_flink_udf.py``) or ``changeflow.table`` (tests). The functions are defined
inside the builds, so Flink's Python workers get them by value (no import of this
module there). Goldens: ``conformance/goldens/udf/<case>.json``, same format as the
Table API goldens (see README.md).
"""

from __future__ import annotations

from conformance.table_cases import Case

CASES: dict = {}


def case(name, *, mode="streaming", config=None, deterministic=True):
    """Register a build in this module's CASES (the Table API's register function, another dict)."""
    def register(build):
        CASES[name] = Case(name=name, build=build, mode=mode, config=dict(config or {}),
                           deterministic=deterministic, description=" ".join((build.__doc__ or "").split()))
        return build
    return register


def _people(t_env, E):
    return t_env.from_elements(
        [(1, "ann", 1.5), (2, "bob", None), (3, None, 2.0), (None, "dan", 4.0), (5, "eve", -1.0)],
        E.DataTypes.ROW([E.DataTypes.FIELD("id", E.DataTypes.BIGINT()),
                         E.DataTypes.FIELD("name", E.DataTypes.STRING()),
                         E.DataTypes.FIELD("score", E.DataTypes.DOUBLE())]))


@case("udf_row_at_a_time")
@case("udf_row_at_a_time_batch", mode="batch")
def row_at_a_time(t_env, E):
    """Row-at-a-time UDFs: a decorated function, a lambda, a UDF of two columns, NULLs passed as None; a UDF in
    where()."""
    @E.udf(result_type=E.DataTypes.STRING())
    def shout(s):
        return None if s is None else s.upper() + "!"

    plus_one = E.udf(lambda i: None if i is None else i + 1, result_type="BIGINT")
    scaled = E.udf(lambda i, d: None if i is None or d is None else i * d, result_type=E.DataTypes.DOUBLE())
    t = _people(t_env, E)
    return t.where(plus_one(E.col("id")) > 2).select(
        E.col("id"), plus_one(E.col("id")).alias("next_id"), shout(E.col("name")).alias("loud"),
        scaled(E.col("id"), E.col("score")).alias("weighted"))


@case("udf_pandas")
@case("udf_pandas_batch", mode="batch")
def pandas_udf(t_env, E):
    """A pandas UDF (Series in, Series out) beside a row-at-a-time one; NULLs reach pandas as NaN/None."""
    add = E.udf(lambda a, b: a + b, result_type=E.DataTypes.DOUBLE(), func_type="pandas")
    length = E.udf(lambda s: s.str.len(), result_type=E.DataTypes.BIGINT(), func_type="pandas")
    t = _people(t_env, E)
    return t.select(E.col("id"), add(E.col("id"), E.col("score")).alias("total"),
                    length(E.col("name")).alias("n"))


@case("udf_scalar_function_open", config={"pipeline.global-job-parameters": "factor:3"})
def scalar_function_open(t_env, E):
    """A ScalarFunction subclass whose open() reads a job parameter (pipeline.global-job-parameters) and a
    default for a missing one."""
    class Scale(E.ScalarFunction):
        def open(self, function_context):
            self.factor = int(function_context.get_job_parameter("factor", "1"))
            self.offset = int(function_context.get_job_parameter("offset", "100"))

        def eval(self, i):
            return None if i is None else i * self.factor + self.offset

    scale = E.udf(Scale(), result_type=E.DataTypes.BIGINT())
    return _people(t_env, E).select(E.col("id"), scale(E.col("id")).alias("scaled"))


@case("udf_registered_sql")
@case("udf_registered_sql_batch", mode="batch")
def registered_sql(t_env, E):
    """A function registered with create_temporary_function, called from SQL in SELECT, WHERE and GROUP BY."""
    t_env.create_temporary_function("bucket", E.udf(lambda i: None if i is None else i % 2,
                                                    result_type=E.DataTypes.BIGINT()))
    t_env.create_temporary_view("people", _people(t_env, E))
    return t_env.sql_query("SELECT bucket(id) AS b, COUNT(*) AS n, SUM(id) AS s FROM people "
                           "WHERE bucket(id) IS NOT NULL GROUP BY bucket(id)")


@case("udf_over_retracting_input")
def over_retracting_input(t_env, E):
    """A UDF applied to an aggregate's result in streaming: the -U/+U pairs pass through the UDF with their
    kinds."""
    label = E.udf(lambda k, s: f"{k}:{s}", result_type=E.DataTypes.STRING())
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5)], ["k", "v"])
    return t.group_by(E.col("k")).select(E.col("k"), E.col("v").sum.alias("s")) \
        .select(E.col("k"), label(E.col("k"), E.col("s")).alias("label"))


@case("udf_call_by_name")
def call_by_name(t_env, E):
    """call('name', ...) of a temporary system function, and call(f, ...) of a function object."""
    double = E.udf(lambda i: None if i is None else 2 * i, result_type=E.DataTypes.BIGINT())
    t_env.create_temporary_system_function("twice", double)
    t = _people(t_env, E)
    return t.select(E.col("id"), E.call("twice", E.col("id")).alias("a"), E.call(double, E.col("id")).alias("b"))
