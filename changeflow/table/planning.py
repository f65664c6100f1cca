"""The planning half of a ``TableEnvironment``: catalog, configuration and mode; no Spark.

:class:`PlanningContext` resolves catalog names to plans, plans an ``INSERT``
down to its sink and prints EXPLAIN. SQL statements run against it (it is the
:class:`~changeflow.sql.session.StatementSession` of :mod:`changeflow.sql`), and
the environment's Table API methods use it too, so both see one catalog and
one configuration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from changeflow.catalog import Catalog, CatalogError, CatalogTable, CatalogView, DeclaredSchema
from changeflow.common.configuration import Configuration
from changeflow.common.types import DataType
from changeflow.config import to_millis, validate_mini_batch
from changeflow.config.flink_keys import no_effect_keys
from changeflow.plan.flush_policy import flush_policy
from changeflow.connectors import check_sink_input, create_sink, create_source
from changeflow.plan import builder
from changeflow.plan.boundedness import unbounded_sources
from changeflow.plan.event_time import assign_watermark, plain_time
from changeflow.plan.explain import ExplainSettings, explain
from changeflow.expressions import Column, Literal
from changeflow.plan.nodes import PlanNode, Project, Sink, Source
from changeflow.plan.rules.sink_materialize import MaterializeSettings, plan_sink
from changeflow.plan.type_inference import PlanError
from changeflow.sql import statements
from changeflow.sql.ddl import check_rowtime_type
from changeflow.sql.planner import plan_query
from changeflow.table.functions_env import register_function
from changeflow.table.settings import EnvironmentSettings

__all__ = ["PlanningContext"]


class PlanningContext:
    """Catalog, configuration and mode of one environment, and the planning steps that need them."""

    def __init__(self, settings: EnvironmentSettings, configuration: Configuration, catalog: Catalog) -> None:
        self._settings = settings
        self._configuration = configuration
        self._catalog = catalog

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    @property
    def configuration(self) -> Configuration:
        return self._configuration

    def option(self, key: str) -> Any:
        """The typed value of ``key``: as set, or the option's default."""
        return self._configuration.get(key)

    # --- mode ---------------------------------------------------------------------------
    @property
    def streaming(self) -> bool:
        """Whether sources are planned as in streaming mode (AUTOMATIC plans them so, then picks per query)."""
        if self._configuration.contains_key("execution.runtime-mode"):
            return self.option("execution.runtime-mode") != "BATCH"
        return self._settings.is_streaming_mode()

    def runs_streaming(self, plan: PlanNode) -> bool:
        """``execution.runtime-mode``: STREAMING or BATCH as set; AUTOMATIC is BATCH unless a source never ends."""
        if self._configuration.contains_key("execution.runtime-mode") and \
                self.option("execution.runtime-mode") == "AUTOMATIC":
            return bool(unbounded_sources(plan))
        return self.streaming

    def register_function(self, name: str, function: Any, system: bool, if_not_exists: bool) -> None:
        """SQL's ``CREATE [TEMPORARY [SYSTEM]] FUNCTION ... LANGUAGE PYTHON``."""
        register_function(self._catalog.functions, name, function, system, if_not_exists)

    def reset_option(self, key: str | None = None) -> None:
        """``RESET ['key']``: back to the value the environment was created with."""
        initial = self._settings.get_configuration()
        for k in ([key] if key is not None else sorted(self._configuration.keys())):
            if initial.contains_key(k):
                self._configuration.set(k, initial.get_string(k, ""))
            else:
                self._configuration.remove_config(k)

    # --- catalog objects as plans -------------------------------------------------------
    def resolve(self, name: str) -> PlanNode:
        """The plan of a catalog object, for the SQL planner and ``from_path``."""
        entry = self._catalog.get(name)
        if isinstance(entry, CatalogView):
            if entry.table is not None:
                return entry.table.plan
            query, aliases = entry.query
            with self._catalog.scoped(entry.scope):  # its names resolve where the view was made, as in Flink
                plan = statements.plan_sql_query(self, query)
            return builder.rename(plan, list(aliases)) if aliases else plan
        return self.table_plan(entry, create_source(entry, self.streaming))

    def table_plan(self, table: CatalogTable, connector: Any) -> PlanNode:
        """A DDL table read through ``connector``: the source, then its computed columns, then its watermark."""
        schema = table.schema
        read = tuple((c.name, c.data_type) for c in schema.columns if c.expression is None or c.proctime)
        source = Source(f"[{table.identifier.replace('.', ', ')}]", read, "connector", connector,
                        primary_key=tuple(schema.primary_key), ltz_columns=_ltz_columns(schema.columns))
        return self.declared_plan(source, schema, f"__{table.name}_columns", f"table {table.name}")

    def declared_plan(self, source: PlanNode, schema: DeclaredSchema, hidden: str, what: str) -> PlanNode:
        """``source``'s rows as ``schema`` declares them: its columns in order (the computed ones planned over
        the source's columns), then its watermark. ``hidden`` names the source in the planned SQL; ``what``
        names the table in errors."""
        computed = [c for c in schema.columns if c.expression is not None and not c.proctime]
        plan: PlanNode = source
        if computed:
            items = ", ".join(f"`{c.name}`" if c.expression is None or c.proctime
                              else f"({c.expression}) AS `{c.name}`" for c in schema.columns)
            plan = self._plan_over(f"SELECT {items} FROM `{hidden}`", hidden, source)
        if schema.watermark is None:
            return plan
        # WATERMARK FOR ts AS expr: the expression planned over the table's columns (computed ones included).
        wm = schema.watermark
        if "SOURCE_WATERMARK" in wm.expression.upper():
            raise PlanError(f"WATERMARK FOR {wm.column} AS SOURCE_WATERMARK() ({what}) is not supported: "
                            f"no changeflow source emits watermarks of its own; declare the watermark as an "
                            f"expression, e.g. WATERMARK FOR {wm.column} AS {wm.column} - INTERVAL '5' SECOND")
        check_rowtime_type(plan.type_map()[wm.column])  # a computed column's type is known only now
        over = plan
        project = self._plan_over(f"SELECT ({wm.expression}) AS `__watermark` FROM `{hidden}`", hidden, over)
        assert isinstance(project, Project), "a one-column SELECT plans as a projection"
        return assign_watermark(over, wm.column, project.exprs[0][1], wm.display_expression)

    def _plan_over(self, query: str, hidden: str, plan: PlanNode) -> PlanNode:
        """``query`` planned with the table name ``hidden`` standing for ``plan``."""

        def resolve(name: str) -> PlanNode:
            return plan if name == hidden else self.resolve(name)

        return plan_query(query, resolve)

    def declared_schema(self, table: CatalogTable) -> DeclaredSchema:
        """The table's declared schema with the types of its computed columns filled in.

        Plans the computed columns, so a bad expression raises (at CREATE TABLE, as in Flink).
        """
        if all(c.expression is None or c.proctime for c in table.schema.columns):
            return table.schema
        types = {n: plain_time(t) for n, t in self.table_plan(table, None).schema}  # DESCRIBE marks the rowtime
        columns = tuple(c if c.expression is None or c.proctime else
                        replace(c, data_type=types[c.name], type_text=str(types[c.name].with_nullable(True)))
                        for c in table.schema.columns)
        return replace(table.schema, columns=columns)

    # --- INSERT and EXPLAIN -------------------------------------------------------------
    def insert_plan(self, name: str, query: PlanNode, columns: list[str] | None = None,
                    conflict: str | None = None) -> Sink:
        """``INSERT INTO name [(columns)] query [ON CONFLICT DO conflict]``: the query cast to the sink's
        columns, the sink upsert materializer where the sink needs it
        (:mod:`changeflow.plan.rules.sink_materialize`), then the Sink."""
        entry = self._catalog.find(name)
        if entry is None:
            path = self._catalog.qualify(name)
            known = ", ".join(self._catalog.list_tables(path.catalog, path.database)) or "(none)"
            raise CatalogError(f"Cannot find table '{path.quoted}' in any of the catalogs "
                               f"[{', '.join(self._catalog.list_catalogs())}], nor as a temporary table. Known "
                               f"tables: {known}")
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
        _check_insert_types(entry.identifier, query.schema, [(n, dict(target)[n]) for n in given])
        by_target = dict(zip(given, query.field_names, strict=True))
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
        plan = Sink(projected, entry.identifier, sink, entry.schema.primary_key, conflict,
                    ltz_columns=_ltz_columns(entry.schema.physical_columns()))
        if self.runs_streaming(plan):  # a batch job writes its final rows, insert-only, to any sink
            check_sink_input(plan)
        return plan_sink(plan, MaterializeSettings.from_configuration(self._configuration, self.streaming))

    def mini_batch(self) -> tuple[bool, int, int]:
        """(enabled, allow-latency in ms, size), validated together as Flink's planner does."""
        enabled = bool(self.option("table.exec.mini-batch.enabled"))
        if enabled:
            validate_mini_batch(self._configuration)
        latency_ms = to_millis(self.option("table.exec.mini-batch.allow-latency"))
        return enabled, latency_ms, int(self.option("table.exec.mini-batch.size"))

    def explain(self, plan: PlanNode) -> str:
        """The plan as EXPLAIN prints it, with the settings the query would run with."""
        enabled, latency, size = self.mini_batch()
        flush = flush_policy(self._configuration)
        return explain(plan, ExplainSettings(self.runs_streaming(plan), enabled, latency, size,
                                             str(self.option("table.optimizer.agg-phase-strategy")),
                                             flush_interval_ms=None if flush is None else flush.interval_ms,
                                             flush_memory_only=flush is not None and flush.memory_only,
                                             state_ttl_ms=to_millis(self.option("table.exec.state.ttl")),
                                             no_effect_keys=tuple(no_effect_keys(self._configuration.keys())),
                                             distinct_agg_split=bool(
                                                 self.option("table.optimizer.distinct-agg.split.enabled")),
                                             distinct_agg_split_buckets=int(
                                                 self.option("table.optimizer.distinct-agg.split.bucket-num")),
                                             cdc_events_duplicate=bool(
                                                 self.option("table.exec.source.cdc-events-duplicate")),
                                             time_zone=self.option("table.local-time-zone")))


def _check_insert_types(sink_identifier: str, query_schema, sink_schema) -> None:
    """Flink's check that a query's columns fit the sink's, with its message."""
    def show(schema) -> str:
        return "[" + ", ".join(f"{n}: {t}" for n, t in schema) + "]"

    cause = None
    if len(query_schema) != len(sink_schema):
        cause = "Different number of columns."
    else:
        for i, ((_, q), (sink_name, t)) in enumerate(zip(query_schema, sink_schema, strict=True)):
            if not _assignable(q, t):
                cause = f"Incompatible types for sink column '{sink_name}' at position {i + 1}."
                break
    if cause is not None:
        raise PlanError(f"Column types of query result and sink for '{sink_identifier}' do not match.\n"
                        f"Cause: {cause}\n\nQuery schema: {show(query_schema)}\nSink schema:  {show(sink_schema)}")


def _assignable(source: DataType, target: DataType) -> bool:
    """Whether Flink inserts a value of ``source`` into a column of ``target`` (an implicit cast)."""
    if source.root == target.root or (source.is_string and target.is_string):
        return True
    if source.is_numeric and target.is_numeric:
        return True
    timestamps = ("TIMESTAMP", "TIMESTAMP_LTZ")  # one family in Flink: each casts implicitly to the other
    if source.root in timestamps and target.root in timestamps:
        return True
    return source.root == "DATE" and target.root == "TIMESTAMP"


def _ltz_columns(columns) -> tuple[str, ...]:
    """The physical columns declared TIMESTAMP_LTZ, which a connector reads and writes as UTC (see Source)."""
    declared = ("TIMESTAMP_LTZ", "TIMESTAMP WITH LOCAL")
    return tuple(c.name for c in columns if c.expression is None and not c.proctime and (
        c.data_type.root == "TIMESTAMP_LTZ" or c.type_text.upper().startswith(declared)))
