"""EXPLAIN: the plan as a tree, each operator with its changelog mode and settings.

A two-phase aggregation (:mod:`changeflow.plan.agg_phase`) prints as Flink
prints it: ``GlobalGroupAggregate`` above the exchange merging the partial
accumulators (``count$0``, ``sum$1``...) that ``LocalGroupAggregate`` computes
below it.

With an output flush interval (``execution.max-flush-interval``) a section
after the plan names each operator that buffers its output and why: its
output is idempotent and it is keyed (or runs on one task).
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.kernels.aggregate.local import partial_fields
from changeflow.plan import changelog_mode
from changeflow.plan.agg_phase import two_phase_aggregates
from changeflow.plan.changelog_mode import INSERT_ONLY
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project, Source


@dataclass(frozen=True)
class ExplainSettings:
    streaming: bool = True
    mini_batch: bool = False
    mini_batch_latency_ms: int = 0
    mini_batch_size: int = -1
    agg_phase_strategy: str = "AUTO"
    flush_interval_ms: int | None = None   # execution.max-flush-interval
    flush_memory_only: bool = False        # execution.flush.memory-buffer-only


def explain(root: PlanNode, settings: ExplainSettings) -> str:
    modes = changelog_mode.infer(root)
    two_phase = two_phase_aggregates(root, mini_batch=settings.mini_batch, strategy=settings.agg_phase_strategy,
                                     modes=modes) if settings.streaming else set()
    lines: list[str] = []

    def with_mode(describe: str, mode) -> str:
        return describe[:-1] + f", changelogMode={mode})" if settings.streaming else describe

    def visit(node: PlanNode, depth: int) -> None:
        split = id(node) in two_phase
        describe = _describe_global(node) if split else _describe(node, settings)
        describe = with_mode(describe, modes[id(node)])
        lines.append(_indent(depth) + describe)
        depth += 1
        if isinstance(node, Aggregate):
            dist = f"hash[{', '.join(node.keys)}]" if node.keys else "single"
            lines.append(_indent(depth) + f"Exchange(distribution=[{dist}])")
            depth += 1
            if split:
                lines.append(_indent(depth) + with_mode(_describe_local(node), INSERT_ONLY))
                depth += 1
        if isinstance(node, Source) and settings.streaming and settings.mini_batch:
            lines[-1], source_line = (
                _indent(depth - 1) + f"MiniBatchAssigner(interval=[{settings.mini_batch_latency_ms}ms], "
                f"mode=[ProcTime], size=[{settings.mini_batch_size}])",
                _indent(depth) + describe,
            )
            lines.append(source_line)
        for child in node.inputs:
            visit(child, depth)

    visit(root, 0)
    title = "== Physical Plan ==" if settings.streaming else "== Physical Plan (batch) =="
    return title + "\n" + "\n".join(lines) + "\n" + _flush_section(root, settings)


def _flush_section(root: PlanNode, settings: ExplainSettings) -> str:
    """Which operators buffer their output per key (FLIP-365), and why."""
    if not settings.streaming or settings.flush_interval_ms is None:
        return ""
    when = ("at the end of every micro-batch (memory-buffer-only)" if settings.flush_memory_only
            else f"every {settings.flush_interval_ms}ms, on idle input and at end of input")
    lines = []

    def visit(node: PlanNode) -> None:
        for child in node.inputs:
            visit(child)
        if isinstance(node, Aggregate):
            keyed = f"keyed by [{', '.join(node.keys)}]" if node.keys else "parallelism 1 (no grouping key)"
            calls = [_describe_call(c) + f" AS {c.output}" for c in node.calls]
            lines.append(f"{_aggregate('GroupAggregate', node, calls)}: buffers the "
                         f"latest output per key, flushed {when}; output idempotent (group aggregation), {keyed}")

    visit(root)
    if not lines:
        return "\n== Output Flush ==\nno operator buffers: none has an idempotent keyed output\n"
    return "\n== Output Flush ==\n" + "\n".join(lines) + "\n"


def _indent(depth: int) -> str:
    return "" if depth == 0 else "   " * (depth - 1) + "+- "


def _describe(node: PlanNode, settings: ExplainSettings) -> str:
    if isinstance(node, Source):
        return f"TableSourceScan(table=[{node.name}], fields=[{', '.join(node.field_names)}])"
    if isinstance(node, Project):
        items = [str(e) if getattr(e, "name", None) == n else f"{e} AS {n}" for n, e in node.exprs]
        return f"Calc(select=[{', '.join(items)}])"
    if isinstance(node, Filter):
        return f"Calc(where=[{node.predicate}])"
    if isinstance(node, Aggregate):
        name = "GroupAggregate" if settings.streaming else "HashAggregate"
        if settings.streaming and settings.mini_batch:
            name = "MiniBatchGroupAggregate"
        return _aggregate(name, node, [_describe_call(c) + f" AS {c.output}" for c in node.calls])
    raise TypeError(type(node).__name__)


def _describe_local(node: Aggregate) -> str:
    calls = [f"{_describe_call(c)} AS {_names(p)}" for c, p in zip(node.calls, _partial_names(node))]
    return _aggregate("LocalGroupAggregate", node, calls)


def _describe_global(node: Aggregate) -> str:
    calls = []
    for call, partials in zip(node.calls, _partial_names(node)):
        name = _describe_call(call).split("(")[0]
        arg = partials[0] if len(partials) == 1 else _names(partials)
        calls.append(f"{name}({arg}) AS {call.output}")
    return _aggregate("GlobalGroupAggregate", node, calls)


def _aggregate(name: str, node: Aggregate, calls: list[str]) -> str:
    group = f"groupBy=[{', '.join(node.keys)}], " if node.keys else ""
    return f"{name}({group}select=[{', '.join(list(node.keys) + calls)}])"


def _partial_names(node: Aggregate) -> list[list[str]]:
    """Flink's names of the partial accumulator fields, numbered across calls: ``count1$0, sum$1``."""
    out, n = [], 0
    for call in node.calls:
        names = []
        for field in partial_fields(call):
            names.append(f"{_PARTIAL_NAMES.get(field, call.function)}${n}")
            n += 1
        out.append(names)
    return out


# Accumulator field -> the name Flink gives the partial (MIN/MAX's "value" is the function's name).
_PARTIAL_NAMES = {"rows": "count1", "non_null": "count", "sum": "sum"}


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"({', '.join(names)})"


def _describe_call(call) -> str:
    name = {"count_star": "COUNT", "listagg": "LISTAGG"}.get(call.function, call.function.upper())
    arg = "*" if call.arg is None else call.arg
    return f"{name}({'DISTINCT ' if call.distinct else ''}{arg})"
