"""``TableEnvironment``, as in PyFlink (``EnvironmentSettings`` and ``TableConfig``: :mod:`.settings`).

The environment owns the configuration, the catalog of tables and views
(:mod:`changeflow.catalog`; DDL tables and ``create_temporary_view`` share it)
and its engine (:mod:`changeflow.runtime.engine`), which runs jobs and owns
the SparkSession. Planning and ``explain()`` need no Spark at all: they go
through the environment's :class:`~changeflow.table.planning.PlanningContext`,
which SQL statements (:mod:`changeflow.sql.statements`) run against too.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from changeflow.catalog import Catalog, CatalogView
from changeflow.common.configuration import Configuration
from changeflow.plan.nodes import PlanNode, Sink
from changeflow.runtime.engine import Engine, spark_engine
from changeflow.sql import statements
from changeflow.sql.session import Done, Explained, Outcome, RunInsert, RunQuery, Shown
from changeflow.table.catalog_methods import CatalogMethods
from changeflow.table.elements import elements_source, pandas_source, spark_source
from changeflow.table.functions_env import FunctionMethods
from changeflow.table.planning import PlanningContext
from changeflow.table.result import TableResult
from changeflow.table.settings import EnvironmentSettings, TableConfig
from changeflow.table.table import Table

__all__ = ["EnvironmentSettings", "TableConfig", "TableEnvironment"]


class TableEnvironment(FunctionMethods, CatalogMethods):
    """Entry point of the Table API (function registration: :mod:`.functions_env`; catalogs: :mod:`.catalog_methods`).

    >>> from changeflow.table import EnvironmentSettings, TableEnvironment
    >>> t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    >>> t_env.from_elements([(1, "a")], ["id", "name"]).get_schema().get_field_names()
    ['id', 'name']
    """

    def __init__(self, settings: EnvironmentSettings, spark_session: Any = None) -> None:
        self._settings = settings
        self._config = TableConfig(Configuration())
        self._config.add_configuration(settings.get_configuration())
        self._planning = PlanningContext(settings, self._config.get_configuration(), Catalog())
        self._catalog = self._planning.catalog
        self._spark_session = spark_session  # the user's SparkSession, held opaquely for the engine
        self._engine_instance: Engine | None = None
        self._table_caches: list = []  # Table.cache() handles (changeflow.table.cache), released by close()

    @staticmethod
    def create(environment_settings: EnvironmentSettings | Configuration | None = None,
               spark_session: Any = None) -> "TableEnvironment":
        """A new environment; pass ``spark_session`` to run on an existing SparkSession."""
        if isinstance(environment_settings, Configuration):
            mode = str(environment_settings.get("execution.runtime-mode", "STREAMING")).upper()
            environment_settings = EnvironmentSettings(mode != "BATCH", environment_settings)
        return TableEnvironment(environment_settings or EnvironmentSettings.in_streaming_mode(), spark_session)

    def get_config(self) -> TableConfig:
        return self._config

    # --- sources ------------------------------------------------------------------------
    def from_elements(self, elements: Iterable, schema: Any = None, verify_schema: bool = True) -> Table:
        """A table of Python tuples (or Rows); ``schema`` is column names or a ROW type."""
        return Table(elements_source(elements, schema, verify_schema), self)

    def from_pandas(self, pdf: pd.DataFrame, schema: Any = None) -> Table:
        """A table of a pandas DataFrame's rows."""
        return Table(pandas_source(pdf, schema), self)

    def from_spark(self, df: Any) -> Table:
        """A table of a Spark DataFrame (a Spark interop beyond PyFlink)."""
        return Table(spark_source(self._engine().frame_schema(df), df), self)

    def create_temporary_view(self, view_path: str, table: Table) -> None:
        """Register ``table`` under ``view_path`` (``v``, ``db.v`` or ``c.db.v``); the name must be free."""
        self._catalog.create_view(CatalogView(view_path, True, table=table))

    def create_temporary_table(self, path: str, descriptor) -> None:
        """Register a connector table described by a ``TableDescriptor`` (as ``CREATE TEMPORARY TABLE``)."""
        self._catalog.create_table(descriptor.catalog_table(path, temporary=True))

    def create_table(self, path: str, descriptor) -> None:
        """Register a connector table described by a ``TableDescriptor`` (as ``CREATE TABLE``)."""
        self._catalog.create_table(descriptor.catalog_table(path, temporary=False))

    def close(self) -> None:
        """Releases every cached table of this environment (``Table.cache()``, beyond PyFlink)."""
        caches, self._table_caches = self._table_caches, []
        for handle in caches:
            handle.release()

    def from_path(self, path: str) -> Table:
        """The table or view ``path`` (a DDL table reads its connector)."""
        return Table(self._planning.resolve(path), self)

    def list_tables(self) -> list[str]:
        """The tables and views of the current database (temporary ones included)."""
        return self._catalog.list_tables()

    def list_views(self) -> list[str]:
        """The views of the current database (temporary ones included)."""
        return self._catalog.list_views()

    def list_temporary_views(self) -> list[str]:
        """The temporary views of the current database."""
        return self._catalog.list_temporary(CatalogView)

    def drop_temporary_view(self, view_path: str) -> bool:
        return self._catalog.drop_view(view_path, if_exists=True, temporary=True)

    def drop_temporary_table(self, table_path: str) -> bool:
        return self._catalog.drop_table(table_path, if_exists=True, temporary=True)

    # --- SQL ----------------------------------------------------------------------------
    def execute_sql(self, stmt: str) -> TableResult:
        """Run one SQL statement: a query, INSERT, DDL, SET/RESET, EXPLAIN, SHOW or DESCRIBE.

        >>> from changeflow.table import EnvironmentSettings, TableEnvironment
        >>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        >>> t_env.execute_sql("CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'blackhole')").print()
        OK
        >>> t_env.execute_sql("SHOW TABLES").print()
        +------------+
        | table name |
        +------------+
        |          t |
        +------------+
        1 row in set
        """
        from changeflow.table.statement_set import StatementSet, split_statement_set

        inserts = split_statement_set(stmt)
        if inserts is not None:  # EXECUTE STATEMENT SET BEGIN INSERT ...; ...; END: one job
            statement_set = StatementSet(self)
            for insert in inserts:
                statement_set.add_insert_sql(insert)
            return statement_set.execute()
        return self._result(statements.execute(self._planning, stmt))

    def create_statement_set(self):
        """A :class:`~changeflow.table.statement_set.StatementSet`: several INSERTs run as one job."""
        from changeflow.table.statement_set import StatementSet

        return StatementSet(self)

    def explain_sql(self, stmt: str, *extra_details) -> str:
        """The plan of a query or an ``INSERT`` statement, as ``EXPLAIN`` prints it (PyFlink's name).

        Planning only: no job runs and no SparkSession starts. ``extra_details``
        (PyFlink's ``ExplainDetail`` values) are accepted; changelog modes are
        always shown.
        """
        return statements.explain_text(self._planning, stmt)

    def sql_query(self, query: str) -> Table:
        """A ``Table`` of a SQL query (``SELECT``, ``WITH``, ``VALUES``)."""
        tokens = statements.statement_tokens(query)
        if tokens[0].text.upper() not in ("SELECT", "WITH", "VALUES", "("):
            raise statements.StatementError(f"sql_query() takes a query (SELECT, WITH or VALUES), got "
                                            f"{tokens[0].text!r}; run other statements with execute_sql()")
        return Table(statements.plan_sql_query(self._planning, query), self)

    def _result(self, outcome: Outcome) -> TableResult:
        """A statement's outcome as PyFlink's ``TableResult``: queries and INSERTs run here."""
        if isinstance(outcome, RunQuery):
            return self._execute(outcome.plan)
        if isinstance(outcome, RunInsert):
            return self._execute_insert(outcome.plan)
        if isinstance(outcome, Shown):
            return TableResult.of_rows(outcome.schema, outcome.rows)
        if isinstance(outcome, Explained):
            return TableResult.of_text(outcome.text)
        assert isinstance(outcome, Done), outcome
        return TableResult.ok()

    # --- planning, for Table and the tests ----------------------------------------------
    @property
    def streaming(self) -> bool:
        """Whether sources are planned as in streaming mode (AUTOMATIC plans them so, then picks per query)."""
        return self._planning.streaming

    def _resolve(self, name: str) -> PlanNode:
        return self._planning.resolve(name)

    def _insert_plan(self, name: str, query: PlanNode, columns: list[str] | None = None,
                     conflict: str | None = None) -> Sink:
        return self._planning.insert_plan(name, query, columns, conflict)

    def _explain(self, plan: PlanNode) -> str:
        return self._planning.explain(plan)

    # --- execution ----------------------------------------------------------------------
    def _engine(self) -> Engine:
        """The engine running this environment's jobs (no Spark starts until a job needs it)."""
        if self._engine_instance is None:
            self._engine_instance = spark_engine(self._config.get_configuration(), self._spark_session)
        return self._engine_instance

    def _execute(self, plan: PlanNode) -> TableResult:
        streaming = self._planning.runs_streaming(plan)
        run = self._engine().run_query(plan, streaming)
        if run.live is not None:  # unbounded input: the result reads the changes while the query runs
            return TableResult(plan.schema, [], True, live=run.live)
        return TableResult(plan.schema, run.changes, streaming)

    def _insert_table(self, table_path: str, table: Table, conflict: str | None = None) -> TableResult:
        """``table.execute_insert(table_path)``: run ``INSERT INTO table_path`` of ``table``'s query."""
        return self._execute_insert(self._planning.insert_plan(table_path, table.plan, conflict=conflict))

    def _execute_insert(self, plan: Sink) -> TableResult:
        streaming = self._planning.runs_streaming(plan)
        # Flink's name for an INSERT job; under changeflow.checkpoint-dir it names the checkpoint.
        name = (self._planning.option("pipeline.name") or f"insert-into_{plan.table}") if streaming else None
        return self._submitted(TableResult.of_job(self._engine().submit_insert(plan, streaming, name), [plan.table]))

    def _submitted(self, result: TableResult) -> TableResult:
        """An INSERT job's result; with ``table.dml-sync``, once the job has finished (raising its error)."""
        if self._planning.option("table.dml-sync"):
            result.wait()
        return result

    def _to_spark(self, plan: PlanNode) -> Any:
        return self._engine().to_frame(plan, self._planning.runs_streaming(plan))
