"""The factory of the ``RuntimeContext`` a user function's ``open()`` gets, with the job's parameters.

The job parameters (``pipeline.global-job-parameters``, PyFlink's
``ExecutionConfig.set_global_job_parameters``) are those of the job when it runs, not when its
operators were built: the factory keeps the environment's configuration and reads it when called,
and a job's operators are pickled for Spark's executors when the job is translated, at ``execute()``.
"""

from __future__ import annotations

from typing import Any

from changeflow.config.job_parameters import job_parameters_of
from changeflow.datastream.functions import RuntimeContext

__all__ = ["JobContext"]


class JobContext:
    """``JobContext(config)(task_name, **context)``: a :class:`RuntimeContext` with ``config``'s job parameters."""

    def __init__(self, configuration: Any) -> None:
        self._configuration = configuration

    def __call__(self, task_name: str = "", **context: Any) -> RuntimeContext:
        return RuntimeContext(task_name, job_parameters=job_parameters_of(self._configuration), **context)
