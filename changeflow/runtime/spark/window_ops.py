"""Window Top-N and window deduplication on Spark: their kernel in the event-time processor host.

Both run as :class:`~changeflow.kernels.window.window_rank.WindowRank` through
``StreamingTranslator.stateful`` (the host every keyed kernel uses), keyed by the
partition keys and the window, with the watermarks of the assigners upstream:
the kernel buffers each window's top rows and emits them when the watermark
passes the window's end. (The window join runs through ``join.py``'s two-input
host with :class:`~changeflow.kernels.join.window_join.WindowJoin`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.window.window_rank import WindowRank as WindowRankKernel
from changeflow.kernels.window.window_rank import window_deduplicate
from changeflow.plan.window_ops import WindowDeduplicate, WindowRank
from changeflow.runtime.spark.sources import kernel_input_dtype

if TYPE_CHECKING:
    from changeflow.runtime.spark.streaming import StreamingTranslator


def window_rank_stream(tr: "StreamingTranslator", node: WindowRank | WindowDeduplicate) -> DataFrame:
    """A window Top-N or deduplication in a streaming query."""
    from changeflow.runtime.spark.streaming import upstream_sources

    names = node.input.field_names
    kernel: WindowRankKernel
    if isinstance(node, WindowRank):
        kernel = WindowRankKernel(names, list(node.partition_keys), node.window_start, node.window_end,
                                  list(node.order_by), node.rank_start, node.rank_end,
                                  node.rank_column, zone=node.window.zone)
        keys = list(node.partition_keys)
    else:
        kernel = window_deduplicate(names, list(node.keys), node.window_start, node.window_end, node.order,
                                    node.keep_last, zone=node.window.zone)
        keys = list(node.keys)
    types = node.input.type_map()
    child = tr._translate(node.input).select(*[F.col(f"`{n}`") for n in names], KIND, SEQ, SUB)
    return tr.stateful(child, kernel, keys + [node.window_start, node.window_end],
                       {n: kernel_input_dtype(types[n]) for n in names}, node.schema,
                       sources=upstream_sources(node), watermarks=tr.watermark_scans.below())


__all__ = ["window_rank_stream"]
