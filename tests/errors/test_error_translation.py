"""Spark's failure texts turned into changeflow's errors, without Spark (runtime/spark/errors.py)."""

import pytest

from changeflow.connectors.formats import BadRecordError
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.runtime.spark import errors
from changeflow.runtime.spark.errors import PythonWorkerDied, SparkJobError, translate

JVM = "\n".join(f"\tat org.apache.spark.Some$Frame.call(Some.scala:{i})" for i in range(60))

# The shape of a streaming query's failure: foreachBatch proxy traceback, wrapper, worker traceback, JVM, plan.
STREAMING = f"""[STREAM_FAILED] Query [id = f19d] terminated with exception: \
[FOREACH_BATCH_USER_FUNCTION_ERROR] An error \
occurred in the user provided function in foreach batch sink. Reason: An exception was raised by the Python Proxy. \
Return Message: Traceback (most recent call last):
  File "py4j/clientserver.py", line 644, in _call_proxy
    return_value = getattr(self.pool[obj_id], method)(*params)
  File "pyspark/errors/exceptions/captured.py", line 285, in unwrap_spark_exception
    raise converted from None
pyspark.errors.exceptions.captured.PythonException: An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "changeflow/datastream/chain.py", line 83, in _apply
    raise fail(op.name, v, error) from error
changeflow.kernels.keyed.records.UserFunctionError: user function Map(invert) failed on record 0: ZeroDivisionError: \
division by zero
 SQLSTATE: 39000 SQLSTATE: XXKST
{JVM}
=== Streaming Query ===
Identifier: [id = f19d]
Logical Plan:
~MapInPandas ChainRunner(_value#6, _ord#7)#8
"""

SINK = f"""[STREAM_FAILED] Query [id = 1] terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] Reason: An \
exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):
  File "changeflow/runtime/spark/jobs.py", line 97, in write
    sink.write(list(_changes(batch.toArrow(), names)))
ValueError: sink 'totals': -D[2, 'x'] retracts a row the table does not hold
(primary key 2)

{JVM}
"""


def test_a_streaming_failure_becomes_the_workers_error_type_and_whole_message():
    error = translate(Exception(STREAMING))
    assert type(error) is UserFunctionError
    assert str(error) == "user function Map(invert) failed on record 0: ZeroDivisionError: division by zero"


def test_a_multi_line_message_is_kept_whole_up_to_the_jvm_stack():
    error = translate(Exception(SINK))
    assert type(error) is ValueError
    assert str(error) == "sink 'totals': -D[2, 'x'] retracts a row the table does not hold\n(primary key 2)"


def test_changeflow_and_builtin_types_are_rebuilt_and_others_named():
    text = "Traceback (most recent call last):\n  File \"x\", line 1\n{}\n SQLSTATE: 38000\n"
    bad = translate(Exception(text.format(
        "changeflow.connectors.formats.BadRecordError: CSV row 'zz' (file f, line 2)")))
    assert type(bad) is BadRecordError and str(bad) == "CSV row 'zz' (file f, line 2)"
    assert type(translate(Exception(text.format("KeyError: 'v'")))) is KeyError
    # A class the driver has not loaded is never imported: its name leads the message.
    other = translate(Exception(text.format("some_unloaded_module_xyz.Oops: it broke")))
    assert type(other) is SparkJobError and str(other) == "some_unloaded_module_xyz.Oops: it broke"


def test_a_failure_without_a_python_exception_is_left_as_it_is():
    assert translate(Exception("org.apache.spark.SparkException: Job aborted: disk full\n" + JVM)) is None


def test_a_dead_worker_is_named_by_its_note_else_by_the_candidates():
    crashed = ("org.apache.spark.SparkException: Python worker exited unexpectedly (crashed): "
               f"{errors.NOTE}map function Map(parse)\n\nCaused by: java.io.EOFException\n{JVM}")
    error = translate(Exception(crashed), ["Map(parse)", "Filter(keep)"])
    assert type(error) is PythonWorkerDied
    assert str(error).startswith("Python worker died while running map function Map(parse) (")
    silent = "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)\n" + JVM
    error = translate(Exception(silent), ["Map(parse)", "Filter(keep)", "Map(parse)"])
    assert "one of this job's Python functions: Map(parse), Filter(keep) (" in str(error)


def test_worker_note_outside_a_worker_does_nothing():
    errors.worker_note("map function f")  # no fault-handler log open: must not raise


def test_readable_errors_keeps_the_spark_error_and_chains_it_only_on_request(monkeypatch):
    pytest.importorskip("pyspark")
    from py4j.protocol import Py4JJavaError

    class FakeJavaError(Py4JJavaError):
        def __init__(self, text):
            Exception.__init__(self, text)
            self.text = text

        def __str__(self):
            return self.text

    spark_error = FakeJavaError(STREAMING)
    monkeypatch.delenv(errors.TRACE_ENV, raising=False)
    with pytest.raises(UserFunctionError) as raised, errors.readable_errors():
        raise spark_error
    assert raised.value.spark_error is spark_error
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    monkeypatch.setenv(errors.TRACE_ENV, "1")
    with pytest.raises(UserFunctionError) as raised, errors.readable_errors():
        raise spark_error
    assert raised.value.__cause__ is spark_error
    # An error that is not Spark's passes untouched.
    with pytest.raises(ZeroDivisionError), errors.readable_errors():
        _ = 1 / 0


def test_a_chain_announces_each_function_before_it_runs_and_none_after_the_last():
    from changeflow.kernels.chain import run
    from changeflow.plan.stream_nodes import Op

    heard = []
    run([Op("map", lambda x: x + 1, "Map(inc)"), Op("flat_map", lambda x: [x, x], "FlatMap(twice)")], [1], [(0, 0)],
        heard.append)
    assert heard == ["map function Map(inc)", "flat map function FlatMap(twice)", None]


def test_worker_note_rewrites_the_fault_handler_log(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    from pyspark import util

    with open(tmp_path / "log", "w+") as log:
        monkeypatch.setattr(util._faulthandler_helper, "_log_file", log)
        errors.worker_note("map function Map(a)")
        errors.worker_note("filter function Filter(b)")
        assert (tmp_path / "log").read_text() == f"{errors.NOTE}filter function Filter(b)\n"
        errors.worker_note(None)
        assert (tmp_path / "log").read_text() == ""
