"""``EnvironmentSettings`` and ``TableEnvironment``, as in PyFlink.

The environment owns the configuration, the catalog of temporary views and
(lazily, at the first execution) the SparkSession. Planning and ``explain()``
need no Spark at all.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

import pandas as pd

from changeflow.common.configuration import Configuration
from changeflow.common.row_kind import RowKind
from changeflow.config import to_millis, validate_mini_batch
from changeflow.common.types import DataType, infer_type
from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import PlanNode, Source
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
        self._views: dict[str, Table] = {}
        self._spark = spark_session
        self._jobs = None

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
        self._views[view_path] = table

    def from_path(self, path: str) -> Table:
        if path not in self._views:
            raise PlanError(f"table {path!r} not found; known tables: {', '.join(sorted(self._views)) or '(none)'}")
        return self._views[path]

    def list_temporary_views(self) -> list[str]:
        return sorted(self._views)

    def drop_temporary_view(self, view_path: str) -> bool:
        return self._views.pop(view_path, None) is not None

    # --- execution ----------------------------------------------------------------------
    def _option(self, key: str) -> Any:
        """The typed value of ``key``: as set, or the option's default."""
        return self._config.get_configuration().get(key)

    @property
    def streaming(self) -> bool:
        if self._config.get_configuration().contains_key("execution.runtime-mode"):
            return self._option("execution.runtime-mode") == "STREAMING"
        return self._settings.is_streaming_mode()

    def _mini_batch(self) -> tuple[bool, int, int]:
        """(enabled, allow-latency in ms, size), validated together as Flink's planner does."""
        conf = self._config.get_configuration()
        enabled = bool(self._option("table.exec.mini-batch.enabled"))
        if enabled:
            validate_mini_batch(conf)
        latency_ms = to_millis(self._option("table.exec.mini-batch.allow-latency"))
        return enabled, latency_ms, int(self._option("table.exec.mini-batch.size"))

    def _explain(self, plan: PlanNode) -> str:
        enabled, latency, size = self._mini_batch()
        return explain(plan, ExplainSettings(self.streaming, enabled, latency, size,
                                             str(self._option("table.optimizer.agg-phase-strategy"))))

    def _spark_jobs(self):
        if self._jobs is None:
            from changeflow.runtime.spark import session
            from changeflow.runtime.spark.jobs import SparkJobs

            if self._spark is None:
                self._spark = session.get_or_create(self._option("changeflow.spark.master"))
            else:
                session.check(self._spark)
            self._jobs = SparkJobs(self._spark, self._option("changeflow.checkpoint-dir"))
        return self._jobs

    def _streaming_settings(self):
        from changeflow.runtime.spark.streaming import StreamingSettings

        enabled, _, size = self._mini_batch()
        rows = size if enabled else int(self._option("changeflow.source.rows-per-batch"))
        return StreamingSettings(mini_batch=enabled, rows_per_batch=rows,
                                 buckets=int(self._option("changeflow.state.buckets")), pages=64,
                                 agg_phase_strategy=str(self._option("table.optimizer.agg-phase-strategy")))

    def _execute(self, plan: PlanNode) -> TableResult:
        jobs = self._spark_jobs()
        if self.streaming:
            changes = jobs.run_streaming(plan, self._streaming_settings())
        else:
            changes = jobs.run_batch(plan)
        return TableResult(plan.schema, changes, self.streaming)

    def _to_spark(self, plan: PlanNode):
        import tempfile

        from pyspark.sql import functions as F

        from changeflow.kernels.changelog import KIND, SEQ, SUB

        jobs = self._spark_jobs()
        names = [F.col(f"`{n}`") for n in plan.field_names]
        if not self.streaming:
            return jobs.batch_frame(plan).select(*names)
        workdir = tempfile.mkdtemp(prefix="changeflow-", dir=self._option("changeflow.checkpoint-dir"))
        frame = jobs.streaming_frame(plan, self._streaming_settings(), workdir)
        # _kind holds RowKind values 0..3; element_at counts from 1.
        op = F.element_at(F.array(*[F.lit(str(kind)) for kind in RowKind]), F.col(KIND).cast("int") + 1)
        return frame.select(op.alias("op"), *names, SEQ, SUB)


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
