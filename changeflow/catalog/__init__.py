"""The catalog of tables and views that SQL and the Table API share."""

from changeflow.catalog.catalog import (Catalog, CatalogError, CatalogTable, CatalogView, identifier,
                                        object_name)
from changeflow.catalog.schema import PROCTIME_TYPE, DeclaredColumn, DeclaredSchema, Watermark

__all__ = ["Catalog", "CatalogError", "CatalogTable", "CatalogView", "DeclaredColumn", "DeclaredSchema",
           "PROCTIME_TYPE", "Watermark", "identifier", "object_name"]
