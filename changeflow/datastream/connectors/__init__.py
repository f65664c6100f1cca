"""PyFlink's ``pyflink.datastream.connectors``: the same module names.

- :mod:`.file_system`: ``FileSource`` (text lines of files and directories),
  ``FileSink`` (row format: one line per record), ``StreamFormat``,
  ``OutputFileConfig``, ``RollingPolicy``, ``BucketAssigner``;
- :mod:`.number_seq`: ``NumberSequenceSource``;
- :mod:`.base`: ``Source``, ``Sink``, ``DeliveryGuarantee``.

A source is passed to ``env.from_source(source, watermark_strategy, name)``, a
sink to ``ds.sink_to(sink)``. The other connectors of PyFlink (Kafka, Pulsar,
Elasticsearch, JDBC, ...) do not exist in changeflow.
"""

from changeflow.datastream.connectors.base import DeliveryGuarantee, Sink, Source
from changeflow.datastream.connectors.number_seq import NumberSequenceSource

__all__ = ["DeliveryGuarantee", "NumberSequenceSource", "Sink", "Source"]
