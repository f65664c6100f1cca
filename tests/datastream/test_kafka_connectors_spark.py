"""PyFlink's DataStream KafkaSource and KafkaSink against a real Kafka broker (tests/kafka_broker.py).

A job reading one topic and writing another exactly once, crashed after its sink
committed a micro-batch and run again, then run again after more input: the output
topic holds every record once. The builders' refusals need no broker.
"""

from __future__ import annotations

import sys
import uuid

import pytest
from pyspark import cloudpickle

from changeflow.common import Configuration, Row, SimpleStringSchema, Types, WatermarkStrategy
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream.connectors import DeliveryGuarantee
from changeflow.datastream.connectors.kafka import (FlinkKafkaConsumer, KafkaOffsetsInitializer,
                                                    KafkaRecordSerializationSchema, KafkaSink, KafkaSource,
                                                    KafkaTopicPartition)
from changeflow.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from changeflow.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

cloudpickle.register_pickle_by_value(sys.modules[__name__])


class CrashOnce:
    """A sink that fails the job at its second micro-batch, the first time only (a flag file remembers)."""

    def __init__(self, flag) -> None:
        self.flag = flag
        self.batches = 0

    def write(self, records) -> None:
        self.batches += 1
        if self.batches == 2 and not self.flag.exists():
            self.flag.write_text("crashed")
            raise RuntimeError("simulated crash after the KafkaSink committed the micro-batch")


def _source(bootstrap: str, topic: str, start=None):
    return (KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(topic).set_group_id("g")
            .set_starting_offsets(start or KafkaOffsetsInitializer.earliest())
            .set_value_only_deserializer(SimpleStringSchema()))


def _sink(bootstrap: str, topic: str, guarantee: DeliveryGuarantee, key: bool = False):
    serializer = KafkaRecordSerializationSchema.builder().set_topic(topic) \
        .set_value_serialization_schema(SimpleStringSchema())
    if key:
        serializer = serializer.set_key_serialization_schema(SimpleStringSchema())
    return (KafkaSink.builder().set_bootstrap_servers(bootstrap).set_record_serializer(serializer.build())
            .set_delivery_guarantee(guarantee).set_transactional_id_prefix("upper").build())


def test_kafka_source_to_kafka_sink_exactly_once_across_a_crash_and_a_restart(spark, kafka_broker, tmp_path):
    source = kafka_broker.create_topic(f"ds-in-{uuid.uuid4().hex[:8]}", 2)
    sink = kafka_broker.create_topic(f"ds-out-{uuid.uuid4().hex[:8]}", 1)
    flag = tmp_path / "crashed"

    def run():
        conf = Configuration()
        conf.set_string("changeflow.source.rows-per-batch", "2")  # several micro-batches
        conf.set_string("changeflow.checkpoint-dir", str(tmp_path / "ckpt"))
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
        words = env.from_source(_source(kafka_broker.bootstrap, source).build(), WatermarkStrategy.no_watermarks(),
                                "words")
        assert words.get_type() == Types.STRING()
        upper = words.map(lambda w: w.upper(), output_type=Types.STRING())
        upper.sink_to(_sink(kafka_broker.bootstrap, sink, DeliveryGuarantee.EXACTLY_ONCE))
        upper.sink_to(CrashOnce(flag))
        env.execute("kafka-upper")

    first = [f"w{i}" for i in range(7)]
    kafka_broker.produce(source, [(w, w) for w in first])
    with pytest.raises(Exception, match="simulated crash"):
        run()
    assert flag.exists()
    run()  # resumes from the checkpoint: the crashed micro-batch runs again, its transaction committed already
    assert sorted(v.decode() for _, v in kafka_broker.consume(sink)) == sorted(w.upper() for w in first)

    second = [f"v{i}" for i in range(5)]
    kafka_broker.produce(source, [(w, w) for w in second])
    run()  # reads only what came since
    written = [v.decode() for _, v in kafka_broker.consume(sink)]
    assert sorted(written) == sorted(w.upper() for w in first + second)  # none lost, none repeated (read_committed)


def test_keyed_at_least_once_sink_and_latest_start(spark, kafka_broker):
    source = kafka_broker.create_topic(f"ds-in-{uuid.uuid4().hex[:8]}", 1)
    sink = kafka_broker.create_topic(f"ds-out-{uuid.uuid4().hex[:8]}", 1)
    kafka_broker.produce(source, [(None, "old")])
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(), spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    # latest: the record there before the job starts is not read (the job starts with nothing to read)
    env.from_source(_source(kafka_broker.bootstrap, source, KafkaOffsetsInitializer.latest()).build(),
                    WatermarkStrategy.no_watermarks(), "words") \
        .sink_to(_sink(kafka_broker.bootstrap, sink, DeliveryGuarantee.AT_LEAST_ONCE, key=True))
    env.execute()
    assert kafka_broker.consume(sink) == []
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(), spark_session=spark)
    env.from_source(_source(kafka_broker.bootstrap, source).build(), WatermarkStrategy.no_watermarks(), "words") \
        .map(lambda w: w + "!", output_type=Types.STRING()) \
        .sink_to(_sink(kafka_broker.bootstrap, sink, DeliveryGuarantee.AT_LEAST_ONCE, key=True))
    env.execute()
    assert kafka_broker.consume(sink) == [(b"old!", b"old!")]  # the key is the record too


def test_an_unbounded_kafka_source_in_batch_mode_is_refused(spark):
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(), spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.from_source(_source("localhost:1", "t").build(), WatermarkStrategy.no_watermarks(), "words").print()
    with pytest.raises(Exception, match="unbounded .*Kafka source.*STREAMING"):
        env.execute()


class _AvroRowSchema:
    """Stands for PyFlink's AvroRowDeserializationSchema, which changeflow does not have."""


def test_the_builders_refuse_what_changeflow_does_not_build():
    with pytest.raises(NotImplementedError, match="set_value_only_deserializer\\(_AvroRowSchema\\)"):
        KafkaSource.builder().set_value_only_deserializer(_AvroRowSchema())
    with pytest.raises(NotImplementedError, match="set_partitions"):
        KafkaSource.builder().set_partitions({KafkaTopicPartition("t", 0)})
    with pytest.raises(NotImplementedError, match="set_unbounded"):
        KafkaSource.builder().set_unbounded(KafkaOffsetsInitializer.latest())
    with pytest.raises(NotImplementedError, match="offsets for topics \\['a'\\]"):
        _source("h:1", "b", KafkaOffsetsInitializer.offsets({KafkaTopicPartition("a", 0): 3})).build()
    with pytest.raises(NotImplementedError, match="set_topic_selector"):
        KafkaRecordSerializationSchema.builder().set_topic_selector(lambda r: "t")
    with pytest.raises(NotImplementedError, match="FlinkKafkaConsumer"):
        FlinkKafkaConsumer("t", SimpleStringSchema(), {})
    with pytest.raises(ValueError, match="EXACTLY_ONCE delivery guarantee requires a transactionalIdPrefix"):
        KafkaSink.builder().set_bootstrap_servers("h:1").set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE) \
            .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic("t")
                                   .set_value_serialization_schema(SimpleStringSchema()).build()).build()
    with pytest.raises(ValueError, match="deserialization schema is required"):
        KafkaSource.builder().set_bootstrap_servers("h:1").set_topics("t").build()
    with pytest.raises(NotImplementedError, match="UTF-8 only"):
        SimpleStringSchema("ISO-8859-1")


ORDER = Types.ROW_NAMED(["user", "amount"], [Types.STRING(), Types.INT()])


def _json_job(spark, bootstrap, source_topic, sink_topic, ignore_errors):
    reader = JsonRowDeserializationSchema.builder().type_info(ORDER)
    reader = reader.ignore_parse_errors() if ignore_errors else reader
    writer = JsonRowSerializationSchema.builder().with_type_info(ORDER).build()
    _row_job(spark, bootstrap, source_topic, sink_topic, reader.build(), writer)


def _row_job(spark, bootstrap, source_topic, sink_topic, reader, writer):
    """source_topic's values read by ``reader``, summed per user, written by ``writer`` to sink_topic."""
    source = (KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(source_topic)
              .set_value_only_deserializer(reader).build())
    sink = (KafkaSink.builder().set_bootstrap_servers(bootstrap)
            .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic(sink_topic)
                                   .set_value_serialization_schema(writer).build()).build())
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(), spark_session=spark)
    orders = env.from_source(source, WatermarkStrategy.no_watermarks(), "orders")
    assert orders.get_type() == ORDER
    orders.key_by(lambda r: r["user"]).reduce(
        lambda a, b: Row(user=a["user"], amount=(a["amount"] or 0) + (b["amount"] or 0))).sink_to(sink)
    env.execute()


def test_json_rows_in_and_out_of_kafka_as_flinks_formats(spark, kafka_broker):
    """JsonRowDeserializationSchema reads each value into a Row (conversions as Flink 2.3's, see
    tests/conformance/test_json_row_formats.py); a bad value fails the job naming it, or with
    ignore_parse_errors is skipped; JsonRowSerializationSchema writes Flink's compact JSON."""
    source = kafka_broker.create_topic(f"ds-json-{uuid.uuid4().hex[:8]}", 1)
    values = ['{"user": "a", "amount": 3}', '{"user": "b", "amount": "4", "note": 1}', "not json",
              '{"user": "a", "amount": 2.9}']
    kafka_broker.produce(source, [(None, v) for v in values])
    failing = kafka_broker.create_topic(f"ds-json-out-{uuid.uuid4().hex[:8]}", 1)
    with pytest.raises(Exception, match="Failed to deserialize JSON 'not json'"):
        _json_job(spark, kafka_broker.bootstrap, source, failing, ignore_errors=False)
    sink = kafka_broker.create_topic(f"ds-json-out-{uuid.uuid4().hex[:8]}", 1)
    _json_job(spark, kafka_broker.bootstrap, source, sink, ignore_errors=True)
    written = sorted(v.decode() for _, v in kafka_broker.consume(sink))
    # Streaming: a running sum per record; 2.9 is 2 (Flink cuts a fraction for INT), "4" is 4.
    assert written == ['{"user":"a","amount":3}', '{"user":"a","amount":5}', '{"user":"b","amount":4}']


def test_csv_rows_in_and_out_of_kafka_as_flinks_formats(spark, kafka_broker):
    """CsvRowDeserializationSchema reads each value into a Row (conversions as Flink 2.3's, see
    tests/conformance/test_csv_row_formats.py), with the builders' options; a bad value fails the job
    naming it, or with ignore_parse_errors is null (a record that does not parse is skipped);
    CsvRowSerializationSchema writes Flink's CSV, line delimiter included."""
    source = kafka_broker.create_topic(f"ds-csv-{uuid.uuid4().hex[:8]}", 1)
    values = ["a|3", "'b|c'| 4 ", "a|x", "a|2|extra", "#a comment", "c|null", "a|2"]
    kafka_broker.produce(source, [(None, v) for v in values])

    def reader(ignore):
        return (CsvRowDeserializationSchema.Builder(ORDER).set_field_delimiter("|").set_quote_character("'")
                .set_null_literal("null").set_allow_comments(True).set_ignore_parse_errors(ignore).build())

    writer = CsvRowSerializationSchema.Builder(ORDER).set_field_delimiter(";").set_null_literal("-").build()
    failing = kafka_broker.create_topic(f"ds-csv-out-{uuid.uuid4().hex[:8]}", 1)
    with pytest.raises(Exception, match="Failed to deserialize CSV row 'a\\|x'"):
        _row_job(spark, kafka_broker.bootstrap, source, failing, reader(False), writer)
    sink = kafka_broker.create_topic(f"ds-csv-out-{uuid.uuid4().hex[:8]}", 1)
    _row_job(spark, kafka_broker.bootstrap, source, sink, reader(True), writer)
    written = [v.decode() for _, v in kafka_broker.consume(sink)]
    # Streaming: a running sum per user (a null amount counts 0). 'b|c' is quoted text, " 4 " trimmed;
    # "a|x" is (a, null); "a|2|extra" (too many fields) and the comment are skipped; a null is written "-".
    assert sorted(written) == sorted(["a;3\n", "b|c;4\n", "a;3\n", "c;-\n", "a;5\n"])
