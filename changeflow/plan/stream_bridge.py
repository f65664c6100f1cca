"""What the plan and the job graph hold where a Table meets a DataStream (no Spark here).

A DataStream read as a table is a :class:`StreamSource` (a plan ``Source`` of
kind ``datastream``, payload a :class:`StreamInput`) over the stream's graph
node; a table read as a DataStream is a graph
:class:`~changeflow.plan.stream_nodes.TableNode` (payload a :class:`TableInput`)
over the Table plan. Both are a :class:`Boundary`: the other API's plan is the
node's one input, so a mixed program is one tree, planned by one optimizer pass
(:func:`~changeflow.plan.optimizer.optimize`, each side with its own settings)
and translated as one Spark job (:mod:`changeflow.runtime.spark.bridge`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Sequence, TypeVar

from changeflow.kernels.bridge import RecordShape
from changeflow.plan.nodes import PlanNode, Source
from changeflow.plan.physical import rewrite

_anonymous = itertools.count(1)
_P = TypeVar("_P", bound=PlanNode)


def anonymous_name(what: str) -> str:
    """Flink's name for a conversion's implicit table: ``*anonymous_datastream_source$1*``."""
    return f"*anonymous_{what}${next(_anonymous)}*"


@dataclass(frozen=True, eq=False)
class StreamInput:
    """A DataStream's records as a table's changes.

    ``shape`` is how a record becomes a row;
    ``changelog`` True for ``from_changelog_stream`` (a Row's RowKind is the
    change's kind: the table is ``[I,UB,UA,D]``, or ``[I,UA,D]`` with ``upsert``,
    ``ChangelogMode.upsert()``), False for ``from_data_stream``
    (insert-only; another kind fails the job, as in Flink). ``runtime_context``
    and ``caches`` are the DataStream environment's (its functions' ``open()``
    context, its ``DataStream.cache()`` registry).
    """

    shape: RecordShape
    changelog: bool = False
    runtime_context: Any = field(default=None, repr=False)
    caches: Any = field(default=None, repr=False)
    upsert: bool = False


@dataclass(frozen=True, eq=False)
class TableInput:
    """A Table plan's changes as DataStream records.

    ``form``: ``row`` (a named Row per change, with its RowKind: ``to_data_stream``,
    ``to_changelog_stream``) or a picklable function of the positional Row with
    its kind (``to_append_stream``, ``to_retract_stream``). ``insert_only``
    refuses changes other than INSERT at run time; ``conversion`` names the
    method for errors.
    """

    form: Any = "row"
    insert_only: bool = False
    conversion: str = "to_data_stream"


@dataclass(frozen=True, eq=False)
class Boundary(PlanNode):
    """A node where one API's plan meets the other's: ``below``, the other API's plan, is its one input.

    The two sides are planned with different settings: a Table plan under a DataStream job with the
    Table environment's ``table.*`` options, the job with the DataStream environment's. So the
    node carries the settings of the side below it (``side_settings``, a
    :class:`~changeflow.plan.optimizer.PlannerSettings`; None: the side above's), and the optimizer
    runs each rule on the side below with them, then on the side above with its own, where the
    boundary is a leaf (``sealed``: set only while that rule runs), as a source is. Walks of one
    API's nodes stop here (:func:`~changeflow.plan.nodes.side_inputs`); walks of the whole program
    (EXPLAIN's tree, the runtime's translation) pass through ``inputs``.
    """

    boundary: ClassVar[bool] = True
    below: PlanNode = field(default=None, kw_only=True, repr=False)  # pyright: ignore[reportAssignmentType]
    side_settings: Any = field(default=None, kw_only=True, repr=False)
    sealed: bool = field(default=False, kw_only=True, repr=False)

    @property
    def inputs(self) -> Any:  # a list for a graph node (PyFlink's), a tuple for a Table node
        return () if self.sealed else (self.below,)

    def over(self, inputs: Sequence[PlanNode]) -> "Boundary":
        """This node over its planned ``below`` (the optimizer's rebuild)."""
        return replace(self, below=inputs[0]) if inputs else self


def with_table_settings(plan: _P, settings: Any) -> _P:
    """``plan`` with ``settings`` (the Table environment's :class:`~changeflow.plan.optimizer.PlannerSettings`)
    on each Table plan read as a stream that carries none: what the job's one planning pass plans them with."""
    if settings is None:
        return plan

    def carry(node: PlanNode) -> PlanNode:
        table_side = isinstance(node, Boundary) and node.stream and node.side_settings is None
        return replace(node, side_settings=settings) if table_side else node

    return rewrite(plan, carry)  # type: ignore[return-value] - the root keeps its kind


@dataclass(frozen=True, eq=False)
class StreamSource(Boundary, Source):
    """A DataStream's records as a table (``from_data_stream`` & co): kind ``datastream``, payload a
    :class:`StreamInput`, ``below`` the stream's graph node (planned with the Table query's settings)."""
