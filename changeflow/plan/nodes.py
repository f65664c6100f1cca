"""Plan nodes: what a program computes, and (once planned) how it runs.

Every node has an output ``schema`` (ordered column name -> Flink type). Nodes are
immutable; the front ends build them. The planner (:mod:`changeflow.plan.optimizer`)
returns a copy of the tree whose every node carries its physical annotations in
``traits`` (:class:`~changeflow.plan.physical.Traits`): that physical plan is
what EXPLAIN prints and the runtimes translate. A logical node has ``traits`` None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.expressions import Expression

Schema = tuple[tuple[str, DataType], ...]


@dataclass(frozen=True, eq=False)
class PlanNode:
    # Keyword-only, so that it follows every subclass's own fields (which keep their positions).
    traits: Any = field(default=None, kw_only=True, repr=False)
    # False for a node changeflow needs where Flink's plan has none: EXPLAIN prints its input in its place.
    in_flink_plan: ClassVar[bool] = True
    # True for the DataStream API's operators (changeflow.plan.stream_nodes), which only some rules annotate.
    stream: ClassVar[bool] = False
    # True where one API's plan meets the other's (changeflow.plan.stream_bridge.Boundary): the node's
    # input is the other API's plan, which the optimizer plans with that side's settings.
    boundary: ClassVar[bool] = False

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


class _OneInput(PlanNode):
    """A node over one ``input``."""

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)  # type: ignore[attr-defined]


class _DeclaredSchema(PlanNode):
    """A node whose output schema is computed by the planner and kept as ``out_schema``."""

    @property
    def schema(self) -> Schema:
        return self.out_schema  # type: ignore[attr-defined]


class _InputSchema(PlanNode):
    """A node that outputs its input's columns unchanged."""

    @property
    def schema(self) -> Schema:
        return self.input.schema  # type: ignore[attr-defined]


@dataclass(frozen=True, eq=False)
class Source(PlanNode):
    """A bounded source of rows: Python tuples, a pandas frame or a Spark DataFrame."""

    name: str
    source_schema: Schema
    kind: str  # "elements" | "pandas" | "spark" | "arrow" (an Arrow table typed by the schema)
    payload: Any = field(repr=False)
    # A DDL table's declared PRIMARY KEY (NOT ENFORCED): what makes it a versioned table for a temporal join.
    primary_key: tuple[str, ...] = ()
    # A connector's columns declared TIMESTAMP_LTZ: read as UTC (DDL types them TIMESTAMP, their UTC wall
    # clock; sql/type_names.py), right only under a session zone that is UTC (plan/time_zone.py refuses
    # them under another).
    ltz_columns: tuple[str, ...] = ()

    @property
    def schema(self) -> Schema:
        return self.source_schema


@dataclass(frozen=True, eq=False)
class Project(_OneInput, _DeclaredSchema):
    input: PlanNode
    exprs: tuple[tuple[str, Expression], ...]
    out_schema: Schema


@dataclass(frozen=True, eq=False)
class Filter(_OneInput, _InputSchema):
    input: PlanNode
    predicate: Expression


@dataclass(frozen=True, eq=False)
class Aggregate(_OneInput, _DeclaredSchema):
    """GROUP BY ``keys`` (input column names) computing ``calls``.

    Output columns: the keys, then one column per call, named ``call.output``.
    ``state_ttl_ms`` is the state TTL a ``STATE_TTL`` hint gives this operator
    (None: ``table.exec.state.ttl``; see :mod:`changeflow.plan.rules.state_ttl`).
    """

    input: PlanNode
    keys: tuple[str, ...]
    calls: tuple[AggCall, ...]
    out_schema: Schema
    state_ttl_ms: int | None = None


@dataclass(frozen=True, eq=False)
class TableAggregate(_OneInput, _DeclaredSchema):
    """``group_by(keys).flat_aggregate(call)``: a Python table aggregate function per group.

    ``call`` is a :class:`~changeflow.kernels.aggregate.user.UserAggCall` of a
    ``TableAggregateFunction``. Output columns: the keys, then the fields of each row
    its ``emit_value`` yields (named by ``out_schema``); see
    :mod:`changeflow.kernels.aggregate.table_agg` for the changelog.
    """

    input: PlanNode
    keys: tuple[str, ...]
    call: AggCall
    out_schema: Schema


# --- nodes of the SQL front end (joins, unions, deduplication, Top-N, sinks) ----------------


@dataclass(frozen=True, eq=False)
class Join(_DeclaredSchema):
    """A regular (unwindowed) join: ``left JOIN right ON left_keys = right_keys AND condition``.

    ``join_type`` is ``INNER``, ``LEFT``, ``RIGHT`` or ``FULL``. ``left_keys`` and
    ``right_keys`` name the equi-join columns pairwise (in each input's own
    names); they may be empty (a join with no equality, one shuffle key).
    ``condition`` is the rest of the ON clause, over the *output* column names.
    The output is the left columns then the right columns, named by
    ``out_schema`` (right columns are renamed where they clash, as Flink's
    ``id0``); the columns of the outer side(s) of an outer join are nullable.
    ``left_ttl_ms`` / ``right_ttl_ms`` are the state TTLs a ``STATE_TTL`` hint
    gives each side (None: ``table.exec.state.ttl``).
    """

    left: PlanNode
    right: PlanNode
    join_type: str
    left_keys: tuple[str, ...]
    right_keys: tuple[str, ...]
    condition: Expression | None
    out_schema: Schema
    left_ttl_ms: int | None = None
    right_ttl_ms: int | None = None

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, eq=False)
class Union(_DeclaredSchema):
    """``UNION ALL`` of inputs with the same column types (matched by position)."""

    union_inputs: tuple[PlanNode, ...]
    out_schema: Schema

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return self.union_inputs


@dataclass(frozen=True, eq=False)
class Deduplicate(_OneInput, _InputSchema):
    """``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY <time> ASC|DESC) = 1``.

    ``keep_last`` is ``ORDER BY ... DESC``. ``order`` is ``"proctime"`` (arrival
    order) or the name of a rowtime column (:mod:`changeflow.plan.rules.rowtime_deduplicate`).
    ``emit_on_watermark``: keep first on row time emitting each key's row, insert-only,
    when the watermark reaches it (Flink without mini-batch). Output: the input's columns.
    """

    input: PlanNode
    keys: tuple[str, ...]
    keep_last: bool
    order: str = "proctime"
    emit_on_watermark: bool = False


@dataclass(frozen=True, eq=False)
class ChangelogNormalize(_OneInput, _InputSchema):
    """Flink's ChangelogNormalize: the last row per ``keys`` (a source's primary key), as a retract changelog.

    The planner puts it over a source of upserts (``+U`` without ``-U``, ``-D`` perhaps
    holding only the key) and, with ``table.exec.source.cdc-events-duplicate``, over a
    keyed source of a full changelog (:mod:`changeflow.plan.rules.changelog_normalize`).
    Its operator is :mod:`changeflow.kernels.normalize`. Output: the input's columns.
    ``drop_update_before``: the input has ``-U`` rows, which Flink drops before the node
    (its ``DropUpdateBefore``: the node takes only ``+U``). ``update_before``: the node emits
    ``-U`` rows (Flink's ``generateUpdateBefore``); False where its consumer takes upserts by
    the same key (:mod:`changeflow.plan.rules.normalize_consumers`), its changelog then ``[I,UA,D]``.
    """

    input: PlanNode
    keys: tuple[str, ...]
    drop_update_before: bool = False
    update_before: bool = True


@dataclass(frozen=True, eq=False)
class RankFields(_OneInput, _DeclaredSchema):
    """The fields of a ``ROW_NUMBER()`` Top-N, regular (:class:`Rank`) or per window (``WindowRank``).

    ``order_by`` holds ``(column, ascending, nulls_first)`` triples.
    ``rank_column`` names the row-number output column, appended to the input's
    columns, or is ``None`` when the query does not select it.

    Neither node is the other (a window Top-N emits once per window, insert-only;
    a regular one retracts): rules and translators test for the node itself, never
    for this base.
    """

    input: PlanNode
    partition_keys: tuple[str, ...]
    order_by: tuple[tuple[str, bool, bool], ...]
    rank_start: int
    rank_end: int
    rank_column: str | None
    out_schema: Schema


@dataclass(frozen=True, eq=False)
class Rank(RankFields):
    """Top-N: ``ROW_NUMBER() OVER (PARTITION BY keys ORDER BY order_by) BETWEEN start AND end``.

    Fields as :class:`RankFields`.
    """


@dataclass(frozen=True, eq=False)
class Sort(_OneInput, _InputSchema):
    """``ORDER BY order_by [OFFSET offset] [FETCH fetch]`` (``fetch`` None: all rows).

    ``order_by`` holds ``(column, ascending, nulls_first)`` triples (empty: a bare
    LIMIT). A batch query sorts; in a streaming query the ``sort_limit`` rule turns
    a Sort with a fetch into a global :class:`Rank` (Flink's Top-N) and refuses the rest.
    """

    input: PlanNode
    order_by: tuple[tuple[str, bool, bool], ...]
    offset: int = 0
    fetch: int | None = None


@dataclass(frozen=True, eq=False)
class Sink(_OneInput, _InputSchema):
    """``INSERT INTO table``: writes the input's changes to a connector.

    ``connector`` is the sink object of :mod:`changeflow.connectors`;
    ``primary_key`` the sink table's declared primary key (empty for none);
    ``conflict`` the statement's ``ON CONFLICT DO ...`` mode (DEDUPLICATE,
    NOTHING or ERROR; None without the clause). Its schema is the sink table's.
    Where the planner puts an :class:`UpsertMaterialize` before the sink, it is
    the sink's input.
    """

    input: PlanNode
    table: str
    connector: Any = field(repr=False)
    primary_key: tuple[str, ...] = ()
    conflict: str | None = None
    ltz_columns: tuple[str, ...] = ()  # as Source's: the sink table's columns declared TIMESTAMP_LTZ (written as UTC)


@dataclass(frozen=True, eq=False)
class UpsertMaterialize(_OneInput, _InputSchema):
    """The sink upsert materializer (SinkUpsertMaterializerV2, FLINK-38461 / FLIP-558) in front of a primary-key sink.

    It reconciles changes for one ``primary_key`` that may arrive out of order
    (the input's ``upsert_key`` differs from the primary key, or is None when the
    input has no unique key) into an upsert stream keyed by ``primary_key``.
    ``conflict`` is the INSERT's ``ON CONFLICT`` mode (DEDUPLICATE, NOTHING or
    ERROR); ``strategy`` how histories are kept (LEGACY, VALUE, MAP, ADAPTIVE,
    see :mod:`changeflow.kernels.materializer.kernel`); ``ttl_ms`` 0 for none.
    """

    input: PlanNode
    primary_key: tuple[str, ...]
    upsert_key: tuple[str, ...] | None
    conflict: str = "DEDUPLICATE"
    strategy: str = "LEGACY"
    threshold_high: int = 50
    threshold_low: int = 40
    ttl_ms: int = 0


def side_inputs(node: PlanNode) -> tuple[PlanNode, ...]:
    """``node``'s inputs on its own API's side: none for a boundary, whose input is the other API's plan."""
    return () if node.boundary else tuple(node.inputs)


def sources(node: PlanNode) -> list[Source]:
    """The sources under ``node``, left to right, each once (a DataStream read as a table is one: the walk
    stops at the boundary)."""
    found: list[Source] = []

    def visit(n: PlanNode) -> None:
        if isinstance(n, Source) and all(n is not s for s in found):
            found.append(n)
        for child in side_inputs(n):
            visit(child)

    visit(node)
    return found


@dataclass(frozen=True, eq=False)
class Replicate(_OneInput, _DeclaredSchema):
    """Each input change repeated ``count`` times (the value of the column ``count``), that column dropped.

    Flink's ``$REPLICATE_ROWS$`` table function, which its ``INTERSECT ALL`` and
    ``EXCEPT ALL`` rewrites apply to the counts an aggregation computed: a
    ``-U (row, 2)`` / ``+U (row, 3)`` becomes two ``-U row`` and three ``+U row``,
    so the result stays a correct retract changelog. Stateless.
    """

    input: PlanNode
    count: str
    out_schema: Schema
