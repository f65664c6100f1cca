"""The offset ranges of a bounded ``kafka`` table read (``scan.bounded.mode``), resolved with a Kafka client.

Each partition of the table's topics is read from its start offset up to its stop
offset (excluded), both resolved once, when the read starts, as Flink's bounded Kafka
source resolves them when the job starts:

- start, by ``scan.startup.mode``: ``earliest-offset``/``latest-offset`` the partition's
  first/next offset, ``timestamp`` the first record at or after the timestamp (none: the
  next offset), ``specific-offsets`` the given offset (other partitions: the earliest),
  ``group-offsets`` the group's committed offset (none: ``properties.auto.offset.reset``,
  else the read fails naming the partition);
- stop, by ``scan.bounded.mode``: ``latest-offset`` the next offset, ``timestamp`` the
  first record at or after ``scan.bounded.timestamp-millis`` (none: the next offset),
  ``group-offsets`` the committed offset (none: as for the start), ``specific-offsets``
  the given offset (other partitions: the group's committed offset when there is one,
  else the earliest: nothing is read, Flink's ``OffsetsInitializer.offsets``).

Offsets are clamped to what the partition holds, and a start after its stop reads nothing.
"""

from __future__ import annotations

import re

from changeflow.connectors.kafka import KafkaSource, client_config, require_client
from changeflow.connectors.options import ConnectorError

__all__ = ["bounded_ranges"]

_TIMEOUT_S = 15


def bounded_ranges(connector: KafkaSource) -> dict[str, dict[int, tuple[int, int]]]:
    """``{topic: {partition: (start, stop)}}`` of a bounded table's read (stop excluded)."""
    require_client()
    from confluent_kafka import Consumer

    properties = {k: v for k, v in connector.properties.items() if k != "auto.offset.reset"}
    if "group.id" not in properties:  # a client needs one to ask for offsets; it commits nothing
        properties["group.id"] = "changeflow-bounded-read"
    consumer = Consumer(client_config(properties, **{"enable.auto.commit": False}))
    try:
        return {topic: _topic_ranges(connector, consumer, topic) for topic in _topics(connector, consumer)}
    finally:
        consumer.close()


def _topics(connector: KafkaSource, consumer) -> list[str]:
    if connector.topic_pattern is None:
        return connector.topics
    names = consumer.list_topics(timeout=_TIMEOUT_S).topics
    return sorted(t for t in names if re.fullmatch(connector.topic_pattern, t))


def _topic_ranges(connector: KafkaSource, consumer, topic: str) -> dict[int, tuple[int, int]]:
    from confluent_kafka import TopicPartition

    found = consumer.list_topics(topic, timeout=_TIMEOUT_S).topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        raise ConnectorError(f"Kafka table '{connector.table.name}': topic '{topic}' does not exist")
    partitions = sorted(found.partitions)
    marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=_TIMEOUT_S) for p in partitions}
    committed: dict[int, int] = {}
    if "group.id" in connector.properties:
        for tp in consumer.committed([TopicPartition(topic, p) for p in partitions], timeout=_TIMEOUT_S):
            if tp.offset >= 0:
                committed[tp.partition] = tp.offset

    def at_time(millis: int) -> dict[int, int]:
        asked = consumer.offsets_for_times([TopicPartition(topic, p, millis) for p in partitions],
                                           timeout=_TIMEOUT_S)
        return {tp.partition: tp.offset if tp.offset >= 0 else marks[tp.partition][1] for tp in asked}

    def group(p: int, when: str) -> int:
        if p in committed:
            return committed[p]
        reset = connector.properties.get("auto.offset.reset")
        if reset in ("earliest", "latest"):
            return marks[p][0 if reset == "earliest" else 1]
        raise ConnectorError(f"Kafka table '{connector.table.name}': group '{connector.properties['group.id']}' has "
                             f"no committed offset for partition {p} of topic '{topic}' ({when} = 'group-offsets'); "
                             f"set 'properties.auto.offset.reset' to 'earliest' or 'latest'")

    starts = {"earliest-offset": lambda: {p: marks[p][0] for p in partitions},
              "latest-offset": lambda: {p: marks[p][1] for p in partitions},
              "timestamp": lambda: at_time(connector.startup_timestamp or 0),
              "specific-offsets": lambda: {p: connector.specific_offsets.get(p, marks[p][0]) for p in partitions},
              "group-offsets": lambda: {p: group(p, "'scan.startup.mode'") for p in partitions}}
    stops = {"latest-offset": lambda: {p: marks[p][1] for p in partitions},
             "timestamp": lambda: at_time(connector.bounded_timestamp or 0),
             "specific-offsets": lambda: {p: connector.bounded_offsets.get(p, committed.get(p, marks[p][0]))
                                          for p in partitions},
             "group-offsets": lambda: {p: group(p, "'scan.bounded.mode'") for p in partitions}}
    start, stop = starts[connector.startup_mode](), stops[connector.bounded_mode or "latest-offset"]()
    ranges = {}
    for p in partitions:
        low, high = marks[p]
        end = min(max(stop[p], low), high)
        ranges[p] = (min(max(start[p], low), end), end)
    return ranges
