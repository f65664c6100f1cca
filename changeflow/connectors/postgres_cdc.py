"""The ``postgres-cdc`` source: a PostgreSQL table's snapshot, then its changes, as ``+I``/``-U``/``+U``/``-D``.

A table declares Flink CDC's options::

    CREATE TABLE orders (...) WITH ('connector' = 'postgres-cdc', 'hostname' = 'db', 'port' = '5432',
        'username' = 'u', 'password' = 'p', 'database-name' = 'shop', 'schema-name' = 'public',
        'table-name' = 'orders', 'slot.name' = 'orders_slot', 'decoding.plugin.name' = 'pgoutput')

``scan.startup.mode`` is ``initial`` (the default: the table's rows, then every change
after them) or ``latest-offset`` (only changes from the job's first start; Flink CDC
takes it only with ``scan.incremental.snapshot.enabled`` = true, and so does changeflow).
Changes are read through the replication slot ``slot.name`` (created when missing) with
PostgreSQL's built-in ``pgoutput`` plugin and a publication (Debezium's ``dbz_publication``
unless ``debezium.publication.name`` says otherwise; created when missing, for all
tables or, with ``debezium.publication.autocreate.mode`` = ``filtered``, for this one).
How the snapshot and the stream meet exactly, and how a restarted job resumes, is told
in :mod:`changeflow.connectors.postgres_cdc_stream`.

An update is ``-U`` (the row before) then ``+U`` (the row after); a delete is ``-D`` of
the row before. PostgreSQL logs the whole row before only for a table with
``REPLICA IDENTITY FULL`` (Flink CDC's requirement too): for another table an update
or a delete fails the job naming the table and the statement that fixes it, rather than
emitting a ``-U``/``-D`` with missing values. A ``TRUNCATE`` of the table fails the job
too (Flink CDC skips it, leaving results that still count the truncated rows).

Flink CDC's options that change how it reads but not what (its incremental snapshot's
chunking, connection pools, heartbeats) are refused by name unless listed in
:data:`OPTIONS`; ``debezium.*`` keys other than the two publication ones are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from changeflow.catalog import CatalogTable
from changeflow.connectors.jdbc import Connection, JdbcError
from changeflow.connectors.options import ConnectorError, boolean, check_keys, duration_ms, failure, integer

REQUIRED = ("hostname", "username", "password", "database-name", "schema-name", "table-name", "slot.name")
OPTIONS = {"connector", *REQUIRED, "port", "decoding.plugin.name", "scan.startup.mode", "changelog-mode",
           "scan.incremental.snapshot.enabled", "scan.snapshot.fetch.size", "connect.timeout",
           "debezium.publication.name", "debezium.publication.autocreate.mode"}
# Flink CDC's other options for postgres-cdc: known, but not implemented by changeflow.
FLINK_ONLY = {"scan.incremental.snapshot.chunk.size", "scan.incremental.snapshot.chunk.key-column",
              "chunk-key.even-distribution.factor.upper-bound", "chunk-key.even-distribution.factor.lower-bound",
              "chunk-meta.group.size", "connect.max-retries", "connect.pool.size", "heartbeat.interval.ms",
              "scan.incremental.close-idle-reader.enabled", "scan.incremental.snapshot.backfill.skip",
              "scan.newly-added-table.enabled", "scan.lsn-commit.checkpoints-num-delay",
              "scan.incremental.snapshot.unbounded-chunk-first.enabled"}
_STARTUP = ("initial", "snapshot", "latest-offset")
_PLUGINS = ("decoderbufs", "wal2json", "wal2json_rds", "wal2json_streaming", "wal2json_rds_streaming", "pgoutput")
_AUTOCREATE = ("all_tables", "disabled", "filtered")
_SLOT = re.compile(r"^[a-z0-9_]{1,63}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


class CdcError(JdbcError):
    """A ``postgres-cdc`` table that cannot be read: the message names the option or table at fault."""


@dataclass(frozen=True)
class CdcConnection(Connection):
    """How to reach the table (picklable: executors connect with it); messages name Flink CDC's options."""

    hostname: str = ""
    port: int = 5432
    database: str = ""

    def where(self) -> str:
        schema, _, table = self.table_name.partition(".")
        return (f"Connector 'postgres-cdc' of table '{self.table}' ('hostname' = '{self.hostname}', 'port' = "
                f"'{self.port}', 'database-name' = '{self.database}', 'schema-name' = '{schema}', 'table-name' = "
                f"'{table}')")

    def connect(self, autocommit: bool = False) -> Any:
        """A psycopg connection (ISO dates, UTC, so values read as in a SELECT), or an error naming the option."""
        try:
            import psycopg
        except ImportError:
            raise CdcError(f"{self.where()}: the 'postgres-cdc' connector needs psycopg (pip install "
                           f"'psycopg[binary]', or changeflow's 'jdbc' extra)") from None
        try:
            conn = psycopg.connect(host=self.hostname, port=self.port, dbname=self.database, user=self.username,
                                   password=self.password, connect_timeout=self.timeout_s, autocommit=autocommit,
                                   options="-c DateStyle=ISO -c TimeZone=UTC -c extra_float_digits=3")
        except psycopg.OperationalError as e:
            text = str(e).strip()
            if "password authentication failed" in text or "no password supplied" in text:
                raise CdcError(f"{self.where()}: cannot log in as 'username' = '{self.username}': wrong 'password' "
                               f"or 'username' ({text})") from None
            if "database" in text and "does not exist" in text:
                raise CdcError(f"{self.where()}: the database of option 'database-name' does not exist "
                               f"({text})") from None
            raise CdcError(f"{self.where()}: cannot connect to the server of options 'hostname' and 'port' "
                           f"({text})") from None
        return conn


class PostgresCdcSource:
    """An unbounded ``postgres-cdc`` table: its options, checked as Flink CDC's factory checks them."""

    bounded = False
    changelog = True  # emits +I, -U, +U and -D (the planner's changelog mode)

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        options = table.options
        flink_only = sorted(k for k in options if k in FLINK_ONLY)
        if flink_only:
            raise failure(table, False, f"Flink CDC's option(s) {', '.join(flink_only)} of 'postgres-cdc' are not "
                                        f"supported by changeflow.")
        debezium = sorted(k for k in options if k.startswith("debezium.") and k not in OPTIONS)
        if debezium:
            raise failure(table, False, f"Debezium properties {', '.join(debezium)} are not supported by changeflow's "
                                        f"'postgres-cdc' (only debezium.publication.name and "
                                        f"debezium.publication.autocreate.mode).")
        check_keys(table, False, "postgres-cdc", OPTIONS, required=REQUIRED)
        if not streaming:
            raise ConnectorError(f"Querying an unbounded table '{table.name}' in batch mode is not allowed. The "
                                 f"'postgres-cdc' table is unbounded (read it once with the 'jdbc' connector).")
        self.table = table
        self.startup_mode = options.get("scan.startup.mode", "initial").lower()
        if self.startup_mode not in _STARTUP:
            raise failure(table, False, f"Invalid value for option 'scan.startup.mode'. Supported values are "
                                        f"[initial, snapshot, latest-offset], but was: {options['scan.startup.mode']}")
        if self.startup_mode == "snapshot":
            raise failure(table, False, "'scan.startup.mode' = 'snapshot' is not supported by changeflow's "
                                        "'postgres-cdc': read the table once with the 'jdbc' connector.")
        incremental = boolean(table, False, "scan.incremental.snapshot.enabled")
        if self.startup_mode == "latest-offset" and not incremental:
            raise failure(table, False, "The Postgres CDC connector does not support 'latest-offset' startup mode "
                                        "when 'scan.incremental.snapshot.enabled' is disabled, you can enable "
                                        "'scan.incremental.snapshot.enabled' to use this startup mode.")
        plugin = options.get("decoding.plugin.name", "pgoutput")
        if plugin not in _PLUGINS:
            raise failure(table, False, f"Option 'decoding.plugin.name' = '{plugin}' is not a logical decoding "
                                        f"plugin Flink CDC supports ({', '.join(_PLUGINS)}).")
        if plugin != "pgoutput":
            raise failure(table, False, f"Option 'decoding.plugin.name' = '{plugin}' is not supported by changeflow, "
                                        f"which decodes with PostgreSQL's built-in 'pgoutput' (set "
                                        f"'decoding.plugin.name' = 'pgoutput').")
        mode = options.get("changelog-mode", "all").lower()
        if mode not in ("all", "upsert"):
            raise failure(table, False, f"Could not parse value '{options['changelog-mode']}' for key "
                                        f"'changelog-mode' (expected all or upsert).")
        if mode == "upsert":
            raise failure(table, False, "'changelog-mode' = 'upsert' is not supported by changeflow's "
                                        "'postgres-cdc': use 'all' with REPLICA IDENTITY FULL on the table.")
        self.slot = options["slot.name"]
        if not _SLOT.match(self.slot):
            raise failure(table, False, f"Option 'slot.name' = '{self.slot}' is not a replication slot name: "
                                        f"lower-case letters, numbers and the underscore only (at most 63).")
        for key in ("schema-name", "table-name"):
            if not _NAME.match(options[key]):
                raise failure(table, False, f"Option '{key}' = '{options[key]}' is not a plain name: changeflow "
                                            f"reads one table (no regular expression).")
        self.publication = options.get("debezium.publication.name", "dbz_publication")
        if not _NAME.match(self.publication):
            raise failure(table, False, f"Option 'debezium.publication.name' = '{self.publication}' is not a plain "
                                        f"name.")
        self.autocreate = options.get("debezium.publication.autocreate.mode", "all_tables").lower()
        if self.autocreate not in _AUTOCREATE:
            raise failure(table, False, f"Option 'debezium.publication.autocreate.mode' = '{self.autocreate}' is "
                                        f"not one of {', '.join(_AUTOCREATE)}.")
        port = integer(table, False, "port", 5432)
        self.fetch_size = integer(table, False, "scan.snapshot.fetch.size", 1024)
        if self.fetch_size < 1:
            raise failure(table, False, f"The value of option 'scan.snapshot.fetch.size' must larger than 1, but is "
                                        f"{self.fetch_size}")
        timeout = duration_ms(table, False, "connect.timeout") or 30_000
        schema_name, table_name = options["schema-name"], options["table-name"]
        columns = tuple((c.name, c.data_type) for c in table.schema.physical_columns())
        self.connection = CdcConnection(
            table.identifier, f"jdbc:postgresql://{options['hostname']}:{port}/{options['database-name']}",
            f"{schema_name}.{table_name}", columns, options["username"], options["password"],
            max(1, timeout // 1000), options["hostname"], port, options["database-name"])
        self.schema_name, self.table_name = schema_name, table_name
        self.schema = tuple((c.name, c.data_type) for c in table.schema.columns)

    def rows(self) -> list:
        raise ConnectorError(f"Table '{self.table.name}': a 'postgres-cdc' table is read by the Spark runtime only.")
