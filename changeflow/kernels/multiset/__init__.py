"""An ordered multiset kept in keyed state, O(1) state rows per operation.

The layout of SinkUpsertMaterializerV2 (FLINK-38461 / FLIP-558).

See :mod:`.ordered` for the layout and the operations, :mod:`.state_rows` for how
one batch loads and writes its state rows, and :mod:`.rows` for the row tuples
(and element identities) its kernels fold. Used by the sink upsert materializer
(:mod:`changeflow.kernels.materializer`) and by deduplication over retracting
input (:mod:`changeflow.kernels.rank.deduplicate_retract`). FIRST_VALUE/LAST_VALUE
with retraction keep a list per key instead: measured on the paged state Spark
runs on, the list was faster except for single keys of ~100,000 values (docs/benchmarks.md).
"""

from changeflow.kernels.multiset.ordered import MultisetSession, OrderedMultiset
from changeflow.kernels.multiset.rows import identity_of

__all__ = ["MultisetSession", "OrderedMultiset", "identity_of"]
