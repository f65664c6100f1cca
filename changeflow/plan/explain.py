"""EXPLAIN: the plan as a tree, each operator with its changelog mode and settings."""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.plan import changelog_mode
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project, Source


@dataclass(frozen=True)
class ExplainSettings:
    streaming: bool = True
    mini_batch: bool = False
    mini_batch_latency_ms: int = 0
    mini_batch_size: int = -1


def explain(root: PlanNode, settings: ExplainSettings) -> str:
    modes = changelog_mode.infer(root)
    lines: list[str] = []

    def visit(node: PlanNode, depth: int) -> None:
        describe = _describe(node, settings)
        if settings.streaming:
            describe = describe[:-1] + f", changelogMode={modes[id(node)]})"
        lines.append(_indent(depth) + describe)
        depth += 1
        if isinstance(node, Aggregate):
            dist = f"hash[{', '.join(node.keys)}]" if node.keys else "single"
            lines.append(_indent(depth) + f"Exchange(distribution=[{dist}])")
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
    return title + "\n" + "\n".join(lines) + "\n"


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
        calls = ", ".join(_describe_call(c) + f" AS {c.output}" for c in node.calls)
        select = ", ".join(list(node.keys) + [calls] if calls else list(node.keys))
        name = "GroupAggregate" if settings.streaming else "HashAggregate"
        if settings.streaming and settings.mini_batch:
            name = "MiniBatchGroupAggregate"
        group = f"groupBy=[{', '.join(node.keys)}], " if node.keys else ""
        return f"{name}({group}select=[{select}])"
    raise TypeError(type(node).__name__)


def _describe_call(call) -> str:
    name = {"count_star": "COUNT", "listagg": "LISTAGG"}.get(call.function, call.function.upper())
    arg = "*" if call.arg is None else call.arg
    return f"{name}({'DISTINCT ' if call.distinct else ''}{arg})"
