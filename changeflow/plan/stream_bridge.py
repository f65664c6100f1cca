"""What the plan and the job graph hold where a Table meets a DataStream (no Spark here).

A DataStream read as a table is a plan :class:`~changeflow.plan.nodes.Source` of
kind ``datastream`` whose payload is a :class:`StreamInput`; a table read as a
DataStream is a graph :class:`~changeflow.plan.stream_nodes.TableNode` whose
payload is a :class:`TableInput`. The Spark runtime translates both in one
module (:mod:`changeflow.runtime.spark.bridge`), inside the query of the job
that reads them: a mixed program is one Spark job.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from changeflow.kernels.bridge import RecordShape

_anonymous = itertools.count(1)


def anonymous_name(what: str) -> str:
    """Flink's name for a conversion's implicit table: ``*anonymous_datastream_source$1*``."""
    return f"*anonymous_{what}${next(_anonymous)}*"


@dataclass(frozen=True, eq=False)
class StreamInput:
    """A DataStream's records as a table's changes.

    ``node`` is the stream's graph node; ``shape`` how a record becomes a row;
    ``changelog`` True for ``from_changelog_stream`` (a Row's RowKind is the
    change's kind: the table is ``[I,UB,UA,D]``, or ``[I,UA,D]`` with ``upsert``,
    ``ChangelogMode.upsert()``), False for ``from_data_stream``
    (insert-only; another kind fails the job, as in Flink). ``runtime_context``
    and ``caches`` are the DataStream environment's (its functions' ``open()``
    context, its ``DataStream.cache()`` registry).
    """

    node: Any = field(repr=False)
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

    plan: Any = field(repr=False)
    form: Any = "row"
    insert_only: bool = False
    conversion: str = "to_data_stream"
