"""The catalog: one namespace of tables (``CREATE TABLE``) and views.

Flink keeps objects under ``default_catalog.default_database``; changeflow has
that one database. Tables declared by DDL and views (``CREATE VIEW`` and the
Table API's ``create_temporary_view``) share the namespace, as in Flink: a
name is taken by at most one object, ``SHOW TABLES`` lists both kinds and
``SHOW VIEWS`` the views. Errors use Flink's wording.

>>> from changeflow.catalog.schema import DeclaredColumn, DeclaredSchema
>>> from changeflow.common.types import DataTypes
>>> catalog = Catalog()
>>> catalog.create_table(CatalogTable("t", DeclaredSchema((DeclaredColumn("a", DataTypes.INT(), "INT"),)),
...                                   {"connector": "blackhole"}))
>>> catalog.list_tables(), catalog.list_views()
(['t'], [])
>>> catalog.get("u")
Traceback (most recent call last):
...
changeflow.catalog.catalog.CatalogError: Table 'u' not found; known tables and views: t
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from changeflow.catalog.schema import DeclaredSchema
from changeflow.plan.type_inference import PlanError

CATALOG = "default_catalog"
DATABASE = "default_database"


class CatalogError(PlanError):
    """A catalog object that does not exist, already exists or has the wrong kind."""


def identifier(name: str) -> str:
    """Flink's full identifier of an object: ``default_catalog.default_database.name``."""
    return f"{CATALOG}.{DATABASE}.{name}"


def object_name(parts: list[str]) -> str:
    """The object name of a (possibly qualified) identifier; only the default database exists."""
    if len(parts) == 1:
        return parts[0]
    expected = [CATALOG, DATABASE][-(len(parts) - 1):]
    if len(parts) > 3 or parts[:-1] != expected:
        raise CatalogError(f"identifier {'.'.join(parts)!r} is not in the default database "
                           f"({CATALOG}.{DATABASE}); changeflow has one database")
    return parts[-1]


@dataclass(frozen=True)
class CatalogTable:
    """A table declared by ``CREATE TABLE``: its schema and connector options."""

    name: str
    schema: DeclaredSchema
    options: dict[str, str]
    temporary: bool = False
    comment: str | None = None


@dataclass(frozen=True)
class CatalogView:
    """A view: ``table`` is a :class:`~changeflow.table.Table` (Table API), or ``query`` is (SQL text, column names)."""

    name: str
    temporary: bool
    table: Any = field(default=None, repr=False)
    query: Any = field(default=None, repr=False)


class Catalog:
    def __init__(self) -> None:
        self._objects: dict[str, CatalogTable | CatalogView] = {}

    # --- lookup --------------------------------------------------------------------
    def get(self, name: str) -> CatalogTable | CatalogView:
        if name not in self._objects:
            raise CatalogError(f"Table {name!r} not found; known tables and views: {self._known()}")
        return self._objects[name]

    def contains(self, name: str) -> bool:
        return name in self._objects

    def list_tables(self) -> list[str]:
        """Tables and views, sorted (Flink's ``SHOW TABLES`` lists both)."""
        return sorted(self._objects)

    def list_views(self) -> list[str]:
        return sorted(n for n, o in self._objects.items() if isinstance(o, CatalogView))

    def _known(self) -> str:
        return ", ".join(sorted(self._objects)) or "(none)"

    # --- changes -------------------------------------------------------------------
    def create_table(self, table: CatalogTable, if_not_exists: bool = False) -> None:
        if table.name in self._objects:
            if if_not_exists:
                return
            raise CatalogError(f"Could not execute CreateTable in path `{CATALOG}`.`{DATABASE}`.`{table.name}`: "
                               f"Table (or view) {DATABASE}.{table.name} already exists in Catalog {CATALOG}.")
        self._objects[table.name] = table

    def create_view(self, view: CatalogView, if_not_exists: bool = False, replace: bool = False) -> None:
        existing = self._objects.get(view.name)
        if existing is not None and not replace:
            if if_not_exists:
                return
            if view.temporary and isinstance(existing, CatalogView) and existing.temporary:
                raise CatalogError(f"Temporary table '`{CATALOG}`.`{DATABASE}`.`{view.name}`' already exists")
            raise CatalogError(f"Could not execute CreateTable in path `{CATALOG}`.`{DATABASE}`.`{view.name}`: "
                               f"Table (or view) {DATABASE}.{view.name} already exists in Catalog {CATALOG}.")
        self._objects[view.name] = view

    def drop_table(self, name: str, if_exists: bool = False) -> bool:
        return self._drop(name, CatalogTable, "Table", if_exists)

    def drop_view(self, name: str, if_exists: bool = False) -> bool:
        return self._drop(name, CatalogView, "View", if_exists)

    def _drop(self, name: str, kind: type, word: str, if_exists: bool) -> bool:
        if isinstance(self._objects.get(name), kind):
            del self._objects[name]
            return True
        if if_exists:
            return False
        raise CatalogError(f"{word} with identifier '{identifier(name)}' does not exist.")
