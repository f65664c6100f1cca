"""Logical plan nodes: what a program computes, independent of how it runs.

Every node has an output ``schema`` (ordered column name -> Flink type). Nodes are
immutable; the Table API builds them and the runtimes translate them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.expressions import Expression

Schema = tuple[tuple[str, DataType], ...]


@dataclass(frozen=True, eq=False)
class PlanNode:
    @property
    def schema(self) -> Schema:
        raise NotImplementedError

    @property
    def inputs(self) -> tuple["PlanNode", ...]:
        return ()

    @property
    def field_names(self) -> list[str]:
        return [n for n, _ in self.schema]

    def type_map(self) -> dict[str, DataType]:
        return dict(self.schema)


@dataclass(frozen=True, eq=False)
class Source(PlanNode):
    """A bounded source of rows: Python tuples, a pandas frame or a Spark DataFrame."""

    name: str
    source_schema: Schema
    kind: str  # "elements" | "pandas" | "spark"
    payload: Any = field(repr=False)

    @property
    def schema(self) -> Schema:
        return self.source_schema


@dataclass(frozen=True, eq=False)
class Project(PlanNode):
    input: PlanNode
    exprs: tuple[tuple[str, Expression], ...]
    out_schema: Schema

    @property
    def schema(self) -> Schema:
        return self.out_schema

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)


@dataclass(frozen=True, eq=False)
class Filter(PlanNode):
    input: PlanNode
    predicate: Expression

    @property
    def schema(self) -> Schema:
        return self.input.schema

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)


@dataclass(frozen=True, eq=False)
class Aggregate(PlanNode):
    """GROUP BY ``keys`` (input column names) computing ``calls``.

    Output columns: the keys, then one column per call, named ``call.output``.
    """

    input: PlanNode
    keys: tuple[str, ...]
    calls: tuple[AggCall, ...]
    out_schema: Schema

    @property
    def schema(self) -> Schema:
        return self.out_schema

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)
