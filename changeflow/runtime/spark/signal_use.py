"""Whether a streaming query needs its watermark rows and end-of-input signals at all.

A table declared with a ``WATERMARK`` gets a watermark assigner in every plan that reads
it; its watermark rows and end-of-input control rows (:mod:`.control_rows`) cost a Python
stage per scan and a fan-out of every signal to every bucket of every stateful operator
(and a bounded DataFrame source one more micro-batch: :mod:`.source_files`). A plan whose
operators act on neither gives the same changelog without them (Flink's regular joins,
group aggregations and Top-N ignore watermarks too): Nexmark's joins (q3, q4, q9, q20)
over the watermarked ``datagen`` table.

:func:`signals_needed` asks the kernels: it builds each stateful node's kernel with the
function its translator builds it with and reads the contract's answer
(:func:`~changeflow.kernels.contract.acts_on_signals`), so the answer follows the kernels.
A node whose kernel is not built here (windows, window Top-N, table aggregates,
correlates, ...) keeps the signals, as does a row-time mini-batch assigner (its filter
runs where watermarks are applied). A sink that reads the watermark (a partition-time
commit) asks for them apart (``StreamingTranslator.keep_watermarks``).
"""

from __future__ import annotations

from typing import Callable

from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.contract import KernelBase, acts_on_signals
from changeflow.kernels.current_watermark import CurrentWatermarkStamp
from changeflow.kernels.ttl import KeyStateTtl
from changeflow.plan.event_time import WatermarkAssigner
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project,
                                   Rank, Sink, Source, Union, UpsertMaterialize, side_inputs)
from changeflow.plan.over import OverAggregate
from changeflow.runtime.spark.current_watermark import calls_current_watermark
from changeflow.runtime.spark.event_time import has_watermarks
from changeflow.runtime.spark.join import join_kernel
from changeflow.runtime.spark.materializer import materializer_kernel
from changeflow.runtime.spark.over import over_kernel
from changeflow.runtime.spark.rank import rank_kernel


def group_kernel(node: Aggregate) -> KernelBase:
    """The group aggregation's kernel configured as ``node`` says (with its state TTL, if any)."""
    traits = node.traits
    ttl_ms = traits.state_ttl_ms or 0
    kernel = GroupAggregate(list(node.keys), list(node.calls), mini_batch=traits.folds_bundles,
                            input_insert_only=node.input.traits.changelog_mode.insert_only,
                            partial_input=traits.two_phase, state_ttl=ttl_ms > 0)
    if ttl_ms > 0:  # a group's state expires a TTL after its last write (kernels/ttl.py)
        return KeyStateTtl(kernel, list(node.keys), ttl_ms)
    return kernel


def _calc_kernels(node: Project | Filter) -> list[KernelBase]:
    """A Calc is Spark columns, but one calling CURRENT_WATERMARK reads a stamping kernel's column."""
    exprs = [e for _, e in node.exprs] if isinstance(node, Project) else [node.predicate]
    return [CurrentWatermarkStamp(node.input.field_names)] if calls_current_watermark(exprs) else []


def _assigner_kernels(node: WatermarkAssigner) -> list[KernelBase] | None:
    # A row-time mini-batch assigner filters the watermarks where the processors apply them: it needs
    # them (None: no kernel answers for it).
    assigner = node.traits.mini_batch_assigner if node.traits is not None else None
    return None if assigner is not None and assigner[2] == "RowTime" else []


# The kernels a node's streaming translation runs, by exact node type (a subclass, such as an
# IntervalJoin or a ProcessingTimeAssigner, is another operator: without an entry of its own it keeps the
# signals). Source, Union and Sink run none.
_KERNELS: dict[type, Callable[..., list[KernelBase] | None]] = {
    Source: lambda node: [], Union: lambda node: [], Sink: lambda node: [],
    Project: _calc_kernels, Filter: _calc_kernels, WatermarkAssigner: _assigner_kernels,
    Aggregate: lambda node: [group_kernel(node)],
    Join: lambda node: [join_kernel(node)],
    Deduplicate: lambda node: [rank_kernel(node)], Rank: lambda node: [rank_kernel(node)],
    ChangelogNormalize: lambda node: [rank_kernel(node)],
    UpsertMaterialize: lambda node: [materializer_kernel(node)],
    OverAggregate: lambda node: [over_kernel(node)],
}


def _needs_signals(node: PlanNode) -> bool:
    kernels_of = _KERNELS.get(type(node))
    kernels = kernels_of(node) if kernels_of is not None else None
    return kernels is None or any(acts_on_signals(k) for k in kernels)


def signals_needed(root: PlanNode) -> bool:
    """Whether the physical plan ``root`` has watermark assigners whose signals an operator acts on."""
    if not has_watermarks(root):
        return False
    todo = [root]
    while todo:
        node = todo.pop()
        if _needs_signals(node):
            return True
        todo.extend(side_inputs(node))  # this query's operators: not those of a DataStream read as a table
    return False


__all__ = ["group_kernel", "signals_needed"]
