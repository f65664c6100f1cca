"""An ordered multiset kept in keyed state, O(1) state rows per operation (FLIP-544).

See :mod:`.ordered` for the layout. Used by the sink upsert materializer
(:mod:`changeflow.kernels.materializer`); reusable for FIRST_VALUE/LAST_VALUE
and deduplication over retracting input.
"""

from changeflow.kernels.multiset.ordered import MultisetSession, OrderedMultiset, identity_of

__all__ = ["OrderedMultiset", "MultisetSession", "identity_of"]
