"""The ``kafka`` and ``upsert-kafka`` connectors, with Flink's option names.

A ``kafka`` table is an unbounded source of ``+I`` rows (Spark's own Kafka source
reads it: :mod:`changeflow.runtime.spark.connectors.kafka_source`; offsets live in the job's
checkpoint) and an append sink. Sinks write each micro-batch's changes in changelog
order through a Kafka producer (confluent-kafka) on the driver: ``at-least-once`` (the
default: a micro-batch run again after a restart is written again) or ``exactly-once``
(a Kafka transaction per micro-batch: :mod:`.kafka_sink`). An ``upsert-kafka`` table is a sink of an updating
query keyed by the table's ``PRIMARY KEY``: ``+I``/``+U`` write the row under its key,
``-D`` writes a tombstone (the key with a null value), ``-U`` is not written. As a source
(:class:`UpsertKafkaSource`) it reads the topic from its earliest offset as an upsert
changelog: a record is ``+I`` of its row, a tombstone ``-D`` of its key; the planner puts
Flink's ChangelogNormalize after it (:mod:`changeflow.plan.rules.changelog_normalize`).

Records are decoded and encoded by changeflow's formats (:mod:`.formats`: ``json``,
``csv``; ``raw`` here; ``avro``, schemaless binary records: :mod:`.avro_format`): the key
by ``key.format`` from the ``key.fields`` columns, the value by ``value.format`` (or
``format``) from every column (``value.fields-include`` = ``ALL``) or the columns not in the
key (``EXCEPT_KEY``). A record that does not parse
fails the job naming its topic, partition and offset, or is skipped with the format's
``ignore-parse-errors``. Metadata columns (``METADATA FROM 'offset'``) read ``topic``,
``partition``, ``offset``, ``timestamp``, ``timestamp-type`` and ``headers``.

``scan.bounded.mode`` (``latest-offset``, ``group-offsets``, ``timestamp`` with
``scan.bounded.timestamp-millis``, ``specific-offsets`` with ``scan.bounded.specific-offsets``)
makes the table bounded, as Flink's bounded Kafka source: each partition is read from its
start up to its stopping offset (excluded), resolved once when the job starts
(:mod:`.kafka_offsets`), in batch mode or as a streaming job's bounded source.

A ``kafka`` sink whose value format is a changelog format takes any query: each change is
one record of the format (:mod:`.changelog_encoding`: ``+I``/``+U`` an insert, ``-U``/``-D``
a delete of the row), in changelog order.

Not supported (refused naming the option): a bounded read of an ``upsert-kafka`` table or
of a changelog value format, ``sink.transactional-id-prefix`` (the transactional id is the job's),
``sink.partitioner`` other than ``default``, metadata columns in a sink, formats other
than json, csv, raw, avro and (as the value format) the changelog formats
``debezium-json``, ``canal-json`` and ``maxwell-json`` (:mod:`.changelog_formats`), whose
records become ``+I``/``-U``/``+U``/``-D`` changes.
"""

from __future__ import annotations

import re

from changeflow.catalog import CatalogTable
from changeflow.connectors.avro_format import AvroFormat, avro_format
from changeflow.connectors.changelog_formats import CHANGELOG_FORMATS, ChangelogJsonFormat, changelog_format
from changeflow.connectors.formats import BadRecordError, CsvFormat, JsonFormat
from changeflow.connectors.options import ConnectorError, boolean, check_keys, failure, integer, report_skipped

_COMMON = {"connector", "topic", "properties.bootstrap.servers", "key.format", "value.format", "format",
           "key.fields", "value.fields-include", "property-version"}
_SOURCE = {"topic-pattern", "properties.group.id", "scan.startup.mode", "scan.startup.timestamp-millis",
           "scan.startup.specific-offsets", "scan.topic-partition-discovery.interval", "scan.parallelism",
           "scan.bounded.mode", "scan.bounded.timestamp-millis", "scan.bounded.specific-offsets"}
_SINK = {"sink.partitioner", "sink.delivery-guarantee", "sink.parallelism", "sink.buffer-flush.max-rows",
         "sink.buffer-flush.interval"}
_NOT_SUPPORTED = {"key.fields-prefix": "a prefix on the key columns' names",
                  "sink.transactional-id-prefix": "a transactional id of the user's: it is the job's"}
_UPSERT_NOT_SUPPORTED = dict.fromkeys(("scan.bounded.mode", "scan.bounded.timestamp-millis",
                                      "scan.bounded.specific-offsets"), "a bounded read of an upsert-kafka table")
_STARTUP = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
_BOUNDED = ("latest-offset", "group-offsets", "timestamp", "specific-offsets", "unbounded")
METADATA = {"topic": "STRING", "partition": "INT", "offset": "BIGINT", "timestamp": "TIMESTAMP_LTZ",
            "timestamp-type": "STRING", "headers": "MAP", "leader-epoch": "INT"}


class RawFormat:
    """Flink's ``raw`` format: the record's bytes as the one column (STRING as UTF-8, or BYTES)."""

    name = "raw"
    options = {"raw.charset", "raw.endianness"}

    def decode_record(self, data: bytes, where: str, schema) -> tuple:
        if len(schema) != 1:
            raise ConnectorError(f"The 'raw' format supports only one physical column, got {len(schema)}")
        if schema[0][1].is_string:
            try:
                return (data.decode("utf-8"),)
            except UnicodeDecodeError as e:
                raise BadRecordError(f"Invalid UTF-8 in {where}: {e}") from None
        return (data,)

    def encode_record(self, row: tuple, schema) -> bytes | None:
        value = row[0]
        return value.encode() if isinstance(value, str) else value


def _format(table: CatalogTable, as_sink: bool, name: str, prefix: str):
    """The format ``name`` with its options read under ``prefix`` (``key.``, ``value.`` or none)."""
    if name == "json":
        return JsonFormat(boolean(table, as_sink, f"{prefix}json.ignore-parse-errors"),
                          boolean(table, as_sink, f"{prefix}json.fail-on-missing-field"))
    if name == "csv":
        return CsvFormat(boolean(table, as_sink, f"{prefix}csv.ignore-parse-errors"),
                         table.options.get(f"{prefix}csv.field-delimiter", ","),
                         table.options.get(f"{prefix}csv.quote-character", '"'),
                         table.options.get(f"{prefix}csv.null-literal"))
    if name == "raw":
        return RawFormat()
    if name == "avro":
        return avro_format(table, as_sink, prefix)
    if name in CHANGELOG_FORMATS:
        if prefix == "key.":  # Flink's KafkaConnectorOptionsUtil refuses it the same way
            raise failure(table, as_sink, f"A key format should only deal with INSERT-only records. But {name} "
                                          f"has a changelog mode of [I,UB,UA,D].")
        return changelog_format(table, as_sink, name, prefix)
    raise failure(table, as_sink, f"Could not find any format factory for identifier '{name}' that implements "
                                  f"the Kafka connector's formats. Available formats: "
                                  f"{', '.join(sorted(['avro', 'csv', 'json', 'raw', *CHANGELOG_FORMATS]))}")


def decode(fmt, data: bytes, where: str, schema) -> tuple | None:
    """One record's bytes as a row of ``schema``; None when ignore-parse-errors skips it."""
    if isinstance(fmt, (RawFormat, AvroFormat)):
        return fmt.decode_record(data, where, schema)
    if isinstance(fmt, JsonFormat):  # one record per message: a raw newline can only be whitespace in JSON
        data = data.replace(b"\r", b" ").replace(b"\n", b" ")
    try:
        rows = fmt.decode_bytes(data, where, schema)
    except BadRecordError as e:  # the formats name a file and line; a Kafka record has its own position
        raise BadRecordError(str(e).replace(f"file {where}, line 1", where).replace(f"file {where}", where)) from None
    if len(rows) > 1:
        raise BadRecordError(f"{where}: one Kafka record holds {len(rows)} {fmt.name} records")
    return rows[0] if rows else None


def encode(fmt, row: tuple, schema) -> bytes | None:
    if isinstance(fmt, (RawFormat, AvroFormat)):
        return fmt.encode_record(row, schema)
    return fmt.encode([row], schema).rstrip(b"\n")


def require_client() -> None:
    """Fail naming the package when the Kafka client (confluent-kafka, the ``kafka`` extra) is missing."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        raise ConnectorError("The Kafka connectors need the confluent-kafka package: pip install "
                             "'changeflow[kafka]' (or confluent-kafka)") from None


def client_config(properties: dict[str, str], **more) -> dict:
    """``properties.*`` for a librdkafka client (confluent-kafka): the ones it does not know are left out.

    Flink's (and Spark's) clients are Java's; most property names are the same in
    librdkafka, some are Java's only (``default.api.timeout.ms``), which librdkafka refuses.
    Those still reach Spark's Java consumer (:mod:`changeflow.runtime.spark.connectors.kafka_source`).
    """
    from confluent_kafka import KafkaException, Producer

    config = {**properties, "log_level": 0, **more}
    while True:
        try:
            Producer({**config, "bootstrap.servers": config.get("bootstrap.servers", "")})
            return config
        except KafkaException as e:
            match = re.search(r'No such configuration property: "([^"]+)"', str(e))
            if match is None or match.group(1) not in config:
                raise
            del config[match.group(1)]


class KafkaTable:
    """What a Kafka table's source and sink share: topic, client properties, formats and column roles."""

    connector = "kafka"
    source_options = _SOURCE  # the options a source takes besides the common ones

    def __init__(self, table: CatalogTable, as_sink: bool) -> None:
        self.table, self.as_sink = table, as_sink
        options = table.options
        refused = {**_NOT_SUPPORTED, **(_UPSERT_NOT_SUPPORTED if self.connector == "upsert-kafka" else {})}
        for key, what in refused.items():
            if key in options:
                raise failure(table, as_sink, f"Option '{key}' is not supported by changeflow's '{self.connector}' "
                                              f"connector ({what} is not implemented).")
        value_format = options.get("value.format", options.get("format"))
        key_format = options.get("key.format")
        format_keys = set()
        for prefix, name in (("key.", key_format), ("value.", value_format), ("", options.get("format"))):
            for fmt in (JsonFormat, CsvFormat, RawFormat, AvroFormat, *CHANGELOG_FORMATS.values()):
                if fmt.name == name:
                    format_keys |= {prefix + o for o in fmt.options}
        check_keys(table, as_sink, self.connector,
                   _COMMON | (_SINK if as_sink else self.source_options) | format_keys
                   | {k for k in options if k.startswith("properties.")},
                   required=("properties.bootstrap.servers",))
        if value_format is None:
            raise failure(table, as_sink, "One or more required options are missing.\n\nMissing required options "
                                          "are:\n\nvalue.format")
        self.bootstrap = options["properties.bootstrap.servers"]
        # properties.* go to the Kafka client as they are (Flink's passthrough)
        self.properties = {k[len("properties."):]: v for k, v in options.items() if k.startswith("properties.")}
        columns = table.schema.physical_columns()
        self.metadata = {c.name: c.metadata for c in columns if c.metadata is not None}
        for name, key in self.metadata.items():
            if key not in METADATA:
                raise failure(table, as_sink, f"Invalid metadata key '{key}' in column '{name}' of table "
                                              f"'{table.name}'. The {self.connector} table source supports the "
                                              f"following metadata keys for reading:\n" + "\n".join(METADATA))
        physical = [(c.name, c.data_type) for c in columns if c.metadata is None]
        self.schema = tuple((c.name, c.data_type) for c in columns)
        self.payload_schema = tuple(physical)  # the columns read from a record's key and value
        key_fields = [f.strip() for f in options.get("key.fields", "").split(";") if f.strip()]
        if self.connector == "upsert-kafka":
            if "key.fields" in options:
                raise failure(table, as_sink, "Option 'key.fields' is not allowed for 'upsert-kafka': the key is "
                                              "the table's PRIMARY KEY.")
            if not table.schema.primary_key:
                raise failure(table, as_sink, "'upsert-kafka' tables require to define a PRIMARY KEY constraint. "
                                              "The PRIMARY KEY specifies which columns should be read from or "
                                              "write to the Kafka message key.")
            key_fields = list(table.schema.primary_key)
        names = [n for n, _ in physical]
        for f in key_fields:
            if f not in names:
                raise failure(table, as_sink, f"Could not find the field '{f}' in the table schema for usage in "
                                              f"the key format. A key field must be a regular, physical column. "
                                              f"The following columns can be selected in the 'key.fields' "
                                              f"option:\n{names}")
        if key_fields and key_format is None:
            raise failure(table, as_sink, "One or more required options are missing.\n\nMissing required options "
                                          "are:\n\nkey.format")
        if key_format is not None and not key_fields:
            raise failure(table, as_sink, "A key format 'key.format' requires the declaration of one or more of key "
                                          "fields using 'key.fields'.")
        include = options.get("value.fields-include", "ALL").upper()
        if include not in ("ALL", "EXCEPT_KEY"):
            raise failure(table, as_sink, f"Could not parse value '{include}' for key 'value.fields-include': "
                                          f"expected ALL or EXCEPT_KEY.")
        types = dict(physical)
        self.key_schema = tuple((f, types[f]) for f in key_fields)
        self.value_schema = tuple((n, t) for n, t in physical if include == "ALL" or n not in key_fields)
        self.key_format = _format(table, as_sink, key_format, "key.") if key_format else None
        if self.connector == "upsert-kafka" and value_format in CHANGELOG_FORMATS:  # Flink's upsert-kafka check
            raise failure(table, as_sink, f"'upsert-kafka' connector doesn't support '{value_format}' as value "
                                          f"format, because '{value_format}' is not in insert-only mode.")
        self.value_format = _format(table, as_sink, value_format,
                                    "value." if "value.format" in options else "")

    @property
    def changelog(self) -> bool:
        """Whether the value format is a changelog format: rows are changes ``(*values, kind)``."""
        return getattr(self.value_format, "changelog", False)

    def where(self, topic: str, partition: int, offset: int) -> str:
        return f"Kafka record of topic '{topic}', partition {partition}, offset {offset}"


def _specific_offsets(table: CatalogTable, text: str, key: str = "scan.startup.specific-offsets") -> dict[int, int]:
    """Flink's ``partition:0,offset:42;partition:1,offset:300`` as {partition: offset}."""
    offsets = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        match = re.fullmatch(r"partition:(\d+),offset:(\d+)", part.replace(" ", ""))
        if not match:
            raise failure(table, False, f"Invalid properties for option '{key}'. "
                                        f"Expected format is 'partition:0,offset:42;partition:1,offset:300', "
                                        f"got '{text}'.")
        offsets[int(match.group(1))] = int(match.group(2))
    return offsets


class KafkaSource(KafkaTable):
    """An unbounded ``kafka`` table read from ``startup`` on; rows decoded by :meth:`decode_record`."""

    bounded = False
    default_startup = "group-offsets"

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        super().__init__(table, False)
        options = table.options
        topic, pattern = options.get("topic"), options.get("topic-pattern")
        if (topic is None) == (pattern is None):
            raise failure(table, False, "Option 'topic' and 'topic-pattern' shouldn't be set together."
                          if topic else "Either 'topic' or 'topic-pattern' must be set.")
        self.topics = [t.strip() for t in topic.split(";")] if topic else []
        self.topic_pattern = pattern
        mode = options.get("scan.startup.mode", self.default_startup)
        if mode not in _STARTUP:
            raise failure(table, False, f"Invalid value for option 'scan.startup.mode'. Supported values are "
                                        f"[{', '.join(_STARTUP)}], but was: {mode}")
        self.startup_mode = mode
        self.startup_timestamp = integer(table, False, "scan.startup.timestamp-millis")
        if mode == "timestamp" and self.startup_timestamp is None:
            raise failure(table, False, "'scan.startup.timestamp-millis' is required in 'timestamp' startup mode "
                                        "but missing.")
        self.specific_offsets: dict[int, int] = {}
        if mode == "specific-offsets":
            text = options.get("scan.startup.specific-offsets")
            if text is None:
                raise failure(table, False, "'scan.startup.specific-offsets' is required in 'specific-offsets' "
                                            "startup mode but missing.")
            if len(self.topics) != 1:
                raise failure(table, False, "'scan.startup.specific-offsets' needs exactly one 'topic'.")
            self.specific_offsets = _specific_offsets(table, text)
        if mode == "group-offsets" and "group.id" not in self.properties:
            raise failure(table, False, "Option 'properties.group.id' is required in 'group-offsets' startup mode "
                                        "(the default 'scan.startup.mode').")
        self._bounded_options(table)
        if not streaming and not self.bounded:
            raise ConnectorError(f"Querying an unbounded table '{table.name}' in batch mode is not allowed. The "
                                 f"'{self.connector}' table is unbounded (set 'scan.bounded.mode' to read it "
                                 f"bounded).")

    def _bounded_options(self, table: CatalogTable) -> None:
        """``scan.bounded.*``: where the read of each partition stops (:attr:`bounded_mode`; None: unbounded)."""
        options = table.options
        mode = options.get("scan.bounded.mode", "unbounded")
        if mode not in _BOUNDED:
            raise failure(table, False, f"Invalid value for option 'scan.bounded.mode'. Supported values are "
                                        f"[{', '.join(_BOUNDED)}], but was: {mode}")
        self.bounded_mode = None if mode == "unbounded" else mode
        self.bounded = self.bounded_mode is not None
        self.bounded_timestamp = integer(table, False, "scan.bounded.timestamp-millis")
        if mode == "timestamp" and self.bounded_timestamp is None:
            raise failure(table, False, "'scan.bounded.timestamp-millis' is required in 'timestamp' bounded mode "
                                        "but missing.")
        self.bounded_offsets: dict[int, int] = {}
        if mode == "specific-offsets":
            text = options.get("scan.bounded.specific-offsets")
            if text is None:
                raise failure(table, False, "'scan.bounded.specific-offsets' is required in 'specific-offsets' "
                                            "bounded mode but missing.")
            if len(self.topics) != 1:
                raise failure(table, False, "'scan.bounded.specific-offsets' needs exactly one 'topic'.")
            self.bounded_offsets = _specific_offsets(table, text, "scan.bounded.specific-offsets")
        if mode == "group-offsets" and "group.id" not in self.properties:
            raise failure(table, False, "Option 'properties.group.id' is required in 'group-offsets' bounded mode.")
        if self.bounded and self.changelog:
            raise failure(table, False, f"'scan.bounded.mode' with the changelog format "
                                        f"'{self.value_format.name}' is not supported by changeflow (a bounded read "
                                        f"of changes is not implemented).")

    def decode_records(self, keys: list, values: list, where) -> tuple[list[tuple], list[int]]:
        """Records' keys and values as rows of :attr:`payload_schema`, and the indexes of the records kept.

        ``where(i)`` names record ``i`` in errors. Values of a keyless JSON or CSV table are
        decoded in one call of the format (a few times faster than one call per record);
        any doubt (a record that does not parse, a skipped one, a row count that differs)
        decodes record by record, which names the bad record.
        """
        fmt = self.value_format
        if self.changelog:
            return self._decode_changes(keys, values, where)
        if (self.key_format is None and isinstance(fmt, (JsonFormat, CsvFormat)) and not fmt.ignore_parse_errors
                and None not in values):
            if isinstance(fmt, JsonFormat):  # a raw newline can only be whitespace in JSON
                values_text = [v.replace(b"\r", b" ").replace(b"\n", b" ") for v in values]
            else:
                values_text = values
            try:
                rows = fmt.decode_bytes(b"\n".join(values_text), "Kafka records", self.value_schema)
            except BadRecordError:
                rows = None
            if rows is not None and len(rows) == len(values) and all(v.strip() for v in values_text):
                return rows, list(range(len(values)))
        rows, kept = [], []
        for i, (key, value) in enumerate(zip(keys, values, strict=True)):
            row = self.decode_record(key, value, where(i))
            if row is not None:
                rows.append(row)
                kept.append(i)
        return rows, kept

    def _decode_changes(self, keys: list, values: list, where) -> tuple[list[tuple], list[int]]:
        """Records of a changelog value format as changes ``(*payload, kind)``: none, one or several per record.

        A null value (a tombstone) gives no change, as in Flink's changelog formats.
        """
        fmt = self.value_format
        assert isinstance(fmt, ChangelogJsonFormat)
        rows, kept = [], []
        names = [n for n, _ in self.payload_schema]
        for i, (key, value) in enumerate(zip(keys, values, strict=True)):
            if not value:
                continue
            key_values: dict = {}
            if self.key_format is not None and key is not None:
                row = decode(self.key_format, key, f"key of {where(i)}", self.key_schema)
                if row is None:
                    continue
                key_values = dict(zip([n for n, _ in self.key_schema], row, strict=True))
            for change in fmt.decode_record(value, where(i), self.value_schema):
                columns = {**key_values, **dict(zip([n for n, _ in self.value_schema], change, strict=False))}
                rows.append(tuple(columns.get(n) for n in names) + (change[-1],))
                kept.append(i)
        report_skipped(fmt, self.table)  # in a Spark worker: a warning in the Spark log
        return rows, kept

    def decode_record(self, key: bytes | None, value: bytes | None, where: str) -> tuple | None:
        """A record's key and value as a row of :attr:`payload_schema` (None: skipped by ignore-parse-errors).

        ``where`` names the record in errors (:meth:`where`); metadata columns are the runtime's.
        """
        values: dict = {}
        if self.key_format is not None:
            if key is None:
                values.update(dict.fromkeys(n for n, _ in self.key_schema))
            else:
                row = decode(self.key_format, key, f"key of {where}", self.key_schema)
                if row is None:
                    return None
                values.update(zip([n for n, _ in self.key_schema], row, strict=True))
        if value is None:
            raise BadRecordError(f"{where}: a tombstone (null value) in a 'kafka' table; read a topic of upserts "
                                 f"and deletes with 'upsert-kafka'")
        row = decode(self.value_format, value, where, self.value_schema)
        if row is None:
            return None
        values.update(zip([n for n, _ in self.value_schema], row, strict=True))
        return tuple(values.get(n) for n, _ in self.payload_schema)


class UpsertKafkaSource(KafkaSource):
    """An ``upsert-kafka`` table read as an upsert changelog keyed by its ``PRIMARY KEY`` (Flink's semantics).

    The topic is read from its earliest offset (Flink's upsert-kafka has no
    ``scan.startup.mode``): a record's row is an upsert of its key (``+I``; the
    ChangelogNormalize after the source makes it ``+I`` or ``-U``/``+U``), a record
    with a null value (a tombstone) deletes its key (``-D`` holding only the key
    columns, completed by ChangelogNormalize from the key's last row). The runtime
    gives a tombstone its kind (``changeflow.runtime.spark.connectors.kafka_source``).
    """

    connector = "upsert-kafka"
    source_options = {"scan.parallelism"}  # Flink's upsert-kafka source takes no startup or pattern options
    default_startup = "earliest-offset"
    changelog_mode = "upsert"  # plan/rules/changelog_mode.py: [I,UA,D]

    def decode_record(self, key: bytes | None, value: bytes | None, where: str) -> tuple | None:
        """A record as a row; a tombstone as its key columns with nulls elsewhere (its kind is ``-D``)."""
        if value is not None:
            return super().decode_record(key, value, where)
        if key is None:
            raise BadRecordError(f"{where}: a record of 'upsert-kafka' table '{self.table.name}' without a key and "
                                 f"without a value (a tombstone must name the key it deletes)")
        row = decode(self.key_format, key, f"key of {where}", self.key_schema)
        if row is None:
            return None
        values = dict(zip([n for n, _ in self.key_schema], row, strict=True))
        return tuple(values.get(n) for n, _ in self.payload_schema)


def upsert_kafka_source(table: CatalogTable, streaming: bool) -> UpsertKafkaSource:
    """The source of an ``upsert-kafka`` table (the connectors' factory for the name)."""
    return UpsertKafkaSource(table, streaming)
