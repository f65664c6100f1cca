"""A submitted INSERT job: its thread, status, cancellation and error (PyFlink's ``JobClient``).

``INSERT INTO`` runs in a background thread, as Flink submits the job and
returns; the Spark job runner (:mod:`changeflow.runtime.spark.jobs`) gives it the
function that runs the job and, for a streaming job, the query and checkpoint.
Plain Python: no Spark import here.
"""

from __future__ import annotations

import threading
import uuid
from typing import Callable

from changeflow.runtime.query_progress import Totals


class InsertJob:
    """A submitted INSERT job, as PyFlink's ``JobClient``: status, ``cancel()``, and ``wait()`` for the result."""

    def __init__(self, run, read_metrics: Callable[[str], list[dict]] | None = None) -> None:
        """``run(job)`` runs the job in the job's thread; ``read_metrics(checkpoint)`` reads a streaming
        job's state metrics from its checkpoint."""
        self.query = None  # the streaming query, once started
        self._read_metrics = read_metrics
        self.checkpoint: str | None = None  # a streaming job's, once it has one
        self._error: BaseException | None = None
        self._cancelled = False
        self._id = uuid.uuid4().hex  # 32 hex digits, as Flink's JobID prints
        self._thread = threading.Thread(target=self._main, args=(run,), name="changeflow-insert", daemon=True)
        self._thread.start()

    def _main(self, run) -> None:
        try:
            run(self)
        except BaseException as e:  # handed to wait(); the thread must not die silently
            self._error = e

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the job ends; raise its error if it failed."""
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise TimeoutError(f"the INSERT job is still running after {timeout_s} s")
        if self._error is not None and not self._cancelled:
            raise self._error

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Stop the job and wait until it has stopped."""
        self._cancelled = True
        if self.query is not None:
            self.query.stop()
        self._thread.join()

    def get_state_metrics(self) -> list[dict]:
        """Per stateful operator: distinct ``keys``, ``bytes`` and ``pages`` stored, ``rows`` per table, and
        ``late_records_dropped`` (rows an event-time operator dropped as late).

        Read from the job's checkpoint as of its last committed micro-batch
        (:mod:`changeflow.runtime.spark.state_metrics`); a job without state, or before its first
        commit, gives ``[]``. A streaming job without ``changeflow.checkpoint-dir``
        keeps its checkpoint only while it runs. changeflow's own, beyond PyFlink's ``JobClient``.
        """
        if self.checkpoint is None or self._read_metrics is None:
            return []
        return self._read_metrics(self.checkpoint)

    def get_metrics(self) -> dict:
        """A streaming job's figures so far (changeflow's own, beyond PyFlink's ``JobClient``).

        ``status`` (as :meth:`get_job_status`), ``micro_batches``, ``rows_read``,
        ``rows_per_second`` (of the last micro-batch), ``changes_out`` (None where the sink
        does not count its rows) and ``state_rows`` (rows in the state stores), summed
        from Spark's progress reports of the query (its recent ones: Spark keeps the last
        100). A batch job, or a streaming one before its first micro-batch, has zeros.
        """
        totals = Totals()
        for report in (getattr(self.query, "recentProgress", None) or []) if self.query is not None else []:
            totals.add(report)
        return {"status": self.get_job_status(), **totals.as_dict()}

    def get_job_id(self) -> str:
        """The job's id: 32 hexadecimal digits, as Flink's ``JobID`` prints."""
        return self._id

    def get_job_status(self) -> str:
        if self._thread.is_alive():
            return "RUNNING"
        if self._cancelled:
            return "CANCELED"
        return "FAILED" if self._error is not None else "FINISHED"


__all__ = ["InsertJob"]
