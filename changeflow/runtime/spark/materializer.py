"""The sink upsert materializer (SinkUpsertMaterializerV2, FLINK-38461 / FLIP-558) on Structured Streaming.

An :class:`~changeflow.plan.nodes.UpsertMaterialize` node runs
:class:`~changeflow.kernels.materializer.SinkUpsertMaterializer` keyed by the
sink's primary key, like any stateful operator (:meth:`StreamingTranslator.stateful`):
the changes of one primary key meet in one hash bucket, sorted back into
input order by their ``_seq``/``_sub`` stamps, and the bucket's histories live in
paged state.

State layout: LEGACY and VALUE keep one list value per primary key (read and
written once per micro-batch for every key the batch touches: O(history)).
MAP and ADAPTIVE keep the ordered multiset's tables, keyed by the primary key
plus ``_sqn`` (nodes) and ``_ident`` (index), and the bucket's pages grow with
its row count (``rows_per_page``), so one record reads and writes a bounded
number of rows whatever its key's history length.

Conflicts: ``DEDUPLICATE`` emits per record; ``NOTHING`` and ``ERROR`` decide at
the end of each micro-batch (Flink decides them on watermarks). ``ERROR`` fails
the query with the primary key and two of its rows in the message.

TTL (``table.exec.state.ttl``, on the node): elements older than the TTL are
removed from the head of a key's history before its next records (silently,
as FLIP-558 plans); a processing-time sweep per bucket reclaims keys that see
no more records, where the query's timers allow it
(:meth:`~.streaming.StreamingTranslator.ttl_sweep` says when).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.materializer import SinkUpsertMaterializer
from changeflow.plan.nodes import UpsertMaterialize
from changeflow.runtime.spark.sources import kernel_input_dtype
from changeflow.state.paged import ROWS_PER_GROWING_PAGE


def materializer_kernel(node: UpsertMaterialize) -> SinkUpsertMaterializer:
    """The kernel configured as ``node`` says."""
    return SinkUpsertMaterializer(
        list(node.primary_key), node.field_names,
        upsert_key=list(node.upsert_key) if node.upsert_key else None,
        strategy=node.strategy, conflict=node.conflict,
        threshold_high=node.threshold_high, threshold_low=node.threshold_low, ttl_ms=node.ttl_ms)


def upsert_materialize_stream(translator, node: UpsertMaterialize) -> DataFrame:
    """The upsert changelog of ``node`` (keyed by its primary key) as a Structured Streaming DataFrame."""
    return materialize_changes(translator, node, translator._translate(node.input))


def materialize_changes(translator, node: UpsertMaterialize, changes: DataFrame, kernel=None) -> DataFrame:
    """Run ``node``'s materializer (or ``kernel``, e.g. one wrapped for timing) over ``changes``.

    ``changes`` is a changelog frame holding the node's input columns.
    """
    from changeflow.runtime.spark.streaming import upstream_sources

    kernel = kernel if kernel is not None else materializer_kernel(node)
    types = node.input.type_map()
    columns = node.field_names
    child = changes.select(*[F.col(f"`{c}`") for c in columns], KIND, SEQ, SUB)
    # The list layouts keep one row per key: fixed pages. The multiset's pages grow with its rows.
    rows_per_page = ROWS_PER_GROWING_PAGE if node.strategy in ("MAP", "ADAPTIVE") else None
    # translator.stateful decides whether the TTL sweep runs from timers (StreamingTranslator.ttl_sweep).
    return translator.stateful(child, kernel, list(node.primary_key),
                               {c: kernel_input_dtype(types[c]) for c in columns}, node.schema,
                               sources=upstream_sources(node), rows_per_page=rows_per_page)

