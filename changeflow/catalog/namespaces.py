"""Catalogs and databases: Flink's in-memory catalogs (``generic_in_memory``) and their databases.

An environment starts with Flink's built-in catalog ``default_catalog`` holding
``default_database``, both current. ``CREATE CATALOG c WITH ('type' =
'generic_in_memory')`` adds a catalog whose one database is ``default`` (or the
``default-database`` option); other catalog types (``hive``, ``jdbc``, ...) are
refused with Flink's message, naming the type. Databases carry a comment and
properties (``ALTER DATABASE ... SET``) and hold the permanent tables and views;
dropping one that holds objects needs ``CASCADE``, and neither the current
catalog nor the current database can be dropped, as in Flink. Messages are
Flink 2.3's (``conformance/goldens/catalogs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from changeflow.plan.type_inference import PlanError

CATALOG = "default_catalog"
DATABASE = "default_database"
MEMORY_TYPE = "generic_in_memory"
_MEMORY_OPTIONS = ("default-database", "property-version")


class CatalogError(PlanError):
    """A catalog object that does not exist, already exists or has the wrong kind."""


@dataclass
class Database:
    """A database: its permanent tables and views by name, its comment and properties."""

    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)


@dataclass
class MemoryCatalog:
    """One in-memory catalog (Flink's ``GenericInMemoryCatalog``)."""

    default_database: str
    options: dict[str, str]
    databases: dict[str, Database] = field(default_factory=dict)


def _catalog_options_text(options: dict[str, str]) -> str:
    return "\n".join(f"'{k}'='{v}'" for k, v in sorted(options.items()))


class Namespaces:
    """The catalogs of an environment, their databases, and which of them is current."""

    def __init__(self) -> None:
        self._catalogs: dict[str, MemoryCatalog] = {
            CATALOG: MemoryCatalog(DATABASE, {"type": MEMORY_TYPE}, {DATABASE: Database()})}
        self.current_catalog = CATALOG
        self.current_database = DATABASE

    # --- catalogs ------------------------------------------------------------------
    def create_catalog(self, name: str, options: dict[str, str], if_not_exists: bool = False) -> None:
        """``CREATE CATALOG name WITH (options)``: only Flink's ``generic_in_memory`` type exists here."""
        if name in self._catalogs:
            if if_not_exists:
                return
            raise CatalogError(f"Could not execute CREATE CATALOG: (catalogName: [{name}], properties: "
                               f"[{{{', '.join(f'{k}={v}' for k, v in options.items())}}}], ignoreIfExists: "
                               f"[false])\nCatalog {name} already exists.")
        head = f"Unable to create catalog '{name}'.\n\nCatalog options are:\n{_catalog_options_text(options)}\n"
        kind = options.get("type")
        if kind is None:
            raise CatalogError(f"{head}Catalog options do not contain an option key 'type' for discovering a "
                               f"catalog.")
        if kind != MEMORY_TYPE:
            raise CatalogError(f"{head}Could not find any factory for identifier '{kind}' that implements "
                               f"'org.apache.flink.table.factories.CatalogFactory' in the classpath.\n\n"
                               f"Available factory identifiers are:\n\n{MEMORY_TYPE}\n(changeflow has Flink's "
                               f"in-memory catalog only: catalog type '{kind}' is not supported)")
        unknown = sorted(set(options) - {"type", *_MEMORY_OPTIONS})
        if unknown:
            raise CatalogError(f"{head}Unsupported options found for '{MEMORY_TYPE}'.\n\nUnsupported options:\n\n"
                               + "\n".join(unknown) + "\n\nSupported options:\n\n" + "\n".join(_MEMORY_OPTIONS))
        default = options.get("default-database", "default")
        self._catalogs[name] = MemoryCatalog(default, dict(options), {default: Database()})

    def drop_catalog(self, name: str, if_exists: bool = False) -> None:
        if name == self.current_catalog:
            raise CatalogError(f"Could not execute DROP CATALOG: (catalogName: [{name}])\n"
                               f"Cannot drop a catalog which is currently in use.")
        if name not in self._catalogs:
            if if_exists:
                return
            raise CatalogError(f"Could not execute DROP CATALOG: (catalogName: [{name}])\n"
                               f"Catalog {name} does not exist.")
        del self._catalogs[name]

    def use_catalog(self, name: str) -> None:
        """``USE CATALOG name``: the catalog's default database becomes current too, as in Flink."""
        catalog = self.memory_catalog(name, lookup=True)
        self.current_catalog, self.current_database = name, catalog.default_database

    def list_catalogs(self) -> list[str]:
        return sorted(self._catalogs)

    def memory_catalog(self, name: str, lookup: bool = False) -> MemoryCatalog:
        found = self._catalogs.get(name)
        if found is None:
            if lookup:
                raise CatalogError(f"A catalog with name [{name}] does not exist.")
            raise CatalogError(f"Catalog {name} does not exist.")
        return found

    # --- databases -----------------------------------------------------------------
    def database_parts(self, parts: list[str]) -> tuple[str, str]:
        """``db`` or ``c.db`` as (catalog, database), with the current catalog filled in."""
        if len(parts) == 1:
            return self.current_catalog, parts[0]
        if len(parts) != 2:
            raise CatalogError(f"invalid database name {'.'.join(parts)!r}: expected [catalog.]database")
        return parts[0], parts[1]

    def create_database(self, catalog: str, name: str, comment: str | None, properties: dict[str, str],
                        if_not_exists: bool = False) -> None:
        where = self._catalogs.get(catalog)
        head = (f"Could not execute CREATE DATABASE: (catalogDatabase: [{{{_props(properties)}}}], catalogName: "
                f"[{catalog}], databaseName: [{name}], ignoreIfExists: [{str(if_not_exists).lower()}])")
        if where is None:
            raise CatalogError(f"{head}\nCatalog {catalog} does not exist.")
        if name in where.databases:
            if if_not_exists:
                return
            raise CatalogError(f"{head}\nDatabase {name} already exists in Catalog {catalog}.")
        where.databases[name] = Database(comment, dict(properties))

    def drop_database(self, catalog: str, name: str, if_exists: bool = False, cascade: bool = False) -> list[str]:
        """Drop the database; returns the names of the objects ``CASCADE`` dropped with it."""
        head = (f"Could not execute DROP DATABASE {'IF EXISTS  ' if if_exists else ''}{catalog}.{name} "
                f"{'CASCADE' if cascade else 'RESTRICT'}")
        if (catalog, name) == (self.current_catalog, self.current_database):
            raise CatalogError(f"{head}\nCannot drop a database which is currently in use.")
        where = self._catalogs.get(catalog)
        if where is None:
            raise CatalogError(f"{head}\nCatalog {catalog} does not exist.")
        database = where.databases.get(name)
        if database is None:
            if if_exists:
                return []
            raise CatalogError(f"{head}\nDatabase {name} does not exist in Catalog {catalog}.")
        if database.objects and not cascade:
            raise CatalogError(f"{head}\nDatabase {name} in catalog {catalog} is not empty.")
        del where.databases[name]
        return sorted(database.objects)

    def alter_database(self, catalog: str, name: str, properties: dict[str, str]) -> None:
        """``ALTER DATABASE [c.]db SET (...)``: the properties merged into the database's."""
        database = self.memory_catalog(catalog).databases.get(name)
        if database is None:
            raise CatalogError(f"Database {name} not exists\nDatabase {name} does not exist in Catalog {catalog}.")
        database.properties.update(properties)

    def use_database(self, catalog: str, name: str) -> None:
        """``USE [c.]db``: both become current."""
        where = self.memory_catalog(catalog, lookup=True)
        if name not in where.databases:
            raise CatalogError(f"A database with name [{name}] does not exist in the catalog: [{catalog}].")
        self.current_catalog, self.current_database = catalog, name

    def list_databases(self, catalog: str | None = None) -> list[str]:
        return sorted(self.memory_catalog(catalog or self.current_catalog, lookup=True).databases)

    def database(self, catalog: str, name: str) -> Database | None:
        where = self._catalogs.get(catalog)
        return None if where is None else where.databases.get(name)


def _props(properties: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in properties.items())
