"""PyFlink's ``StreamTableEnvironment``: a TableEnvironment that converts between Tables and DataStreams.

``StreamTableEnvironment.create(env)`` shares the DataStream environment's
configuration (one ``Configuration`` object: the runtime mode, parallelism and
``changeflow.*`` keys set on either are seen by both) and its engine (one
SparkSession). Conversions are lazy: they add a node to the other API's plan
(:mod:`changeflow.plan.stream_bridge`), and a program mixing both APIs runs as one
Spark job when its sink runs (``execute_insert``, ``execute().collect()``,
``execute_and_collect()``, ``env.execute()``).

- ``from_data_stream(ds[, schema | *fields])``, ``create_temporary_view(path, ds[, ...])``:
  an insert-only table of the stream's records, columns derived from its type
  (:mod:`.stream_schema`);
- ``from_changelog_stream(ds[, schema, changelog_mode])``: Rows whose RowKind
  is the change's (``+I``/``-U``/``+U``/``-D``);
- ``to_data_stream(table)``: named Rows of an insert-only table (an updating
  table is refused, as in Flink); ``to_changelog_stream(table)``: Rows with
  their RowKind; the deprecated ``to_append_stream`` / ``to_retract_stream``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from changeflow.catalog import DeclaredColumn, DeclaredSchema
from changeflow.common.row import Row
from changeflow.common.typeinfo import TypeInformation
from changeflow.datastream import table_link
from changeflow.datastream.data_stream import DataStream
from changeflow.datastream.environment import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream.functions import RuntimeContext
from changeflow.expressions import Column
from changeflow.kernels.bridge import RecordShape
from changeflow.plan import builder
from changeflow.plan.nodes import PlanNode, side_inputs
from changeflow.plan.rules.changelog_mode import infer
from changeflow.plan.stream_bridge import StreamInput, StreamSource, TableInput, anonymous_name
from changeflow.plan.stream_nodes import TableNode
from changeflow.plan.time_zone import ZoneNotSupported, is_utc_or_default
from changeflow.plan.type_inference import PlanError
from changeflow.runtime.engine import Engine
from changeflow.table.changelog_mode import ChangelogMode
from changeflow.table.descriptor import Schema
from changeflow.table.environment import TableEnvironment
from changeflow.table.settings import EnvironmentSettings
from changeflow.table.stream_schema import (Columns, derived_columns, row_type, select_by_fields,
                                            select_by_schema)
from changeflow.table.table import Table

__all__ = ["StreamTableEnvironment"]


class StreamTableEnvironment(TableEnvironment):
    """A TableEnvironment on a ``StreamExecutionEnvironment``, converting Tables and DataStreams.

    >>> from changeflow.common import Types
    >>> env = StreamExecutionEnvironment.get_execution_environment()
    >>> t_env = StreamTableEnvironment.create(env)
    >>> ds = env.from_collection([("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    >>> t_env.from_data_stream(ds).get_schema().get_field_names()
    ['w', 'n']
    """

    def __init__(self, stream_env: StreamExecutionEnvironment, settings: EnvironmentSettings) -> None:
        super().__init__(settings, table_link.spark_session(stream_env))
        self._stream_env = stream_env
        # One configuration for both APIs: the table config takes the stream environment's keys
        # (then the settings' own), and the stream environment reads and writes that same object.
        config = self._config.get_configuration()
        config.add_all(stream_env.get_config())
        config.add_all(settings.get_configuration())
        table_link.share_configuration(stream_env, config)

    @staticmethod
    def create(stream_execution_environment: StreamExecutionEnvironment | None = None,
               environment_settings: EnvironmentSettings | None = None) -> "StreamTableEnvironment":
        """A StreamTableEnvironment on ``stream_execution_environment`` (its runtime mode unless
        ``environment_settings`` says otherwise); with only settings, on a new stream environment."""
        if stream_execution_environment is None and environment_settings is None:
            raise ValueError("No argument found, the param 'stream_execution_environment' "
                             "or 'environment_settings' is required.")
        env = stream_execution_environment
        if env is None:
            assert environment_settings is not None
            env = StreamExecutionEnvironment.get_execution_environment(environment_settings.get_configuration())
            if not environment_settings.is_streaming_mode():
                env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        if environment_settings is None:
            environment_settings = EnvironmentSettings(not table_link.is_batch(env))
        elif not environment_settings.is_streaming_mode():
            env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        return StreamTableEnvironment(env, environment_settings)

    def _engine(self) -> Engine:
        """The stream environment's engine: both APIs run on one SparkSession."""
        return table_link.engine(self._stream_env)

    # --- DataStream -> Table -------------------------------------------------------------
    def from_data_stream(self, data_stream: DataStream, *fields_or_schema: Any) -> Table:
        """An insert-only table of ``data_stream``'s records, columns derived from its type.

        ``fields_or_schema``: a ``Schema`` (derived columns picked by name, in its
        order), or field expressions (``col("a"), col("b")`` rename by position;
        ``col("n"), col("w").alias("word")`` pick by name). A record that is a
        Row of another kind than INSERT fails the job, as in Flink.
        """
        return Table(self._stream_source(data_stream, fields_or_schema, changelog=False,
                                         method="from_data_stream"), self)

    def from_changelog_stream(self, data_stream: DataStream, schema: Schema | None = None,
                              changelog_mode: ChangelogMode | None = None) -> Table:
        """A table whose changes are ``data_stream``'s Rows, each of its RowKind (``+I``, ``-U``, ``+U``, ``-D``).

        ``changelog_mode`` ``all()`` (the default), ``insert_only()`` or ``upsert()``: ``+I``,
        ``+U`` without ``-U`` and ``-D`` (which may hold only the key) of the ``schema``'s
        primary key, normalized by the planner's ChangelogNormalize into a retract
        changelog (without a primary key the changes pass as they are, as in Flink 2.3).
        A primary key in ``schema`` is the table's; with
        ``table.exec.source.cdc-events-duplicate`` an ``all()`` changelog is normalized too.
        In batch mode the table must be insert-only, as in Flink.
        """
        mode = changelog_mode or ChangelogMode.all()
        extra = (schema,) if schema is not None else ()
        return Table(self._stream_source(data_stream, extra, changelog=not mode.is_insert_only,
                                         method="from_changelog_stream", upsert=mode.is_upsert), self)

    def create_temporary_view(self, view_path: str, table_or_data_stream: Any, *fields_or_schema: Any) -> None:
        """Register a Table, or a DataStream as ``from_data_stream`` reads it, under ``view_path``."""
        if isinstance(table_or_data_stream, DataStream):
            table_or_data_stream = self.from_data_stream(table_or_data_stream, *fields_or_schema)
        elif fields_or_schema:
            raise ValueError("create_temporary_view(path, table) takes no fields or schema for a Table")
        super().create_temporary_view(view_path, table_or_data_stream)

    def _stream_source(self, data_stream: DataStream, fields_or_schema: tuple, changelog: bool,
                       method: str, upsert: bool = False) -> PlanNode:
        if not isinstance(data_stream, DataStream):
            raise TypeError(f"{method}() takes a DataStream, got {type(data_stream).__name__}")
        if table_link.environment_of(data_stream) is not self._stream_env:
            raise ValueError(f"{method}(): the DataStream belongs to another StreamExecutionEnvironment")
        name = anonymous_name("datastream_source")
        where = f"{method}({name})"
        columns, shape = derived_columns(data_stream.get_type(), where)
        primary_key: tuple[str, ...] = ()
        if len(fields_or_schema) == 1 and isinstance(fields_or_schema[0], Schema):
            declared = fields_or_schema[0].declared()
            if declared.watermark is not None or any(not c.is_physical for c in declared.columns):
                if method != "from_data_stream" or declared.primary_key:
                    raise NotImplementedError(f"{where}: computed columns or a watermark in the schema of "
                                              f"{method} (from_data_stream takes them, without a primary key)")
                return self._declared_stream_source(data_stream, declared, columns, shape, name, where)
            columns, shape = select_by_schema(columns, shape, declared, where)
            primary_key = tuple(declared.primary_key)
            if primary_key and method != "from_changelog_stream":
                raise NotImplementedError(f"{where}: a primary key in the schema of {method} (it is read by "
                                          f"from_changelog_stream only)")
        elif fields_or_schema:
            columns, shape = select_by_fields(columns, shape, fields_or_schema, where)
        spec = StreamInput(shape, changelog, RuntimeContext, table_link.caches(self._stream_env), upsert)
        return StreamSource(name, columns, "datastream", spec, primary_key=primary_key,
                            below=table_link.node_of(data_stream))

    def _declared_stream_source(self, data_stream: DataStream, declared: DeclaredSchema, columns: Columns,
                                shape: RecordShape, name: str, where: str) -> PlanNode:
        """``from_data_stream(ds, schema)`` with computed columns or a watermark, as Flink reads it: the columns
        the schema declares, in its order (without a physical one: every derived column, then the computed
        ones); expressions read any derived column; then the watermark."""
        physical = [c for c in declared.columns if c.is_physical]
        select_by_schema(columns, shape, DeclaredSchema(tuple(physical)), where)  # names and types must match
        names = [c.name for c in declared.columns]
        if not physical:
            derived = tuple(DeclaredColumn(n, t, str(t)) for n, t in columns)
            declared = replace(declared, columns=derived + declared.columns)
            names = [c.name for c in declared.columns]
        else:  # undeclared derived columns stay until the watermark is planned (it may read them), then go
            hidden = tuple(DeclaredColumn(n, t, str(t)) for n, t in columns if n not in names)
            declared = replace(declared, columns=declared.columns + hidden)
        spec = StreamInput(shape, False, RuntimeContext, table_link.caches(self._stream_env), False)
        source = StreamSource(name, columns, "datastream", spec, below=table_link.node_of(data_stream))
        plan = self._planning.declared_plan(source, declared, f"__{name}", where)
        return plan if plan.field_names == names else builder.project(plan, [Column(n) for n in names])

    # --- Table -> DataStream -------------------------------------------------------------
    def to_data_stream(self, table: Table) -> DataStream:
        """The rows of an insert-only ``table`` as a DataStream of named Rows (``+I``)."""
        self._check_insert_only(table.plan, "to_data_stream")
        return self._stream(table, TableInput("row", True, "to_data_stream"))

    def to_changelog_stream(self, table: Table, target_schema: Schema | None = None,
                            changelog_mode: ChangelogMode | None = None) -> DataStream:
        """The changes of ``table`` as a DataStream of named Rows, each with its RowKind.

        ``ChangelogMode.upsert()`` without a primary key in ``target_schema`` gives what Flink 2.3
        gives, every change (``-U`` rows too); with one it is refused."""
        if target_schema is not None:
            declared = [(c.name, c.data_type.with_nullable(True)) for c in target_schema.declared().columns]
            actual = [(n, t.with_nullable(True)) for n, t in table.plan.schema]
            if declared != actual:
                raise NotImplementedError(f"to_changelog_stream with a target schema other than the table's own "
                                          f"columns {[f'{n} {t}' for n, t in actual]}")
        mode = changelog_mode or ChangelogMode.all()
        if mode.is_upsert and target_schema is not None and target_schema._primary_key:
            raise NotImplementedError("to_changelog_stream with ChangelogMode.upsert() and a primary key in the "
                                      "target schema (an upsert stream without -U rows)")
        # upsert() without a primary key: Flink 2.3 still emits the -U rows (a recorded golden), as all() does.
        if mode.is_insert_only:
            self._check_insert_only(table.plan, "to_changelog_stream")
        return self._stream(table, TableInput("row", mode.is_insert_only, "to_changelog_stream"))

    def to_append_stream(self, table: Table, type_info: TypeInformation) -> DataStream:
        """Deprecated in Flink: the rows of an insert-only ``table`` converted to ``type_info``."""
        self._check_insert_only(table.plan, "to_append_stream")
        return self._stream(table, TableInput(_Converted(type_info), True, "to_append_stream"),
                            type_info)

    def to_retract_stream(self, table: Table, type_info: TypeInformation) -> DataStream:
        """Deprecated in Flink: ``(True, row)`` for ``+I``/``+U`` changes, ``(False, row)`` for ``-U``/``-D``."""
        from changeflow.common.typeinfo import Types

        return self._stream(table, TableInput(_Retracting(type_info), False, "to_retract_stream"),
                            Types.TUPLE([Types.BOOLEAN(), type_info]))

    def _stream(self, table: Table, spec: TableInput, type_info: TypeInformation | None = None) -> DataStream:
        if table._t_env is not self:
            raise ValueError(f"{spec.conversion}(): the table belongs to another TableEnvironment")
        plan = table.plan
        zone = self._config.get_local_timezone()
        if not is_utc_or_default(zone):  # the query is computed in the zone when planned (plan/time_zone.py)
            ltz = [n for n, t in table.plan.schema if t.root == "TIMESTAMP_LTZ"]
            if ltz:
                raise ZoneNotSupported(f"The TIMESTAMP_LTZ column '{ltz[0]}' converted to a DataStream "
                                       f"({spec.conversion})", zone)
        # The Table plan is the node's input: one tree, planned in one pass (plan/stream_bridge.py), the
        # session time zone's rule included (plan/rules/session_time_zone.py).
        node = TableNode(anonymous_name("table_source"), type_info or row_type(plan.schema), payload=spec, below=plan)
        return DataStream(self._stream_env, node)

    def _check_insert_only(self, plan: PlanNode, method: str) -> None:
        """Flink refuses an updating table where only inserts convert (at the call, as here)."""
        if not self._planning.streaming:
            return  # batch results are insert-only
        modes = infer(plan)
        if not modes[id(plan)].insert_only:
            origin = _update_origin(plan, modes)
            raise PlanError(f"{method}: Table sink '*anonymous_datastream_sink*' doesn't support consuming "
                            f"update changes which is produced by node {origin}")


def _update_origin(plan: PlanNode, modes: dict) -> str:
    """The operator whose output first updates (its inputs insert-only), as Flink names it in the error."""
    for child in side_inputs(plan):
        if not modes[id(child)].insert_only:
            return _update_origin(child, modes)
    name = {"Aggregate": "GroupAggregate"}.get(type(plan).__name__, type(plan).__name__)  # Flink's operator name
    keys = getattr(plan, "keys", None)
    return f"{name}(groupBy=[{', '.join(keys)}])" if keys else name


class _Converted:
    """``to_append_stream``'s record: the Row converted to the requested type."""

    def __init__(self, type_info: TypeInformation) -> None:
        self.type_info = type_info

    def __call__(self, row: Row) -> Any:
        return self.type_info.from_value(row)


class _Retracting(_Converted):
    """``to_retract_stream``'s record: ``(is_add, row)``, the row keeping its RowKind (as PyFlink's)."""

    def __call__(self, row: Row) -> Any:
        kind = row.get_row_kind()
        converted = self.type_info.from_value(Row(*row))
        if isinstance(converted, Row):
            converted.set_row_kind(kind)
        return (str(kind) in ("+I", "+U"), converted)
