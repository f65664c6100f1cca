"""A throwaway Apache Kafka broker for the Kafka connector's tests: one KRaft node on a free loopback port.

Its jars are fetched by ``./setup.sh`` (``tools/kafka/broker-pom.xml``) into ``.venv/jars/kafka-broker``.
The node is broker and controller at once; its storage is formatted first (``kafka.tools.StorageTool``),
its logs live in a temp directory removed on stop, and its JVM heap is kept small.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

BROKER_JARS = os.path.join(sys.prefix, "jars", "kafka-broker")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cluster_id() -> str:
    # StorageTool wants a base64 UUID of 22 characters (what its random-uuid prints).
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class KafkaBroker:
    """``start()`` runs the node; ``bootstrap`` is its ``host:port``; ``stop()`` ends it and removes its files."""

    def __init__(self) -> None:
        if not os.path.isdir(BROKER_JARS) or not os.listdir(BROKER_JARS):
            raise RuntimeError(f"Kafka's broker jars are missing from {BROKER_JARS}: run ./setup.sh")
        self.directory = tempfile.mkdtemp(prefix="changeflow-kafka-")
        self.port, self.controller_port = _free_port(), _free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self._admin = None

    def _java(self, main: str, *args: str, heap: str = "-Xmx512m") -> list[str]:
        return ["java", heap, "-cp", os.path.join(BROKER_JARS, "*"), main, *args]

    def start(self, timeout_s: float = 120) -> "KafkaBroker":
        properties = os.path.join(self.directory, "server.properties")
        with open(properties, "w") as f:
            f.write("\n".join([
                "process.roles=broker,controller", "node.id=1",
                f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
                f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
                "controller.listener.names=CONTROLLER", "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                f"log.dirs={os.path.join(self.directory, 'logs')}", "num.partitions=1",
                # one node: every internal topic has one replica (offsets, transactions)
                "offsets.topic.replication.factor=1", "offsets.topic.num.partitions=1",
                "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=1", "share.coordinator.state.topic.replication.factor=1",
                "group.initial.rebalance.delay.ms=0", ""]))
        subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c", properties,
                                  heap="-Xmx256m"), check=True, capture_output=True)
        with open(os.path.join(self.directory, "broker.log"), "wb") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(self._java("kafka.Kafka", properties), stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Kafka broker exited with {self.process.returncode}: {self._log_tail()}")
            if self._ready():
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the Kafka broker did not start within {timeout_s} s")

    def _ready(self) -> bool:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", self.port)) != 0:
                return False  # not listening yet
        try:
            return bool(self.admin().list_topics(timeout=5).brokers)
        except Exception:  # listening, not serving yet
            return False

    def admin(self):
        """An admin client (kept: a client dropped before its futures resolve cancels them)."""
        from confluent_kafka.admin import AdminClient

        if self._admin is None:
            self._admin = AdminClient(self.client_config())
        return self._admin

    def client_config(self, **more) -> dict:
        # librdkafka logs every refused connection to stderr; the tests read errors from results instead.
        return {"bootstrap.servers": self.bootstrap, "log_level": 0, **more}

    def _log_tail(self) -> str:
        with open(os.path.join(self.directory, "broker.log"), "rb") as f:
            return f.read()[-2000:].decode(errors="replace")

    def create_topic(self, name: str, partitions: int = 1) -> str:
        from confluent_kafka.admin import NewTopic

        futures = self.admin().create_topics(
            [NewTopic(name, partitions, 1)], operation_timeout=30)
        for future in futures.values():
            future.result()
        return name

    def produce(self, topic: str, records: list[tuple[bytes | str | None, bytes | str | None]],
                partition: int | None = None) -> None:
        """``(key, value)`` records, in order (to one partition if given)."""
        from confluent_kafka import Producer

        producer = Producer(self.client_config(**{"enable.idempotence": True}))
        for key, value in records:
            while True:
                try:
                    if partition is None:
                        producer.produce(topic, key=key, value=value)
                    else:
                        producer.produce(topic, key=key, value=value, partition=partition)
                    break
                except BufferError:  # the local queue is full: let the producer send
                    producer.poll(0.1)
        if producer.flush(120):
            raise TimeoutError(f"records to {topic} not delivered within 120 s")

    def consume(self, topic: str, isolation: str = "read_committed") -> list[tuple[bytes | None, bytes | None]]:
        """Every record of ``topic`` now, as ``(key, value)``: a partition's records in offset order,
        partitions one after the other (``read_committed``: only committed transactions' records)."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer(self.client_config(**{
            "group.id": f"read-{uuid.uuid4().hex}", "enable.auto.commit": False, "isolation.level": isolation,
            "enable.partition.eof": True}))
        try:
            partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
            records: dict[int, list] = {p: [] for p in partitions}
            at_end: set[int] = set()
            deadline = time.monotonic() + 30
            while len(at_end) < len(partitions):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{topic}: partitions {sorted(set(partitions) - at_end)} not read to the end")
                message = consumer.poll(1)
                if message is None:
                    continue
                if message.error():
                    if message.error().code() == -191:  # _PARTITION_EOF
                        at_end.add(message.partition())
                    continue
                records[message.partition()].append((message.key(), message.value()))
            return [r for p in partitions for r in records[p]]
        finally:
            consumer.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        self._admin = None
        shutil.rmtree(self.directory, ignore_errors=True)


def upsert_table(records: list[tuple[bytes | None, bytes | None]]) -> dict:
    """An upsert topic's records applied in order: the latest value per key, a tombstone (None) deleting it."""
    table: dict = {}
    for key, value in records:
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    return table
