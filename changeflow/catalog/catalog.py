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

from changeflow.catalog.functions import FunctionCatalog
from changeflow.catalog.schema import DeclaredSchema
from changeflow.plan.type_inference import PlanError

CATALOG = "default_catalog"
DATABASE = "default_database"


class CatalogError(PlanError):
    """A catalog object that does not exist, already exists or has the wrong kind."""


def identifier(name: str) -> str:
    """Flink's full identifier of an object: ``default_catalog.default_database.name``."""
    return f"{CATALOG}.{DATABASE}.{name}"


def check_catalog(name: str) -> None:
    """``USE CATALOG name``: only the one catalog exists (Flink's message)."""
    if name != CATALOG:
        raise CatalogError(f"A catalog with name [{name}] does not exist. (changeflow has one catalog, {CATALOG})")


def check_database(name: str) -> None:
    """``USE name``: only the one database exists (Flink's message)."""
    if name != DATABASE:
        raise CatalogError(f"A database with name [{name}] does not exist in the catalog: [{CATALOG}]. "
                           f"(changeflow has one database, {DATABASE})")


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
    """Temporary and permanent objects; a temporary one shadows a permanent one of the same name, as in Flink."""

    def __init__(self) -> None:
        self._temporary: dict[str, CatalogTable | CatalogView] = {}
        self._permanent: dict[str, CatalogTable | CatalogView] = {}
        self.functions = FunctionCatalog()  # user-defined functions by name (catalog/functions.py)

    # --- lookup --------------------------------------------------------------------
    def get(self, name: str) -> CatalogTable | CatalogView:
        found = self._temporary.get(name, self._permanent.get(name))
        if found is None:
            raise CatalogError(f"Table {name!r} not found; known tables and views: {self._known()}")
        return found

    def contains(self, name: str) -> bool:
        return name in self._temporary or name in self._permanent

    def list_tables(self) -> list[str]:
        """Tables and views, sorted (Flink's ``SHOW TABLES`` lists both; not the anonymous tables of
        ``from_descriptor``)."""
        return sorted(n for n in set(self._temporary) | set(self._permanent) if not n.startswith("*anonymous_"))

    def list_views(self) -> list[str]:
        return sorted({n for space in (self._temporary, self._permanent) for n, o in space.items()
                       if isinstance(o, CatalogView)})

    def _known(self) -> str:
        return ", ".join(self.list_tables()) or "(none)"

    # --- changes -------------------------------------------------------------------
    def create_table(self, table: CatalogTable, if_not_exists: bool = False) -> None:
        self._create(table, table.temporary, if_not_exists)

    def create_view(self, view: CatalogView, if_not_exists: bool = False) -> None:
        self._create(view, view.temporary, if_not_exists)

    def _create(self, entry: CatalogTable | CatalogView, temporary: bool, if_not_exists: bool) -> None:
        space = self._temporary if temporary else self._permanent
        if entry.name in space:
            if if_not_exists:
                return
            if temporary:
                raise CatalogError(f"Temporary table '`{CATALOG}`.`{DATABASE}`.`{entry.name}`' already exists")
            raise CatalogError(f"Could not execute CreateTable in path `{CATALOG}`.`{DATABASE}`.`{entry.name}`: "
                               f"Table (or view) {DATABASE}.{entry.name} already exists in Catalog {CATALOG}.")
        space[entry.name] = entry

    def drop_table(self, name: str, if_exists: bool = False, temporary: bool | None = None) -> bool:
        return self._drop(name, CatalogTable, "Table", if_exists, temporary)

    def drop_view(self, name: str, if_exists: bool = False, temporary: bool | None = None) -> bool:
        return self._drop(name, CatalogView, "View", if_exists, temporary)

    def _drop(self, name: str, kind: type, word: str, if_exists: bool, temporary: bool | None) -> bool:
        """Drop from the temporary objects, the permanent ones, or (``None``) the one a lookup finds."""
        spaces = {True: [self._temporary], False: [self._permanent],
                  None: [self._temporary, self._permanent]}[temporary]
        for space in spaces:
            if name in space:
                if not isinstance(space[name], kind):
                    break
                del space[name]
                return True
        if if_exists:
            return False
        raise CatalogError(f"{word} with identifier '{identifier(name)}' does not exist.")

    def alter(self, name: str, what: str) -> CatalogTable | CatalogView:
        """The permanent object ``name`` that ``ALTER TABLE/VIEW`` changes (Flink alters no temporary one)."""
        found = self._permanent.get(name)
        if found is None or name in self._temporary:
            raise CatalogError(f"{what} `{CATALOG}`.`{DATABASE}`.`{name}` doesn't exist or is a temporary "
                               f"{what.lower()}.")
        return found

    def replace(self, name: str, entry: CatalogTable | CatalogView) -> None:
        """Put ``entry`` in place of the permanent object ``name`` (renamed when ``entry.name`` differs)."""
        if entry.name != name and self.contains(entry.name):
            raise CatalogError(f"Could not execute ALTER TABLE {name} RENAME TO {entry.name}: "
                               f"Table (or view) {DATABASE}.{entry.name} already exists in Catalog {CATALOG}.")
        del self._permanent[name]
        self._permanent[entry.name] = entry
