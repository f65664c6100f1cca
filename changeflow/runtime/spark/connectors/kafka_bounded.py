"""A bounded ``kafka`` table (``scan.bounded.mode``) on Spark: a batch read of Spark's Kafka source.

The offset range of each partition is resolved once, on the driver
(:func:`changeflow.connectors.kafka_offsets.bounded_ranges`), and given to Spark's
Kafka source as ``startingOffsets``/``endingOffsets`` of the partitions it is
``assign``-ed; the records are decoded as an unbounded table's are
(:func:`.kafka_source.decoded_records`). In a streaming job the frame is the rows
of a bounded source, staged once in the job's directory (a resumed job reads them
again, not the topic).
"""

from __future__ import annotations

import json

from pyspark.sql import DataFrame, SparkSession

from changeflow.connectors.kafka import KafkaSource
from changeflow.connectors.kafka_offsets import bounded_ranges
from changeflow.runtime.spark.connectors.kafka_source import check_broker, kafka_reader, load_records
from changeflow.runtime.spark.spark_types import struct

__all__ = ["is_bounded_kafka", "kafka_batch_frame"]


def is_bounded_kafka(connector) -> bool:
    return isinstance(connector, KafkaSource) and connector.bounded


def kafka_batch_frame(spark: SparkSession, connector: KafkaSource) -> DataFrame:
    """The table's rows in the resolved offset ranges: a batch frame of its columns (declared order)."""
    check_broker(connector)
    ranges = {topic: r for topic, r in bounded_ranges(connector).items() if r}
    names = [f"`{n}`" for n, _ in connector.schema]
    if not any(start < stop for r in ranges.values() for start, stop in r.values()):
        return spark.createDataFrame([], struct(connector.schema))
    reader = kafka_reader(spark.read, connector)
    reader = (reader.option("assign", json.dumps({t: sorted(r) for t, r in ranges.items()}))
              .option("startingOffsets", json.dumps({t: {str(p): s for p, (s, _) in r.items()}
                                                     for t, r in ranges.items()}))
              .option("endingOffsets", json.dumps({t: {str(p): e for p, (_, e) in r.items()}
                                                   for t, r in ranges.items()})))
    return load_records(reader, connector).select(*names)
