"""The Kafka broker fixture: started by the first test that asks for it, stopped after the session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def kafka_broker():
    """A KRaft single-node Apache Kafka broker on a free loopback port (:mod:`tests.kafka_broker`)."""
    pytest.importorskip("confluent_kafka")
    from tests.kafka_broker import KafkaBroker

    broker = KafkaBroker().start()
    try:
        yield broker
    finally:
        broker.stop()
