"""A failing job shows changeflow's error first and whole, not Spark's trace (runtime/spark/errors.py)."""

import os

import pytest

from changeflow.kernels.keyed.records import UserFunctionError


@pytest.fixture
def env_of(spark):
    from changeflow.datastream import StreamExecutionEnvironment

    def make(mode):
        env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
        env.set_runtime_mode(mode)
        return env

    return make


def test_a_streaming_job_raises_the_user_functions_error_not_sparks(env_of, capfd):
    from changeflow.datastream import RuntimeExecutionMode

    def invert(x):  # local: pickled by value for the workers
        return 1 / x

    env = env_of(RuntimeExecutionMode.STREAMING)
    with pytest.raises(UserFunctionError) as failure:
        env.from_collection([1, 2, 0, 4]).map(invert).execute_and_collect(limit=10)
    assert str(failure.value) == (f"user function Map({invert.__qualname__}) failed on record 0: "
                                  "ZeroDivisionError: division by zero")
    spark_error = failure.value.spark_error  # Spark's own, kept for whoever asks
    assert "StreamingQueryException" in type(spark_error).__name__ and len(str(spark_error)) > 2000
    # Spark's logs do not print the same failure's trace to the console first.
    assert "Exception in task" not in capfd.readouterr().err


@pytest.mark.parametrize("mode", ["STREAMING", "BATCH"])
def test_a_dying_worker_names_the_function_it_ran(env_of, mode):
    from changeflow.datastream import RuntimeExecutionMode
    from changeflow.runtime.spark.errors import PythonWorkerDied

    def parse(x):
        if x == 0:
            os._exit(1)  # the worker process dies: no Python exception reaches Spark
        return x

    def keep(x):
        return True

    env = env_of(getattr(RuntimeExecutionMode, mode))
    with pytest.raises(PythonWorkerDied, match=r"^Python worker died while running map function Map\(.*parse\) "):
        env.from_collection([1, 2, 0, 4]).filter(keep).map(parse).execute_and_collect(limit=10)
