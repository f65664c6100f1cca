"""PyFlink's ``kafka`` DataStream connector: ``KafkaSource`` and ``KafkaSink`` builders.

::

    source = KafkaSource.builder() \\
        .set_bootstrap_servers("localhost:9092").set_topics("clicks").set_group_id("g") \\
        .set_starting_offsets(KafkaOffsetsInitializer.earliest()) \\
        .set_value_only_deserializer(SimpleStringSchema()).build()
    clicks = env.from_source(source, WatermarkStrategy.no_watermarks(), "clicks")
    sink = KafkaSink.builder().set_bootstrap_servers("localhost:9092") \\
        .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic("out")
                               .set_value_serialization_schema(SimpleStringSchema()).build()) \\
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).set_transactional_id_prefix("clicks") \\
        .build()
    clicks.map(str.upper, Types.STRING()).sink_to(sink)

Both run the ``kafka`` table connector's machinery (:mod:`changeflow.connectors.kafka`,
:mod:`changeflow.connectors.kafka_sink`) over one column, the record's value (``raw``
format): the source is Spark's Kafka source, its offsets in the job's checkpoint, so a
named job run again (``changeflow.checkpoint-dir``) goes on after the last committed
micro-batch; the sink produces each micro-batch in order, ``EXACTLY_ONCE`` as one Kafka
transaction per micro-batch (readers with ``isolation.level`` = ``read_committed`` see
each record once across restarts).

An unbounded source in a STREAMING job reads the records there when the job starts (as
any unbounded Spark stream of a DataStream job, ``availableNow``) and ends; running
the job again reads what came since. Records are strings with ``SimpleStringSchema`` (UTF-8),
or ``Row``s with the JSON and CSV row formats of :mod:`changeflow.datastream.formats.json` and
:mod:`~changeflow.datastream.formats.csv` (a deserializer runs as a flat map right after the source; a
serializer in the sink). Not supported (refused naming it): Avro row schemas, a key serializer beside a
row-format value serializer, ``set_partitions``,
``KafkaOffsetsInitializer.offsets`` over several topics, ``set_unbounded``, a topic
selector, and the legacy ``FlinkKafkaConsumer``/``FlinkKafkaProducer``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Callable

from changeflow.catalog import CatalogTable
from changeflow.catalog.schema import DeclaredColumn, DeclaredSchema
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.common.serialization import SimpleStringSchema
from changeflow.common.typeinfo import Types
from changeflow.common.types import DataTypes
from changeflow.connectors.sink_job import SinkJob
from changeflow.datastream.connectors.base import DeliveryGuarantee, Sink, Source
from changeflow.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from changeflow.datastream.formats.json import (DeserializedRows, JsonRowDeserializationSchema,
                                                JsonRowSerializationSchema)
from changeflow.datastream.functions import FlatMapFunction

__all__ = ["FlinkKafkaConsumer", "FlinkKafkaProducer", "KafkaOffsetResetStrategy", "KafkaOffsetsInitializer",
           "KafkaRecordSerializationSchema", "KafkaRecordSerializationSchemaBuilder", "KafkaSink",
           "KafkaSinkBuilder", "KafkaSource", "KafkaSourceBuilder", "KafkaTopicPartition", "KafkaTopicSelector",
           "Semantic"]

_COLUMN = "value"  # the one column of the table the connector reads and writes


def _table(name: str, options: dict[str, str]) -> CatalogTable:
    """A ``kafka`` table of one STRING column, the record's value (``raw``), with ``options``."""
    schema = DeclaredSchema((DeclaredColumn(_COLUMN, DataTypes.STRING(), "STRING"),))
    return CatalogTable(name, schema, {"connector": "kafka", "value.format": "raw", **options})


# The row formats a source reads and a sink writes besides text.
_ROW_DESERIALIZERS = (JsonRowDeserializationSchema, CsvRowDeserializationSchema)
_ROW_SERIALIZERS = (JsonRowSerializationSchema, CsvRowSerializationSchema)


def _check_string_schema(schema: Any, what: str, row_schemas: tuple[type, ...] = ()) -> None:
    if not isinstance(schema, (SimpleStringSchema, *row_schemas)):
        names = "".join(f" or {t.__name__}" for t in row_schemas)
        raise NotImplementedError(f"{what}({type(schema).__name__}) is not supported by changeflow: use "
                                  f"SimpleStringSchema(){names} (Avro row schemas are not implemented)")


class KafkaOffsetResetStrategy(Enum):
    """Where to start in a partition without a committed offset (``committed_offsets``)."""

    LATEST = 0
    EARLIEST = 1
    NONE = 2


class KafkaTopicPartition:
    """A topic's partition: the key of ``KafkaOffsetsInitializer.offsets``."""

    def __init__(self, topic: str, partition: int) -> None:
        self._topic = topic
        self._partition = partition

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, KafkaTopicPartition) and self._topic == other._topic
                and self._partition == other._partition)

    def __hash__(self) -> int:
        return 31 * (31 + self._partition) + hash(self._topic)


class KafkaOffsetsInitializer:
    """Where a source starts (or, bounded, stops) in each partition, as the ``kafka`` table's options.

    ``options(prefix)`` gives them under ``scan.startup`` or ``scan.bounded``.
    """

    def __init__(self, mode: str, options: Callable[[str], dict[str, str]] = lambda prefix: {},
                 properties: dict[str, str] | None = None, topics: tuple[str, ...] = ()) -> None:
        self.mode = mode  # the table's mode name: earliest-offset, latest-offset, group-offsets, ...
        self._options = options
        self.properties = properties or {}  # client properties the mode needs (auto.offset.reset)
        self.topics = topics  # the topics an ``offsets`` initializer names

    def options(self, prefix: str) -> dict[str, str]:
        return {f"{prefix}.mode": self.mode, **self._options(prefix)}

    @staticmethod
    def committed_offsets(offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE) \
            -> "KafkaOffsetsInitializer":
        """The consumer group's committed offsets; a partition without one starts as the strategy says
        (NONE: the job fails naming it)."""
        reset = {KafkaOffsetResetStrategy.EARLIEST: "earliest", KafkaOffsetResetStrategy.LATEST: "latest"}
        properties = {"auto.offset.reset": reset[offset_reset_strategy]} if offset_reset_strategy in reset else {}
        return KafkaOffsetsInitializer("group-offsets", properties=properties)

    @staticmethod
    def timestamp(timestamp: int) -> "KafkaOffsetsInitializer":
        """The first record whose timestamp is at or after ``timestamp`` (epoch milliseconds)."""
        return KafkaOffsetsInitializer("timestamp", lambda prefix: {f"{prefix}.timestamp-millis": str(timestamp)})

    @staticmethod
    def earliest() -> "KafkaOffsetsInitializer":
        return KafkaOffsetsInitializer("earliest-offset")

    @staticmethod
    def latest() -> "KafkaOffsetsInitializer":
        return KafkaOffsetsInitializer("latest-offset")

    @staticmethod
    def offsets(offsets: dict[KafkaTopicPartition, int],
                offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.EARLIEST) \
            -> "KafkaOffsetsInitializer":
        """Given offsets of one topic's partitions (the others: their earliest offset)."""
        topics = tuple(sorted({tp._topic for tp in offsets}))
        text = ";".join(f"partition:{tp._partition},offset:{offset}"
                        for tp, offset in sorted(offsets.items(), key=lambda item: item[0]._partition))
        return KafkaOffsetsInitializer("specific-offsets", lambda prefix: {f"{prefix}.specific-offsets": text},
                                       topics=topics)


class KafkaSourceBuilder:
    """Builds a :class:`KafkaSource`: bootstrap servers, topics and a value deserializer are required."""

    def __init__(self) -> None:
        self._bootstrap: str | None = None
        self._topics: tuple[str, ...] = ()
        self._pattern: str | None = None
        self._properties: dict[str, str] = {}
        self._start = KafkaOffsetsInitializer.earliest()  # Flink's default starting offsets
        self._stop: KafkaOffsetsInitializer | None = None
        self._deserializer: Any = None

    def set_bootstrap_servers(self, bootstrap_servers: str) -> "KafkaSourceBuilder":
        self._bootstrap = bootstrap_servers
        return self

    def set_group_id(self, group_id: str) -> "KafkaSourceBuilder":
        self._properties["group.id"] = group_id
        return self

    def set_topics(self, *topics: str) -> "KafkaSourceBuilder":
        self._topics, self._pattern = tuple(topics), None
        return self

    def set_topic_pattern(self, topic_pattern: str) -> "KafkaSourceBuilder":
        self._topics, self._pattern = (), topic_pattern
        return self

    def set_partitions(self, partitions: Any) -> "KafkaSourceBuilder":
        raise NotImplementedError("KafkaSourceBuilder.set_partitions (a set of partitions) is not supported by "
                                  "changeflow: subscribe to whole topics with set_topics or set_topic_pattern")

    def set_starting_offsets(self, starting_offsets_initializer: KafkaOffsetsInitializer) -> "KafkaSourceBuilder":
        self._start = _initializer(starting_offsets_initializer, "set_starting_offsets")
        return self

    def set_unbounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> "KafkaSourceBuilder":
        raise NotImplementedError("KafkaSourceBuilder.set_unbounded (an unbounded source with stopping offsets) is "
                                  "not supported by changeflow: use set_bounded")

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> "KafkaSourceBuilder":
        self._stop = _initializer(stopping_offsets_initializer, "set_bounded")
        return self

    def set_value_only_deserializer(self, deserialization_schema: Any) -> "KafkaSourceBuilder":
        _check_string_schema(deserialization_schema, "KafkaSourceBuilder.set_value_only_deserializer",
                             _ROW_DESERIALIZERS)
        self._deserializer = deserialization_schema
        return self

    def set_client_id_prefix(self, prefix: str) -> "KafkaSourceBuilder":
        self._properties["client.id.prefix"] = prefix
        return self

    def set_property(self, key: str, value: str) -> "KafkaSourceBuilder":
        self._properties[key] = value
        return self

    def set_properties(self, props: dict) -> "KafkaSourceBuilder":
        for key, value in props.items():
            self.set_property(key, value)
        return self

    def build(self) -> "KafkaSource":
        """The source; fails, as Flink's builder, when a required setting is missing."""
        if not self._bootstrap:
            raise ValueError("KafkaSource: bootstrap servers are required (set_bootstrap_servers)")
        if not self._topics and self._pattern is None:
            raise ValueError("KafkaSource: no subscribe mode is specified; call set_topics or set_topic_pattern")
        if self._deserializer is None:
            raise ValueError("KafkaSource: the deserialization schema is required (set_value_only_deserializer)")
        options = {"properties.bootstrap.servers": self._bootstrap}
        if self._pattern is not None:
            options["topic-pattern"] = self._pattern
        else:
            options["topic"] = ";".join(self._topics)
        properties = {**self._start.properties, **self._properties}
        for initializer in (self._start, self._stop):
            if initializer is not None and initializer.mode == "specific-offsets" \
                    and initializer.topics != tuple(self._topics):
                raise NotImplementedError(
                    f"KafkaOffsetsInitializer.offsets for topics {list(initializer.topics)} of a source of "
                    f"{list(self._topics) or self._pattern!r}: changeflow takes given offsets of a source of one "
                    f"topic, that topic's")
        options.update(self._start.options("scan.startup"))
        if self._stop is not None:
            if self._stop.mode == "earliest-offset":
                raise NotImplementedError("KafkaSourceBuilder.set_bounded(KafkaOffsetsInitializer.earliest()) (a "
                                          "source that reads nothing) is not supported by changeflow")
            options.update(self._stop.options("scan.bounded"))
        options.update({f"properties.{k}": v for k, v in properties.items()})
        return KafkaSource(options, self._stop is not None, self._deserializer)


def _initializer(value: Any, method: str) -> KafkaOffsetsInitializer:
    if not isinstance(value, KafkaOffsetsInitializer):
        raise TypeError(f"KafkaSourceBuilder.{method} takes a KafkaOffsetsInitializer, got {value!r}")
    return value


class KafkaSource(Source):
    """Records of Kafka topics, each value a ``Types.STRING()`` record (see the module docstring)."""

    def __init__(self, options: dict[str, str], bounded: bool, deserializer: Any = None) -> None:
        self.options = options
        self.bounded = bounded
        self.deserializer = deserializer

    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()

    def connector(self, name: str):
        """The ``kafka`` table connector reading this source's records (named ``name`` in its errors)."""
        from changeflow.connectors.kafka import KafkaSource as KafkaTableSource

        return KafkaTableSource(_table(name, self.options), streaming=True)

    def source_node(self, name: str) -> tuple[str, Any, Any]:
        return "kafka", self.connector(name), Types.STRING()

    def record_decoder(self) -> tuple[FlatMapFunction, Any] | None:
        """The function turning each value's text into the deserializer's records, and their type (None: text)."""
        if isinstance(self.deserializer, _ROW_DESERIALIZERS):
            return DeserializedRows(self.deserializer), self.deserializer.get_produced_type()
        return None


class KafkaTopicSelector:
    """PyFlink's per-record topic choice: not supported by changeflow (one topic per sink, ``set_topic``)."""

    def apply(self, data: Any) -> str:
        raise NotImplementedError


class KafkaRecordSerializationSchema:
    """How the sink writes a record: its topic, its value's (and optionally its key's) serializer."""

    def __init__(self, topic: str, key_schema: Any, value_schema: Any) -> None:
        self.topic = topic
        self.key_schema = key_schema
        self.value_schema = value_schema

    @staticmethod
    def builder() -> "KafkaRecordSerializationSchemaBuilder":
        return KafkaRecordSerializationSchemaBuilder()


class KafkaRecordSerializationSchemaBuilder:
    """Builds a :class:`KafkaRecordSerializationSchema`: a topic and a value serializer are required."""

    def __init__(self) -> None:
        self._topic: str | None = None
        self._key: Any = None
        self._value: Any = None

    def set_topic(self, topic: str) -> "KafkaRecordSerializationSchemaBuilder":
        self._topic = topic
        return self

    def set_topic_selector(self, topic_selector: Any) -> "KafkaRecordSerializationSchemaBuilder":
        raise NotImplementedError("KafkaRecordSerializationSchemaBuilder.set_topic_selector (a topic per record) is "
                                  "not supported by changeflow: use set_topic")

    def set_key_serialization_schema(self, key_serialization_schema: Any) -> "KafkaRecordSerializationSchemaBuilder":
        _check_string_schema(key_serialization_schema, "KafkaRecordSerializationSchemaBuilder."
                                                       "set_key_serialization_schema")
        self._key = key_serialization_schema
        return self

    def set_value_serialization_schema(self, value_serialization_schema: Any) \
            -> "KafkaRecordSerializationSchemaBuilder":
        _check_string_schema(value_serialization_schema, "KafkaRecordSerializationSchemaBuilder."
                                                         "set_value_serialization_schema", _ROW_SERIALIZERS)
        self._value = value_serialization_schema
        return self

    def build(self) -> KafkaRecordSerializationSchema:
        if self._topic is None:
            raise ValueError("KafkaRecordSerializationSchema: no topic or topic selector is specified (set_topic)")
        if self._value is None:
            raise ValueError("KafkaRecordSerializationSchema: a value serialization schema is required "
                             "(set_value_serialization_schema)")
        if self._key is not None and not isinstance(self._value, SimpleStringSchema):
            raise NotImplementedError(f"KafkaRecordSerializationSchema with a key serializer and a row-format value "
                                      f"serializer ({type(self._value).__name__}) is not supported by changeflow: "
                                      "the key is written only as the record's text (SimpleStringSchema for both)")
        return KafkaRecordSerializationSchema(self._topic, self._key, self._value)


class KafkaSinkBuilder:
    """Builds a :class:`KafkaSink`: bootstrap servers and a record serializer are required."""

    def __init__(self) -> None:
        self._bootstrap: str | None = None
        self._serializer: KafkaRecordSerializationSchema | None = None
        self._guarantee = DeliveryGuarantee.NONE  # Flink's default
        self._prefix: str | None = None
        self._properties: dict[str, str] = {}

    def set_bootstrap_servers(self, bootstrap_servers: str) -> "KafkaSinkBuilder":
        self._bootstrap = bootstrap_servers
        return self

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee) -> "KafkaSinkBuilder":
        if not isinstance(delivery_guarantee, DeliveryGuarantee):
            raise TypeError(f"KafkaSinkBuilder.set_delivery_guarantee takes a DeliveryGuarantee, "
                            f"got {delivery_guarantee!r}")
        self._guarantee = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> "KafkaSinkBuilder":
        self._prefix = transactional_id_prefix
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema) -> "KafkaSinkBuilder":
        if not isinstance(record_serializer, KafkaRecordSerializationSchema):
            raise TypeError(f"KafkaSinkBuilder.set_record_serializer takes a KafkaRecordSerializationSchema, "
                            f"got {record_serializer!r}")
        self._serializer = record_serializer
        return self

    def set_property(self, key: str, value: str) -> "KafkaSinkBuilder":
        self._properties[key] = value
        return self

    def build(self) -> "KafkaSink":
        """The sink; fails, as Flink's builder, without servers or serializer, or exactly once without a prefix."""
        if not self._bootstrap:
            raise ValueError("KafkaSink: bootstrap servers are required (set_bootstrap_servers)")
        if self._serializer is None:
            raise ValueError("KafkaSink: a record serializer is required (set_record_serializer)")
        if self._guarantee is DeliveryGuarantee.EXACTLY_ONCE and not self._prefix:
            raise ValueError("EXACTLY_ONCE delivery guarantee requires a transactionalIdPrefix to be set to provide "
                             "unique transaction names across multiple KafkaSinks writing to the same Kafka cluster.")
        guarantee = {DeliveryGuarantee.EXACTLY_ONCE: "exactly-once", DeliveryGuarantee.AT_LEAST_ONCE: "at-least-once",
                     DeliveryGuarantee.NONE: "none"}[self._guarantee]
        options = {"topic": self._serializer.topic, "properties.bootstrap.servers": self._bootstrap,
                   "sink.delivery-guarantee": guarantee,
                   **{f"properties.{k}": v for k, v in self._properties.items()}}
        if self._serializer.key_schema is not None:  # the key is the record too
            options.update({"key.format": "raw", "key.fields": _COLUMN})
        return KafkaSink(options, self._prefix, self._serializer.value_schema)


class KafkaSink(Sink):
    """Writes each record (a string) as a Kafka record's value (and key, with a key serializer)."""

    def __init__(self, options: dict[str, str], transactional_id_prefix: str | None, value_schema: Any = None) -> None:
        from changeflow.connectors.kafka_sink import KafkaSink as KafkaTableSink

        self._sink = KafkaTableSink(_table("KafkaSink", options))
        self._serializer = value_schema
        if transactional_id_prefix:
            self._sink.transactional_id_prefix = transactional_id_prefix

    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

    def open_job(self, job: SinkJob) -> None:
        """The job writing this sink: exactly once, its writer id names the transaction, stable across restarts."""
        self._sink.close()
        self._sink.open(job)

    def write(self, records: list[Any]) -> None:
        self.write_batch(records, None)

    def write_batch(self, records: list[Any], batch_id: int | None) -> None:
        """Produces one micro-batch's records in order (exactly once: one transaction, skipped if committed)."""
        if isinstance(self._serializer, _ROW_SERIALIZERS):
            records = [self._serializer.serialize(r).decode("utf-8") for r in records]
        for record in records:
            if not isinstance(record, str):
                raise TypeError(f"KafkaSink with SimpleStringSchema writes STRING records, got {record!r}; map the "
                                f"stream to strings first")
        self._sink.write([Change(RowKind.INSERT, (r,)) for r in records], batch_id)


def _legacy(name: str, instead: str) -> type:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{name} (the legacy Kafka connector) is not supported by changeflow: use "
                                  f"{instead}")
    return type(name, (), {"__init__": refuse, "__doc__": f"Refused: use {instead}."})


FlinkKafkaConsumer = _legacy("FlinkKafkaConsumer", "KafkaSource.builder()")
FlinkKafkaProducer = _legacy("FlinkKafkaProducer", "KafkaSink.builder()")


class Semantic(Enum):
    """The legacy ``FlinkKafkaProducer``'s guarantees (use ``DeliveryGuarantee`` with ``KafkaSink``)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2
