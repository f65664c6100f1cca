"""What SQL statements need from the environment running them, and what they hand back.

:mod:`changeflow.sql.statements` runs against a :class:`StatementSession`: the
catalog, the configuration, and the few planning steps that belong to the
environment (resolving a name, planning an ``INSERT``'s sink, EXPLAIN). The
Table API's environment implements it
(:class:`changeflow.table.planning.PlanningContext`); SQL knows nothing about
the Table API, so the two packages do not import each other in a circle
(``table`` depends on ``sql``, ``sql`` on ``catalog``, ``plan`` and ``config``).

A statement returns an :data:`Outcome`: a description the environment turns
into PyFlink's ``TableResult`` (a query or an ``INSERT`` to run, rows to show,
a text, or just ``OK``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Union

from changeflow.catalog import Catalog, CatalogTable, DeclaredSchema
from changeflow.common.configuration import Configuration
from changeflow.common.types import DataType
from changeflow.plan.nodes import PlanNode, Sink

__all__ = ["Done", "Explained", "Outcome", "RunInsert", "RunQuery", "Shown", "StatementSession"]


class StatementSession(Protocol):
    """The environment as SQL statements see it."""

    @property
    def catalog(self) -> Catalog:
        """The tables and views, which DDL changes."""
        ...

    @property
    def configuration(self) -> Configuration:
        """The live configuration, which ``SET`` changes."""
        ...

    def resolve(self, name: str) -> PlanNode:
        """The plan of the catalog object ``name`` (a DDL table reads its connector)."""
        ...

    def declared_schema(self, table: CatalogTable) -> DeclaredSchema:
        """``table``'s schema with its computed columns' types filled in (a bad expression raises)."""
        ...

    def insert_plan(self, name: str, query: PlanNode, columns: list[str] | None = None,
                    conflict: str | None = None) -> Sink:
        """``INSERT INTO name [(columns)] query [ON CONFLICT ...]`` planned down to the sink."""
        ...

    def explain(self, plan: PlanNode) -> str:
        """EXPLAIN's text for ``plan``."""
        ...

    def register_function(self, name: str, function: Any, system: bool, if_not_exists: bool) -> None:
        """``CREATE FUNCTION``: the Python object ``function`` (a udf/udtf/udaf/udtaf) registered as ``name``."""
        ...

    def reset_option(self, key: str | None = None) -> None:
        """``RESET ['key']``: back to the value the environment was created with."""
        ...


@dataclass(frozen=True)
class Done:
    """A statement without content (DDL, ``SET``, ``RESET``): ``OK``."""


@dataclass(frozen=True)
class Shown:
    """A statement's content (``SHOW``, ``DESCRIBE``, ``SET``): rows under ``schema``."""

    schema: tuple[tuple[str, DataType], ...]
    rows: list[tuple]


@dataclass(frozen=True)
class Explained:
    """``EXPLAIN``'s plan text."""

    text: str


@dataclass(frozen=True)
class RunQuery:
    """A query to run (``SELECT``, ``WITH``, ``VALUES``)."""

    plan: PlanNode


@dataclass(frozen=True)
class RunInsert:
    """An ``INSERT`` job to submit."""

    plan: Sink


Outcome = Union[Done, Shown, Explained, RunQuery, RunInsert]
