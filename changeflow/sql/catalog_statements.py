"""Catalog statements beyond CREATE/DROP TABLE and VIEW: functions, ALTER, SHOW CREATE, SHOW FUNCTIONS.

- ``CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] f AS 'module.name' LANGUAGE PYTHON``
  registers the Python function object ``name`` of ``module`` (a ``udf``/``udtf``/``udaf``/``udtaf``
  result or an aggregate function instance), as PyFlink does; Java and Scala functions (Flink's
  default language) are refused by name. Unlike Flink, the module is imported when the statement
  runs, so a wrong path fails there rather than at the first query that calls it.
- ``DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] f``.
- ``ALTER TABLE t RENAME TO u``, ``ALTER TABLE t SET ('k' = 'v', ...)``, ``ALTER TABLE t RESET ('k', ...)``,
  ``ALTER VIEW v RENAME TO w``, ``ALTER VIEW v AS query``: on permanent objects only, as in Flink
  (a temporary one is "doesn't exist or is a temporary table").
- ``SHOW CREATE TABLE t`` / ``SHOW CREATE VIEW v`` in Flink's layout (types in their serializable
  form, ``VARCHAR(2147483647)`` for STRING; the view's query as written, where Flink prints the
  query its planner expanded).
- ``SHOW FUNCTIONS`` (built-in and user-defined) and ``SHOW USER FUNCTIONS``.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable

from changeflow.catalog import CatalogError, CatalogTable, CatalogView
from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import AGGREGATES
from changeflow.plan.json_calls import JSON_FUNCTIONS
from changeflow.plan.type_inference import SCALAR_FUNCTIONS
from changeflow.sql.ddl import Cursor, parse_options
from changeflow.sql.session import Done, Shown, StatementSession

__all__ = ["alter", "builtin_function_names", "create_function", "drop_function", "show_create", "show_functions"]


# --- functions -------------------------------------------------------------------------------

def create_function(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("CREATE")
    system = False
    if cur.accept("TEMPORARY"):
        system = cur.accept("SYSTEM")
    cur.expect("FUNCTION")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.qualified_name()
    cur.expect("AS")
    path = cur.string()
    language = "JAVA"  # Flink's default
    if cur.accept("LANGUAGE"):
        language = cur.next().text.upper()
    if cur.word() == "USING":
        cur.fail("CREATE FUNCTION ... USING JAR is not supported (changeflow runs Python functions only)")
    if not cur.at_end():
        cur.fail("unexpected text after the function definition")
    if language != "PYTHON":
        raise CatalogError(f"CREATE FUNCTION {name} AS '{path}' LANGUAGE {language}: {language.title()} "
                           f"user-defined functions are not supported by changeflow; write the function in "
                           f"Python and declare it with LANGUAGE PYTHON")
    session.register_function(name, _load(path, name), system, if_not_exists)
    return Done()


def _load(path: str, name: str) -> object:
    """The Python object ``path`` names (``package.module.attribute``)."""
    module, _, attribute = path.rpartition(".")
    if not module:
        raise CatalogError(f"CREATE FUNCTION {name}: '{path}' is not a Python path 'module.function'")
    try:
        return getattr(importlib.import_module(module), attribute)
    except ImportError as error:
        raise CatalogError(f"CREATE FUNCTION {name}: cannot import module {module!r} of '{path}': {error}") from None
    except AttributeError:
        raise CatalogError(f"CREATE FUNCTION {name}: module {module!r} has no attribute {attribute!r}") from None


def drop_function(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("DROP")
    temporary = cur.accept("TEMPORARY")
    system = temporary and cur.accept("SYSTEM")
    cur.expect("FUNCTION")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.qualified_name()
    if not cur.at_end():
        cur.fail("unexpected text after the name")
    catalog = session.catalog
    if catalog.functions.drop(name, system, if_exists=True) or if_exists:
        return Done()
    if system:
        raise CatalogError(f"Could not drop temporary system function. A function named '{name}' doesn't exist.")
    path = catalog.qualify(name)
    if temporary:
        raise CatalogError(f"Temporary catalog function {path.quoted} doesn't exist")
    raise CatalogError(f"Function {path.database}.{path.name} does not exist in Catalog {path.catalog}.")


def show_functions(session: StatementSession, cur: Cursor) -> Shown:
    """``SHOW [USER] FUNCTIONS``: lower-case names, sorted, in Flink's column."""
    user = cur.accept("USER")
    cur.expect("FUNCTIONS")
    if not cur.at_end():
        cur.fail("SHOW FUNCTIONS ... LIKE / FROM is not supported")
    names = set(session.catalog.functions.list())
    if not user:
        names |= set(builtin_function_names())
    return Shown((("function name", DataTypes.STRING()),), [(n,) for n in sorted(names)])


# Names the plan uses for calls that are SQL syntax rather than functions (CASE, IN, LIKE, a ROW
# field, COUNT(*), the SUM0 of Flink's plans).
_NOT_FUNCTIONS = {"case", "in", "like", "get_field", "count_star", "sum0"}


def builtin_function_names() -> list[str]:
    """The built-in functions changeflow implements by name (docs/functions.md has Flink's whole list)."""
    names = set(SCALAR_FUNCTIONS) | set(AGGREGATES) | set(JSON_FUNCTIONS) - {"json"}
    return sorted(n for n in names if n not in _NOT_FUNCTIONS)


# --- ALTER -----------------------------------------------------------------------------------

def alter(session: StatementSession, cur: Cursor, view_query: Callable[[Cursor], str]) -> Done:
    """``ALTER TABLE/VIEW``; ``view_query`` reads and validates the query of ``ALTER VIEW v AS query``."""
    cur.expect("ALTER")
    what = cur.next().text.upper()
    if what not in ("TABLE", "VIEW"):
        cur.i -= 1
        cur.fail("unsupported ALTER statement; changeflow runs ALTER TABLE and ALTER VIEW")
    if cur.accept("IF", "EXISTS"):
        cur.fail("ALTER ... IF EXISTS is not supported")
    name = cur.qualified_name()
    catalog = session.catalog
    entry = catalog.alter(name, what.title())
    if what == "TABLE" and not isinstance(entry, CatalogTable) or what == "VIEW" and isinstance(entry, CatalogTable):
        raise CatalogError(f"ALTER {what} {name}: {name} is a {'view' if what == 'TABLE' else 'table'}")
    if cur.accept("RENAME", "TO"):
        new = cur.qualified_name()
        _end(cur)
        catalog.replace(name, dataclasses.replace(entry, name=new))
        return Done()
    if isinstance(entry, CatalogTable) and cur.word() in ("SET", "RESET"):
        reset = cur.next().text.upper() == "RESET"
        options = dict(entry.options)
        if reset:
            for key in _keys(cur):
                options.pop(key, None)
        else:
            options.update(parse_options(cur))
        _end(cur)
        catalog.replace(name, dataclasses.replace(entry, options=options))
        return Done()
    if isinstance(entry, CatalogView) and cur.accept("AS"):
        catalog.replace(name, dataclasses.replace(entry, query=(view_query(cur), ())))
        return Done()
    cur.fail(f"unsupported ALTER {what}; changeflow runs RENAME TO" +
             (", SET (...) and RESET (...)" if what == "TABLE" else " and AS query"))


def _keys(cur: Cursor) -> list[str]:
    """``RESET ('k1', 'k2')``."""
    if cur.word() != "(":
        cur.fail("expected ( after RESET")
    cur.next()
    keys = [cur.string()]
    while cur.word() == ",":
        cur.next()
        keys.append(cur.string())
    cur.expect(")")
    return keys


def _end(cur: Cursor) -> None:
    if not cur.at_end():
        cur.fail("unexpected text at the end of the statement")


# --- SHOW CREATE -----------------------------------------------------------------------------

def show_create(session: StatementSession, cur: Cursor) -> Shown:
    cur.expect("CREATE")
    what = cur.next().text.upper()
    if what not in ("TABLE", "VIEW"):
        cur.i -= 1
        cur.fail("unsupported SHOW CREATE statement; changeflow runs SHOW CREATE TABLE and SHOW CREATE VIEW")
    name = cur.qualified_name()
    _end(cur)
    entry = session.catalog.get(name)
    if what == "TABLE" and not isinstance(entry, CatalogTable):
        raise CatalogError(f"SHOW CREATE TABLE is only supported for tables, but {entry.path.quoted} is a view. "
                           f"Please use SHOW CREATE VIEW instead.")
    if what == "VIEW" and not isinstance(entry, CatalogView):
        raise CatalogError(f"SHOW CREATE VIEW is only supported for views, but {entry.path.quoted} is a table. "
                           f"Please use SHOW CREATE TABLE instead.")
    # A view lists its columns, named or not, as Flink's does.
    text = _table_ddl(entry) if isinstance(entry, CatalogTable) else _view_ddl(entry, session.resolve(name).field_names)
    return Shown((("result", DataTypes.STRING()),), [(text,)])


def serializable(data_type: DataType) -> str:
    """A type as Flink's ``asSerializableString`` writes it: STRING and BYTES by their maximum length.

    >>> serializable(DataTypes.MAP(DataTypes.STRING(), DataTypes.BYTES(nullable=False)))
    'MAP<VARCHAR(2147483647), VARBINARY(2147483647) NOT NULL>'
    """
    text = re.sub(r"(?<![`\w])STRING(?![`\w])", "VARCHAR(2147483647)", str(data_type))
    return re.sub(r"(?<![`\w])BYTES(?![`\w])", "VARBINARY(2147483647)", text)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _table_ddl(table: CatalogTable) -> str:
    schema = table.schema
    lines = []
    for c in schema.columns:
        if c.display_expression is not None:
            line = f"  `{c.name}` AS {c.display_expression}"
        else:
            line = f"  `{c.name}` {serializable(c.data_type)}"
            if c.metadata is not None:
                line += " METADATA" + (f" FROM '{c.metadata}'" if c.metadata != c.name else "")
                line += " VIRTUAL" if c.virtual else ""
        if c.comment is not None:
            line += f" COMMENT {_quote(c.comment)}"
        lines.append(line)
    if schema.watermark is not None:
        lines.append(f"  WATERMARK FOR `{schema.watermark.column}` AS {schema.watermark.display_expression}")
    if schema.primary_key:
        keys = ", ".join(f"`{k}`" for k in schema.primary_key)
        lines.append(f"  CONSTRAINT `PK_{'_'.join(schema.primary_key)}` PRIMARY KEY ({keys}) NOT ENFORCED")
    head = f"CREATE {'TEMPORARY ' if table.temporary else ''}TABLE {table.path.quoted} (\n"
    text = head + ",\n".join(lines) + "\n)\n"
    if table.comment is not None:
        text += f"COMMENT {_quote(table.comment)}\n"
    if table.partition_keys:
        text += "PARTITIONED BY (" + ", ".join(f"`{k}`" for k in table.partition_keys) + ")\n"
    if table.options:
        text += "WITH (\n" + ",\n".join(f"  {_quote(k)} = {_quote(v)}" for k, v in sorted(table.options.items()))
        text += "\n)\n"
    return text


def _view_ddl(view: CatalogView, columns: list[str]) -> str:
    head = f"CREATE {'TEMPORARY ' if view.temporary else ''}VIEW {view.path.quoted}"
    if view.query is None:  # a Table API view (create_temporary_view of a Table): no SQL text to show
        raise CatalogError(f"SHOW CREATE VIEW {view.name}: the view was made from a Table object, "
                           f"not from SQL, so changeflow has no query text to show")
    query = view.query[0].strip()
    listed = " (\n" + ",\n".join(f"  `{c}`" for c in columns) + "\n)"
    return f"{head}{listed}\nAS {query}\n"
