"""A ``kafka`` table on Spark: Spark's own Kafka source, each record decoded by the connector's formats.

Spark's Kafka source (``spark-sql-kafka-0-10``; ``./setup.sh`` puts its jars on changeflow's
own session, :func:`spark_jars`) reads the topic; its offsets are in the query's checkpoint,
so a restarted job resumes after the last committed micro-batch, neither skipping nor
repeating records. Each micro-batch's records are decoded in the Python workers by the
connector (:class:`changeflow.connectors.kafka.KafkaSource`), so a bad record fails the
job naming its topic, partition and offset. Metadata columns are Spark column expressions
over the record's fields. ``_seq`` is the record's offset: a partition's records keep their
order (records of different partitions have none, as in Flink). An ``upsert-kafka`` record's
kind is ``+I``, or ``-D`` for a tombstone (a null value).

Where to start is translated to Spark's options once, when the query first starts:
``earliest-offset``/``latest-offset``, ``timestamp`` (``startingTimestamp``),
``specific-offsets`` (the other partitions from the earliest offset) and ``group-offsets``
(the group's committed offsets, read with a Kafka client; a partition without one follows
``properties.auto.offset.reset``, else fails naming it).
"""

from __future__ import annotations

import glob
import json
import os
import sys

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.type_values import arrow_type
from changeflow.common.types import DataTypes
from changeflow.connectors.kafka import KafkaSource, client_config, require_client
from changeflow.connectors.options import ConnectorError
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.runtime.spark.spark_types import struct, to_spark

SPARK_KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"
_TOMBSTONE = "_tombstone"  # an upsert-kafka record without a value: a -D of its key
# Options Spark's Kafka source sets itself and refuses from the user.
SPARK_OWNS = {"auto.offset.reset", "key.deserializer", "value.deserializer", "enable.auto.commit",
              "interceptor.classes", "group.id", "bootstrap.servers"}


def spark_jars() -> list[str]:
    """The jars of Spark's Kafka source that ``./setup.sh`` fetched into the environment (none if not set up)."""
    return sorted(glob.glob(os.path.join(sys.prefix, "jars", "spark-kafka", "*.jar")))


def check_broker(connector: KafkaSource) -> list[str]:
    """Fail naming the option if no broker answers at ``properties.bootstrap.servers``; the topics' names."""
    require_client()
    from confluent_kafka.admin import AdminClient

    if not any(_listening(server) for server in connector.bootstrap.split(",")):
        raise ConnectorError(f"Kafka table '{connector.table.name}': no Kafka broker answered at "
                             f"'properties.bootstrap.servers' = '{connector.bootstrap}' (connection refused or "
                             f"timed out at every server)")
    admin = AdminClient(_client_config(connector))
    try:
        metadata = admin.list_topics(timeout=15)
    except Exception as e:  # KafkaException: transport failure, all brokers down
        raise ConnectorError(f"Kafka table '{connector.table.name}': no Kafka broker answered at "
                             f"'properties.bootstrap.servers' = '{connector.bootstrap}' within 15 s: {e}") from None
    return list(metadata.topics)


def _listening(server: str) -> bool:
    """Whether ``host:port`` accepts a TCP connection within 5 s (a client would retry for long)."""
    import socket

    host, _, port = server.strip().rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            return True
    except (OSError, ValueError):
        return False


def _client_config(connector: KafkaSource, **more) -> dict:
    properties = {k: v for k, v in connector.properties.items() if k not in ("auto.offset.reset",)}
    return client_config(properties, **more)


def _partitions(connector: KafkaSource, topic: str) -> list[int]:
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient(_client_config(connector)).list_topics(topic, timeout=15)
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        raise ConnectorError(f"Kafka table '{connector.table.name}': topic '{topic}' does not exist")
    return sorted(found.partitions)


def _group_offsets(connector: KafkaSource) -> str:
    """Spark's ``startingOffsets`` JSON from the group's committed offsets (``group-offsets``)."""
    from confluent_kafka import Consumer, TopicPartition

    group = connector.properties["group.id"]
    reset = connector.properties.get("auto.offset.reset")
    consumer = Consumer(_client_config(connector, **{"enable.auto.commit": False}))
    try:
        offsets: dict = {}
        for topic in connector.topics:
            committed = consumer.committed([TopicPartition(topic, p) for p in _partitions(connector, topic)],
                                           timeout=15)
            for tp in committed:
                if tp.offset >= 0:
                    offsets.setdefault(topic, {})[str(tp.partition)] = tp.offset
                elif reset in ("earliest", "latest"):
                    offsets.setdefault(topic, {})[str(tp.partition)] = -2 if reset == "earliest" else -1
                else:
                    raise ConnectorError(
                        f"Kafka table '{connector.table.name}': group '{group}' has no committed offset for "
                        f"partition {tp.partition} of topic '{topic}' ('scan.startup.mode' = 'group-offsets'); set "
                        f"'properties.auto.offset.reset' to 'earliest' or 'latest', or another 'scan.startup.mode'")
        return json.dumps(offsets)
    finally:
        consumer.close()


def _start_options(connector: KafkaSource) -> dict[str, str]:
    mode = connector.startup_mode
    if mode == "earliest-offset":
        return {"startingOffsets": "earliest"}
    if mode == "latest-offset":
        return {"startingOffsets": "latest"}
    if mode == "timestamp":
        return {"startingTimestamp": str(connector.startup_timestamp)}
    if mode == "specific-offsets":
        topic = connector.topics[0]
        offsets = {str(p): connector.specific_offsets.get(p, -2) for p in _partitions(connector, topic)}
        return {"startingOffsets": json.dumps({topic: offsets})}
    return {"startingOffsets": _group_offsets(connector)}


def _metadata_column(key: str, name: str, data_type) -> Column:
    column = {"topic": F.col("topic"), "partition": F.col("partition"), "offset": F.col("offset"),
              "timestamp": F.col("timestamp"),
              "timestamp-type": F.when(F.col("timestampType") == 0, F.lit("CreateTime"))
                                 .when(F.col("timestampType") == 1, F.lit("LogAppendTime"))
                                 .otherwise(F.lit("NoTimestampType")),
              # no headers: Spark gives null, Flink an empty map
              "headers": F.coalesce(F.map_from_entries(F.col("headers")),
                                    F.create_map().cast("map<string,binary>")),
              "leader-epoch": F.lit(None)}[key]
    return column.cast(to_spark(data_type)).alias(name)


def missing_jar_error(connector: KafkaSource, error: Exception) -> ConnectorError | None:
    """The error to raise when ``error`` says the session lacks Spark's Kafka source (None for another error).

    A user's session is not changed by changeflow: it names what to add.

    >>> from changeflow.sql.ddl import parse_create_table
    >>> t, _ = parse_create_table("CREATE TABLE s (v STRING) WITH ('connector' = 'kafka', 'topic' = 't', "
    ...     "'properties.bootstrap.servers' = 'h:1', 'value.format' = 'raw', 'scan.startup.mode' = 'earliest-offset')")
    >>> print(missing_jar_error(KafkaSource(t, True), Exception("[KAFKA_DATA_SOURCE_NOT_ENABLED] Failed to find "
    ...     "data source: kafka. Please deploy the application as per ...")))
    Kafka table 's' needs Spark's Kafka source on the SparkSession's classpath: start the session with
    spark.jars.packages=org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 (or its jars in spark.jars; ./setup.sh
    fetches them into .venv/jars/spark-kafka)
    """
    text = str(error)
    if "KAFKA_DATA_SOURCE_NOT_ENABLED" not in text and "Failed to find data source: kafka" not in text:
        return None
    return ConnectorError(
        f"Kafka table '{connector.table.name}' needs Spark's Kafka source on the SparkSession's classpath: "
        f"start the session with spark.jars.packages={SPARK_KAFKA_PACKAGE} (or its jars in spark.jars; "
        f"./setup.sh fetches them into .venv/jars/spark-kafka)")


def kafka_reader(reader, connector: KafkaSource):
    """``reader`` (``spark.read`` or ``spark.readStream``) of Spark's Kafka source with the table's client
    properties (all but those Spark owns); the caller has checked the broker (:func:`check_broker`)."""
    reader = reader.format("kafka").option("kafka.bootstrap.servers", connector.bootstrap)
    for key, value in connector.properties.items():
        if key not in SPARK_OWNS:
            reader = reader.option(f"kafka.{key}", value)
    return reader


def kafka_stream(spark: SparkSession, connector: KafkaSource, rows_per_batch: int) -> DataFrame:
    """The table's records as a stream of its columns (declared order), ``_kind`` +I, ``_seq`` and ``_sub``."""
    check_broker(connector)
    reader = kafka_reader(spark.readStream, connector)
    if connector.topic_pattern is not None:
        reader = reader.option("subscribePattern", connector.topic_pattern)
    else:
        reader = reader.option("subscribe", ",".join(connector.topics))
    for key, value in _start_options(connector).items():
        reader = reader.option(key, value)
    return load_records(reader.option("maxOffsetsPerTrigger", rows_per_batch), connector)


def load_records(reader, connector: KafkaSource) -> DataFrame:
    """The records ``reader`` (:func:`kafka_reader`) reads, decoded (:func:`decoded_records`); a missing Kafka
    source on the session's classpath is an error that says how to add it (:func:`missing_jar_error`)."""
    try:
        records = reader.option("includeHeaders", str("headers" in connector.metadata.values()).lower()).load()
    except AnalysisException as e:
        raise missing_jar_error(connector, e) or e from None
    return decoded_records(connector, records)


def decoded_records(connector: KafkaSource, records: DataFrame) -> DataFrame:
    """Spark's Kafka records (a stream, or a bounded read's batch frame) decoded as :func:`kafka_stream` says."""
    headers = "headers" in connector.metadata.values()
    payload = connector.payload_schema
    # A changelog value format (debezium-json, ...) gives each row's change kind and, as a record may
    # give several changes (-U and +U), its position among them: the change's _sub.
    changes = ((_CDC_KIND, DataTypes.TINYINT()), (_CDC_SUB, DataTypes.BIGINT())) if connector.changelog else ()
    out = struct(payload + changes).add("_row", T.LongType(), False)
    arrow_out = pa.schema([(n, arrow_type(t)) for n, t in payload + changes] + [("_row", pa.int64())])

    def decode(batches):
        for batch in batches:
            keys, values, topics, partitions, offsets = [
                batch.column(n).to_pylist() for n in ("key", "value", "topic", "partition", "offset")]
            rows, kept = connector.decode_records(
                keys, values, lambda i: connector.where(topics[i], partitions[i], offsets[i]))  # noqa: B023
            if changes:
                rows = [row + (_sub_of(kept, j),) for j, row in enumerate(rows)]
            values = list(zip(*rows, strict=True)) if rows else [()] * (len(payload) + len(changes))
            arrays = [pa.array(list(v), type=arrow_type(t))
                      for v, (_, t) in zip(values, payload + changes, strict=True)]
            yield pa.RecordBatch.from_arrays(arrays + [pa.array(kept, type=pa.int64())], schema=arrow_out)

    # The record's own fields (topic, offset, timestamp, ...) pass through the Python worker as Arrow
    # arrays, taken at the kept rows: metadata columns are then Spark expressions (no Python conversion).
    fields = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"] + (
        ["headers"] if headers else [])
    upsert = getattr(connector, "changelog_mode", None) == "upsert"
    if upsert:  # upsert-kafka: a tombstone (null value) is a -D of its key, any other record a +I
        records = records.withColumn(_TOMBSTONE, F.col("value").isNull())
        fields.append(_TOMBSTONE)
    numbered = records.select(*fields)
    frame = numbered.mapInArrow(_with_record(decode, fields), _out_schema(out, numbered.schema, fields))
    columns = []
    for name, data_type in connector.schema:
        key = connector.metadata.get(name)
        columns.append(F.col(f"`{name}`") if key is None else _metadata_column(key, name, data_type))
    if changes:  # a changelog value format: each row's kind and position among its record's changes
        kind, sub = F.col(_CDC_KIND), F.col(_CDC_SUB)
    else:  # upsert-kafka: a tombstone is a -D (3) of its key; anything else +I
        kind = F.when(F.col(_TOMBSTONE), F.lit(3)).otherwise(F.lit(0)) if upsert else F.lit(0)
        sub = F.lit(0)
    return frame.select(*columns, kind.cast("byte").alias(KIND), F.col("offset").cast("long").alias(SEQ),
                        sub.cast("long").alias(SUB))


_CDC_KIND, _CDC_SUB = "_cdc_kind", "_cdc_sub"


def _sub_of(kept: list[int], j: int) -> int:
    """The position of row ``j`` among the rows of its record (``kept`` holds each row's record index)."""
    sub = 0
    while j - sub > 0 and kept[j - sub - 1] == kept[j]:
        sub += 1
    return sub


def _out_schema(decoded: T.StructType, records: T.StructType, fields: list[str]) -> T.StructType:
    schema = T.StructType([f for f in decoded.fields if f.name != "_row"])
    for f in records.fields:
        if f.name in fields and f.name not in ("key", "value"):
            schema = schema.add(f)
    return schema


def _with_record(decode, fields: list[str]):
    """``decode``'s rows with the record fields (not key and value) of the rows it kept, taken from its input."""
    kept_fields = [f for f in fields if f not in ("key", "value")]

    def run(batches):
        for batch in batches:
            for out in decode([batch]):
                rows = out.column(out.num_columns - 1)
                extra = [batch.column(f).take(rows) for f in kept_fields]
                yield pa.RecordBatch.from_arrays(out.columns[:-1] + extra,
                                                 names=out.schema.names[:-1] + kept_fields)

    return run
