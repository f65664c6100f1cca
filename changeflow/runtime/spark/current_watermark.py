"""``CURRENT_WATERMARK(ts)`` in a streaming query: the Calc's input stamped with the watermark before each row.

A Calc calling the function gets its input through a
:class:`~changeflow.kernels.current_watermark.CurrentWatermarkStamp` stage first
(one bucket: no key), whose processor applies the watermarks of the assigners
upstream after the rows before their positions, keeping them in state across
micro-batches (``processor.KernelProcessor``). So the value a row sees is the
last watermark that reached the Calc before it, as in Flink, and the Calc stays
a Spark column reading the stamped column (``columns.compile_expr``). Batch
queries have no watermark: Flink refuses the call there (its rowtime column is
no time attribute in batch mode), and so does :func:`refuse_in_batch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from changeflow.common.types import DataTypes
from changeflow.expressions import Call, Expression
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.current_watermark import COLUMN, CurrentWatermarkStamp
from changeflow.plan.event_time import plain_time
from changeflow.plan.nodes import PlanNode
from changeflow.plan.type_inference import PlanError, type_of
from changeflow.runtime.spark.sources import kernel_input_dtype

if TYPE_CHECKING:
    from changeflow.runtime.spark.streaming import StreamingTranslator


def calls_current_watermark(exprs: list[Expression]) -> bool:
    """Whether any of ``exprs`` calls CURRENT_WATERMARK."""
    return any(isinstance(e, Call) and e.function == "current_watermark" for x in exprs for e in x.walk())


def stamped(tr: "StreamingTranslator", node: PlanNode, child: DataFrame) -> DataFrame:
    """``child`` (the rows of ``node``) with :data:`COLUMN`, the watermark before each row."""
    from changeflow.runtime.spark.streaming import upstream_sources

    names = node.field_names
    types = node.type_map()
    kernel = CurrentWatermarkStamp(names)
    out_schema = list(node.schema) + [(COLUMN, DataTypes.BIGINT(True))]
    return tr.stateful(child.select(*[f"`{n}`" for n in names], KIND, SEQ, SUB), kernel, [],
                       {n: kernel_input_dtype(types[n]) for n in names}, out_schema,
                       sources=upstream_sources(node), watermarks=tr.watermark_scans.below())


def refuse_in_batch(exprs: list[Expression], types: dict) -> None:
    """Flink's validation error for CURRENT_WATERMARK in a batch query (no rowtime attribute there)."""
    for x in exprs:
        for e in x.walk():
            if isinstance(e, Call) and e.function == "current_watermark":
                shown = ", ".join(str(plain_time(type_of(a, types))) for a in e.args)
                raise PlanError(f"Invalid function call:\nCURRENT_WATERMARK({shown})")

__all__ = ["calls_current_watermark", "refuse_in_batch", "stamped"]
