"""The ``kafka`` and ``upsert-kafka`` sinks: a job's changes to a topic through a producer on the driver.

A ``kafka`` sink takes insert-only input, unless its value format is a changelog format
(``debezium-json``, ``canal-json``, ``maxwell-json``): then every change is one record.

Each micro-batch's changes are written in changelog order (one ordered stream per
key: a key's records go to one partition by its hash). ``at-least-once`` (the default):
a micro-batch run again after a restart is written again. ``exactly-once``: one Kafka
transaction per micro-batch (:meth:`KafkaSink.open`). Options are checked as in
:mod:`.kafka`.
"""

from __future__ import annotations

from changeflow.catalog import CatalogTable
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors.changelog_encoding import ChangelogEncoder
from changeflow.connectors.kafka import KafkaTable, client_config, encode, require_client
from changeflow.connectors.options import ConnectorError, failure
from changeflow.connectors.sink_job import SinkJob


class KafkaSink(KafkaTable):
    """Writes a job's changes to a topic through a Kafka producer, in changelog order, at least once."""

    accepts_updates = False
    transactional_id_prefix = "changeflow"  # exactly once: the transactional id's start (the DataStream sink's own)

    def __init__(self, table: CatalogTable) -> None:
        super().__init__(table, True)
        options = table.options
        if "topic" not in options or ";" in options["topic"]:
            raise failure(table, True, "A Kafka sink needs one 'topic' ('topic-pattern' and topic lists are for "
                                       "sources).")
        self.topic = options["topic"]
        if self.metadata:
            raise failure(table, True, f"Metadata columns ({', '.join(self.metadata)}) are not supported by "
                                       f"changeflow's '{self.connector}' sink.")
        guarantee = options.get("sink.delivery-guarantee", "at-least-once")
        if guarantee not in ("at-least-once", "exactly-once", "none"):
            raise failure(table, True, f"Invalid value for option 'sink.delivery-guarantee'. Supported values are "
                                       f"[at-least-once, exactly-once, none], but was: {guarantee}")
        partitioner = options.get("sink.partitioner", "default")
        if partitioner != "default":
            raise failure(table, True, f"'sink.partitioner' = '{partitioner}' is not supported by changeflow's "
                                       f"Kafka sink: records go to a partition by their key's hash, keyless ones "
                                       f"spread ('default').")
        self.exactly_once = guarantee == "exactly-once"
        if self.changelog:  # a changelog value format writes every change kind (Flink's [I,UB,UA,D] sink)
            self.accepts_updates = True
        self._producer = None
        self._group = None  # exactly-once: the consumer group whose offset records the last committed batch
        self._committed = -1  # exactly-once: the last micro-batch id committed in Kafka

    def record(self, change: Change) -> tuple[bytes | None, bytes | None] | None:
        """The ``(key, value)`` a change writes, or None for a change not written (``-U`` of upsert-kafka)."""
        row = dict(zip([n for n, _ in self.schema], change.values, strict=True))
        key = (encode(self.key_format, tuple(row[n] for n, _ in self.key_schema), self.key_schema)
               if self.key_format is not None else None)
        if isinstance(self.value_format, ChangelogEncoder):
            values = tuple(row[n] for n, _ in self.value_schema)
            return key, self.value_format.record(values, change.kind, self.value_schema).encode()
        if change.kind is RowKind.INSERT or (self.accepts_updates and change.kind is RowKind.UPDATE_AFTER):
            return key, encode(self.value_format, tuple(row[n] for n, _ in self.value_schema), self.value_schema)
        if self.accepts_updates and change.kind is RowKind.DELETE:
            return key, None  # a tombstone
        if self.accepts_updates:
            return None  # -U: the +U after it replaces the key's value
        raise ValueError(f"Kafka sink of table '{self.table.name}' received a {change.kind} change {change.values}; "
                         f"the 'kafka' connector appends insert-only input (use 'upsert-kafka' for updates)")

    def open(self, job: SinkJob) -> None:
        """Start the producer for ``job``.

        At least once, a micro-batch run again after a restart is written again.
        Exactly once, each micro-batch is one Kafka transaction (transactional id from
        the job's writer id, stable across restarts: starting fences and aborts what an
        earlier run left open), which also commits the batch id as the offset of a
        consumer group of the job's own; a batch id at or below the committed one is
        not written again. Readers with ``isolation.level`` = ``read_committed`` see every
        change once.
        """
        require_client()
        from confluent_kafka import Producer

        self._errors: list = []
        if not self.exactly_once:
            # enable.idempotence: no duplicates from the producer's own retries
            self._producer = Producer(client_config(self.properties, **{"enable.idempotence": True}))
            return
        name = f"{self.transactional_id_prefix}-{job.writer}-{self.topic}"
        self._producer = Producer(client_config(self.properties, **{"transactional.id": name}))
        self._producer.init_transactions(60)
        from confluent_kafka import Consumer, TopicPartition

        self._group = Consumer(client_config(self.properties, **{"group.id": name, "enable.auto.commit": False}))
        committed = self._group.committed([TopicPartition(self.topic, 0)], timeout=30)[0].offset
        self._committed = committed - 1 if committed >= 0 else -1

    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        """Produce every change in order and wait until the broker has them all (or fail naming the option)."""
        if self._producer is None:
            self.open(SinkJob.fresh())
        producer = self._producer
        assert producer is not None
        if self.exactly_once:
            if batch_id is not None and batch_id <= self._committed:
                return  # committed in Kafka before a restart: written once already
            producer.begin_transaction()

        def delivered(error, message) -> None:
            if error is not None:
                self._errors.append(error)

        for change in changes:
            record = self.record(change)
            if record is None:
                continue
            while True:
                try:
                    producer.produce(self.topic, key=record[0], value=record[1], on_delivery=delivered)
                    break
                except BufferError:  # the producer's queue is full: let it send
                    producer.poll(0.1)
        if self.exactly_once:
            self._commit(producer, batch_id)
            return
        remaining = producer.flush(int(self.properties.get("delivery.timeout.ms", 120_000)) / 1000)
        if remaining or self._errors:
            reason = self._errors[0] if self._errors else f"{remaining} records not delivered in time"
            raise ConnectorError(f"Kafka sink of table '{self.table.name}' could not write to topic '{self.topic}' "
                                 f"at 'properties.bootstrap.servers' = '{self.bootstrap}': {reason}")

    def _commit(self, producer, batch_id: int | None) -> None:
        """Commit the open transaction with the batch id as the job's group offset (aborted on failure)."""
        from confluent_kafka import KafkaException, TopicPartition

        assert self._group is not None
        batch = self._committed + 1 if batch_id is None else batch_id
        try:
            producer.send_offsets_to_transaction([TopicPartition(self.topic, 0, batch + 1)],
                                                 self._group.consumer_group_metadata(), 60)
            producer.commit_transaction(120)
        except KafkaException as e:
            producer.abort_transaction(60)
            raise ConnectorError(f"Kafka sink of table '{self.table.name}' could not commit its transaction to "
                                 f"topic '{self.topic}' at 'properties.bootstrap.servers' = '{self.bootstrap}': "
                                 f"{e}") from None
        if self._errors:
            raise ConnectorError(f"Kafka sink of table '{self.table.name}' could not write to topic "
                                 f"'{self.topic}': {self._errors[0]}")
        self._committed = batch

    def close(self) -> None:
        if self._producer is not None and not self.exactly_once:
            self._producer.flush(10)
        if self._group is not None:
            self._group.close()
        self._producer, self._group = None, None


class UpsertKafkaSink(KafkaSink):
    """The ``upsert-kafka`` sink: the changelog by primary key, ``-D`` as a tombstone."""

    connector = "upsert-kafka"
    accepts_updates = True
    takes_upserts = True  # no -U needed (Flink's ONLY_UPDATE_AFTER): plan/rules/normalize_consumers.py
