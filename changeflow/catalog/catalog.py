"""The catalog: tables (``CREATE TABLE``) and views, by ``catalog.database.name``.

Flink keeps each object under a catalog and a database; a name of one or two parts
is completed with the current catalog and database (``USE``), as Flink's
``CatalogManager.qualifyIdentifier`` does. Catalogs and databases themselves are
managed by :class:`~changeflow.catalog.namespaces.Namespaces`. Tables and views
share a database's namespace, as in Flink: a name is taken by at most one object,
``SHOW TABLES`` lists both kinds and ``SHOW VIEWS`` the views. Temporary objects
live beside the catalogs, keyed by their full path, and shadow a permanent object
of that path. Errors use Flink's wording.

>>> from changeflow.catalog.schema import DeclaredColumn, DeclaredSchema
>>> from changeflow.common.types import DataTypes
>>> catalog = Catalog()
>>> catalog.create_table(CatalogTable("t", DeclaredSchema((DeclaredColumn("a", DataTypes.INT(), "INT"),)),
...                                   {"connector": "blackhole"}))
>>> catalog.list_tables(), catalog.list_views(), catalog.get("default_database.t").identifier
(['t'], [], 'default_catalog.default_database.t')
>>> catalog.get("u")
Traceback (most recent call last):
...
changeflow.catalog.namespaces.CatalogError: Table 'u' not found; known tables and views: t
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Union

from changeflow.catalog.functions import FunctionCatalog
from changeflow.catalog.namespaces import CATALOG, DATABASE, CatalogError, Database, Namespaces
from changeflow.catalog.paths import ObjectPath, join_path, split_path
from changeflow.catalog.schema import DeclaredSchema

__all__ = ["CATALOG", "DATABASE", "Catalog", "CatalogError", "CatalogTable", "CatalogView", "identifier"]


def identifier(name: str) -> str:
    """Flink's full identifier of an object of the default database: ``default_catalog.default_database.name``."""
    return f"{CATALOG}.{DATABASE}.{name}"


class _Placed:
    """What a catalog object's place gives it: its path and Flink's full identifier."""

    catalog: str
    database: str
    name: str

    @property
    def path(self) -> ObjectPath:
        return ObjectPath(self.catalog, self.database, self.name)

    @property
    def identifier(self) -> str:
        """``catalog.database.name``, as Flink names the object in plans and connector messages."""
        return self.path.identifier


@dataclass(frozen=True)
class CatalogTable(_Placed):
    """A table declared by ``CREATE TABLE``: its schema and connector options, and where it lives."""

    name: str
    schema: DeclaredSchema
    options: dict[str, str]
    temporary: bool = False
    comment: str | None = None
    catalog: str = CATALOG
    database: str = DATABASE
    # PARTITIONED BY's columns, in order: the filesystem connector writes and reads Hive-style directories.
    partition_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class CatalogView(_Placed):
    """A view: ``table`` is a :class:`~changeflow.table.Table` (Table API), or ``query`` is (SQL text, column names)."""

    name: str
    temporary: bool
    table: Any = field(default=None, repr=False)
    query: Any = field(default=None, repr=False)
    catalog: str = CATALOG
    database: str = DATABASE
    # The catalog and database current when the view was made: its query's names resolve there, as in Flink.
    scope: tuple[str, str] = (CATALOG, DATABASE)


Entry = Union[CatalogTable, CatalogView]


class Catalog(Namespaces):
    """Temporary and permanent objects in every catalog and database; a temporary one shadows a permanent one."""

    def __init__(self) -> None:
        super().__init__()
        self._temporary: dict[ObjectPath, Entry] = {}
        self.functions = FunctionCatalog()  # user-defined functions by name (catalog/functions.py)

    # --- names ---------------------------------------------------------------------
    def qualify(self, name: str) -> ObjectPath:
        """The full path of ``name`` (``t``, ``db.t`` or ``c.db.t``) from the current catalog and database."""
        parts = split_path(name)
        return ObjectPath(*([self.current_catalog, self.current_database][:3 - len(parts)] + parts))

    def _permanent(self, path: ObjectPath) -> dict[str, Entry] | None:
        database = self.database(path.catalog, path.database)
        return None if database is None else database.objects

    def _placed(self, entry: Entry) -> Entry:
        """``entry`` with its name split into catalog, database and object name."""
        path = self.qualify(entry.name)
        placed = dataclasses.replace(entry, name=path.name, catalog=path.catalog, database=path.database)
        if isinstance(placed, CatalogView):
            placed = dataclasses.replace(placed, scope=(self.current_catalog, self.current_database))
        return placed

    # --- lookup --------------------------------------------------------------------
    def find(self, name: str) -> Entry | None:
        path = self.qualify(name)
        found = self._temporary.get(path)
        if found is None:
            found = (self._permanent(path) or {}).get(path.name)
        return found

    def get(self, name: str) -> Entry:
        found = self.find(name)
        if found is None:
            path = self.qualify(name)
            raise CatalogError(f"Table {name!r} not found; known tables and views: "
                               f"{', '.join(self.list_tables(path.catalog, path.database)) or '(none)'}")
        return found

    def contains(self, name: str) -> bool:
        return self.find(name) is not None

    def list_tables(self, catalog: str | None = None, database: str | None = None) -> list[str]:
        """Tables and views of a database (the current one by default), temporary ones included, sorted (Flink's
        ``SHOW TABLES``; not the anonymous tables of ``from_descriptor``)."""
        return sorted(n for n, _ in self._objects(catalog, database) if not n.startswith("*anonymous_"))

    def list_views(self, catalog: str | None = None, database: str | None = None) -> list[str]:
        return sorted(n for n, o in self._objects(catalog, database) if isinstance(o, CatalogView))

    def list_temporary(self, kind: type | None = None) -> list[str]:
        """The temporary objects (of ``kind``) in the current database."""
        where = (self.current_catalog, self.current_database)
        return sorted(p.name for p, o in self._temporary.items() if (p.catalog, p.database) == where
                      and (kind is None or isinstance(o, kind)) and not p.name.startswith("*anonymous_"))

    def _objects(self, catalog: str | None, database: str | None) -> list[tuple[str, Entry]]:
        catalog = catalog or self.current_catalog
        database = database or self.current_database
        found = dict((self.database(catalog, database) or Database()).objects)
        found.update({p.name: o for p, o in self._temporary.items() if (p.catalog, p.database) == (catalog, database)})
        return list(found.items())

    # --- changes -------------------------------------------------------------------
    def create_table(self, table: CatalogTable, if_not_exists: bool = False) -> None:
        self._create(self._placed(table), table.temporary, if_not_exists)

    def create_view(self, view: CatalogView, if_not_exists: bool = False) -> None:
        self._create(self._placed(view), view.temporary, if_not_exists)

    def _create(self, entry: Entry, temporary: bool, if_not_exists: bool) -> None:
        path = entry.path
        if temporary:
            if path in self._temporary:
                if if_not_exists:
                    return
                raise CatalogError(f"Temporary table '{path.quoted}' already exists")
            self._temporary[path] = entry
            return
        space = self._permanent(path)
        if space is None:
            cause = (f"Database {path.database} does not exist in Catalog {path.catalog}."
                     if path.catalog in self.list_catalogs() else f"Catalog {path.catalog} does not exist.")
            raise CatalogError(f"Could not execute CreateTable in path {path.quoted}\n{cause}")
        if path.name in space:
            if if_not_exists:
                return
            raise CatalogError(f"Could not execute CreateTable in path {path.quoted}: Table (or view) "
                               f"{path.database}.{path.name} already exists in Catalog {path.catalog}.")
        space[path.name] = entry

    def drop_table(self, name: str, if_exists: bool = False, temporary: bool | None = None) -> bool:
        return self._drop(name, CatalogTable, "Table", if_exists, temporary)

    def drop_view(self, name: str, if_exists: bool = False, temporary: bool | None = None) -> bool:
        return self._drop(name, CatalogView, "View", if_exists, temporary)

    def _drop(self, name: str, kind: type, word: str, if_exists: bool, temporary: bool | None) -> bool:
        """Drop from the temporary objects, the permanent ones, or (``None``) the one a lookup finds."""
        path = self.qualify(name)
        permanent = self._permanent(path) or {}
        spaces: list[tuple[dict, Any]] = {True: [(self._temporary, path)], False: [(permanent, path.name)],
                                          None: [(self._temporary, path), (permanent, path.name)]}[temporary]
        for space, key in spaces:
            if key in space:
                if not isinstance(space[key], kind):
                    break
                del space[key]
                return True
        if if_exists:
            return False
        raise CatalogError(f"{word} with identifier '{path.identifier}' does not exist.")

    def alter(self, name: str, what: str) -> Entry:
        """The permanent object ``name`` that ``ALTER TABLE/VIEW`` changes (Flink alters no temporary one)."""
        path = self.qualify(name)
        found = (self._permanent(path) or {}).get(path.name)
        if found is None or path in self._temporary:
            raise CatalogError(f"{what} {path.quoted} doesn't exist or is a temporary {what.lower()}.")
        return found

    def replace(self, name: str, entry: Entry) -> None:
        """Put ``entry`` in place of the permanent object ``name``; a new name (``RENAME TO``) keeps its database,
        as Flink's catalogs rename within one database."""
        path = self.qualify(name)
        new_name = split_path(entry.name)[-1]
        space = self._permanent(path)
        assert space is not None, "alter() found the object"
        if new_name != path.name and (new_name in space or ObjectPath(path.catalog, path.database, new_name)
                                      in self._temporary):
            raise CatalogError(f"Could not execute ALTER TABLE {join_path([path.catalog, path.database, path.name])} "
                               f"RENAME TO {new_name}: Table (or view) {path.database}.{new_name} already exists in "
                               f"Catalog {path.catalog}.")
        del space[path.name]
        space[new_name] = dataclasses.replace(entry, name=new_name, catalog=path.catalog, database=path.database)

    @contextmanager
    def scoped(self, scope: tuple[str, str]) -> Iterator[None]:
        """Names resolve in ``scope`` (catalog, database) meanwhile: a SQL view's query, as where it was made."""
        saved = self.current_catalog, self.current_database
        self.current_catalog, self.current_database = scope
        try:
            yield
        finally:
            self.current_catalog, self.current_database = saved
