"""PyFlink's ``pyflink.datastream.connectors``: the same module names.

- :mod:`.file_system`: ``FileSource`` (text lines of files and directories),
  ``FileSink`` (row format: one line per record), ``StreamFormat``,
  ``OutputFileConfig``, ``RollingPolicy``, ``BucketAssigner``;
- :mod:`.number_seq`: ``NumberSequenceSource``;
- :mod:`.kafka`: ``KafkaSource``, ``KafkaSink`` and their builders;
- :mod:`.jdbc`: ``JdbcSink`` (a DML statement per record, PostgreSQL), ``JdbcConnectionOptions``,
  ``JdbcExecutionOptions``;
- :mod:`.base`: ``Source``, ``Sink``, ``DeliveryGuarantee``.

A source is passed to ``env.from_source(source, watermark_strategy, name)``, a
sink to ``ds.sink_to(sink)``. The other connectors of PyFlink (Pulsar,
Elasticsearch, ...) do not exist in changeflow.
"""

from changeflow.datastream.connectors.base import DeliveryGuarantee, Sink, Source
from changeflow.datastream.connectors.file_system import (BucketAssigner, FileEnumeratorProvider, FileSink,
                                                          FileSource, FileSourceBuilder, FileSplitAssignerProvider,
                                                          OutputFileConfig, RollingPolicy, StreamFormat,
                                                          StreamingFileSink)
from changeflow.datastream.connectors.jdbc import JdbcConnectionOptions, JdbcExecutionOptions, JdbcSink
from changeflow.datastream.connectors.kafka import FlinkKafkaConsumer, FlinkKafkaProducer, KafkaSource, Semantic
from changeflow.datastream.connectors.number_seq import NumberSequenceSource

# As PyFlink, the file system, number sequence, JDBC and some Kafka names are also here (``connectors.FileSink``).
__all__ = ["BucketAssigner", "DeliveryGuarantee", "FileEnumeratorProvider", "FileSink", "FileSource",
           "FileSourceBuilder", "FileSplitAssignerProvider", "FlinkKafkaConsumer", "FlinkKafkaProducer",
           "JdbcConnectionOptions", "JdbcExecutionOptions", "JdbcSink", "KafkaSource", "NumberSequenceSource",
           "OutputFileConfig", "RollingPolicy", "Semantic", "Sink", "Source", "StreamFormat", "StreamingFileSink"]
