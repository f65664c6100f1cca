"""``TableEnvironment``'s catalog methods, as PyFlink names them, over changeflow's one catalog.

changeflow has one in-memory catalog and database, Flink's defaults
(``default_catalog.default_database``): the methods that name them answer with
those, ``use_catalog`` / ``use_database`` accept them and refuse any other name, and
PyFlink's methods for catalogs, models, modules and compiled plans that changeflow
does not have raise, naming themselves (:mod:`.pyflink_names`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from changeflow.catalog import CatalogView
from changeflow.catalog.catalog import CATALOG, DATABASE, check_catalog, check_database
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
        return CATALOG

    def get_current_database(self) -> str:
        return DATABASE

    def list_catalogs(self) -> list[str]:
        return [CATALOG]

    def list_databases(self) -> list[str]:
        return [DATABASE]

    def list_modules(self) -> list[str]:
        return ["core"]

    def list_materialized_tables(self) -> list[str]:
        return []

    def use_catalog(self, catalog_name: str) -> None:
        check_catalog(catalog_name)

    def use_database(self, database_name: str) -> None:
        check_database(database_name)

    def list_temporary_tables(self) -> list[str]:
        return [n for n in self._catalog.list_tables() if self._is_temporary(n)]

    def _is_temporary(self, name: str) -> bool:
        return self._catalog.get(name).temporary

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
