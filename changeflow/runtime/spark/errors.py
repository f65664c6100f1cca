"""Spark's failures turned back into changeflow's errors, message first and whole.

A changeflow error raised in a Python worker (a kernel's, a user function's
named :class:`~changeflow.kernels.keyed.records.UserFunctionError`, a sink's
``ValueError`` naming the key) reaches the driver as Spark's
``PythonException`` (batch) or, in a streaming query, 2-5 KB deep inside a
``StreamingQueryException`` (the foreachBatch proxy's traceback, the worker's
traceback, the JVM stack, the query's plan). :func:`readable_errors` wraps a
job's run and raises instead the worker's own exception, rebuilt from the last
``module.Type: message`` line of the worker traceback: the same type where it
can be rebuilt (``ValueError``, changeflow's error classes, an exception class
of a module the driver has loaded), else :class:`SparkJobError` whose message
starts with the original type's name.

The Spark exception is kept on the new one as ``spark_error`` and shown, as
its ``__cause__``, only on request: set the environment variable
``CHANGEFLOW_SPARK_TRACE=1`` (read when the error is raised). A session
changeflow starts also keeps Spark from logging the same failure's trace to
the console (:func:`quiet_failure_logs`), unless that variable is set.

A Python worker that dies (``os._exit``, a segfault in native code) leaves no
Python exception. Spark then reads the worker's fault-handler log
(``spark.python.worker.faulthandler.enabled``, which changeflow's queries turn
on), and changeflow's chains write into that log which user function they run
(:func:`worker_note`) before running it over a partition, so the error names
it: "Python worker died while running map function Map(parse)". Where no note
was written (the worker died in changeflow's own operator code, or the fault
handler is off), the error names the job's candidate user functions.
"""

from __future__ import annotations

import builtins
import importlib
import os
import re
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

TRACE_ENV = "CHANGEFLOW_SPARK_TRACE"
NOTE = "changeflow: Python worker running "
FAULTHANDLER_CONFS = ("spark.python.worker.faulthandler.enabled",
                      "spark.sql.execution.pyspark.udf.faulthandler.enabled")

# A traceback's last line: "ValueError: msg", "changeflow.x.UserFunctionError: msg", "pkg.mod.Custom: msg".
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*): (?P<message>.*)$")
# Lines that end a worker's exception message: Spark's suffixes and the JVM stack.
_MESSAGE_END = re.compile(r"^\s*(SQLSTATE: |at |\.\.\. \d+ more|=== Streaming Query ===|JVM stacktrace:|Caused by: |"
                          r"Driver stacktrace:|\tat )")
# Exception types that wrap the real one: never the user's error.
_WRAPPERS = ("pyspark.", "py4j.", "org.apache.", "java.", "scala.")
_CRASH = "Python worker exited unexpectedly"


class SparkJobError(RuntimeError):
    """A job failed with an exception changeflow could not rebuild as its own type; the message names the type."""


class PythonWorkerDied(RuntimeError):
    """A Python worker process died (exit, signal) while running a job's Python code."""


def worker_note(what: str | None) -> None:
    """In a Python worker: record in the fault-handler log that ``what`` (a user function) runs now;
    None: that no user function runs any more.

    Spark reads that log into its error when the worker dies. The log is
    rewritten, not appended to, so it names only the function that runs now
    (one seek and write per operator and partition, not per record). Spark
    opens a new log for each task, so no note outlives its task.
    """
    try:
        from pyspark import util
    except ImportError:  # not in a Spark worker
        return
    log = getattr(getattr(util, "_faulthandler_helper", None), "_log_file", None)
    if log is None or log.closed:
        return
    try:
        log.seek(0)
        log.truncate()
        if what is not None:
            log.write(f"{NOTE}{what}\n")
        log.flush()
    except (OSError, ValueError):  # the log is Spark's: a failed note must never fail the task
        pass


def translate(error: BaseException, candidates: Sequence[str] = ()) -> BaseException | None:
    """The changeflow error inside Spark's ``error``, or None when there is none to extract."""
    text = str(error)
    if _CRASH in text:
        return _worker_died(text, candidates)
    found = _last_python_exception(text)
    if found is None:
        return None
    type_name, message = found
    rebuilt = _rebuild(type_name, message)
    return rebuilt if rebuilt is not None else SparkJobError(f"{type_name}: {message}")


def _worker_died(text: str, candidates: Sequence[str]) -> PythonWorkerDied:
    # Spark puts the log after "Python worker exited unexpectedly (crashed): ", on the line of its message.
    notes = [note.strip() for note in re.findall(re.escape(NOTE) + r"(.+)", text)]
    if notes:
        return PythonWorkerDied(f"Python worker died while running {notes[-1]} (the worker process exited "
                                f"or crashed; {TRACE_ENV}=1 shows Spark's error)")
    if candidates:
        names = ", ".join(dict.fromkeys(candidates))
        return PythonWorkerDied(f"Python worker died while running one of this job's Python functions: {names} "
                                f"(it died outside a user function's call, or without a fault-handler log)")
    return PythonWorkerDied("Python worker died while running changeflow's operators (exit or crash of the "
                            "worker process)")


def _last_python_exception(text: str) -> tuple[str, str] | None:
    """(type, message) of the last exception line of a Python traceback in ``text`` that is not Spark's wrapper."""
    lines = text.splitlines()
    found = None
    in_traceback = False
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)") or line.endswith("Traceback (most recent call last):"):
            in_traceback = True
            continue
        if not in_traceback or line.startswith((" ", "\t")):
            continue
        match = _EXCEPTION_LINE.match(line)
        if match is None:
            continue
        in_traceback = False
        if match["type"].startswith(_WRAPPERS):
            continue
        message = [match["message"]]
        for more in lines[i + 1:]:  # a multi-line message runs to Spark's suffix or the JVM stack
            if not more.strip() or _MESSAGE_END.match(more):
                break
            message.append(more)
        found = (match["type"], "\n".join(message).rstrip())
    return found


def _rebuild(type_name: str, message: str) -> BaseException | None:
    """An exception of the type the worker raised, when the driver has that class and it takes a message."""
    module_name, _, class_name = type_name.rpartition(".")
    if not module_name:
        cls = getattr(builtins, class_name, None)
    elif module_name.startswith("changeflow.") or module_name in sys.modules:
        try:  # changeflow's own modules import without side effects; others only if already loaded
            cls = getattr(importlib.import_module(module_name), class_name, None)
        except Exception:
            cls = None
    else:
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return None
    try:
        rebuilt = cls(message)
    except Exception:
        return None
    return rebuilt if str(rebuilt) == message or isinstance(rebuilt, KeyError) else None


def _spark_exceptions() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException

    return CapturedException, Py4JJavaError


# Spark's loggers that print a failed task's or query's whole trace to the console before the job's
# error is raised: the same failure, 5-20 KB of it, ahead of changeflow's message.
FAILURE_LOGGERS = ("org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
                   "org.apache.spark.sql.execution.streaming.runtime.MicroBatchExecution")


def quiet_failure_logs(spark) -> None:
    """Silence :data:`FAILURE_LOGGERS` in a session changeflow started (not with ``CHANGEFLOW_SPARK_TRACE=1``)."""
    if show_spark_trace():
        return
    try:
        jvm = spark.sparkContext._jvm
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        off = jvm.org.apache.logging.log4j.Level.OFF
        for name in FAILURE_LOGGERS:
            configurator.setLevel(name, off)
    except Exception:  # another logging backend: Spark's logs stay as they are
        pass


def show_spark_trace() -> bool:
    return os.environ.get(TRACE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@contextmanager
def readable_errors(candidates: Callable[[], Sequence[str]] = lambda: ()) -> Iterator[None]:
    """Run a job's Spark actions; a Spark failure carrying a changeflow error is raised as that error.

    ``candidates()`` names the job's user functions, for a worker that died
    without saying which one it ran.
    """
    try:
        yield
    except _spark_exceptions() as error:
        readable = translate(error, candidates())
        if readable is None:
            raise
        # Any exception class translate() rebuilds carries Spark's error (see the module docstring).
        readable.spark_error = error  # pyright: ignore[reportAttributeAccessIssue]
        if show_spark_trace():
            raise readable from error
        raise readable from None
