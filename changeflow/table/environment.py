"""``EnvironmentSettings`` and ``TableEnvironment``, as in PyFlink.

The environment owns the configuration, the catalog of tables and views
(:mod:`changeflow.catalog`; DDL tables and ``create_temporary_view`` share it)
and (lazily, at the first execution) the SparkSession. Planning and
``explain()`` need no Spark at all. SQL statements run through
:mod:`changeflow.sql.statements`.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

import pandas as pd

from changeflow.catalog import Catalog, CatalogError, CatalogTable, CatalogView, identifier
from changeflow.common.configuration import Configuration
from changeflow.common.row_kind import RowKind
from changeflow.config import to_millis, validate_mini_batch
from changeflow.common.types import DataType, infer_type
from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import PlanNode, Project, Sink, Source
from changeflow.plan.type_inference import PlanError
from changeflow.table.result import TableResult
from changeflow.table.table import Table

_ids = itertools.count()


class EnvironmentSettings:
    """Whether the environment runs streaming (changelogs) or batch (final results)."""

    def __init__(self, streaming: bool = True, configuration: Configuration | None = None) -> None:
        self._streaming = streaming
        self._configuration = configuration or Configuration()

    @staticmethod
    def in_streaming_mode() -> "EnvironmentSettings":
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> "EnvironmentSettings":
        return EnvironmentSettings(False)

    @staticmethod
    def new_instance() -> "EnvironmentSettings.Builder":
        return EnvironmentSettings.Builder()

    def is_streaming_mode(self) -> bool:
        return self._streaming

    def get_configuration(self) -> Configuration:
        return self._configuration

    class Builder:
        def __init__(self) -> None:
            self._streaming = True
            self._configuration = Configuration()

        def in_streaming_mode(self) -> "EnvironmentSettings.Builder":
            self._streaming = True
            return self

        def in_batch_mode(self) -> "EnvironmentSettings.Builder":
            self._streaming = False
            return self

        def with_configuration(self, configuration: Configuration) -> "EnvironmentSettings.Builder":
            self._configuration = configuration
            return self

        def build(self) -> "EnvironmentSettings":
            return EnvironmentSettings(self._streaming, self._configuration)


class TableConfig:
    """Typed access to the environment's configuration (Flink's keys)."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration

    def set(self, key: str, value: Any) -> "TableConfig":
        """Set a key; unknown ``table.*`` / ``execution.*`` keys and bad values raise."""
        self._configuration.set(key, value)
        return self

    def get(self, key: str, default: Any = None) -> Any:
        """The value set for ``key`` as a string, else ``default`` (PyFlink's behaviour)."""
        if self._configuration.contains_key(key):
            return self._configuration.get_string(key, default)
        return default

    def get_configuration(self) -> Configuration:
        return self._configuration

    def add_configuration(self, configuration: Configuration) -> None:
        self._configuration.add_all(configuration)


class TableEnvironment:
    """Entry point of the Table API.

    >>> from changeflow.table import EnvironmentSettings, TableEnvironment
    >>> t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    >>> t_env.from_elements([(1, "a")], ["id", "name"]).get_schema().get_field_names()
    ['id', 'name']
    """

    def __init__(self, settings: EnvironmentSettings, spark_session: Any = None) -> None:
        self._settings = settings
        self._config = TableConfig(Configuration())
        self._config.add_configuration(settings.get_configuration())
        self._catalog = Catalog()
        self._spark = spark_session
        self._jobs = None
        self._table_caches: list = []  # Table.cache() results (changeflow.table.cache), released by close()

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
        rows = [tuple(e) for e in elements]
        names, types = _schema_of(rows, schema)
        for i, row in enumerate(rows):
            if len(row) != len(names):
                raise PlanError(f"element {i} {row!r} has {len(row)} fields, the schema has {len(names)}: {names}")
            if verify_schema:
                for name, t, value in zip(names, types, row):
                    if not _fits(value, t):
                        raise PlanError(f"element {i} {row!r}: column {name!r} of type {t} cannot hold "
                                        f"{value!r} ({type(value).__name__})")
        return Table(Source(f"elements_{next(_ids)}", tuple(zip(names, types)), "elements", rows), self)

    def from_pandas(self, pdf: pd.DataFrame, schema: Any = None) -> Table:
        """A table of a pandas DataFrame's rows."""
        if schema is None:
            names = [str(c) for c in pdf.columns]
            types = [_pandas_type(pdf[c]) for c in pdf.columns]
        else:
            names, types = _schema_of(list(pdf.itertuples(index=False, name=None)), schema)
            pdf = pdf.set_axis(names, axis=1)
        return Table(Source(f"pandas_{next(_ids)}", tuple(zip(names, types)), "pandas", pdf), self)

    def from_spark(self, df: Any) -> Table:
        """A table of a Spark DataFrame (a Spark interop beyond PyFlink)."""
        from changeflow.runtime.spark.spark_types import from_spark

        schema = tuple((f.name, from_spark(f.dataType, f.nullable)) for f in df.schema.fields)
        return Table(Source(f"spark_{next(_ids)}", schema, "spark", df), self)

    def create_temporary_view(self, view_path: str, table: Table) -> None:
        """Register ``table`` under ``view_path``; the name must be free, as in Flink."""
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

    def _insert_table(self, table_path: str, table: Table, conflict: str | None = None) -> TableResult:
        """``table.execute_insert(table_path)``: run ``INSERT INTO table_path`` of ``table``'s query."""
        return self._execute_insert(self._insert_plan(table_path, table.plan, conflict=conflict))

    def from_path(self, path: str) -> Table:
        """The table or view ``path`` (a DDL table reads its connector)."""
        return Table(self._resolve(path), self)

    def list_tables(self) -> list[str]:
        return self._catalog.list_tables()

    def list_views(self) -> list[str]:
        return self._catalog.list_views()

    def list_temporary_views(self) -> list[str]:
        return self._catalog.list_views()

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
        from changeflow.sql import statements

        return statements.execute(self, stmt)

    def explain_sql(self, stmt: str, *extra_details) -> str:
        """The plan of a query or an ``INSERT`` statement, as ``EXPLAIN`` prints it (PyFlink's name).

        Planning only: no job runs and no SparkSession starts. ``extra_details``
        (PyFlink's ``ExplainDetail`` values) are accepted; changelog modes are
        always shown.
        """
        from changeflow.sql import statements

        return statements.explain_text(self, stmt)

    def sql_query(self, query: str) -> Table:
        """A ``Table`` of a SQL query (``SELECT``, ``WITH``, ``VALUES``)."""
        from changeflow.sql import statements

        tokens = statements.statement_tokens(query)
        if tokens[0].text.upper() not in ("SELECT", "WITH", "VALUES", "("):
            raise statements.StatementError(f"sql_query() takes a query (SELECT, WITH or VALUES), got "
                                            f"{tokens[0].text!r}; run other statements with execute_sql()")
        return Table(statements.plan_sql_query(self, query), self)

    def _resolve(self, name: str) -> PlanNode:
        """The plan of a catalog object, for the SQL planner and ``from_path``."""
        entry = self._catalog.get(name)
        if isinstance(entry, CatalogView):
            if entry.table is not None:
                return entry.table.plan
            from changeflow.plan import builder
            from changeflow.sql import statements

            query, aliases = entry.query
            plan = statements.plan_sql_query(self, query)
            return builder.rename(plan, list(aliases)) if aliases else plan
        from changeflow.connectors import create_source

        return self._table_plan(entry, create_source(entry, self.streaming))

    def _table_plan(self, table: CatalogTable, connector: Any) -> PlanNode:
        """A DDL table read through ``connector``: the source, then its computed columns."""
        schema = table.schema
        read = tuple((c.name, c.data_type) for c in schema.columns if c.expression is None or c.proctime)
        source = Source(f"[{identifier(table.name).replace('.', ', ')}]", read, "connector", connector)
        computed = [c for c in schema.columns if c.expression is not None and not c.proctime]
        if not computed:
            return source
        from changeflow.sql.planner import plan_query

        hidden = f"__{table.name}_columns"
        items = ", ".join(f"`{c.name}`" if c.expression is None or c.proctime else f"({c.expression}) AS `{c.name}`"
                          for c in schema.columns)
        query = f"SELECT {items} FROM `{hidden}`"

        def resolve(name: str) -> PlanNode:
            return source if name == hidden else self._resolve(name)

        return plan_query(query, resolve)

    def _declared_schema(self, table: CatalogTable):
        """The table's declared schema with the types of its computed columns filled in."""
        from dataclasses import replace

        if all(c.expression is None or c.proctime for c in table.schema.columns):
            return table.schema
        types = self._table_plan(table, None).type_map()
        columns = tuple(c if c.expression is None or c.proctime else
                        replace(c, data_type=types[c.name], type_text=str(types[c.name].with_nullable(True)))
                        for c in table.schema.columns)
        return replace(table.schema, columns=columns)

    def _check_computed_columns(self, table: CatalogTable) -> None:
        """Plan a new table's computed columns, so a bad expression fails at CREATE as in Flink."""
        self._declared_schema(table)

    def _insert_plan(self, name: str, query: PlanNode, columns: list[str] | None = None,
                     conflict: str | None = None) -> Sink:
        """``INSERT INTO name [(columns)] query [ON CONFLICT DO conflict]``: the query cast to the sink's
        columns, the sink upsert materializer where the sink needs it
        (:mod:`changeflow.plan.rules.sink_materialize`), then the Sink."""
        from changeflow.plan.rules.sink_materialize import MaterializeSettings, plan_sink

        from changeflow.connectors import check_sink_input, create_sink
        from changeflow.plan.expressions import Column, Literal

        if not self._catalog.contains(name):
            raise CatalogError(f"Cannot find table '`default_catalog`.`default_database`.`{name}`' in any of the "
                               f"catalogs [default_catalog], nor as a temporary table. Known tables: "
                               f"{', '.join(self._catalog.list_tables()) or '(none)'}")
        entry = self._catalog.get(name)
        if not isinstance(entry, CatalogTable):
            raise CatalogError(f"cannot INSERT INTO view {name!r}; insert into a table declared by CREATE TABLE")
        sink = create_sink(entry, self.streaming)
        target = [(c.name, c.data_type) for c in entry.schema.physical_columns()]
        target_names = [n for n, _ in target]
        if columns is not None:
            for c in columns:
                if c not in target_names:
                    raise PlanError(f"Unknown target column '{c}' in INSERT INTO {name}; "
                                    f"columns: {', '.join(target_names)}")
        given = columns if columns is not None else target_names
        _check_insert_types(name, query.schema, [(n, dict(target)[n]) for n in given])
        by_target = dict(zip(given, query.field_names))
        exprs = []
        for n, t in target:
            if n in by_target:
                source_type = query.type_map()[by_target[n]]
                value = Column(by_target[n])
                # NOT NULL values fit a nullable column: only a change of type needs a cast.
                same = source_type.with_nullable(True) == t.with_nullable(True)
                exprs.append((n, value if same else value.cast(t)))
            else:
                if not t.nullable:
                    raise PlanError(f"column {n!r} of {name} is NOT NULL and not given by the INSERT column list")
                exprs.append((n, Literal(None, t)))
        projected = Project(query, tuple(exprs), tuple(target))
        plan = Sink(projected, identifier(name), sink, entry.schema.primary_key, conflict)
        check_sink_input(plan)
        return plan_sink(plan, MaterializeSettings.from_configuration(self._config.get_configuration(),
                                                                      self.streaming))

    def _execute_insert(self, plan: Sink) -> TableResult:
        jobs = self._spark_jobs()
        if self._runs_streaming(plan):
            # Flink's name for an INSERT job; under changeflow.checkpoint-dir it names the checkpoint.
            name = self._option("pipeline.name") or f"insert-into_{plan.table}"
            job = jobs.submit_streaming_insert(plan, self._streaming_settings(), name,
                                               self._option("table.exec.sink.not-null-enforcer"))
        else:
            job = jobs.submit_batch_insert(plan, self._option("table.exec.sink.not-null-enforcer"))
        return TableResult.of_job(job, [plan.table])

    def _reset_configuration(self, key: str | None = None) -> None:
        """``RESET ['key']``: back to the value the environment was created with."""
        conf = self._config.get_configuration()
        initial = self._settings.get_configuration()
        for k in ([key] if key is not None else sorted(conf.keys())):
            if initial.contains_key(k):
                conf.set(k, initial.get_string(k, ""))
            else:
                conf.remove_config(k)

    # --- execution ----------------------------------------------------------------------
    def _option(self, key: str) -> Any:
        """The typed value of ``key``: as set, or the option's default."""
        return self._config.get_configuration().get(key)

    @property
    def streaming(self) -> bool:
        """Whether sources are planned as in streaming mode (AUTOMATIC plans them so, then picks per query)."""
        if self._config.get_configuration().contains_key("execution.runtime-mode"):
            return self._option("execution.runtime-mode") != "BATCH"
        return self._settings.is_streaming_mode()

    def _runs_streaming(self, plan: PlanNode) -> bool:
        """``execution.runtime-mode``: STREAMING or BATCH as set; AUTOMATIC is BATCH unless a source never ends."""
        if self._config.get_configuration().contains_key("execution.runtime-mode") and \
                self._option("execution.runtime-mode") == "AUTOMATIC":
            from changeflow.plan.boundedness import unbounded_sources

            return bool(unbounded_sources(plan))
        return self.streaming

    def _mini_batch(self) -> tuple[bool, int, int]:
        """(enabled, allow-latency in ms, size), validated together as Flink's planner does."""
        conf = self._config.get_configuration()
        enabled = bool(self._option("table.exec.mini-batch.enabled"))
        if enabled:
            validate_mini_batch(conf)
        latency_ms = to_millis(self._option("table.exec.mini-batch.allow-latency"))
        return enabled, latency_ms, int(self._option("table.exec.mini-batch.size"))

    def _explain(self, plan: PlanNode) -> str:
        from changeflow.plan.flush_policy import flush_policy

        enabled, latency, size = self._mini_batch()
        flush = flush_policy(self._config.get_configuration())
        return explain(plan, ExplainSettings(self._runs_streaming(plan), enabled, latency, size,
                                             str(self._option("table.optimizer.agg-phase-strategy")),
                                             flush_interval_ms=None if flush is None else flush.interval_ms,
                                             flush_memory_only=flush is not None and flush.memory_only,
                                             state_ttl_ms=to_millis(self._option("table.exec.state.ttl"))))

    def _spark_jobs(self):
        if self._jobs is None:
            from changeflow.runtime.spark import session
            from changeflow.runtime.spark.jobs import SparkJobs

            if self._spark is None:
                self._spark = session.get_or_create(self._option("changeflow.spark.master"),
                                                    ship_package=self._option("changeflow.ship-package"))
            else:
                session.check(self._spark, self._option("changeflow.ship-package"))
            self._jobs = SparkJobs(self._spark, self._option("changeflow.checkpoint-dir"))
        return self._jobs

    def _streaming_settings(self):
        from changeflow.plan.flush_policy import flush_policy
        from changeflow.runtime.spark.streaming import StreamingSettings

        enabled, _, size = self._mini_batch()
        rows = size if enabled else int(self._option("changeflow.source.rows-per-batch"))
        return StreamingSettings(mini_batch=enabled, rows_per_batch=rows,
                                 buckets=int(self._option("changeflow.state.buckets")), pages=64,
                                 agg_phase_strategy=str(self._option("table.optimizer.agg-phase-strategy")),
                                 flush=flush_policy(self._config.get_configuration()),
                                 state_ttl_ms=to_millis(self._option("table.exec.state.ttl")))

    def _execute(self, plan: PlanNode) -> TableResult:
        jobs = self._spark_jobs()
        streaming = self._runs_streaming(plan)
        if streaming:
            from changeflow.runtime.spark.connector_sources import trigger_interval_ms

            if trigger_interval_ms(plan) is not None:  # unbounded input: read the changes while it runs
                return TableResult(plan.schema, [], True, live=jobs.start_live(plan, self._streaming_settings()))
            changes = jobs.run_streaming(plan, self._streaming_settings())
        else:
            changes = jobs.run_batch(plan)
        return TableResult(plan.schema, changes, streaming)

    def _to_spark(self, plan: PlanNode):
        from pyspark.sql import functions as F

        from changeflow.kernels.changelog import KIND, SEQ, SUB
        from changeflow.runtime.spark.job_directory import temporary_directory

        jobs = self._spark_jobs()
        names = [F.col(f"`{n}`") for n in plan.field_names]
        if not self._runs_streaming(plan):
            return jobs.batch_frame(plan).select(*names)
        workdir = temporary_directory(self._option("changeflow.checkpoint-dir"))
        frame = jobs.streaming_frame(plan, self._streaming_settings(), workdir)
        # _kind holds RowKind values 0..3; element_at counts from 1.
        op = F.element_at(F.array(*[F.lit(str(kind)) for kind in RowKind]), F.col(KIND).cast("int") + 1)
        return frame.select(op.alias("op"), *names, SEQ, SUB)


def _check_insert_types(name: str, query_schema, sink_schema) -> None:
    """Flink's check that a query's columns fit the sink's, with its message."""
    def show(schema) -> str:
        return "[" + ", ".join(f"{n}: {t}" for n, t in schema) + "]"

    cause = None
    if len(query_schema) != len(sink_schema):
        cause = "Different number of columns."
    else:
        for i, ((_, q), (sink_name, t)) in enumerate(zip(query_schema, sink_schema)):
            if not _assignable(q, t):
                cause = f"Incompatible types for sink column '{sink_name}' at position {i + 1}."
                break
    if cause is not None:
        raise PlanError(f"Column types of query result and sink for '{identifier(name)}' do not match.\n"
                        f"Cause: {cause}\n\nQuery schema: {show(query_schema)}\nSink schema:  {show(sink_schema)}")


def _assignable(source: DataType, target: DataType) -> bool:
    """Whether Flink inserts a value of ``source`` into a column of ``target`` (an implicit cast)."""
    if source.root == target.root or (source.is_string and target.is_string):
        return True
    if source.is_numeric and target.is_numeric:
        return True
    return source.root == "DATE" and target.root == "TIMESTAMP"


def _schema_of(rows: list[tuple], schema: Any) -> tuple[list[str], list[DataType]]:
    if isinstance(schema, DataType) and schema.root == "ROW":
        return [n for n, _ in schema.params], [t for _, t in schema.params]
    width = len(rows[0]) if rows else len(schema or [])
    names = list(schema) if schema is not None else [f"_{i + 1}" for i in range(width)]
    types = []
    for i, name in enumerate(names):
        sample = next((r[i] for r in rows if i < len(r) and r[i] is not None), None)
        if sample is None:
            raise PlanError(f"cannot infer the type of column {name!r}: it has no non-null value; "
                            "pass a schema such as DataTypes.ROW([DataTypes.FIELD(...)])")
        types.append(infer_type(sample))
    return names, types


_PYTHON_TYPES = {
    "BOOLEAN": (bool,), "TINYINT": (int,), "SMALLINT": (int,), "INT": (int,), "BIGINT": (int,),
    "FLOAT": (int, float), "DOUBLE": (int, float), "STRING": (str,), "VARCHAR": (str,), "CHAR": (str,),
}
_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def _fits(value: Any, t: DataType) -> bool:
    """Whether a Python value can be a value of column type ``t``."""
    if value is None:
        return t.nullable
    accepted = _PYTHON_TYPES.get(t.root)
    if accepted is None:
        return True  # dates, decimals and the like: Arrow checks them when the source is read
    if isinstance(value, bool) and t.root != "BOOLEAN":
        return False
    if not isinstance(value, accepted):
        return False
    if t.root in _RANGES:
        bits = _RANGES[t.root]
        return -(1 << (bits - 1)) <= value < (1 << (bits - 1))
    return True


def _pandas_type(series: pd.Series) -> DataType:
    from changeflow.common.types import DataTypes

    kind = series.dtype.kind
    if kind == "b" or str(series.dtype) == "boolean":
        return DataTypes.BOOLEAN()
    if kind in "iu" or str(series.dtype).startswith("Int"):
        return DataTypes.BIGINT()
    if kind == "f":
        return DataTypes.DOUBLE()
    if kind == "M":
        return DataTypes.TIMESTAMP(6)
    sample = series.dropna()
    return infer_type(sample.iloc[0]) if len(sample) else DataTypes.STRING()
