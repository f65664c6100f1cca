"""OVER aggregation in the plan: ``agg(x) OVER (PARTITION BY k ORDER BY t <frame>)``.

:class:`OverAggregate` appends one column per aggregate call to every input row;
each row's value is the aggregate over the row's *frame*, the rows of its
partition up to it in ``ORDER BY`` order (:class:`OverFrame`). As in Flink
(``StreamExecOverAggregate``), a streaming OVER aggregation is ordered by one
time attribute, ascending, and its frame ends at the current row:

- ordered by a rowtime attribute, rows wait until the watermark passes their
  timestamp, then come out in timestamp order, insert-only, one per input row;
  rows behind the watermark when they arrive are late and dropped;
- ordered by a ``PROCTIME()`` attribute, every row comes out as it arrives.

A ROWS frame counts rows (tied timestamps one by one, in arrival order); a RANGE
frame spans timestamps, so rows with equal timestamps share their frame.
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.expressions import Agg, Column, Expression, strip_alias
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.nodes import PlanNode, Schema, _DeclaredSchema, _OneInput
from changeflow.plan.type_inference import type_of

# The aggregate functions an OVER window computes (the others are refused by name).
OVER_FUNCTIONS = ("count_star", "count", "sum", "sum0", "avg", "min", "max")


@dataclass(frozen=True)
class OverFrame:
    """``ROWS|RANGE BETWEEN <preceding> PRECEDING AND CURRENT ROW``.

    ``preceding`` is a row count (ROWS) or milliseconds (RANGE), None for
    ``UNBOUNDED``. Printed as Flink's EXPLAIN prints a window (a RANGE offset in ms).

    >>> str(OverFrame(rows=True, preceding=2))
    'ROWS BETWEEN 2 PRECEDING AND CURRENT ROW'
    >>> str(OverFrame(rows=False, preceding=None))
    'RANG BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW'
    """

    rows: bool
    preceding: int | None

    def __str__(self) -> str:
        bound = "UNBOUNDED" if self.preceding is None else str(self.preceding)
        # Calcite's RexWindow prints RANGE as "RANG" (a fixed-width keyword), and so does Flink's EXPLAIN.
        return f"{'ROWS' if self.rows else 'RANG'} BETWEEN {bound} PRECEDING AND CURRENT ROW"


@dataclass(frozen=True, eq=False)
class OverAggregate(_OneInput, _DeclaredSchema):
    """The input's rows, each with ``calls`` computed over its frame.

    ``order_by`` is the ordering column (a time attribute in a streaming
    query), ``ascending`` its direction; ``proctime`` says it is a processing-time
    attribute. Output: the input's columns, then one column per call.
    """

    input: PlanNode
    partition_keys: tuple[str, ...]
    order_by: str
    ascending: bool
    frame: OverFrame
    calls: tuple[AggCall, ...]
    out_schema: Schema
    proctime: bool = False


def describe_over(node: OverAggregate) -> str:
    """EXPLAIN's line for an OVER aggregation, in Flink's form."""
    partition = f"partitionBy=[{', '.join(node.partition_keys)}], " if node.partition_keys else ""
    calls = [f"{_call(c)} AS {c.output}" for c in node.calls]
    select = ", ".join(list(node.input.field_names) + calls)
    return (f"OverAggregate({partition}orderBy=[{node.order_by} {'ASC' if node.ascending else 'DESC'}], "
            f"window=[ {node.frame}], select=[{select}])")


def _call(call: AggCall) -> str:
    name = {"count_star": "COUNT", "sum0": "$SUM0"}.get(call.function, call.function.upper())
    return f"{name}({'*' if call.arg is None else call.arg})"


__all__ = ["OVER_FUNCTIONS", "OverAggregate", "OverFrame", "describe_over"]


def over_call(agg: "Agg", pre: "list[tuple[str, Expression]]", types: dict, index: int) -> AggCall:
    """The ``index``-th over aggregate's call: its argument an input column, or computed by the
    projection below the window (appended to ``pre`` as ``$f<n>``). Both front ends build OVER so."""
    arg = None
    if agg.arg is not None:
        inner = strip_alias(agg.arg)
        arg = inner.name if isinstance(inner, Column) else f"$f{len(pre)}"
        if not isinstance(inner, Column):
            pre.append((arg, inner))
    arg_type = None if agg.arg is None else type_of(strip_alias(agg.arg), types)
    return AggCall(agg.function, arg, arg_type, f"w0$o{index}")
