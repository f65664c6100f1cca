"""PyFlink's ``JdbcSink``: a DML statement run for each record, against PostgreSQL.

::

    stream.add_sink(JdbcSink.sink(
        "INSERT INTO books (id, title) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title",
        Types.ROW([Types.INT(), Types.STRING()]),
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
            .with_url("jdbc:postgresql://db:5432/shop").with_driver_name("org.postgresql.Driver")
            .with_user_name("writer").with_password("...").build(),
        JdbcExecutionOptions.builder().with_batch_size(1000).with_max_retries(3).build()))

Each record's fields (a ``Row`` or a tuple, in the order of ``type_info``) are bound to the
statement's ``?`` parameters in order. As the ``jdbc`` table connector, changeflow reaches
PostgreSQL only (psycopg; ``driver_name`` may only name PostgreSQL's driver). Where it differs from
Flink: each micro-batch is one transaction, recorded so that a restarted job does not run its
statements again (exactly once; Flink's ``JdbcSink.sink`` is at least once), and records are
written when the micro-batch commits, so ``batch_interval_ms`` has no effect (``batch_size``
chunks the statements within the transaction; ``max_retries`` retries a lost connection).
"""

from __future__ import annotations

from typing import Any

from changeflow.connectors.jdbc_statement_sink import StatementSink
from changeflow.connectors.jdbc_url import conninfo
from changeflow.connectors.sink_job import SinkJob
from changeflow.datastream.connectors.base import Sink

__all__ = ["JdbcConnectionOptions", "JdbcExecutionOptions", "JdbcSink"]

_DRIVERS = ("org.postgresql.Driver",)


class JdbcConnectionOptions:
    """Where the sink connects: a ``jdbc:postgresql://`` url, the driver's class, user and password."""

    def __init__(self, url: str | None, driver_name: str | None, user_name: str | None,
                 password: str | None) -> None:
        self._url, self._driver, self._user, self._password = url, driver_name, user_name, password

    def get_db_url(self) -> str | None:
        return self._url

    def get_driver_name(self) -> str | None:
        return self._driver

    def get_user_name(self) -> str | None:
        return self._user

    def get_password(self) -> str | None:
        return self._password

    class JdbcConnectionOptionsBuilder:
        def __init__(self) -> None:
            self._values: dict[str, str | None] = {"url": None, "driver_name": None, "user_name": None,
                                                   "password": None}

        def _set(self, name: str, value: str) -> "JdbcConnectionOptions.JdbcConnectionOptionsBuilder":
            self._values[name] = value
            return self

        def with_url(self, url: str) -> "JdbcConnectionOptions.JdbcConnectionOptionsBuilder":
            return self._set("url", url)

        def with_driver_name(self, driver_name: str) -> "JdbcConnectionOptions.JdbcConnectionOptionsBuilder":
            return self._set("driver_name", driver_name)

        def with_user_name(self, user_name: str) -> "JdbcConnectionOptions.JdbcConnectionOptionsBuilder":
            return self._set("user_name", user_name)

        def with_password(self, password: str) -> "JdbcConnectionOptions.JdbcConnectionOptionsBuilder":
            return self._set("password", password)

        def build(self) -> "JdbcConnectionOptions":
            """The options; as Flink, the url is required (``jdbc url is empty``)."""
            if not self._values["url"]:
                raise ValueError("jdbc url is empty")
            return JdbcConnectionOptions(**self._values)


class JdbcExecutionOptions:
    """How the sink batches and retries: Flink's defaults are 5000 records, 0 ms and 3 retries."""

    def __init__(self, batch_interval_ms: int = 0, batch_size: int = 5000, max_retries: int = 3) -> None:
        if max_retries < 0:
            raise ValueError("max retries must be non-negative")  # Flink's JdbcExecutionOptions check
        self._interval, self._size, self._retries = batch_interval_ms, batch_size, max_retries

    def get_batch_interval_ms(self) -> int:
        return self._interval

    def get_batch_size(self) -> int:
        return self._size

    def get_max_retries(self) -> int:
        return self._retries

    @staticmethod
    def defaults() -> "JdbcExecutionOptions":
        return JdbcExecutionOptions()

    @staticmethod
    def builder() -> "JdbcExecutionOptions.Builder":
        return JdbcExecutionOptions.Builder()

    class Builder:
        def __init__(self) -> None:
            self._values = {"batch_interval_ms": 0, "batch_size": 5000, "max_retries": 3}

        def with_batch_size(self, size: int) -> "JdbcExecutionOptions.Builder":
            self._values["batch_size"] = size
            return self

        def with_batch_interval_ms(self, interval_ms: int) -> "JdbcExecutionOptions.Builder":
            self._values["batch_interval_ms"] = interval_ms
            return self

        def with_max_retries(self, max_retries: int) -> "JdbcExecutionOptions.Builder":
            self._values["max_retries"] = max_retries
            return self

        def build(self) -> "JdbcExecutionOptions":
            return JdbcExecutionOptions(**self._values)


class JdbcSink(Sink):
    """Runs a DML statement for each record of a stream (see the module docstring); ``add_sink`` or
    ``sink_to`` it."""

    def __init__(self, sql: str, type_info: Any, connection: JdbcConnectionOptions,
                 execution: JdbcExecutionOptions) -> None:
        url = connection.get_db_url() or ""
        try:
            conninfo(url)
        except ValueError as e:
            raise ValueError(f"JdbcSink: url {url!r}: {e}") from None
        driver = connection.get_driver_name()
        if driver is not None and driver not in _DRIVERS:
            raise NotImplementedError(f"JdbcSink: driver {driver!r}: changeflow writes to PostgreSQL only "
                                      f"({', '.join(_DRIVERS)})")
        self.type_info = type_info
        self._sink = StatementSink(url, connection.get_user_name(), connection.get_password(), sql,
                                   max(1, execution.get_batch_size()), execution.get_max_retries())
        self._job: SinkJob | None = None

    @staticmethod
    def sink(sql: str, type_info: Any, jdbc_connection_options: JdbcConnectionOptions,
             jdbc_execution_options: JdbcExecutionOptions | None = None) -> "JdbcSink":
        """PyFlink's factory: ``sql`` with ``?`` parameters, ``type_info`` the records' ``RowTypeInfo``."""
        return JdbcSink(sql, type_info, jdbc_connection_options,
                        jdbc_execution_options or JdbcExecutionOptions.defaults())

    # --- the sink contract (changeflow.datastream.sinks; runtime: open_job / write_batch) ---
    def open_job(self, job: SinkJob) -> None:
        """The job writing this sink: its writer id (stable across restarts), the statement and which sink of
        the job with that statement this is (the job opens its sinks in one order) name its committed
        micro-batches, so two sinks running one statement do not share a record."""
        self._job = job
        occurrence = job.occurrence(f"jdbc-sink:{self._sink.statement}")
        self._sink.open(f"{job.writer}:jdbc-sink:{occurrence}:{self._sink.statement}")

    def write(self, records: list[Any]) -> None:
        self.write_batch(records, None)

    def write_batch(self, records: list[Any], batch_id: int | None) -> None:
        """One micro-batch's records as one transaction (``batch_id`` None: a batch job's result)."""
        if records:
            self._sink.write([tuple(r) for r in records], batch_id if self._job is not None else None)
