"""The catalogs, databases, tables and views that SQL and the Table API share."""

from changeflow.catalog.catalog import Catalog, CatalogTable, CatalogView, identifier
from changeflow.catalog.namespaces import CatalogError
from changeflow.catalog.paths import ObjectPath, join_path, split_path
from changeflow.catalog.schema import PROCTIME_TYPE, DeclaredColumn, DeclaredSchema, Watermark

__all__ = ["Catalog", "CatalogError", "CatalogTable", "CatalogView", "DeclaredColumn", "DeclaredSchema",
           "ObjectPath", "PROCTIME_TYPE", "Watermark", "identifier", "join_path", "split_path"]
