"""``TableEnvironment.execute_sql``: one Flink SQL statement, dispatched by its leading keywords.

Queries (``SELECT``, ``WITH``, ``VALUES``) and the query parts of ``INSERT``,
``CREATE VIEW`` and ``EXPLAIN`` are parsed by the Flink dialect and planned by
:mod:`changeflow.sql.planner` into the engine's one logical plan. The other
statements act on the environment's catalog and configuration here. Every
statement runs against a :class:`~changeflow.sql.session.StatementSession` (the
environment as SQL sees it) and returns an
:data:`~changeflow.sql.session.Outcome` that the environment turns into a
``TableResult`` shaped as PyFlink's: ``OK`` for DDL, a table of rows for
``SHOW`` and ``DESCRIBE``, the plan text for ``EXPLAIN``, a query or an
``INSERT`` job to run.

``SET`` and ``RESET`` are statements of Flink's SQL client; PyFlink's
``execute_sql`` rejects them. changeflow accepts them (a SQL script can carry
its configuration) and validates keys and values through the configuration.
"""

from __future__ import annotations

from sqlglot import Token, TokenType

from changeflow.catalog import CatalogError, CatalogTable, CatalogView
from changeflow.common.types import DataTypes
from changeflow.plan.nodes import PlanNode, Sink
from changeflow.plan.type_inference import PlanError
from changeflow.sql import catalog_statements, namespace_statements
from changeflow.sql.ddl import Cursor, DdlError, parse_create_table, tokenize
from changeflow.sql.on_conflict import reject_on_conflict, split_on_conflict
from changeflow.sql.planner import plan_query
from changeflow.sql.user_functions import using_functions
from changeflow.sql.session import Done, Explained, Outcome, RunInsert, RunQuery, Shown, StatementSession

_QUERY_STARTS = ("SELECT", "WITH", "VALUES", "(")
_EXPLAIN_DETAILS = ("CHANGELOG_MODE", "ESTIMATED_COST", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")


class StatementError(PlanError):
    """A statement changeflow does not run; names it."""


def statement_tokens(sql: str) -> list[Token]:
    """The tokens of exactly one statement (a trailing ``;`` is allowed)."""
    tokens = tokenize(sql)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if any(t.token_type == TokenType.SEMICOLON for t in tokens):
        raise StatementError("execute_sql() takes a single SQL statement; this text holds several "
                             "(run them one at a time)")
    if not tokens:
        raise StatementError("empty SQL statement")
    return tokens


def execute(session: StatementSession, sql: str) -> Outcome:
    """Runs one statement against ``session``: what it did, or what the environment is to run."""
    tokens = statement_tokens(sql)
    cur = Cursor(sql, tokens)
    head = cur.word()
    if head in _QUERY_STARTS:
        return RunQuery(plan_sql_query(session, sql))
    if head == "INSERT":
        return insert(session, sql, cur)
    if head in ("CREATE", "DROP") and cur.word(1) in ("CATALOG", "DATABASE"):
        return _NAMESPACE_DDL[(head, cur.word(1))](session, cur)
    if head == "CREATE":
        if "FUNCTION" in (cur.word(1), cur.word(2), cur.word(3)):
            return catalog_statements.create_function(session, cur)
        return create(session, sql, cur)
    if head == "DROP":
        if "FUNCTION" in (cur.word(1), cur.word(2), cur.word(3)):
            return catalog_statements.drop_function(session, cur)
        return drop(session, cur)
    if head == "ALTER":
        if cur.word(1) == "DATABASE":
            return namespace_statements.alter_database(session, cur)
        return catalog_statements.alter(session, cur, lambda c: _valid_query(session, c))
    if head == "SET":
        return set_option(session, cur)
    if head == "RESET":
        return reset_option(session, cur)
    if head == "EXPLAIN":
        return explain_statement(session, sql, cur)
    if head == "SHOW":
        return show(session, cur)
    if head == "USE":
        return namespace_statements.use(session, cur)
    if head in ("DESCRIBE", "DESC"):
        cur.next()
        if cur.word() in ("CATALOG", "DATABASE", "FUNCTION", "MODEL") and cur.peek(1) is not None:
            cur.fail(f"DESCRIBE {cur.word()} is not supported by changeflow; it describes tables and views")
        name = cur.qualified_name()
        if not cur.at_end():
            cur.fail("unexpected text after the table name")
        return describe(session, name)
    raise StatementError(f"unsupported SQL statement {tokens[0].text!r} at line 1, column 1; changeflow runs "
                         "SELECT, INSERT INTO, CREATE/DROP CATALOG, DATABASE, TABLE, VIEW and FUNCTION, "
                         "ALTER DATABASE/TABLE/VIEW, SET, RESET, EXPLAIN, SHOW, USE and DESCRIBE")


_NAMESPACE_DDL = {("CREATE", "CATALOG"): namespace_statements.create_catalog,
                  ("CREATE", "DATABASE"): namespace_statements.create_database,
                  ("DROP", "CATALOG"): namespace_statements.drop_catalog,
                  ("DROP", "DATABASE"): namespace_statements.drop_database}


# --- queries -----------------------------------------------------------------------------


def _valid_query(session: StatementSession, cur: Cursor) -> str:
    """The query text at ``cur``, planned once so that a bad query fails now, as Flink's DDL does."""
    if cur.at_end():
        cur.fail("expected the view's query")
    query = query_text(cur)
    plan_sql_query(session, query)
    return query


def plan_sql_query(session: StatementSession, sql: str) -> PlanNode:
    """The logical plan of a query's text (``SELECT``, ``WITH``, ``VALUES``), planned over the catalog."""
    reject_on_conflict(sql, tokenize(sql), "a query")
    with using_functions(session.catalog.functions):  # registered Python functions (sql/user_functions.py)
        return plan_query(sql, session.resolve)


def query_text(cur: Cursor) -> str:
    """The rest of the statement from the cursor, as a query whose positions are the statement's.

    What precedes the query is blanked (newlines kept), so the planner's
    "at line L, column C" points into the statement the user wrote.
    """
    start = cur.tokens[cur.i].start
    blank = "".join("\n" if ch == "\n" else " " for ch in cur.sql[:start])
    return blank + cur.sql[start:cur.tokens[cur.stop - 1].end + 1]


# --- INSERT ------------------------------------------------------------------------------


def insert_plan(session: StatementSession, sql: str, cur: Cursor) -> Sink:
    """``INSERT INTO t [(columns)] query [ON CONFLICT DO ...]`` as a plan ending in a ``Sink``."""
    cur.expect("INSERT")
    if cur.accept("OVERWRITE"):
        cur.fail("INSERT OVERWRITE is not supported (only batch file sinks in Flink have it)")
    cur.expect("INTO")
    name = cur.qualified_name()
    columns = None
    if cur.word() == "(" and cur.word(1) not in _QUERY_STARTS:
        columns = cur.name_list()
    if cur.word() == "ON" and cur.word(1) == "CONFLICT":
        cur.fail("ON CONFLICT must follow the query: INSERT INTO t SELECT ... ON CONFLICT DO DEDUPLICATE | "
                 "DO NOTHING | DO ERROR")
    if cur.at_end():
        cur.fail("expected the query to insert")
    stop, conflict = split_on_conflict(cur)
    if stop == cur.i:
        cur.fail("expected the query to insert before ON CONFLICT")
    query = query_text(Cursor(sql, cur.tokens, cur.i, stop))
    return session.insert_plan(name, plan_sql_query(session, query), columns, conflict=conflict)


def insert(session: StatementSession, sql: str, cur: Cursor) -> RunInsert:
    return RunInsert(insert_plan(session, sql, cur))


# --- CREATE / DROP -----------------------------------------------------------------------


def create(session: StatementSession, sql: str, cur: Cursor) -> Done:
    kind = cur.word(2) if cur.word(1) == "TEMPORARY" else cur.word(1)
    if kind == "TABLE":
        table, if_not_exists = parse_create_table(sql, cur.tokens)
        session.declared_schema(table)  # plans the computed columns: a bad expression fails here, as in Flink
        session.catalog.create_table(table, if_not_exists)
        return Done()
    if kind == "VIEW":
        cur.expect("CREATE")
        temporary = cur.accept("TEMPORARY")
        cur.expect("VIEW")
        if_not_exists = cur.accept("IF", "NOT", "EXISTS")
        name = cur.qualified_name()
        aliases = None
        if cur.word() == "(":
            aliases = cur.name_list()
        cur.expect("AS")
        if cur.at_end():
            cur.fail("expected the view's query")
        query = query_text(cur)
        plan = plan_sql_query(session, query)  # validates the query now, as Flink does
        if aliases is not None and len(aliases) != len(plan.schema):
            raise StatementError(f"view {name!r} names {len(aliases)} columns but its query has "
                                 f"{len(plan.schema)}: {plan.field_names}")
        session.catalog.create_view(CatalogView(name, temporary, query=(query, tuple(aliases or ()))), if_not_exists)
        return Done()
    cur.fail("unsupported CREATE statement; changeflow runs CREATE [TEMPORARY] TABLE, VIEW and FUNCTION")


def drop(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("DROP")
    temporary = True if cur.accept("TEMPORARY") else None
    kind = cur.next().text.upper()
    if kind not in ("TABLE", "VIEW"):
        cur.i -= 1
        cur.fail("unsupported DROP statement; changeflow runs DROP TABLE, VIEW and FUNCTION")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.qualified_name()
    if not cur.at_end():
        cur.fail("unexpected text after the name")
    if kind == "TABLE":
        session.catalog.drop_table(name, if_exists, temporary)
    else:
        session.catalog.drop_view(name, if_exists, temporary)
    return Done()


# --- SET / RESET -------------------------------------------------------------------------


def set_option(session: StatementSession, cur: Cursor) -> Done | Shown:
    cur.expect("SET")
    conf = session.configuration
    if cur.at_end():
        string = DataTypes.STRING()
        return Shown((("key", string), ("value", string)), sorted(conf.to_dict().items()))
    key = _key(cur)
    cur.expect("=")
    value = _key(cur)
    if not cur.at_end():
        cur.fail("unexpected text after SET 'key' = 'value'")
    conf.set(key, value)  # unknown table./execution. keys and bad values raise here
    return Done()


def reset_option(session: StatementSession, cur: Cursor) -> Done:
    cur.expect("RESET")
    if cur.at_end():
        session.reset_option()
        return Done()
    key = _key(cur)
    if not cur.at_end():
        cur.fail("unexpected text after RESET 'key'")
    session.reset_option(key)
    return Done()


def _key(cur: Cursor) -> str:
    token = cur.peek()
    if token is not None and token.token_type == TokenType.STRING:
        return cur.string()
    cur.fail("expected a quoted key or value, as SET 'table.exec.mini-batch.enabled' = 'true'")


# --- EXPLAIN / SHOW / DESCRIBE -----------------------------------------------------------


def explain_statement(session: StatementSession, sql: str, cur: Cursor) -> Explained:
    cur.expect("EXPLAIN")
    while cur.word() in _EXPLAIN_DETAILS or cur.word() == ",":
        cur.next()
    if cur.accept("PLAN", "FOR"):
        pass
    return Explained(explain_text(session, sql, cur))


def explain_text(session: StatementSession, sql: str, cur: Cursor | None = None) -> str:
    """The plan of the query or INSERT statement at the cursor (the whole of ``sql`` by default)."""
    cur = cur or Cursor(sql, statement_tokens(sql))
    if cur.word() == "INSERT":
        return session.explain(insert_plan(session, sql, Cursor(sql, cur.tokens, cur.i, cur.stop)))
    if cur.word() in _QUERY_STARTS:
        return session.explain(plan_sql_query(session, query_text(cur)))
    cur.fail("EXPLAIN takes a SELECT or an INSERT statement")


def show(session: StatementSession, cur: Cursor) -> Shown:
    shown = namespace_statements.show(session, cur)  # catalogs, databases, tables, views, current ones
    if shown is not None:
        return shown
    if cur.word() == "CREATE":
        return catalog_statements.show_create(session, cur)
    if cur.word() == "FUNCTIONS" or cur.word() == "USER":
        return catalog_statements.show_functions(session, cur)
    cur.fail("unsupported SHOW statement; changeflow runs SHOW CATALOGS, DATABASES, TABLES, VIEWS, "
             "CURRENT CATALOG, CURRENT DATABASE, MODULES, [USER] FUNCTIONS and CREATE TABLE/VIEW")


_DESCRIBE_SCHEMA = (("name", DataTypes.STRING()), ("type", DataTypes.STRING()), ("null", DataTypes.BOOLEAN()),
                    ("key", DataTypes.STRING()), ("extras", DataTypes.STRING()),
                    ("watermark", DataTypes.STRING()))


def describe(session: StatementSession, name: str) -> Shown:
    """Flink's ``DESCRIBE``: name, type, null, key, extras, watermark per column."""
    catalog = session.catalog
    if not catalog.contains(name):
        path = catalog.qualify(name)
        raise CatalogError(f"Tables or views with the identifier '{path.identifier}' doesn't exist. Known tables "
                           f"and views: {', '.join(catalog.list_tables(path.catalog, path.database)) or '(none)'}")
    entry = catalog.get(name)
    if isinstance(entry, CatalogTable):
        return Shown(_DESCRIBE_SCHEMA, session.declared_schema(entry).describe_rows())
    plan = session.resolve(name)
    rows = [(n, str(t.with_nullable(True)), t.nullable, None, None, None) for n, t in plan.schema]
    return Shown(_DESCRIBE_SCHEMA, rows)


__all__ = ["DdlError", "StatementError", "execute", "explain_text", "plan_sql_query", "statement_tokens"]
