"""Statements on catalogs and databases, and the SHOW statements that list them.

- ``CREATE CATALOG [IF NOT EXISTS] c WITH ('type' = 'generic_in_memory', ...)``; other types
  (``hive``, ``jdbc``, ...) are refused with Flink's message naming the type.
- ``DROP CATALOG [IF EXISTS] c``, ``USE CATALOG c``.
- ``CREATE DATABASE [IF NOT EXISTS] [c.]db [COMMENT '...'] [WITH (...)]``,
  ``DROP DATABASE [IF EXISTS] [c.]db [RESTRICT | CASCADE]``, ``ALTER DATABASE [c.]db SET (...)``,
  ``USE [c.]db``.
- ``SHOW CATALOGS``, ``SHOW DATABASES [FROM | IN c]``, ``SHOW TABLES`` / ``SHOW VIEWS``
  ``[FROM | IN [c.]db]``, each with ``[NOT] LIKE | ILIKE 'pattern'``; ``SHOW CURRENT CATALOG``,
  ``SHOW CURRENT DATABASE``, ``SHOW MODULES``.

The catalog itself (:mod:`changeflow.catalog.namespaces`) holds the state and Flink's messages.
"""

from __future__ import annotations

import re

from changeflow.catalog import CatalogError
from changeflow.common.types import DataTypes
from changeflow.sql.ddl import Cursor, parse_options
from changeflow.sql.session import Done, Shown, StatementSession

__all__ = ["alter_database", "create_catalog", "create_database", "drop_catalog", "drop_database", "show", "use"]


def _end(cur: Cursor, what: str) -> None:
    if not cur.at_end():
        cur.fail(f"unexpected text after {what}")


def _comment(cur: Cursor) -> str | None:
    return cur.string() if cur.accept("COMMENT") else None


def create_catalog(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("CREATE", "CATALOG")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.name()
    _comment(cur)  # Flink keeps a catalog's comment only for DESCRIBE CATALOG, which changeflow does not run
    options = parse_options(cur) if cur.accept("WITH") else {}
    _end(cur, "the catalog's options")
    session.catalog.create_catalog(name, options, if_not_exists)
    return Done()


def drop_catalog(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("DROP", "CATALOG")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.name()
    _end(cur, "the catalog name")
    session.catalog.drop_catalog(name, if_exists)
    return Done()


def create_database(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("CREATE", "DATABASE")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    catalog, name = session.catalog.database_parts(cur.name_parts())
    comment = _comment(cur)
    properties = parse_options(cur) if cur.accept("WITH") else {}
    _end(cur, "the database's properties")
    session.catalog.create_database(catalog, name, comment, properties, if_not_exists)
    return Done()


def drop_database(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("DROP", "DATABASE")
    if_exists = cur.accept("IF", "EXISTS")
    catalog, name = session.catalog.database_parts(cur.name_parts())
    cascade = cur.accept("CASCADE")
    if not cascade:
        cur.accept("RESTRICT")  # Flink's default
    _end(cur, "DROP DATABASE name [RESTRICT | CASCADE]")
    session.catalog.drop_database(catalog, name, if_exists, cascade)
    return Done()


def alter_database(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("ALTER", "DATABASE")
    catalog, name = session.catalog.database_parts(cur.name_parts())
    if not cur.accept("SET"):
        cur.fail("unsupported ALTER DATABASE; changeflow runs ALTER DATABASE db SET ('key' = 'value', ...)")
    properties = parse_options(cur)
    _end(cur, "the database's properties")
    session.catalog.alter_database(catalog, name, properties)
    return Done()


def use(session: StatementSession, cur: Cursor) -> Done:
    """``USE CATALOG c`` / ``USE [c.]db``."""
    cur.expect("USE")
    if cur.accept("MODULES"):
        cur.fail("USE MODULES: changeflow has only the core module")
    catalog = session.catalog
    if cur.accept("CATALOG"):
        name = cur.name()
        _end(cur, "the catalog name")
        catalog.use_catalog(name)
        return Done()
    parts = cur.name_parts()
    _end(cur, "the database name")
    catalog.use_database(*catalog.database_parts(parts))
    return Done()


# --- SHOW ----------------------------------------------------------------------------------

def show(session: StatementSession, cur: Cursor) -> Shown | None:
    """The SHOW statements on catalogs, databases, tables and views; ``None`` for other SHOW statements."""
    cur.expect("SHOW")
    catalog = session.catalog
    if cur.accept("CURRENT", "CATALOG"):
        _end(cur, "SHOW CURRENT CATALOG")
        return _column("current catalog name", [catalog.current_catalog])
    if cur.accept("CURRENT", "DATABASE"):
        _end(cur, "SHOW CURRENT DATABASE")
        return _column("current database name", [catalog.current_database])
    if cur.accept("MODULES"):
        _end(cur, "SHOW MODULES")
        return _column("module name", ["core"])
    if cur.accept("CATALOGS"):
        return _column("catalog name", _like(cur, catalog.list_catalogs()))
    if cur.accept("DATABASES"):
        where = cur.name() if cur.accept("FROM") or cur.accept("IN") else None
        return _column("database name", _like(cur, catalog.list_databases(where)))
    for word, column in (("TABLES", "table name"), ("VIEWS", "view name")):
        if cur.accept(word):
            place = (catalog.current_catalog, catalog.current_database)
            if cur.accept("FROM") or cur.accept("IN"):
                place = catalog.database_parts(cur.name_parts())
                if catalog.database(*place) is None:
                    raise CatalogError(f"Database '{place[0]}'.'{place[1]}' doesn't exist.")
            names = catalog.list_tables(*place) if word == "TABLES" else catalog.list_views(*place)
            return _column(column, _like(cur, names))
    cur.i = 1
    return None


def _column(name: str, values: list[str]) -> Shown:
    return Shown(((name, DataTypes.STRING()),), [(v,) for v in values])


def _like(cur: Cursor, names: list[str]) -> list[str]:
    """``[NOT] LIKE | ILIKE 'pattern'`` (SQL's ``%`` and ``_``) applied to ``names``."""
    negate = cur.accept("NOT")
    word = cur.word()
    if word not in ("LIKE", "ILIKE"):
        if negate:
            cur.fail("expected LIKE or ILIKE after NOT")
        _end(cur, "the SHOW statement")
        return names
    cur.next()
    pattern = cur.string()
    _end(cur, "the LIKE pattern")
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    flags = re.IGNORECASE if word == "ILIKE" else 0
    return [n for n in names if bool(re.fullmatch(regex, n, flags | re.DOTALL)) != negate]
