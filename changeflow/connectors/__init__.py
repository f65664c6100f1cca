"""Connectors: ``filesystem``, ``print``, ``blackhole``, ``datagen``, ``nexmark``, ``jdbc``, ``materialized``,
``kafka``, ``upsert-kafka``, ``postgres-cdc`` and ``delta`` tables of ``CREATE TABLE``.

A connector object is created when a table is read (``create_source``) or
written (``create_sink``), which is when its options are checked, as in
Flink. Connectors are plain Python (no Spark): a source gives rows (bounded)
or is read by the Spark runtime as an unbounded stream; a sink receives each
committed batch of changes in changelog order (``write(changes)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from changeflow.catalog import CatalogTable, identifier
from changeflow.connectors.blackhole import BlackholeSink
from changeflow.connectors.datagen import DataGenSource
from changeflow.connectors.delta import DeltaSource
from changeflow.connectors.delta_sink import DeltaSink
from changeflow.connectors.filesystem import FileSystemSink, FileSystemSource
from changeflow.connectors.formats import BadRecordError
from changeflow.connectors.jdbc_sink import JdbcSink
from changeflow.connectors.jdbc_source import JdbcSource
from changeflow.connectors.kafka import KafkaSource, upsert_kafka_source
from changeflow.connectors.kafka_sink import KafkaSink, UpsertKafkaSink
from changeflow.connectors.materialized import MaterializedSink, MaterializedSource
from changeflow.connectors.nexmark import NexmarkSource
from changeflow.connectors.options import ConnectorError, failure
from changeflow.connectors.postgres_cdc import PostgresCdcSource
from changeflow.connectors.print_sink import PrintSink

if TYPE_CHECKING:
    from changeflow.plan.nodes import Sink

_SOURCES = {"filesystem": FileSystemSource, "datagen": DataGenSource, "materialized": MaterializedSource,
            "jdbc": JdbcSource, "kafka": KafkaSource, "upsert-kafka": upsert_kafka_source, "nexmark": NexmarkSource,
            "postgres-cdc": PostgresCdcSource, "delta": DeltaSource}
_SINKS = {"filesystem": FileSystemSink, "print": PrintSink, "blackhole": BlackholeSink,
          "materialized": MaterializedSink, "jdbc": JdbcSink, "kafka": KafkaSink, "upsert-kafka": UpsertKafkaSink,
          "delta": DeltaSink}
_WITH_METADATA = ("kafka", "upsert-kafka")  # the connectors that give metadata columns


def _connector(table: CatalogTable, as_sink: bool) -> str:
    name = table.options.get("connector")
    if name is None:
        raise failure(table, as_sink, "Table options do not contain an option key 'connector' for discovering a "
                                      "connector.")
    if name not in _SOURCES and name not in _SINKS:
        raise failure(table, as_sink, f"Could not find any factory for identifier '{name}' that implements "
                                      f"'DynamicTable{'Sink' if as_sink else 'Source'}Factory'. Available factory "
                                      f"identifiers are:\n\n" + "\n".join(sorted(set(_SOURCES) | set(_SINKS))))
    metadata = [c.name for c in table.schema.columns if c.metadata is not None]
    if metadata and name not in _WITH_METADATA:
        raise failure(table, as_sink, f"Connector '{name}' has no metadata: METADATA columns ({', '.join(metadata)}) "
                                      f"are supported by the Kafka connectors only.")
    if table.partition_keys and name != "filesystem":
        raise failure(table, as_sink, f"Table '{table.name}' is a partitioned table (PARTITIONED BY "
                                      f"{', '.join(table.partition_keys)}), but connector '{name}' does not support "
                                      f"partitions: only 'filesystem' does.")
    return name


def create_source(table: CatalogTable, streaming: bool):
    """The source reading ``table``; its options are checked now."""
    name = _connector(table, False)
    if name not in _SOURCES:
        raise failure(table, False, f"Connector '{name}' can only be used as a sink. It cannot be used as a source.")
    return _SOURCES[name](table, streaming)


def create_sink(table: CatalogTable, streaming: bool):
    """The sink writing ``table``; its options are checked now."""
    name = _connector(table, True)
    if name not in _SINKS:
        raise failure(table, True, f"Connector '{name}' can only be used as a source. It cannot be used as a sink.")
    return _SINKS[name](table)


def check_sink_input(plan: Sink) -> None:
    """Fail at planning, as Flink, when a sink that only appends gets an updating query.

    ``plan`` is the INSERT's Sink; its changelog modes are the planner's
    (:mod:`changeflow.plan.rules.changelog_mode`), read from its physical plan.
    """
    from changeflow.plan.nodes import Filter, Project
    from changeflow.plan.optimizer import PlannerSettings, optimize

    if getattr(plan.connector, "accepts_updates", True):
        return
    if plan.traits is None:
        plan = optimize(plan, PlannerSettings())
    mode = plan.input.traits.changelog_mode
    if mode.insert_only:
        return
    producer = plan.input
    while isinstance(producer, (Project, Filter)) and not producer.input.traits.changelog_mode.insert_only:
        producer = producer.input
    changes = "update and delete changes" if mode.delete else "update changes"
    raise ConnectorError(f"Table sink '{plan.table}' doesn't support consuming {changes} which is produced by "
                         f"node {_describe(producer)}")


def _describe(node) -> str:
    """The node as EXPLAIN names it (Flink's message shows the producing operator)."""
    from changeflow.plan.explain import describe_node

    try:
        return describe_node(node)
    except TypeError:
        return type(node).__name__


__all__ = ["BadRecordError", "BlackholeSink", "ConnectorError", "DataGenSource", "DeltaSink", "DeltaSource",
           "FileSystemSink",
           "FileSystemSource", "JdbcSink", "JdbcSource", "KafkaSink", "KafkaSource", "UpsertKafkaSink",
           "MaterializedSink", "MaterializedSource", "NexmarkSource", "PostgresCdcSource", "PrintSink",
           "check_sink_input", "create_sink", "create_source", "identifier"]
