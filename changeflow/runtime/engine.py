"""The runtime as the front ends see it: one interface, one factory, no Spark import.

The SQL, Table API and DataStream front ends plan jobs without Spark; to run
one they hand it to an :class:`Engine`, which they obtain from
:func:`spark_engine` and keep for the environment's life. The engine decides
everything about execution (the SparkSession, checkpoints, micro-batch sizes,
state buckets): it reads them from the environment's live configuration at the
time a job runs, so a ``SET`` takes effect on the next job as before.

Spark objects that are part of the public API (a DataFrame given to
``from_spark()`` / ``from_source()``, returned by ``to_spark()``, a user's
``spark_session=``) cross this interface as opaque values (``Any``): a front
end holds them but never imports pyspark to look inside. Where it must know
something about one (its schema, whether it is a DataFrame at all), it asks
the engine.

Only :func:`spark_engine` names the Spark runtime; it imports it when first
called, so importing a front end, planning and EXPLAIN load no pyspark. The
import-linter contracts (``.importlinter``) allow exactly that one import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from changeflow.common.configuration import Configuration
# The values a runtime hands back live beside Change, so the Spark runtime needs nothing from this module.
from changeflow.runtime.changes import Change, LiveChanges, QueryRun

if TYPE_CHECKING:
    from changeflow.common.types import DataType
    from changeflow.plan.nodes import PlanNode, Sink

__all__ = ["CacheHandle", "Change", "Engine", "JobClient", "LiveChanges", "QueryRun", "spark_engine"]


class JobClient(Protocol):
    """A submitted ``INSERT`` job (PyFlink's ``JobClient`` subset)."""

    def wait(self, timeout_s: float | None = None) -> None: ...

    def cancel(self) -> None: ...

    def get_job_status(self) -> str: ...

    def get_job_id(self) -> str: ...


class CacheHandle(Protocol):
    """A cached intermediate result (FLIP-205): released by ``release()``, kept again after ``register()``."""

    def release(self) -> None: ...

    def register(self) -> Any: ...


class Engine(Protocol):
    """What the front ends ask of a runtime. Plans go in; changes, jobs and opaque frames come out."""

    # --- Table API and SQL ------------------------------------------------------------
    def run_query(self, plan: PlanNode, streaming: bool) -> QueryRun:
        """Runs a query to its end (bounded input) or starts it (unbounded input, streaming only)."""
        ...

    def submit_insert(self, plan: Sink, streaming: bool, job_name: str | None) -> JobClient:
        """Starts an ``INSERT`` job writing ``plan``'s changes into its sink, in the background."""
        ...

    def submit_inserts(self, plans: list[Sink], streaming: bool, job_name: str | None) -> JobClient:
        """Starts one job writing each plan's changes into its sink (a statement set), in the background."""
        ...

    def to_frame(self, plan: PlanNode, streaming: bool) -> Any:
        """The query as a DataFrame: the result table (batch) or a stream with an ``op`` column (streaming)."""
        ...

    def cache_table(self, plan: PlanNode) -> tuple[CacheHandle, Any]:
        """A lazily persisted batch result of ``plan``, and a frame reading it (``Table.cache()``)."""
        ...

    def frame_schema(self, frame: Any) -> tuple[tuple[str, DataType], ...]:
        """The column names and changeflow types of a DataFrame (``from_spark()``); raises if it is none."""
        ...

    # --- DataStream API ---------------------------------------------------------------
    def check_frame(self, frame: Any, what: str) -> None:
        """Raises a TypeError naming ``what`` unless ``frame`` is a DataFrame this runtime can read."""
        ...

    def run_datastream(self, outputs: list[tuple[Any, Any]], streaming: bool, job_name: str | None,
                       caches: Any, runtime_context: Any) -> None:
        """Runs the DataStream job whose sinks are ``outputs`` (graph node, sink); ``caches`` is the
        environment's :class:`~changeflow.plan.stream_caches.CacheRegistry`; ``runtime_context`` builds
        the context user functions' ``open()`` gets (the API's ``RuntimeContext``)."""
        ...


def spark_engine(configuration: Configuration, spark_session: Any = None) -> Engine:
    """The engine that runs jobs on Spark: on ``spark_session`` if given, else on one it creates when a job
    first needs it, set up from ``configuration`` (``changeflow.spark.master`` & co)."""
    # Imported here, the one place a front end reaches the Spark runtime: pyspark loads only when an
    # environment first needs its engine (see the module docs and .importlinter).
    from changeflow.runtime.spark.engine import SparkEngine

    return SparkEngine(configuration, spark_session)
