"""Regular (unwindowed) streaming joins: Flink 2.3's StreamingJoinOperator and its mini-batch variant."""

from changeflow.kernels.join.streaming_join import JOIN_TYPES, SIDE, StreamingJoin, key_column

__all__ = ["JOIN_TYPES", "SIDE", "StreamingJoin", "key_column"]
