"""``TableEnvironment``'s catalog methods, as PyFlink names them.

Catalogs are Flink's in-memory ones (``default_catalog`` with
``default_database`` to start with; more by ``CREATE CATALOG c WITH ('type' =
'generic_in_memory')``); ``use_catalog`` / ``use_database`` change the current ones
that complete short names. PyFlink's methods that take ``Catalog`` objects (Java
catalogs) and those for models, modules and compiled plans raise, naming
themselves (:mod:`.pyflink_names`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from changeflow.catalog import CatalogView
from changeflow.table.pyflink_names import refused_attribute

if TYPE_CHECKING:
    from changeflow.catalog import Catalog
    from changeflow.table.table import Table


class CatalogMethods:
    """Mixed into ``TableEnvironment``: it provides ``_catalog`` and ``from_path``."""

    _catalog: "Catalog"

    def from_path(self, path: str) -> "Table":  # pragma: no cover - TableEnvironment's
        raise NotImplementedError

    def get_current_catalog(self) -> str:
        return self._catalog.current_catalog

    def get_current_database(self) -> str:
        return self._catalog.current_database

    def list_catalogs(self) -> list[str]:
        return self._catalog.list_catalogs()

    def list_databases(self) -> list[str]:
        """The databases of the current catalog."""
        return self._catalog.list_databases()

    def list_modules(self) -> list[str]:
        return ["core"]

    def list_materialized_tables(self) -> list[str]:
        return []

    def use_catalog(self, catalog_name: str) -> None:
        """Make ``catalog_name`` current, with its default database (Flink's message if it does not exist)."""
        self._catalog.use_catalog(catalog_name)

    def use_database(self, database_name: str) -> None:
        """Make ``database_name`` of the current catalog current."""
        self._catalog.use_database(self._catalog.current_catalog, database_name)

    def list_temporary_tables(self) -> list[str]:
        """The temporary tables and views of the current database."""
        return self._catalog.list_temporary()

    def create_view(self, view_path: str, table: "Table", ignore_if_exists: bool = False) -> None:
        """A permanent view of ``table`` (``create_temporary_view`` registers a temporary one)."""
        self._catalog.create_view(CatalogView(view_path, False, table=table), if_not_exists=ignore_if_exists)

    def drop_table(self, table_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop the permanent table ``table_path``; False if there was none and ``ignore_if_not_exists``."""
        return self._catalog.drop_table(table_path, if_exists=ignore_if_not_exists, temporary=False)

    def drop_view(self, view_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop the permanent view ``view_path``; False if there was none and ``ignore_if_not_exists``."""
        return self._catalog.drop_view(view_path, if_exists=ignore_if_not_exists, temporary=False)

    def from_descriptor(self, descriptor: Any) -> "Table":
        """A table reading the connector a ``TableDescriptor`` describes, registered under no name."""
        name = f"*anonymous_{id(descriptor):x}*"
        if not self._catalog.contains(name):
            self._catalog.create_table(descriptor.catalog_table(name, temporary=True))
        return self.from_path(name)

    def __getattr__(self, name: str) -> Any:
        return refused_attribute("TableEnvironment", name)
