"""The output flush buffer of FLIP-365: idempotent operators emit their latest output per key periodically.

:mod:`.buffer` merges an operator's output into a per-key buffer and drains it
as consistent changes; :mod:`.output` is the seed's ``BufferOutput`` (watermark
ordering, idle and size-forced flushes). The Spark runtime keeps the buffer in
the operator's state and flushes it on processing-time timers
(``changeflow.runtime.spark.flush``).
"""

from changeflow.kernels.flush.buffer import LatestPerKey
from changeflow.kernels.flush.output import DEFAULT_MAX_ENTRIES, BufferOutput, Watermark

__all__ = ["BufferOutput", "DEFAULT_MAX_ENTRIES", "LatestPerKey", "Watermark"]
